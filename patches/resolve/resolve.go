package resolve

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

// Val is what an expression denotes: a module (a .py file or a package
// directory) or a module-level name of a file.
type Val struct {
	mod  bool
	path string
	name string
	// star: reached through a star import (which a caller may not be able
	// to rewire), never equal to the same name reached otherwise.
	star bool
}

// Def is the module-level name of the file at path (a slash path relative
// to the tree's root): a target to find the references of.
func Def(path, name string) Val { return Val{path: path, name: name} }

// Path is the file (or package directory) a Val is in; Name its name, ""
// for a module.
func (v Val) Path() string { return v.path }
func (v Val) Name() string { return v.name }

// Star reports whether the value was reached through a star import.
func (v Val) Star() bool { return v.star }

// Plain is the value without the star-import mark.
func (v Val) Plain() Val { v.star = false; return v }

type symKey struct{ path, name string }

type resolver struct {
	t      *Tree
	cfg    *Config
	infos  map[string]*Info
	broken map[string]*SyntaxError // parsed with errors
	ps     *parser                 // for files parsed on demand
	idx    *moduleIndex
	memo   map[symKey][]Val
	active map[symKey]bool
	// interest holds the names a target can be imported under: the names
	// of interest and every re-export alias. A from-import of any other
	// name cannot denote one, so it is never followed (following it would
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
	// alias maps the paths an in-tree symlink makes importable (the link
	// and what lies under it) to the real paths: "layers/x.py" is
	// "layers_real/x.py" when layers -> layers_real.
	alias map[string]string
}

func newModuleIndex(root string, paths []string, links []Link) *moduleIndex {
	ix := &moduleIndex{files: map[string]bool{}, dirs: map[string]bool{}, byLast: map[string][]string{}, alias: map[string]string{}}
	if root != "" {
		ix.above = strings.Split(strings.Trim(filepath.ToSlash(root), "/"), "/")
	}
	for _, p := range paths {
		ix.add(p)
	}
	// One level of links: a link inside a linked directory is not
	// followed again, so a link to an ancestor cannot loop.
	for _, l := range links {
		if ix.files[l.Target] {
			ix.aliasFile(l.Path, l.Target)
			continue
		}
		if !ix.dirs[l.Target] {
			continue
		}
		ix.aliasDir(l.Path, l.Target)
		prefix := l.Target + "/"
		for _, p := range paths {
			if rest, ok := strings.CutPrefix(p, prefix); ok {
				ix.aliasFile(l.Path+"/"+rest, p)
				for d := DirOf(rest); d != ""; d = DirOf(d) {
					ix.aliasDir(l.Path+"/"+d, prefix+d)
				}
			}
		}
	}
	return ix
}

func (ix *moduleIndex) add(p string) {
	ix.files[p] = true
	if stem := strings.TrimSuffix(path.Base(p), ".py"); stem != "__init__" {
		ix.byLast[stem] = append(ix.byLast[stem], p)
	}
	for d := DirOf(p); d != "" && !ix.dirs[d]; d = DirOf(d) {
		ix.dirs[d] = true
		ix.byLast[path.Base(d)] = append(ix.byLast[path.Base(d)], d)
	}
}

func (ix *moduleIndex) aliasFile(virtual, real string) {
	if ix.files[virtual] || ix.alias[virtual] != "" {
		return
	}
	ix.alias[virtual] = real
	if stem := strings.TrimSuffix(path.Base(virtual), ".py"); stem != "__init__" {
		ix.byLast[stem] = append(ix.byLast[stem], virtual)
	}
}

func (ix *moduleIndex) aliasDir(virtual, real string) {
	if ix.dirs[virtual] || ix.alias[virtual] != "" {
		return
	}
	ix.alias[virtual] = real
	ix.byLast[path.Base(virtual)] = append(ix.byLast[path.Base(virtual)], virtual)
}

// real is the path a module path names: itself, or what a link makes it.
func (ix *moduleIndex) real(p string) string {
	if r := ix.alias[p]; r != "" {
		return r
	}
	return p
}

