package patches

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

// site is a reference with what is needed to rewrite it.
type site struct {
	Ref
	start, end uint32 // the identifier to rename, when rename
	rename     bool
	bare       bool // the rename changes what a bare name binds or denotes (not an attribute)
}

func mkRef(fi *fileInfo, i int32, kind string) Ref {
	st := fi.st
	line, col := lineCol(st.src, int(st.nodes[i].start))
	ls := bytes.LastIndexByte(st.src[:st.nodes[i].start], '\n') + 1
	le := bytes.IndexByte(st.src[ls:], '\n')
	if le < 0 {
		le = len(st.src) - ls
	}
	code := strings.TrimSpace(string(st.src[ls : ls+le]))
	if len(code) > 100 {
		code = code[:97] + "..."
	}
	return Ref{Path: fi.path, Line: line, Col: col, Kind: kind, Code: code}
}

// refSet is the outcome of resolving every use in the parsed files against
// one target.
type refSet struct {
	sites     []site
	review    []Ref
	conflicts []string
}

// references finds every use, import and attribute access, in every parsed
// file, that denotes target, outside mlagen's own blocks. Uses spelled with
// the target's name are marked for renaming; uses through an alias are wired
// by renaming the alias's import and are listed without an edit.
func (r *resolver) references(target val, listStrings bool) refSet {
	var rs refSet
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
		st := fi.st
		for _, u := range fi.uses {
			if inBlocks(fi.blocks, st.nodes[u.node].start) {
				continue
			}
			name := st.text(u.node)
			switch u.kind {
			case uName:
				bs := lookup(fi, u.scope, name)
				if !r.interest[name] && !importsInterest(bs, r.interest) {
					continue // not an alias: cannot denote the function
				}
				if len(bs) == 0 {
					if name == target.name && name == r.rec.Old && listStrings {
						rs.review = append(rs.review, mkRef(fi, u.node, "unbound name (star import? not rewired)"))
					}
					continue
				}
				yes, no := false, false
				alias := false
				for _, b := range bs {
					if has(r.binding(fi, b), target) {
						yes = true
						alias = alias || b.kind == bFrom || b.kind == bImport
					} else {
						no = true
					}
				}
				if !yes {
					continue
				}
				if no {
					at := mkRef(fi, u.node, "")
					rs.conflicts = append(rs.conflicts, fmt.Sprintf("%s:%d: %s is bound both to %s of %s and to something else in this scope; wire it by hand",
						at.Path, at.Line, name, target.name, target.path))
					continue
				}
				if name == target.name {
					rs.sites = append(rs.sites, site{Ref: mkRef(fi, u.node, useKindText(fi, u, "")), start: st.nodes[u.node].start, end: st.nodes[u.node].end, rename: true, bare: true})
				} else if alias {
					rs.sites = append(rs.sites, site{Ref: mkRef(fi, u.node, useKindText(fi, u, "alias "+name))})
				}
			case uAttr:
				hit := false
				for _, v := range r.expr(fi, u.obj, u.scope) {
					if v.mod && has(r.attrOf(v.path, name), target) {
						hit = true
						break
					}
				}
				switch {
				case !hit:
				case name == target.name:
					rs.sites = append(rs.sites, site{Ref: mkRef(fi, u.node, useKindText(fi, u, "module attribute")), start: st.nodes[u.node].start, end: st.nodes[u.node].end, rename: true})
				default: // a re-export reached as an attribute: wired by its module's import
					rs.sites = append(rs.sites, site{Ref: mkRef(fi, u.node, useKindText(fi, u, "module attribute re-export "+name))})
				}
			}
		}
		for _, b := range fi.froms {
			if !r.interest[b.imported] || inBlocks(fi.blocks, st.nodes[b.impNode].start) {
				continue
			}
			vals := r.binding(fi, b)
			if len(vals) == 0 && b.imported == r.rec.Old && target.name == r.rec.Old && listStrings {
				// An import the tree cannot resolve may still be the
				// function (a module outside the root, a path mlagen got
				// wrong): say so rather than count it as nothing.
				rs.review = append(rs.review, mkRef(fi, b.impNode, "import from a module not found in this tree (not rewired)"))
				continue
			}
			if !has(vals, target) {
				continue
			}
			kind := "import"
			if b.name != b.imported {
				kind = "import as " + b.name
			}
			if b.imported == target.name {
				rs.sites = append(rs.sites, site{Ref: mkRef(fi, b.impNode, kind), start: st.nodes[b.impNode].start, end: st.nodes[b.impNode].end, rename: true, bare: b.name == b.imported})
			} else {
				rs.sites = append(rs.sites, site{Ref: mkRef(fi, b.impNode, "import of re-export "+b.imported)})
			}
		}
		if listStrings {
			for _, s := range fi.strs {
				rs.review = append(rs.review, mkRef(fi, s, "string (not rewired)"))
			}
		}
	}
	sort.SliceStable(rs.sites, func(i, j int) bool { return refLess(rs.sites[i].Ref, rs.sites[j].Ref) })
	sort.SliceStable(rs.review, func(i, j int) bool { return refLess(rs.review[i], rs.review[j]) })
	return rs
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
func useKindText(fi *fileInfo, u use, via string) string {
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
