package resolve

import "fmt"

// The read-only view a caller gets of one parsed file: its syntax tree, its
// module-level definitions, and name lookups at a node. Node ids are indexes
// into the file's flat syntax tree; 0 is the module.

// Path is the file's slash path relative to the tree's root.
func (fi *Info) Path() string { return fi.path }

// Syntax is the file's syntax tree.
func (fi *Info) Syntax() *Syntax { return fi.st }

// Spells reports whether the parsed part of the file has an identifier name
// (as a name, an attribute or an imported name).
func (fi *Info) Spells(name string) bool { return fi.idents[name] }

// Partial reports whether only some of the file's top-level statements were
// parsed.
func (fi *Info) Partial() bool { return fi.words != nil }

// Ignored reports whether byte offset at is in one of the caller's ignored
// ranges.
func (fi *Info) Ignored(at int) bool { return at >= 0 && inRanges(fi.ignore, uint32(at)) }

// TopDef is the function_definition node of a module-level def of name
// outside the ignored ranges, or -1.
func (fi *Info) TopDef(name string) int32 {
	for _, b := range fi.scopes[0].binds[name] {
		if b.kind != bDef || inRanges(fi.ignore, fi.st.nodes[b.node].start) {
			continue
		}
		if p := fi.st.nodes[b.node].parent; p >= 0 && fi.st.nodes[p].kind == "function_definition" {
			return p
		}
	}
	return -1
}

// TopClass is the body node of the module-level class name, and whether the
// class body binds field; body is -1 when there is no such class.
func (fi *Info) TopClass(name, field string) (body int32, binds bool) {
	c, ok := fi.classes[name]
	if !ok {
		return -1, false
	}
	_, binds = fi.scopes[c.scope].binds[field]
	return c.body, binds
}

// Binding is one binding a name use sees.
type Binding struct {
	// Node is the identifier the binding binds.
	Node int32
	// TopLevel: the binding is in the module's scope.
	TopLevel bool
	// Import: bound by an import statement (else by a def, class,
	// assignment, parameter, loop or with target).
	Import bool
}

// Lookup returns the bindings the name use at identifier node i sees (as
// Python resolves it: local, enclosing, module; class bodies skipped from
// nested scopes), or nil when the node is not a recorded use or the name is
// unbound.
func (fi *Info) Lookup(i int32) []Binding {
	for _, u := range fi.uses {
		if u.node != i || u.kind != uName {
			continue
		}
		var out []Binding
		for _, b := range lookup(fi, u.scope, fi.st.text(i)) {
			out = append(out, Binding{Node: b.node, TopLevel: b.scope == 0, Import: b.kind == bImport || b.kind == bFrom})
		}
		return out
	}
	return nil
}

// Src is the file's bytes.
func (st *Syntax) Src() []byte { return st.src }

// Err is the first syntax error, or nil.
func (st *Syntax) Err() *SyntaxError { return st.err }

// Kind is node i's grammar type ("call", "identifier", ...).
func (st *Syntax) Kind(i int32) string { return st.nodes[i].kind }

// Field is node i's field name in its parent ("function", "body", ...).
func (st *Syntax) Field(i int32) string { return st.nodes[i].field }

// Start and End are node i's bytes.
func (st *Syntax) Start(i int32) int { return int(st.nodes[i].start) }
func (st *Syntax) End(i int32) int   { return int(st.nodes[i].end) }

// Parent, First and Next walk the tree; -1 when there is none.
func (st *Syntax) Parent(i int32) int32 { return st.nodes[i].parent }
func (st *Syntax) First(i int32) int32  { return st.nodes[i].first }
func (st *Syntax) Next(i int32) int32   { return st.nodes[i].next }

// Named reports whether node i is a named node (not punctuation).
func (st *Syntax) Named(i int32) bool { return st.nodes[i].named }

// Text is node i's source text.
func (st *Syntax) Text(i int32) string { return st.text(i) }

// Child is i's first child with the given field, or -1.
func (st *Syntax) Child(i int32, field string) int32 { return st.child(i, field) }

// ChildKind is i's first child of the given kind, or -1.
func (st *Syntax) ChildKind(i int32, kind string) int32 { return st.childKind(i, kind) }

// Descendants calls f on node i and every node below it, in source order;
// f returning false skips a node's children.
func (st *Syntax) Descendants(i int32, f func(int32) bool) {
	if !f(i) {
		return
	}
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		st.Descendants(c, f)
	}
}

// Analyze parses one file on its own, whole, with no names of interest: a
// caller's check of a file that is not part of a tree yet.
func Analyze(path string, src []byte) (*Info, error) {
	ps := newParser()
	defer ps.close()
	st, err := ps.parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return analyze(path, st, &Config{}, nil), nil
}

// Binds reports whether the module-level scope binds name outside the
// ignored ranges (a def, a class, an assignment, an import).
func (fi *Info) Binds(name string) bool {
	for _, b := range fi.scopes[0].binds[name] {
		if !inRanges(fi.ignore, fi.st.nodes[b.node].start) {
			return true
		}
	}
	return false
}

// BindsLocally reports whether the function defined at node def binds name
// in its own scope (a parameter, an assignment, a local import) without
// declaring it global or nonlocal: then every read of name in its body is
// of that local, and one before the binding raises UnboundLocalError.
func (fi *Info) BindsLocally(def int32, name string) bool {
	for _, sc := range fi.scopes {
		if sc.kind != scFunction || sc.def != def || sc.global[name] || sc.nonlocal[name] {
			continue
		}
		for _, b := range sc.binds[name] {
			if !inRanges(fi.ignore, fi.st.nodes[b.node].start) {
				return true
			}
		}
	}
	return false
}

// WordAt lists the offsets in src where word occurs as a whole identifier
// (not inside a longer one).
func WordAt(src []byte, word string) []int { return wordAt(src, word) }