// lookup returns the files and package directories whose dotted path ends
// with dotted.
func (ix *moduleIndex) lookup(dotted string) []string {
	parts := strings.Split(dotted, ".")
	seen := map[string]bool{}
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
		if r := ix.real(p); ok && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// at returns the module at a relative path (file first, then package).
func (ix *moduleIndex) at(p string) []string {
	var out []string
	if ix.files[p+".py"] || ix.alias[p+".py"] != "" {
		out = append(out, ix.real(p+".py"))
	}
	if ix.dirs[p] || ix.alias[p] != "" {
		out = append(out, ix.real(p))
	}
	return out
}

// Reuse carries a session's parses into a later one over the same tree after
// edits: a file whose bytes did not change keeps its analysis (same bytes,
// same parse), and an edited file is re-parsed incrementally from its old
// tree and the edits. The earlier session must have kept its trees (Keep)
// and must stay open until the later one is loaded.
type Reuse struct {
	infos map[string]*Info
	edits map[string][]Edit
}

// parseAll parses the given files on all cores. keep retains the C trees
// (freed by the session) for a later incremental re-parse.
func parseAll(t *Tree, paths []string, cfg *Config, keep, full bool, ru *Reuse, extra []string) (map[string]*Info, map[string]*SyntaxError, []*Info, error) {
	infos := make([]*Info, len(paths))
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
				infos[i], fresh[i], errs[i] = parseOne(ps, t.Files[paths[i]], cfg, keep, full, ru, extra)
			}
			done <- struct{}{}
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	out := make(map[string]*Info, len(paths))
	broken := map[string]*SyntaxError{}
	var own []*Info
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

// parseOne parses one file, reusing an earlier analysis when ru has one for
// the same bytes (fresh false) or re-parsing incrementally when ru has its
// edits.
func parseOne(ps *parser, f *File, cfg *Config, keep, full bool, ru *Reuse, extra []string) (*Info, bool, error) {
	if ru != nil {
		if prior := ru.infos[f.Path]; prior != nil {
			if bytes.Equal(prior.st.src, f.Data) {
				return prior, false, nil
			}
			if es, ok := ru.edits[f.Path]; ok && prior.st.ctree != nil && prior.st.ctree.t != nil {
				st, err := ps.parseInc(f.Data, prior.st.ctree, prior.st.src, es, keep)
				if err != nil {
					return nil, false, fmt.Errorf("%s: %w", f.Path, err)
				}
				return analyze(f.Path, st, cfg, nil), true, nil
			}
		}
	}
	fi, err := parseFile(ps, f.Path, f.Data, cfg, keep, full, extra)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", f.Path, err)
	}
	return fi, true, nil
}

// parseFile parses and analyzes one file: only its relevant top-level
// statements (see chunks.go) unless full is set, the caller wants the file
// whole, or the partial parse fails.
func parseFile(ps *parser, p string, data []byte, cfg *Config, keep, full bool, extra []string) (*Info, error) {
	if !full && !cfg.whole(p, data) {
		if fi, err := parseChunked(ps, p, data, cfg, extra); err != nil || fi != nil {
			return fi, err
		}
	}
	st, err := ps.parseInc(data, nil, nil, nil, keep)
	if err != nil {
		return nil, err
	}
	return analyze(p, st, cfg, extra), nil
}

