package patches

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// The resolver answers, for any name or attribute use in any file, "which
// module-level definition does this denote?", following imports, aliases and
// re-exports across the tree. It is what turns "every reference" from a text
// search into a property that can be proven.

// val is what an expression denotes: a module (a .py file or a package
// directory) or a module-level name of a file.
type val struct {
	mod  bool
	path string
	name string
}

type symKey struct{ path, name string }

type resolver struct {
	t      *Tree
	rec    *Recipe
	infos  map[string]*fileInfo
	broken map[string]*syntaxError // parsed with errors
	ps     *parser                 // for files parsed on demand
	idx    *moduleIndex
	memo   map[symKey][]val
	active map[symKey]bool
	// interest holds the names the function can be imported under: its own,
	// the dispatcher's and every re-export alias. A from-import of any other
	// name cannot denote it, so it is never followed (following it would
	// parse the imported module for nothing).
	interest map[string]bool
}

// moduleIndex maps dotted module names to paths. Absolute imports are matched
// by suffix ("sglang.srt.environ" is python/sglang/srt/environ.py), so the
// source root (python/, src/, the root itself) never has to be guessed.
type moduleIndex struct {
	files  map[string]bool
	dirs   map[string]bool
	byLast map[string][]string
	// above is the root's own path, as components: a tree rooted at
	// .../python/sglang still resolves "sglang.srt.x".
	above []string
}

func newModuleIndex(root string, paths []string) *moduleIndex {
	ix := &moduleIndex{files: map[string]bool{}, dirs: map[string]bool{}, byLast: map[string][]string{}}
	if root != "" {
		ix.above = strings.Split(strings.Trim(filepath.ToSlash(root), "/"), "/")
	}
	for _, p := range paths {
		ix.files[p] = true
		stem := strings.TrimSuffix(p[strings.LastIndexByte(p, '/')+1:], ".py")
		if stem != "__init__" {
			ix.byLast[stem] = append(ix.byLast[stem], p)
		}
		for d := dirOf(p); d != "" && !ix.dirs[d]; d = dirOf(d) {
			ix.dirs[d] = true
			ix.byLast[d[strings.LastIndexByte(d, '/')+1:]] = append(ix.byLast[d[strings.LastIndexByte(d, '/')+1:]], d)
		}
	}
	return ix
}

