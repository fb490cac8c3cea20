package resolve

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Ref is one place in the tree that refers to the function (or, for review
// items, names it in a way that cannot be rewired safely).
type Ref struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Kind string `json:"kind"`
	Code string `json:"code"`
}

func (r Ref) String() string {
	return fmt.Sprintf("%s:%d:%d  %s  %s", r.Path, r.Line, r.Col, r.Kind, r.Code)
}

// Site is a reference with what is needed to rewrite it.
type Site struct {
	Ref
	// Val is the value the reference denotes.
	Val Val
	// Node is the identifier that refers (in the file's syntax tree as the
	// session parsed it); Start and End its bytes.
	Node       int32
	Start, End int
	// Rename: the identifier spells the target's name, so renaming it
	// rewires the reference (otherwise it goes through an alias, which is
	// wired where the alias is imported).
	Rename bool
	// Bare: the rename changes what a bare name binds or denotes (not an
	// attribute).
	Bare bool
	// Call: the reference is the function of a call expression.
	Call bool
}

// MkRef describes node i of the file of fi for a report.
func mkRef(fi *Info, i int32, kind string) Ref {
	st := fi.st
	off := int(st.nodes[i].start)
	line, col := st.LineCol(off)
	return refAt(fi.path, st.src, off, line, col, kind)
}

// RefAt describes the reference at byte off of src, the content of the
// file at path, for a report: where a run's edits moved it, say.
func RefAt(path string, src []byte, off int, kind string) Ref {
	line, col := LineCol(src, off)
	return refAt(path, src, off, line, col, kind)
}

func refAt(path string, src []byte, off, line, col int, kind string) Ref {
	ls := off - (col - 1)
	le := bytes.IndexAny(src[ls:], "\r\n")
	if le < 0 {
		le = len(src) - ls
	}
	code := strings.TrimSpace(string(src[ls : ls+le]))
	if len(code) > 100 {
		code = code[:97] + "..."
	}
	return Ref{Path: path, Line: line, Col: col, Kind: kind, Code: code}
}

// RefSet is the outcome of resolving every use in the parsed files against
// one target.
type RefSet struct {
	Sites []Site
	// Review lists what names the target in a way that cannot be rewired
	// safely (dotted-name strings, unbound names), when asked for.
	Review []Ref
	// Unjudged lists imports of a target's name from modules that are not
	// in the tree: whether they are the target, nothing here can tell.
	Unjudged []Ref
	// Conflicts are uses that denote the target and something else, or
	// that reach it (or may) through a star import.
	Conflicts []string
}

// Query is what Find looks for: the values Match accepts, under any of
// Names (the names an unbound use or an unresolvable import is checked
// against).
type Query struct {
	Names []string
	Match func(Val) bool
}

func (q Query) named(n string) bool {
	for _, x := range q.Names {
		if x == n {
			return true
		}
	}
	return false
}

// references finds every use, import and attribute access, in every parsed
// file, that denotes a value q matches, outside the ignored ranges. Uses
// spelled with the value's name are marked for renaming; uses through an
// alias are wired by renaming the alias's import and are listed without an
// edit. review adds the items a proof must show a person.
func (r *resolver) references(q Query, review bool) RefSet {
	var rs RefSet
	paths := make([]string, 0, len(r.infos))
	for p, fi := range r.infos {
		if fi != nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi := r.infos[p]
		if fi.st.err != nil {
			continue // files with syntax errors are handled by the caller
		}
		for _, u := range fi.uses {
			if inRanges(fi.ignore, fi.st.nodes[u.node].start) {
				continue
			}
			if u.kind == uName {
				r.nameUse(&rs, fi, u, q, review)
			} else {
				r.attrUse(&rs, fi, u, q)
			}
		}
		r.fromRefs(&rs, fi, q, review)
		if review {
			for _, s := range fi.strs {
				kind := "string (not rewired)"
				if inAll(fi, s) {
					kind = AllEntry
				}
				rs.Review = append(rs.Review, mkRef(fi, s, kind))
			}
		}
	}
	sort.SliceStable(rs.Sites, func(i, j int) bool { return refLess(rs.Sites[i].Ref, rs.Sites[j].Ref) })
	sort.SliceStable(rs.Review, func(i, j int) bool { return refLess(rs.Review[i], rs.Review[j]) })
	sort.SliceStable(rs.Unjudged, func(i, j int) bool { return refLess(rs.Unjudged[i], rs.Unjudged[j]) })
	return rs
}

