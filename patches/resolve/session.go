package resolve

import (
	"bytes"
	"path"
	"runtime"
	"sort"
	"strings"
)

// Options tune how a Session parses.
type Options struct {
	// Keep retains the C syntax trees so that a later session can re-parse
	// edited files incrementally (Session.Reuse).
	Keep bool
	// Whole parses every selected file whole, never in part (tests use it to
	// check that both see the same references).
	Whole bool
	// Reuse builds on an earlier session's parses of the same tree.
	Reuse *Reuse
}

// Session is one parse of a tree under one Config: the selected files'
// analyses and a resolver over them. Close releases the C memory it holds.
type Session struct {
	t      *Tree
	cfg    *Config
	opt    Options
	infos  map[string]*Info
	broken map[string]*SyntaxError
	r      *resolver
	parsed int
	own    []*Info // parsed by this session: its C trees are freed by Close
}

// Load selects the files that can matter (the byte prefilter), parses them
// and follows re-exports until no new name turns up.
func Load(t *Tree, cfg *Config, opt Options) (*Session, error) {
	cfg.prepare()
	// The byte prefilter is most of the cost on a big checkout: run it on
	// all cores, once per file (a tree after changes shares its unchanged
	// files, and their verdicts, with the tree before).
	all := make([]*File, 0, len(t.paths))
	for _, p := range t.paths {
		if f, ok := t.Files[p]; ok {
			all = append(all, f)
		}
	}
	Parallel(len(all), runtime.GOMAXPROCS(0), func(i int) {
		f := all[i]
		if f.candFor != cfg {
			f.cand, f.candFor = cfg.candidate(f), cfg
		}
	})
	var paths []string
	for _, f := range all {
		if f.cand {
			paths = append(paths, f.Path)
		}
	}
	infos, broken, own, err := parseAll(t, paths, cfg, opt.Keep, opt.Whole, opt.Reuse, nil)
	if err != nil {
		return nil, err
	}
	s := &Session{t: t, cfg: cfg, opt: opt, infos: infos, broken: broken, parsed: len(paths), own: own}
	s.r = newResolver(t, cfg, infos, broken)
	known, err := s.reexports()
	if err != nil {
		s.Close()
		return nil, err
	}
	for w := range known {
		s.r.interest[w] = true
	}
	return s, nil
}

// Close releases what the session holds in C memory.
func (s *Session) Close() {
	if s.r != nil {
		s.r.close()
	}
	for _, fi := range s.own {
		fi.st.ctree.free()
	}
	s.own = nil
}

// reexports follows names under which a module re-exports a name of
// interest ("from .m import f as g"): a file that imports g from it need not
// spell f, so files that spell such a name are parsed too (and files parsed
// partially before are parsed again with it), until no new name turns up.
func (s *Session) reexports() (map[string]bool, error) {
	known := map[string]bool{}
	names := map[string]bool{}
	for _, n := range s.cfg.Names {
		names[n] = true
	}
	for round := 0; round < 8; round++ {
		fresh := s.newAliases(names, known)
		if len(fresh) == 0 {
			return known, nil
		}
		var all []string
		for w := range known {
			all = append(all, w)
		}
		sort.Strings(all)
		var redo []string
		for _, p := range s.t.paths {
			f, ok := s.t.Files[p]
			if !ok || !spellsAny(f.Data, fresh) {
				continue
			}
			if fi := s.infos[p]; fi != nil && (fi.words == nil || hasAll(fi.words, fresh)) {
				continue // parsed whole, or already with these names
			}
			redo = append(redo, p)
		}
		if len(redo) == 0 {
			return known, nil
		}
		if err := s.parseMore(redo, all); err != nil {
			return nil, err
		}
	}
	return known, nil
}

// newAliases returns the module-level from-import aliases of a name of
// interest (or of a known alias) not seen before, and adds them to known.
func (s *Session) newAliases(names, known map[string]bool) []string {
	var fresh []string
	for _, p := range s.t.paths {
		fi := s.infos[p]
		if fi == nil {
			continue
		}
		for _, b := range fi.scopes[0].binds {
			for _, bd := range b {
				if bd.kind != bFrom || bd.name == bd.imported || known[bd.name] {
					continue
				}
				if names[bd.imported] || known[bd.imported] {
					known[bd.name] = true
					fresh = append(fresh, bd.name)
				}
			}
		}
	}
	return fresh
}

// parseMore parses paths (again), partially with extra names of interest,
// and takes the results into the session.
func (s *Session) parseMore(paths []string, extra []string) error {
	infos, broken, own, err := parseAll(s.t, paths, s.cfg, s.opt.Keep, s.opt.Whole, nil, extra)
	if err != nil {
		return err
	}
	for p, fi := range infos {
		if _, seen := s.infos[p]; !seen {
			s.parsed++
		}
		s.infos[p] = fi
		delete(s.broken, p)
	}
	for p, e := range broken {
		s.broken[p] = e
	}
	s.own = append(s.own, own...)
	return nil
}

func spellsAny(src []byte, words []string) bool {
	for _, w := range words {
		if bytes.Contains(src, []byte(w)) && len(wordAt(src, w)) > 0 {
			return true
		}
	}
	return false
}

func hasAll(set map[string]bool, words []string) bool {
	for _, w := range words {
		if !set[w] {
			return false
		}
	}
	return true
}

