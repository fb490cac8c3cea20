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
	ls := off - (col - 1)
	le := bytes.IndexAny(st.src[ls:], "\r\n")
	if le < 0 {
		le = len(st.src) - ls
	}
	code := strings.TrimSpace(string(st.src[ls : ls+le]))
	if len(code) > 100 {
		code = code[:97] + "..."
	}
	return Ref{Path: fi.path, Line: line, Col: col, Kind: kind, Code: code}
}

// RefSet is the outcome of resolving every use in the parsed files against
// one target.
type RefSet struct {
	Sites []Site
	// Review lists what names the target in a way that cannot be rewired
	// safely (dotted-name strings, unbound names, imports from modules
	// outside the tree), when asked for.
	Review []Ref
	// Conflicts are uses that denote the target and something else.
	Conflicts []string
}

// references finds every use, import and attribute access, in every parsed
// file, that denotes target, outside the ignored ranges. Uses spelled with
// the target's name are marked for renaming; uses through an alias are wired
// by renaming the alias's import and are listed without an edit. review
// adds the items a proof must show a person.
func (r *resolver) references(target Val, review bool) RefSet {
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
				r.nameUse(&rs, fi, u, target, review)
			} else {
				r.attrUse(&rs, fi, u, target)
			}
		}
		r.fromRefs(&rs, fi, target, review)
		if review {
			for _, s := range fi.strs {
				rs.Review = append(rs.Review, mkRef(fi, s, "string (not rewired)"))
			}
		}
	}
	sort.SliceStable(rs.Sites, func(i, j int) bool { return refLess(rs.Sites[i].Ref, rs.Sites[j].Ref) })
	sort.SliceStable(rs.Review, func(i, j int) bool { return refLess(rs.Review[i], rs.Review[j]) })
	return rs
}

// nameUse classifies a bare name use against target.
func (r *resolver) nameUse(rs *RefSet, fi *Info, u use, target Val, review bool) {
	st := fi.st
	name := st.text(u.node)
	bs := lookup(fi, u.scope, name)
	if !r.interest[name] && !importsInterest(bs, r.interest) {
		return // not an alias: cannot denote the target
	}
	if len(bs) == 0 {
		if name == target.name && review {
			rs.Review = append(rs.Review, mkRef(fi, u.node, "unbound name (star import? not rewired)"))
		}
		return
	}
	yes, no, alias := false, false, false
	for _, b := range bs {
		if has(r.binding(fi, b), target) {
			yes = true
			alias = alias || b.kind == bFrom || b.kind == bImport
		} else {
			no = true
		}
	}
	if !yes {
		return
	}
	if no {
		at := mkRef(fi, u.node, "")
		rs.Conflicts = append(rs.Conflicts, fmt.Sprintf("%s:%d: %s is bound both to %s of %s and to something else in this scope; wire it by hand",
			at.Path, at.Line, name, target.name, target.path))
		return
	}
	if name == target.name {
		rs.Sites = append(rs.Sites, r.site(fi, u, useKindText(fi, u, ""), true, true))
	} else if alias {
		rs.Sites = append(rs.Sites, r.site(fi, u, useKindText(fi, u, "alias "+name), false, false))
	}
}

// attrUse classifies module.NAME against target.
func (r *resolver) attrUse(rs *RefSet, fi *Info, u use, target Val) {
	name := fi.st.text(u.node)
	for _, v := range r.expr(fi, u.obj, u.scope) {
		if !v.mod || !has(r.attrOf(v.path, name), target) {
			continue
		}
		if name == target.name {
			rs.Sites = append(rs.Sites, r.site(fi, u, useKindText(fi, u, "module attribute"), true, false))
		} else { // a re-export reached as an attribute: wired by its module's import
			rs.Sites = append(rs.Sites, r.site(fi, u, useKindText(fi, u, "module attribute re-export "+name), false, false))
		}
		return
	}
}

func (r *resolver) site(fi *Info, u use, kind string, rename, bare bool) Site {
	n := fi.st.nodes[u.node]
	return Site{Ref: mkRef(fi, u.node, kind), Node: u.node, Start: int(n.start), End: int(n.end), Rename: rename, Bare: bare, Call: isCallee(fi, u)}
}

// fromRefs lists the from-imports of fi that import target.
func (r *resolver) fromRefs(rs *RefSet, fi *Info, target Val, review bool) {
	st := fi.st
	for _, b := range fi.froms {
		if !r.interest[b.imported] || inRanges(fi.ignore, st.nodes[b.impNode].start) {
			continue
		}
		vals := r.binding(fi, b)
		if len(vals) == 0 && b.imported == target.name && review {
			// An import the tree cannot resolve may still be the target
			// (a module outside the root, a path resolved wrongly): say so
			// rather than count it as nothing.
			rs.Review = append(rs.Review, mkRef(fi, b.impNode, "import from a module not found in this tree (not rewired)"))
			continue
		}
		if !has(vals, target) {
			continue
		}
		kind := "import"
		if b.name != b.imported {
			kind = "import as " + b.name
		}
		n := st.nodes[b.impNode]
		if b.imported == target.name {
			rs.Sites = append(rs.Sites, Site{Ref: mkRef(fi, b.impNode, kind), Node: b.impNode, Start: int(n.start), End: int(n.end), Rename: true, Bare: b.name == b.imported})
		} else {
			rs.Sites = append(rs.Sites, Site{Ref: mkRef(fi, b.impNode, "import of re-export "+b.imported), Node: b.impNode, Start: int(n.start), End: int(n.end)})
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