// NotAModule is the kind of an unjudged use of the name as an attribute of
// something that is not a module of the tree.
const NotAModule = "attribute of a value that is not a module of this tree (a variable, self, a call, torch.ops)"

// AllEntry is the kind of a review item that is an entry of the module's
// __all__ list (a star import's names).
const AllEntry = "__all__ entry (not rewired)"

// inAll reports whether string node i is an element of a module-level
// `__all__ = [...]` (list, tuple or set, parenthesised or not).
func inAll(fi *Info, i int32) bool {
	st := fi.st
	seq := st.nodes[i].parent
	if seq < 0 {
		return false
	}
	switch st.nodes[seq].kind {
	case "list", "tuple", "set":
	default:
		return false
	}
	asg := st.nodes[seq].parent
	if asg >= 0 && st.nodes[asg].kind == "parenthesized_expression" {
		asg = st.nodes[asg].parent
	}
	if asg < 0 || st.nodes[asg].kind != "assignment" {
		return false
	}
	left := st.child(asg, "left")
	stmt := st.nodes[asg].parent
	return left >= 0 && st.text(left) == "__all__" && stmt >= 0 && st.nodes[stmt].parent == 0
}

// matching splits vals into the one q matches (if any), whether one matches
// only through a star import, and whether some do not match at all.
func matching(vals []Val, q Query) (hit *Val, star, other bool) {
	for i, v := range vals {
		switch {
		case v.star && q.Match(v.Plain()):
			star = true
		case !v.star && q.Match(v):
			if hit == nil {
				hit = &vals[i]
			}
		default:
			other = true
		}
	}
	return hit, star, other
}

// starConflict is the sentence for a use that reaches a target through a
// star import: renaming it would need the star's module to export the new
// name too, which mlagen does not write.
func starConflict(fi *Info, node int32, name string) string {
	at := mkRef(fi, node, "")
	return fmt.Sprintf("%s:%d: %s comes from a star import (from M import *); mlagen does not rewrite star imports or __all__: import %s by name", at.Path, at.Line, name, name)
}

// nameUse classifies a bare name use against q.
func (r *resolver) nameUse(rs *RefSet, fi *Info, u use, q Query, review bool) {
	st := fi.st
	name := st.text(u.node)
	bs := lookup(fi, u.scope, name)
	if !r.interest[name] && !importsInterest(bs, r.interest) {
		return // not an alias: cannot denote the target
	}
	if len(bs) == 0 {
		r.unboundUse(rs, fi, u, q, review)
		return
	}
	var hit *Val
	star, no, alias := false, false, false
	for _, b := range bs {
		h, st, other := matching(r.binding(fi, b), q)
		if h != nil {
			hit = h
			alias = alias || b.kind == bFrom || b.kind == bImport
		}
		star = star || st
		no = no || other || (h == nil && !st)
	}
	switch {
	case star:
		rs.Conflicts = append(rs.Conflicts, starConflict(fi, u.node, name))
		return
	case hit == nil:
		return
	case no:
		at := mkRef(fi, u.node, "")
		rs.Conflicts = append(rs.Conflicts, fmt.Sprintf("%s:%d: %s is bound both to %s of %s and to something else in this scope; wire it by hand",
			at.Path, at.Line, name, hit.name, hit.path))
		return
	}
	if name == hit.name {
		rs.Sites = append(rs.Sites, r.site(fi, u, *hit, useKindText(fi, u, ""), true, true))
	} else if alias {
		rs.Sites = append(rs.Sites, r.site(fi, u, *hit, useKindText(fi, u, "alias "+name), false, false))
	}
}