// parseChunked parses the chunks that spell a name of interest, widening the
// set with the aliases and module names it finds until nothing new is
// needed. It returns nil (and no error) when the whole file must be parsed.
func parseChunked(ps *parser, p string, data []byte, cfg *Config, extra []string) (*Info, error) {
	starts := topLevelStarts(parserInput(data))
	// __all__ says what a star import of the module brings in.
	words := append(append(append([]string(nil), cfg.Names...), "import", "__all__"), extra...)
	have := map[string]bool{}
	for _, w := range words {
		have[w] = true
	}
	var prev [][2]int
	var last *Info
	for round := 0; round < 8; round++ {
		ranges, all := selectChunks(data, starts, words, cfg.Keep)
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
		fi := analyze(p, st, cfg, extra)
		fi.words = have
		grew := false
		for _, w := range reachWords(fi, have) {
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
func chunksParsedApart(st *Syntax, starts []int, ranges [][2]int) bool {
	begins := map[int]bool{}
	for c := st.nodes[0].first; c >= 0; c = st.nodes[c].next {
		begins[int(st.nodes[c].start)] = true
	}
	for _, r := range ranges {
		for k := sort.SearchInts(starts, r[0]); k < len(starts) && starts[k] < r[1]; k++ {
			if s := starts[k]; s > 0 && !begins[s] {
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

// reachWords are the names through which a parsed chunk reaches a name of
// interest: aliases it imports one (or a re-export of one; both are in
// words) under, and the roots of module attribute chains that end in one.
// Statements that spell them elsewhere in the file use or rebind them, so
// they must be parsed too.
func reachWords(fi *Info, words map[string]bool) []string {
	var out []string
	for _, b := range fi.froms {
		if words[b.imported] && b.name != b.imported {
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

func newResolver(t *Tree, cfg *Config, infos map[string]*Info, broken map[string]*SyntaxError) *resolver {
	r := &resolver{t: t, cfg: cfg, infos: infos, broken: broken, idx: newModuleIndex(t.Root, t.paths, t.Links),
		memo: map[symKey][]Val{}, active: map[symKey]bool{}, interest: map[string]bool{}}
	for _, n := range cfg.Names {
		r.interest[n] = true
	}
	return r
}

func (r *resolver) close() {
	if r.ps != nil {
		r.ps.close()
	}
}

// info returns the analysis of a file, parsing it on demand when a chain of
// imports leads into a file the byte prefilter did not select.
func (r *resolver) info(p string) *Info {
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
	fi := analyze(p, st, r.cfg, nil)
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
	base := DirOf(from)
	for i := 1; i < m.level; i++ {
		if base == "" {
			return nil
		}
		base = DirOf(base)
	}
	if m.dotted == "" {
		if base == "" {
			return nil
		}
		return []string{base}
	}
	return r.idx.at(JoinPath(base, strings.ReplaceAll(m.dotted, ".", "/")))
}

// attrOf is module m's attribute name: a submodule or a module-level name.
func (r *resolver) attrOf(m, name string) []Val {
	if strings.HasSuffix(m, ".py") {
		return r.symbol(m, name)
	}
	var out []Val
	for _, sub := range r.idx.at(JoinPath(m, name)) {
		out = append(out, Val{mod: true, path: sub})
	}
	// A submodule is what the name is, unless __init__ binds it too (rare);
	// only names of interest are worth parsing __init__ for then.
	if init := JoinPath(m, "__init__.py"); r.idx.files[init] && (len(out) == 0 || r.interest[name]) {
		out = append(out, r.symbol(init, name)...)
	}
	return out
}

// symbol follows a module-level name of file p through imports to what it
// finally denotes. A name the module defines itself (def, class, assignment)
// is the end of the chain.
func (r *resolver) symbol(p, name string) []Val {
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
	var out []Val
	if fi == nil {
		out = []Val{{path: p, name: name}}
	} else if bs := fi.scopes[0].binds[name]; len(bs) == 0 {
		// Unbound: what a star import brings in, or the name of p itself (a
		// name p does not have; Bound tells).
		if vals, a := r.starVals(fi, name, 0); a == Yes {
			out = vals
		} else {
			out = []Val{{path: p, name: name}}
		}
	} else {
		for _, b := range bs {
			out = append(out, r.binding(fi, b)...)
		}
	}
	r.memo[k] = out
	return out
}

// binding is what one binding denotes.
func (r *resolver) binding(fi *Info, b *binding) []Val {
	switch b.kind {
	case bImport:
		var out []Val
		for _, m := range r.modules(fi.path, b.mod) {
			out = append(out, Val{mod: true, path: m})
		}
		return out
	case bFrom:
		var out []Val
		for _, m := range r.modules(fi.path, b.mod) {
			out = append(out, r.attrOf(m, b.imported)...)
		}
		return out
	default:
		if b.scope == 0 {
			return []Val{{path: fi.path, name: b.name}}
		}
		return nil // a local: never a module-level definition
	}
}

// lookup finds the bindings a name use in scope sc sees (LEGB, with class
// bodies skipped from nested scopes), or nil for an unbound name.
func lookup(fi *Info, sc int, name string) []*binding {
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
func (r *resolver) expr(fi *Info, i int32, sc int) []Val {
	st := fi.st
	switch st.nodes[i].kind {
	case "identifier":
		var out []Val
		for _, b := range lookup(fi, sc, st.text(i)) {
			out = append(out, r.binding(fi, b)...)
		}
		return out
	case "attribute":
		obj, at := st.child(i, "object"), st.child(i, "attribute")
		if obj < 0 || at < 0 {
			return nil
		}
		var out []Val
		for _, v := range r.expr(fi, obj, sc) {
			if v.mod {
				out = append(out, r.attrOf(v.path, st.text(at))...)
			}
		}
		return out
	}
	return nil
}

func has(vs []Val, target Val) bool {
	for _, v := range vs {
		if v == target {
			return true
		}
	}
	return false
}