// lookup returns the files and package directories whose dotted path ends
// with dotted.
func (ix *moduleIndex) lookup(dotted string) []string {
	parts := strings.Split(dotted, ".")
	var out []string
	for _, p := range ix.byLast[parts[len(parts)-1]] {
		comps := append(append([]string(nil), ix.above...), strings.Split(strings.TrimSuffix(p, ".py"), "/")...)
		if len(comps) < len(parts) {
			continue
		}
		ok := true
		for i := range parts {
			if comps[len(comps)-len(parts)+i] != parts[i] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// at returns the module at a relative path (file first, then package).
func (ix *moduleIndex) at(p string) []string {
	var out []string
	if ix.files[p+".py"] {
		out = append(out, p+".py")
	}
	if ix.dirs[p] {
		out = append(out, p)
	}
	return out
}

// reuse carries a planning session's parses into the proof: a file whose
// bytes did not change keeps its analysis (same bytes, same parse), and an
// edited file is re-parsed incrementally from its old tree and the edits.
type reuse struct {
	infos map[string]*fileInfo
	edits map[string][]edit
}

// parseAll parses the given files on all cores. keep retains the C trees
// (freed by the session) for a later incremental re-parse.
func parseAll(t *Tree, paths []string, rec *Recipe, keep, full bool, ru *reuse, extra []string) (map[string]*fileInfo, map[string]*syntaxError, []*fileInfo, error) {
	infos := make([]*fileInfo, len(paths))
	fresh := make([]bool, len(paths))
	errs := make([]error, len(paths))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(paths) {
		workers = len(paths)
	}
	jobs := make(chan int, len(paths))
	for i := range paths {
		jobs <- i
	}
	close(jobs)
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		go func() {
			ps := newParser()
			defer ps.close()
			for i := range jobs {
				p := paths[i]
				data := t.Files[p].Data
				var old *cTree
				var oldSrc []byte
				var edits []edit
				if ru != nil {
					if prior := ru.infos[p]; prior != nil {
						if bytes.Equal(prior.st.src, data) {
							infos[i] = prior
							continue
						}
						if es, ok := ru.edits[p]; ok {
							old, oldSrc, edits = prior.st.ctree, prior.st.src, es
						}
					}
				}
				var fi *fileInfo
				var err error
				if old != nil && old.t != nil {
					var st *syntaxTree
					if st, err = ps.parseInc(data, old, oldSrc, edits, keep); err == nil {
						fi = analyze(p, st, rec, nil)
					}
				} else {
					fi, err = parseFile(ps, p, data, rec, keep, full, extra)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", p, err)
					continue
				}
				infos[i] = fi
				fresh[i] = true
			}
			done <- struct{}{}
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	out := make(map[string]*fileInfo, len(paths))
	broken := map[string]*syntaxError{}
	var own []*fileInfo
	for i, p := range paths {
		if errs[i] != nil {
			for _, fi := range own {
				fi.st.ctree.free()
			}
			return nil, nil, nil, errs[i]
		}
		out[p] = infos[i]
		if fresh[i] {
			own = append(own, infos[i])
		}
		if infos[i].st.err != nil {
			broken[p] = infos[i].st.err
		}
	}
	return out, broken, own, nil
}

// parseFile parses and analyzes one file: only its relevant top-level
// statements (see chunks.go) unless full is set, the file is SGLang's
// environ.py (read whole for its class), or the partial parse fails.
func parseFile(ps *parser, p string, data []byte, rec *Recipe, keep, full bool, extra []string) (*fileInfo, error) {
	if !full && path.Base(p) != rec.EnvironFile {
		if fi, err := parseChunked(ps, p, data, rec, extra); err != nil || fi != nil {
			return fi, err
		}
	}
	st, err := ps.parseInc(data, nil, nil, nil, keep)
	if err != nil {
		return nil, err
	}
	return analyze(p, st, rec, extra), nil
}

// parseChunked parses the chunks that spell a name of interest, widening the
// set with the aliases and module names it finds until nothing new is
// needed. It returns nil (and no error) when the whole file must be parsed.
func parseChunked(ps *parser, p string, data []byte, rec *Recipe, extra []string) (*fileInfo, error) {
	starts := topLevelStarts(data)
	words := append([]string{rec.Old, rec.Dispatcher, "import"}, extra...)
	have := map[string]bool{}
	for _, w := range words {
		have[w] = true
	}
	var prev [][2]int
	var last *fileInfo
	for round := 0; round < 8; round++ {
		ranges, all := selectChunks(data, starts, words, rec.Marker)
		if all || len(ranges) == 0 {
			return nil, nil
		}
		if last != nil && sameRanges(prev, ranges) {
			return last, nil // the new words are in chunks already parsed
		}
		st, err := ps.parseRanges(data, ranges)
		if err != nil {
			return nil, err
		}
		if st.err != nil {
			return nil, nil // a whole parse reports the real error
		}
		if !chunksParsedApart(st, starts, ranges) {
			return nil, nil // tree-sitter joined two chunks: trust only a whole parse
		}
		fi := analyze(p, st, rec, extra)
		fi.words = have
		grew := false
		for _, w := range reachWords(fi, rec, have) {
			if !have[w] {
				have[w] = true
				words = append(words, w)
				grew = true
			}
		}
		if !grew {
			return fi, nil
		}
		prev, last = ranges, fi
	}
	return nil, nil
}

// chunksParsedApart checks the partial parse against the chunking: every
// chunk start inside the parsed ranges (but the file's first) must begin a
// top-level statement. tree-sitter sometimes reads across a line break that
// Python would end a statement at (a one-line def body ending in a comma),
// and then the parse of the chunks alone may differ from the whole file's.
func chunksParsedApart(st *syntaxTree, starts []int, ranges [][2]int) bool {
	begins := map[int]bool{}
	for c := st.nodes[0].first; c >= 0; c = st.nodes[c].next {
		begins[int(st.nodes[c].start)] = true
	}
	for _, r := range ranges {
		for _, s := range starts {
			if s > 0 && s >= r[0] && s < r[1] && !begins[s] {
				return false
			}
		}
	}
	return true
}

func sameRanges(a, b [][2]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// reachWords are the names through which a parsed chunk reaches the
// function: aliases it imports it (or a re-export of it, one of words) under,
// and the roots of module attribute chains that end in its name. Statements
// that spell them elsewhere in the file use or rebind them, so they must be
// parsed too.
func reachWords(fi *fileInfo, rec *Recipe, words map[string]bool) []string {
	var out []string
	for _, b := range fi.froms {
		if (b.imported == rec.Old || b.imported == rec.Dispatcher || words[b.imported]) && b.name != b.imported {
			out = append(out, b.name)
		}
	}
	st := fi.st
	for _, u := range fi.uses {
		if u.kind != uAttr {
			continue
		}
		o := u.obj
		for o >= 0 && st.nodes[o].kind == "attribute" {
			o = st.child(o, "object")
		}
		if o >= 0 && st.nodes[o].kind == "identifier" {
			out = append(out, st.text(o))
		}
	}
	return out
}

func newResolver(t *Tree, rec *Recipe, infos map[string]*fileInfo, broken map[string]*syntaxError) *resolver {
	return &resolver{t: t, rec: rec, infos: infos, broken: broken, idx: newModuleIndex(t.Root, t.paths),
		memo: map[symKey][]val{}, active: map[symKey]bool{},
		interest: map[string]bool{rec.Old: true, rec.Dispatcher: true}}
}

func (r *resolver) close() {
	if r.ps != nil {
		r.ps.close()
	}
}

// info returns the analysis of a file, parsing it on demand when a chain of
// imports leads into a file the byte prefilter did not select.
func (r *resolver) info(p string) *fileInfo {
	if fi, ok := r.infos[p]; ok {
		return fi
	}
	f, ok := r.t.Files[p]
	if !ok {
		r.infos[p] = nil
		return nil
	}
	if r.ps == nil {
		r.ps = newParser()
	}
	st, err := r.ps.parse(f.Data)
	if err != nil {
		r.infos[p] = nil
		return nil
	}
	fi := analyze(p, st, r.rec, nil)
	r.infos[p] = fi
	if st.err != nil {
		r.broken[p] = st.err
	}
	return fi
}

// modules resolves an import's module as seen from file from.
func (r *resolver) modules(from string, m modSpec) []string {
	if m.level == 0 {
		if m.dotted == "" {
			return nil
		}
		return r.idx.lookup(m.dotted)
	}
	base := dirOf(from)
	for i := 1; i < m.level; i++ {
		if base == "" {
			return nil
		}
		base = dirOf(base)
	}
	if m.dotted == "" {
		if base == "" {
			return nil
		}
		return []string{base}
	}
	return r.idx.at(joinPath(base, strings.ReplaceAll(m.dotted, ".", "/")))
}

// attrOf is module m's attribute name: a submodule or a module-level name.
func (r *resolver) attrOf(m, name string) []val {
	if strings.HasSuffix(m, ".py") {
		return r.symbol(m, name)
	}
	var out []val
	for _, sub := range r.idx.at(joinPath(m, name)) {
		out = append(out, val{mod: true, path: sub})
	}
	// A submodule is what the name is, unless __init__ binds it too (rare);
	// only names of interest are worth parsing __init__ for then.
	if init := joinPath(m, "__init__.py"); r.idx.files[init] && (len(out) == 0 || r.interest[name]) {
		out = append(out, r.symbol(init, name)...)
	}
	return out
}

// symbol follows a module-level name of file p through imports to what it
// finally denotes. A name the module defines itself (def, class, assignment)
// is the end of the chain.
func (r *resolver) symbol(p, name string) []val {
	k := symKey{p, name}
	if v, ok := r.memo[k]; ok {
		return v
	}
	if r.active[k] { // import cycle
		return nil
	}
	r.active[k] = true
	defer delete(r.active, k)
	fi := r.info(p)
	var out []val
	if fi == nil {
		out = []val{{path: p, name: name}}
	} else if bs := fi.scopes[0].binds[name]; len(bs) == 0 {
		out = []val{{path: p, name: name}}
	} else {
		for _, b := range bs {
			out = append(out, r.binding(fi, b)...)
		}
	}
	r.memo[k] = out
	return out
}

// binding is what one binding denotes.
func (r *resolver) binding(fi *fileInfo, b *binding) []val {
	switch b.kind {
	case bImport:
		var out []val
		for _, m := range r.modules(fi.path, b.mod) {
			out = append(out, val{mod: true, path: m})
		}
		return out
	case bFrom:
		var out []val
		for _, m := range r.modules(fi.path, b.mod) {
			out = append(out, r.attrOf(m, b.imported)...)
		}
		return out
	default:
		if b.scope == 0 {
			return []val{{path: fi.path, name: b.name}}
		}
		return nil // a local: never a module-level definition
	}
}

// lookup finds the bindings a name use in scope sc sees (LEGB, with class
// bodies skipped from nested scopes), or nil for an unbound name.
func lookup(fi *fileInfo, sc int, name string) []*binding {
	if s := fi.scopes[sc]; s.global[name] {
		return fi.scopes[0].binds[name]
	}
	first := true
	for i := sc; i >= 0; i = fi.scopes[i].parent {
		s := &fi.scopes[i]
		if s.kind == scClass && !first {
			first = false
			continue
		}
		if !(first && s.nonlocal[name]) {
			if bs := s.binds[name]; len(bs) > 0 {
				return bs
			}
		}
		first = false
	}
	return nil
}

// expr is what an expression (a name or a dotted attribute chain) denotes.
func (r *resolver) expr(fi *fileInfo, i int32, sc int) []val {
	st := fi.st
	switch st.nodes[i].kind {
	case "identifier":
		var out []val
		for _, b := range lookup(fi, sc, st.text(i)) {
			out = append(out, r.binding(fi, b)...)
		}
		return out
	case "attribute":
		obj, at := st.child(i, "object"), st.child(i, "attribute")
		if obj < 0 || at < 0 {
			return nil
		}
		var out []val
		for _, v := range r.expr(fi, obj, sc) {
			if v.mod {
				out = append(out, r.attrOf(v.path, st.text(at))...)
			}
		}
		return out
	}
	return nil
}

func has(vs []val, target val) bool {
	for _, v := range vs {
		if v == target {
			return true
		}
	}
	return false
}