// unboundUse classifies a use no scope of its file binds: what the file's
// star imports bring in, or nothing (a NameError when it runs).
func (r *resolver) unboundUse(rs *RefSet, fi *Info, u use, q Query, review bool) {
	name := fi.st.text(u.node)
	vals, a := r.starVals(fi, name, 0)
	if _, star, _ := matching(vals, q); star {
		rs.Conflicts = append(rs.Conflicts, starConflict(fi, u.node, name))
		return
	}
	if !q.named(name) {
		return
	}
	if a == Unknown {
		at := mkRef(fi, u.node, "")
		rs.Conflicts = append(rs.Conflicts, fmt.Sprintf("%s:%d: %s is bound by no statement of its file, and a star import there comes from a module this tree does not hold (or whose __all__ is computed): mlagen cannot tell what it is; import it by name", at.Path, at.Line, name))
		return
	}
	if review {
		rs.Review = append(rs.Review, mkRef(fi, u.node, "unbound name (not rewired)"))
	}
}

// attrUse classifies module.NAME against q. An object that is not a module
// of the tree (a variable or attribute holding a module, an
// importlib.import_module call, torch.ops.<ns>) may still reach the target:
// where the attribute spells a name q looks for, that use is unjudged, since
// passing over it would let the proof miss a call that keeps the old kernel.
func (r *resolver) attrUse(rs *RefSet, fi *Info, u use, q Query) {
	name := fi.st.text(u.node)
	vals := r.expr(fi, u.obj, u.scope)
	if q.named(name) && !allModules(vals) && !ownMethod(fi, u, name) {
		rs.Unjudged = append(rs.Unjudged, mkRef(fi, u.node, NotAModule))
		return
	}
	for _, v := range vals {
		if !v.mod {
			continue
		}
		hit, star, _ := matching(r.attrOf(v.path, name), q)
		if star {
			rs.Conflicts = append(rs.Conflicts, starConflict(fi, u.node, name))
			return
		}
		if hit == nil {
			continue
		}
		if name == hit.name {
			rs.Sites = append(rs.Sites, r.site(fi, u, *hit, useKindText(fi, u, "module attribute"), true, false))
		} else { // a re-export reached as an attribute: wired by its module's import
			rs.Sites = append(rs.Sites, r.site(fi, u, *hit, useKindText(fi, u, "module attribute re-export "+name), false, false))
		}
		return
	}
}

// ownMethod reports whether obj.NAME is self.NAME (or cls.NAME) in a
// method of a class that defines NAME itself: the class's own method, not
// the module's function of that name.
func ownMethod(fi *Info, u use, name string) bool {
	if obj := fi.st.text(u.obj); obj != "self" && obj != "cls" {
		return false
	}
	for sc := u.scope; sc > 0; sc = fi.scopes[sc].parent {
		if fi.scopes[sc].kind != scFunction {
			continue
		}
		cls := fi.scopes[sc].parent
		if cls < 0 || fi.scopes[cls].kind != scClass {
			return false
		}
		for _, b := range fi.scopes[cls].binds[name] {
			if b.kind == bDef {
				return true
			}
		}
		return false
	}
	return false
}

// allModules reports whether an object's values are all modules (and it
// has some): then the attribute's own module says what it is.
func allModules(vals []Val) bool {
	for _, v := range vals {
		if !v.mod {
			return false
		}
	}
	return len(vals) > 0
}

func (r *resolver) site(fi *Info, u use, v Val, kind string, rename, bare bool) Site {
	n := fi.st.nodes[u.node]
	return Site{Ref: mkRef(fi, u.node, kind), Val: v, Node: u.node, Start: int(n.start), End: int(n.end), Rename: rename, Bare: bare, Call: isCallee(fi, u)}
}

