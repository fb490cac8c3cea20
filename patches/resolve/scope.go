package resolve

import (
	"bytes"
	"regexp"
)

// This file turns a flat syntax tree into Python's name-binding structure:
// scopes with what each binds, and the uses that may refer to the function
// being rewired. It follows the language's rules rather than guessing from
// text: a name assigned anywhere in a function is local to all of it, class
// bodies do not enclose their methods, `global`/`nonlocal` redirect, and
// parameters, lambdas and comprehensions open scopes of their own. That is
// what keeps a parameter or local that happens to share the name untouched.

type scopeKind uint8

const (
	scModule scopeKind = iota
	scFunction
	scLambda
	scClass
	scComprehension
)

type scope struct {
	kind     scopeKind
	parent   int
	binds    map[string][]*binding
	global   map[string]bool
	nonlocal map[string]bool
	nested   bool  // a function scope inside another function
	def      int32 // a function scope: its function_definition node
}

type bindKind uint8

const (
	bDef    bindKind = iota // def / class
	bOther                  // assignment, parameter, loop variable, ...
	bImport                 // import a.b.c [as m]
	bFrom                   // from m import n [as a]
)

// modSpec is a module as written in an import: leading dots and the dotted
// rest.
type modSpec struct {
	level  int
	dotted string
}

type binding struct {
	kind     bindKind
	name     string // the local name bound
	node     int32  // the identifier that names the binding
	scope    int
	mod      modSpec // bImport, bFrom
	imported string  // bFrom: the name taken from mod
	impNode  int32   // bFrom: the identifier of the imported name
}

type useKind uint8

const (
	uName useKind = iota // a bare name in load position
	uAttr                // obj.NAME: node is the attribute identifier
)

type use struct {
	kind  useKind
	node  int32
	obj   int32 // uAttr: the object expression
	scope int
}

// Info is everything the resolver needs from one file.
type Info struct {
	path    string
	st      *Syntax
	scopes  []scope
	uses    []use
	froms   []*binding // every from-import binding, any scope
	stars   []star     // module-level "from M import *"
	all     exportList // the module's __all__
	strs    []int32    // string literals that name a target by dotted path
	ignore  []Range    // the caller's ranges: not the tree's own code
	idents  map[string]bool
	classes map[string]classInfo // module-level classes by name
	// words are the names a partial parse selected statements by; nil
	// when the whole file was parsed.
	words map[string]bool
}

// star is a module-level "from M import *": it binds, at import time,
// whatever M exports, which only M can say.
type star struct {
	mod  modSpec
	node int32 // the import statement
}

// exportList is what a module's __all__ says: nothing when it has none
// (set false), the names of a literal list, tuple or set of plain strings,
// or unknown (dynamic) when it is computed, extended or changed otherwise.
type exportList struct {
	set, dynamic bool
	names        map[string]bool
}

// classInfo is a module-level class: its body node and its scope.
type classInfo struct {
	body  int32
	scope int
}

type analyzer struct {
	st   *Syntax
	fi   *Info
	attr map[string]bool // attribute names worth recording (the names of interest)
	ref  *regexp.Regexp  // a string that names a target by dotted path
}

// analyze builds the scopes and uses of one parsed file. Attribute uses are
// recorded for the names of interest and for extra (names a module
// re-exports one under).
func analyze(path string, st *Syntax, cfg *Config, extra []string) *Info {
	fi := &Info{path: path, st: st, idents: map[string]bool{}, classes: map[string]classInfo{}}
	fi.ignore = cfg.ignored(path, st.src)
	a := &analyzer{st: st, fi: fi, attr: map[string]bool{}, ref: cfg.StringRef}
	for _, w := range cfg.Names {
		a.attr[w] = true
	}
	for _, w := range extra {
		a.attr[w] = true
	}
	fi.scopes = append(fi.scopes, scope{kind: scModule, parent: -1, binds: map[string][]*binding{}})
	if len(st.nodes) > 0 {
		a.visitChildren(0, 0)
	}
	return fi
}

func (a *analyzer) newScope(kind scopeKind, parent int) int {
	nested := false
	for p := parent; p >= 0; p = a.fi.scopes[p].parent {
		if k := a.fi.scopes[p].kind; k == scFunction || k == scLambda {
			nested = true
			break
		}
	}
	a.fi.scopes = append(a.fi.scopes, scope{kind: kind, parent: parent, binds: map[string][]*binding{}, nested: nested})
	return len(a.fi.scopes) - 1
}