// ParseSpelling parses more files: those not parsed yet that contain word
// (a module's name: files that import it without naming a target), so that
// their syntax errors are seen and counted. Only their statements that spell
// word (or import) are parsed.
func (s *Session) ParseSpelling(word string) error {
	var todo []*File
	for _, p := range s.t.paths {
		if _, done := s.infos[p]; done {
			continue
		}
		if f, ok := s.t.Files[p]; ok {
			todo = append(todo, f)
		}
	}
	Parallel(len(todo), runtime.GOMAXPROCS(0), func(i int) {
		if f := todo[i]; f.stemFor != word {
			f.hasStem, f.stemFor = bytes.Contains(f.Data, []byte(word)), word
		}
	})
	var paths []string
	for _, f := range todo {
		if f.hasStem {
			paths = append(paths, f.Path)
		}
	}
	infos, broken, own, err := parseAll(s.t, paths, s.cfg, s.opt.Keep, s.opt.Whole, s.opt.Reuse, []string{word})
	if err != nil {
		return err
	}
	s.own = append(s.own, own...)
	for p, fi := range infos {
		s.infos[p] = fi
	}
	for p, e := range broken {
		s.broken[p] = e
	}
	s.parsed += len(paths)
	return nil
}

// Reuse hands this session's parses to a later session over the tree after
// edits (by path, offsets into the files as this session read them). The
// session must have been loaded with Keep and stay open until then.
func (s *Session) Reuse(edits map[string][]Edit) *Reuse {
	return &Reuse{infos: s.infos, edits: edits}
}

// Tree is the tree the session parsed.
func (s *Session) Tree() *Tree { return s.t }

// Parsed is how many files the session parsed.
func (s *Session) Parsed() int { return s.parsed }

// Info is the analysis of a parsed file, or nil.
func (s *Session) Info(path string) *Info { return s.infos[path] }

// Infos lists the parsed files' analyses by path.
func (s *Session) Infos() []*Info {
	var out []*Info
	for _, fi := range s.infos {
		if fi != nil {
			out = append(out, fi)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// Broken lists the parsed files that do not parse, with the first error.
func (s *Session) Broken() map[string]*SyntaxError { return s.broken }

// References resolves every use in the parsed files against target; review
// adds what a person must judge (strings, unbound names, imports from
// modules outside the tree).
func (s *Session) References(target Val, review bool) RefSet {
	return s.r.references(Query{Names: []string{target.name}, Match: func(v Val) bool { return v == target }}, review)
}

// Find is References for every value q matches.
func (s *Session) Find(q Query, review bool) RefSet { return s.r.references(q, review) }

// Bound is one binding of a name in a file, with what it denotes.
type Bound struct {
	Ref
	Denotes []Val
}

// Bindings lists every binding of name in the file at path (any scope),
// outside the ignored ranges.
func (s *Session) Bindings(path, name string) []Bound {
	fi := s.infos[path]
	if fi == nil {
		return nil
	}
	var out []Bound
	for _, sc := range fi.scopes {
		for _, b := range sc.binds[name] {
			if inRanges(fi.ignore, fi.st.nodes[b.node].start) {
				continue
			}
			out = append(out, Bound{Ref: mkRef(fi, b.node, "binding"), Denotes: s.r.binding(fi, b)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return refLess(out[i].Ref, out[j].Ref) })
	return out
}

// Rebinds lists the statements that bind name in the module namespace of
// the file at path, other than the definition at node def: a module-level
// assignment, import or second def, or a binding in a function that
// declares the name global.
func (s *Session) Rebinds(path, name string, def int32) []Ref {
	fi := s.infos[path]
	if fi == nil {
		return nil
	}
	var out []Ref
	for i, sc := range fi.scopes {
		if i != 0 && !sc.global[name] {
			continue
		}
		for _, b := range sc.binds[name] {
			if fi.st.nodes[b.node].parent == def || inRanges(fi.ignore, fi.st.nodes[b.node].start) {
				continue
			}
			out = append(out, mkRef(fi, b.node, "binding"))
		}
	}
	sort.Slice(out, func(i, j int) bool { return refLess(out[i], out[j]) })
	return out
}

// UnboundUses lists the uses of name in the file at path that no scope
// binds, outside the ignored ranges, as sites (renaming one renames the
// use).
func (s *Session) UnboundUses(path, name string) []Site {
	fi := s.infos[path]
	if fi == nil {
		return nil
	}
	var out []Site
	for _, u := range fi.uses {
		if u.kind != uName || fi.st.text(u.node) != name || inRanges(fi.ignore, fi.st.nodes[u.node].start) {
			continue
		}
		if len(lookup(fi, u.scope, name)) == 0 {
			out = append(out, s.r.site(fi, u, Val{path: path, name: name}, "unbound name", true, true))
		}
	}
	return out
}

// ModuleName is the dotted import name of a file. Under a root that is
// itself inside a package (site-packages/sglang) it is that package and the
// file's path, every directory below being a package (regular or
// namespace); in a checkout it is the file's package chain (by
// __init__.py), or, outside packages, its path with sourceRoot ("python" in
// a checkout that keeps its packages there) dropped.
func (s *Session) ModuleName(p, sourceRoot string) string {
	if s.t.Package != "" {
		return s.t.Package + "." + strings.ReplaceAll(strings.TrimSuffix(p, ".py"), "/", ".")
	}
	parts := []string{strings.TrimSuffix(path.Base(p), ".py")}
	d := DirOf(p)
	for d != "" && s.r.idx.files[JoinPath(d, "__init__.py")] {
		parts = append([]string{path.Base(d)}, parts...)
		d = DirOf(d)
	}
	if len(parts) == 1 {
		rel := strings.TrimSuffix(p, ".py")
		if sourceRoot != "" {
			rel = strings.TrimPrefix(rel, sourceRoot+"/")
		}
		return strings.ReplaceAll(rel, "/", ".")
	}
	return strings.Join(parts, ".")
}