// fromRefs lists the from-imports of fi that import a value q matches.
func (r *resolver) fromRefs(rs *RefSet, fi *Info, q Query, review bool) {
	st := fi.st
	for _, b := range fi.froms {
		if !r.interest[b.imported] || inRanges(fi.ignore, st.nodes[b.impNode].start) {
			continue
		}
		vals := r.binding(fi, b)
		if len(vals) == 0 && q.named(b.imported) && len(r.modules(fi.path, b.mod)) == 0 {
			// An import the tree cannot resolve may still be the target
			// (a module outside the root, a path resolved wrongly): say so
			// rather than count it as nothing.
			rs.Unjudged = append(rs.Unjudged, mkRef(fi, b.impNode, "import from a module not in this tree"))
			continue
		}
		hit, star, _ := matching(vals, q)
		if star {
			rs.Conflicts = append(rs.Conflicts, starConflict(fi, b.impNode, b.imported))
			continue
		}
		if hit == nil {
			continue
		}
		kind := "import"
		if b.name != b.imported {
			kind = "import as " + b.name
		}
		n := st.nodes[b.impNode]
		if b.imported == hit.name {
			rs.Sites = append(rs.Sites, Site{Ref: mkRef(fi, b.impNode, kind), Val: *hit, Node: b.impNode, Start: int(n.start), End: int(n.end), Rename: true, Bare: b.name == b.imported})
		} else {
			rs.Sites = append(rs.Sites, Site{Ref: mkRef(fi, b.impNode, "import of re-export "+b.imported), Val: *hit, Node: b.impNode, Start: int(n.start), End: int(n.end)})
		}
	}
}

// isCallee reports whether the use is the function of a call.
func isCallee(fi *Info, u use) bool {
	st := fi.st
	expr := u.node
	if u.kind == uAttr {
		expr = st.nodes[u.node].parent
	}
	p := st.nodes[expr].parent
	return p >= 0 && st.nodes[p].kind == "call" && st.nodes[expr].field == "function"
}

func importsInterest(bs []*binding, interest map[string]bool) bool {
	for _, b := range bs {
		if b.kind == bFrom && interest[b.imported] {
			return true
		}
	}
	return false
}

func refLess(a, b Ref) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// useKindText describes a use for the report: how it refers (call, value,
// functools.partial argument) and where (nested function, lambda,
// comprehension).
func useKindText(fi *Info, u use, via string) string {
	st := fi.st
	expr := u.node
	if u.kind == uAttr {
		expr = st.nodes[u.node].parent
	}
	kind := "value"
	p := st.nodes[expr].parent
	if p >= 0 && st.nodes[p].kind == "call" && st.nodes[expr].field == "function" {
		kind = "call"
		args := st.child(p, "arguments")
		if args >= 0 && st.childKind(args, "keyword_argument") >= 0 {
			kind += " with keywords"
		}
		if bytes.IndexByte(st.src[st.nodes[p].start:st.nodes[p].end], '\n') >= 0 {
			kind = "multi-line " + kind
		}
	} else if p >= 0 && st.nodes[p].kind == "argument_list" {
		if c := st.nodes[p].parent; c >= 0 && st.nodes[c].kind == "call" {
			if fn := st.child(c, "function"); fn >= 0 && strings.HasSuffix(st.text(fn), "partial") {
				kind = "value in partial()"
			} else {
				kind = "value passed as argument"
			}
		}
	}
	if via != "" {
		kind = via + " " + kind
	}
	switch fi.scopes[u.scope].kind {
	case scLambda:
		kind += " in lambda"
	case scComprehension:
		kind += " in comprehension"
	case scFunction:
		if fi.scopes[u.scope].nested {
			kind += " in nested function"
		}
	}
	return kind
}