func (a *analyzer) bind(sc int, b *binding) {
	b.scope = sc
	s := &a.fi.scopes[sc]
	s.binds[b.name] = append(s.binds[b.name], b)
}

func (a *analyzer) bindIdent(i int32, sc int, kind bindKind) {
	name := a.st.text(i)
	a.fi.idents[name] = true
	a.bind(sc, &binding{kind: kind, name: name, node: i})
}

func (a *analyzer) visitChildren(i int32, sc int) {
	for c := a.st.nodes[i].first; c >= 0; c = a.st.nodes[c].next {
		a.visit(c, sc)
	}
}

func (a *analyzer) visit(i int32, sc int) {
	st := a.st
	n := &st.nodes[i]
	switch n.kind {
	case "identifier":
		a.fi.idents[st.text(i)] = true
		a.fi.uses = append(a.fi.uses, use{kind: uName, node: i, scope: sc})
	case "attribute":
		a.visitAttribute(i, sc)
	case "keyword_argument":
		if v := st.child(i, "value"); v >= 0 {
			a.visit(v, sc)
		}
	case "function_definition":
		a.visitFunction(i, sc)
	case "lambda":
		fs := a.newScope(scLambda, sc)
		if p := st.child(i, "parameters"); p >= 0 {
			a.params(p, fs, sc)
		}
		if b := st.child(i, "body"); b >= 0 {
			a.visit(b, fs)
		}
	case "class_definition":
		a.visitClass(i, sc)
	case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
		a.visitComprehension(i, sc)
	case "assignment", "augmented_assignment", "for_statement":
		if sc == 0 && n.kind != "for_statement" {
			a.exports(i)
		}
		for c := n.first; c >= 0; c = st.nodes[c].next {
			if st.nodes[c].field == "left" {
				a.targets(c, sc)
			} else {
				a.visit(c, sc)
			}
		}
	case "named_expression":
		target := sc
		for a.fi.scopes[target].kind == scComprehension {
			target = a.fi.scopes[target].parent
		}
		if nm := st.child(i, "name"); nm >= 0 {
			a.bindIdent(nm, target, bOther)
		}
		if v := st.child(i, "value"); v >= 0 {
			a.visit(v, sc)
		}
	case "as_pattern_target", "delete_statement":
		for c := n.first; c >= 0; c = st.nodes[c].next {
			a.targets(c, sc)
		}
	case "global_statement", "nonlocal_statement":
		a.declare(i, sc, n.kind == "global_statement")
	case "import_statement":
		a.importStmt(i, sc)
	case "import_from_statement":
		a.fromStmt(i, sc)
	case "future_import_statement", "comment":
	case "string":
		a.str(i, sc)
	default:
		a.visitChildren(i, sc)
	}
}

// visitAttribute records obj.NAME: the object is a use; the attribute only
// when it is a name of interest.
func (a *analyzer) visitAttribute(i int32, sc int) {
	st := a.st
	obj := st.child(i, "object")
	if sc == 0 && obj >= 0 && st.nodes[obj].kind == "identifier" && st.text(obj) == "__all__" {
		a.fi.all.set, a.fi.all.dynamic = true, true // __all__.append(...), .extend(...)
	}
	if obj >= 0 {
		a.visit(obj, sc)
	}
	if at := st.child(i, "attribute"); at >= 0 {
		name := st.text(at)
		a.fi.idents[name] = true
		if a.attr[name] {
			a.fi.uses = append(a.fi.uses, use{kind: uAttr, node: at, obj: obj, scope: sc})
		}
	}
}

// visitClass binds the class name and opens its body's scope; bases and
// decorators are evaluated outside it.
func (a *analyzer) visitClass(i int32, sc int) {
	st := a.st
	if nm := st.child(i, "name"); nm >= 0 {
		a.bindIdent(nm, sc, bDef)
	}
	cs := a.newScope(scClass, sc)
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].field {
		case "name":
		case "body":
			a.visit(c, cs)
			if nm := st.child(i, "name"); nm >= 0 && sc == 0 {
				a.fi.classes[st.text(nm)] = classInfo{body: c, scope: cs}
			}
		default:
			a.visit(c, sc)
		}
	}
}

// visitComprehension opens the comprehension's scope: its loop variables are
// bound there, not in the enclosing scope.
func (a *analyzer) visitComprehension(i int32, sc int) {
	st := a.st
	cs := a.newScope(scComprehension, sc)
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].kind == "for_in_clause" {
			for d := st.nodes[c].first; d >= 0; d = st.nodes[d].next {
				if st.nodes[d].field == "left" {
					a.targets(d, cs)
				} else {
					a.visit(d, cs)
				}
			}
			continue
		}
		a.visit(c, cs)
	}
}

// declare records a global or nonlocal statement's names in scope sc.
func (a *analyzer) declare(i int32, sc int, global bool) {
	st := a.st
	s := &a.fi.scopes[sc]
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].kind != "identifier" {
			continue
		}
		name := st.text(c)
		if global {
			if s.global == nil {
				s.global = map[string]bool{}
			}
			s.global[name] = true
		} else {
			if s.nonlocal == nil {
				s.nonlocal = map[string]bool{}
			}
			s.nonlocal[name] = true
		}
	}
}

func (a *analyzer) visitFunction(i int32, sc int) {
	st := a.st
	fs := a.newScope(scFunction, sc)
	a.fi.scopes[fs].def = i
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].field {
		case "name":
			a.bindIdent(c, sc, bDef)
		case "parameters":
			a.params(c, fs, sc)
		case "body":
			a.visit(c, fs)
		default: // return type, type parameters: evaluated outside
			a.visit(c, sc)
		}
	}
}

// params binds parameter names in fs; defaults and annotations are evaluated
// in the enclosing scope, as Python does.
func (a *analyzer) params(p int32, fs, outer int) {
	st := a.st
	for c := st.nodes[p].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].kind {
		case "identifier":
			a.bindIdent(c, fs, bOther)
		case "list_splat_pattern", "dictionary_splat_pattern":
			if id := st.childKind(c, "identifier"); id >= 0 {
				a.bindIdent(id, fs, bOther)
			}
		case "default_parameter", "typed_parameter", "typed_default_parameter":
			for d := st.nodes[c].first; d >= 0; d = st.nodes[d].next {
				dn := &st.nodes[d]
				switch {
				case dn.field == "name" || (dn.field == "" && dn.kind == "identifier"):
					a.bindIdent(d, fs, bOther)
				case dn.kind == "list_splat_pattern" || dn.kind == "dictionary_splat_pattern":
					if id := st.childKind(d, "identifier"); id >= 0 {
						a.bindIdent(id, fs, bOther)
					}
				case dn.named:
					a.visit(d, outer)
				}
			}
		case "tuple_pattern":
			a.targets(c, fs)
		}
	}
}

// targets binds the names an assignment-like target introduces; attributes
// and subscripts in a target are uses of their object, not bindings.
func (a *analyzer) targets(i int32, sc int) {
	st := a.st
	switch st.nodes[i].kind {
	case "identifier":
		a.bindIdent(i, sc, bOther)
	case "pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "parenthesized_expression",
		"list_splat_pattern", "list_splat", "expression_list", "as_pattern_target":
		for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
			if st.nodes[c].named {
				a.targets(c, sc)
			}
		}
	default:
		a.visit(i, sc)
	}
}

func (a *analyzer) dotted(i int32) string {
	var parts []string
	for c := a.st.nodes[i].first; c >= 0; c = a.st.nodes[c].next {
		if a.st.nodes[c].kind == "identifier" {
			parts = append(parts, a.st.text(c))
		}
	}
	return joinDots(parts)
}

func joinDots(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// importStmt: `import a.b.c` binds a (to package a); `import a.b.c as m`
// binds m to module a.b.c.
func (a *analyzer) importStmt(i int32, sc int) {
	st := a.st
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].kind {
		case "dotted_name":
			full := a.dotted(c)
			first := st.nodes[c].first
			top := full
			if j := bytes.IndexByte([]byte(full), '.'); j >= 0 {
				top = full[:j]
			}
			a.bind(sc, &binding{kind: bImport, name: top, node: first, mod: modSpec{dotted: top}})
		case "aliased_import":
			nm, al := st.child(c, "name"), st.child(c, "alias")
			if nm < 0 || al < 0 {
				continue
			}
			a.bind(sc, &binding{kind: bImport, name: st.text(al), node: al, mod: modSpec{dotted: a.dotted(nm)}})
		}
	}
}

// fromStmt: `from M import n as m` binds m to attribute n of module M.
func (a *analyzer) fromStmt(i int32, sc int) {
	st := a.st
	var mod modSpec
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		cn := &st.nodes[c]
		if cn.field == "module_name" {
			if cn.kind == "relative_import" {
				for d := cn.first; d >= 0; d = st.nodes[d].next {
					switch st.nodes[d].kind {
					case "import_prefix":
						mod.level = int(st.nodes[d].end - st.nodes[d].start)
					case "dotted_name":
						mod.dotted = a.dotted(d)
					}
				}
			} else {
				mod.dotted = a.dotted(c)
			}
			continue
		}
		if cn.kind == "wildcard_import" {
			if sc == 0 {
				a.fi.stars = append(a.fi.stars, star{mod: mod, node: i})
			}
			continue
		}
		if cn.field != "name" {
			continue
		}
		var nameNode, local int32 = -1, -1
		switch cn.kind {
		case "dotted_name":
			nameNode = cn.first
			local = nameNode
		case "aliased_import":
			if nm := st.child(c, "name"); nm >= 0 {
				nameNode = st.nodes[nm].first
			}
			local = st.child(c, "alias")
		}
		if nameNode < 0 || local < 0 {
			continue
		}
		b := &binding{kind: bFrom, name: st.text(local), node: local, mod: mod, imported: st.text(nameNode), impNode: nameNode}
		a.fi.idents[b.imported] = true
		a.bind(sc, b)
		a.fi.froms = append(a.fi.froms, b)
	}
}

// exports reads a module-level assignment to __all__: a literal list,
// tuple or set of plain strings adds its names (= sets, += adds); anything
// else makes the list unknown.
func (a *analyzer) exports(i int32) {
	st := a.st
	left, right := st.child(i, "left"), st.child(i, "right")
	if left < 0 || st.nodes[left].kind != "identifier" || st.text(left) != "__all__" {
		return
	}
	all := &a.fi.all
	all.set = true
	if all.names == nil {
		all.names = map[string]bool{}
	}
	if right >= 0 && st.nodes[right].kind == "parenthesized_expression" {
		right = st.nodes[right].first
		for right >= 0 && !st.nodes[right].named {
			right = st.nodes[right].next
		}
	}
	if right < 0 {
		all.dynamic = true
		return
	}
	switch st.nodes[right].kind {
	case "list", "tuple", "set":
	default:
		all.dynamic = true
		return
	}
	for c := st.nodes[right].first; c >= 0; c = st.nodes[c].next {
		if !st.nodes[c].named || st.nodes[c].kind == "comment" {
			continue
		}
		name, ok := plainString(st, c)
		if !ok {
			all.dynamic = true
			return
		}
		all.names[name] = true
	}
}

// plainString is the content of a string literal with no prefix
// interpolation or escape.
func plainString(st *Syntax, i int32) (string, bool) {
	if st.nodes[i].kind != "string" {
		return "", false
	}
	var content []byte
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].kind {
		case "string_content":
			content = append(content, st.src[st.nodes[c].start:st.nodes[c].end]...)
		case "string_start", "string_end":
		default:
			return "", false
		}
	}
	if bytes.ContainsAny(content, "\\") {
		return "", false
	}
	return string(content), true
}

// str records string literals whose whole content is a dotted path ending in
// the old name (mock.patch targets, getattr names): they cannot be rewired
// safely, so they are listed for review. f-string expressions are code and
// are visited as such.
func (a *analyzer) str(i int32, sc int) {
	st := a.st
	var content []byte
	interp := false
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		switch st.nodes[c].kind {
		case "string_content":
			content = append(content, st.src[st.nodes[c].start:st.nodes[c].end]...)
		case "interpolation":
			interp = true
			a.visitChildren(c, sc)
		}
	}
	if !interp && a.ref != nil && a.ref.Match(content) {
		a.fi.strs = append(a.fi.strs, i)
	}
}
