package patches

import (
	"bytes"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
)

// Options configure Patch, Revert and Verify.
type Options struct {
	Recipe *Recipe
	// Module, when set, picks the defining module (a path relative to the
	// root) among several.
	Module string
	// Kernel is the generated kernel module's source (Patch only). The
	// rewriter never renders kernels itself.
	Kernel []byte
	// reuse lets Patch's proof build on its own parses.
	reuse *reuse
	// whole disables the partial (chunked) parse; tests use it to check
	// that both see the same references.
	whole bool
}

// Result is a planned run: the changes it makes and the report, whose proof
// was computed on the tree as it is after the changes.
type Result struct {
	Changes []Change
	Report  *Report
}

// Problem is a failure the user has to act on (as opposed to a bug or an I/O
// error): no defining module, several, a syntax error in a referencing
// file, an ambiguous binding. Lines carry the details.
type Problem struct {
	Msg   string
	Lines []string
}

func (p *Problem) Error() string {
	if len(p.Lines) == 0 {
		return p.Msg
	}
	return p.Msg + "\n  " + strings.Join(p.Lines, "\n  ")
}

// session is one parse of a tree: the candidate files' analyses and a
// resolver over them.
type session struct {
	t      *Tree
	rec    *Recipe
	infos  map[string]*fileInfo
	broken map[string]*syntaxError
	r      *resolver
	parsed int
	keep   bool
	whole  bool
	ru     *reuse
	own    []*fileInfo // parsed by this session: its C trees are freed by close
}

// close releases what the session holds in C memory.
func (s *session) close() {
	if s.r != nil {
		s.r.close()
	}
	for _, fi := range s.own {
		fi.st.ctree.free()
	}
	s.own = nil
}

// candidate is the byte prefilter: a file can only refer to the function if
// it spells its name (imports, calls, attributes all do) or the dispatcher's;
// mlagen's blocks live in those files, in environ.py and in the kernel
// module. Everything else is never parsed, which is most of a checkout. The
// scan looks for the part the two names share first, so that most files
// cost one pass.
func candidate(f *File, rec *Recipe) bool {
	d := f.Data
	switch path.Base(f.Path) {
	case rec.KernelModule:
		return true
	case rec.EnvironFile:
		if bytes.Contains(d, []byte("class "+rec.EnvironClass)) {
			return true
		}
	}
	if core := rec.sharedCore(); core != "" && !bytes.Contains(d, []byte(core)) {
		return false
	}
	return bytes.Contains(d, []byte(rec.Old)) || bytes.Contains(d, []byte(rec.Dispatcher))
}

func load(t *Tree, rec *Recipe, keep, whole bool, ru *reuse) (*session, error) {
	// The byte prefilter is most of the cost on a big checkout: run it on
	// all cores, once per file (a tree after changes shares its unchanged
	// files, and their verdicts, with the tree before).
	all := make([]*File, 0, len(t.paths))
	for _, p := range t.paths {
		if f, ok := t.Files[p]; ok {
			all = append(all, f)
		}
	}
	parallel(len(all), runtime.GOMAXPROCS(0), func(i int) {
		f := all[i]
		if f.candFor != rec {
			f.cand, f.candFor = candidate(f, rec), rec
		}
	})
	var paths []string
	for _, f := range all {
		if f.cand {
			paths = append(paths, f.Path)
		}
	}
	infos, broken, own, err := parseAll(t, paths, rec, keep, whole, ru, nil)
	if err != nil {
		return nil, err
	}
	s := &session{t: t, rec: rec, infos: infos, broken: broken, parsed: len(paths), keep: keep, whole: whole, ru: ru, own: own}
	s.r = newResolver(t, rec, infos, broken)
	known, err := s.reexports(whole)
	if err != nil {
		s.close()
		return nil, err
	}
	for w := range known {
		s.r.interest[w] = true
	}
	return s, nil
}

// reexports follows names under which a module re-exports the function
// ("from .m import _run_triton_sparse_decode as decode_simt"): a file that
// imports decode_simt from it need not spell the function's name, so files
// that spell such a name are parsed too (and files parsed partially before
// are parsed again with it), until no new name turns up.
func (s *session) reexports(whole bool) (map[string]bool, error) {
	known := map[string]bool{}
	for round := 0; round < 8; round++ {
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
					if bd.imported == s.rec.Old || bd.imported == s.rec.Dispatcher || known[bd.imported] {
						known[bd.name] = true
						fresh = append(fresh, bd.name)
					}
				}
			}
		}
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
		infos, broken, own, err := parseAll(s.t, redo, s.rec, s.keep, whole, nil, all)
		if err != nil {
			return nil, err
		}
		for p, fi := range infos {
			if _, seen := s.infos[p]; !seen {
				s.parsed++
			}
			s.infos[p] = fi
		}
		for p, e := range broken {
			s.broken[p] = e
		}
		s.own = append(s.own, own...)
	}
	return known, nil
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

// also parses more files (those that import the defining module without
// naming the function) so that their syntax errors are seen and counted.
func (s *session) also(stem string) error {
	var todo []*File
	for _, p := range s.t.paths {
		if _, done := s.infos[p]; done {
			continue
		}
		if f, ok := s.t.Files[p]; ok {
			todo = append(todo, f)
		}
	}
	parallel(len(todo), runtime.GOMAXPROCS(0), func(i int) {
		if f := todo[i]; f.stemFor != stem {
			f.hasStem, f.stemFor = bytes.Contains(f.Data, []byte(stem)), stem
		}
	})
	var paths []string
	for _, f := range todo {
		if f.hasStem {
			paths = append(paths, f.Path)
		}
	}
	// Statements that name the module (or import) are what can go wrong
	// for it; the rest of such a file is not parsed either.
	infos, broken, own, err := parseAll(s.t, paths, s.rec, s.keep, s.whole, s.ru, []string{stem})
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

// syntaxCheck stops the run on a file that does not parse and spells one of
// names (it may hold a reference that cannot be seen reliably); other broken
// files are returned to be reported as ignored.
func (s *session) syntaxCheck(names ...string) ([]string, error) {
	var bad, ignored []string
	var paths []string
	for p := range s.broken {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := s.broken[p]
		fi := s.infos[p]
		refers := false
		for _, n := range names {
			if fi != nil && fi.idents[n] {
				refers = true
			}
		}
		if refers {
			bad = append(bad, fmt.Sprintf("%s:%s (tree-sitter)", p, e))
		} else {
			ignored = append(ignored, fmt.Sprintf("%s:%s", p, e))
		}
	}
	if len(bad) > 0 {
		return nil, &Problem{Msg: fmt.Sprintf("syntax error in a file that references %s; fix it and run again (nothing was written):", names[0]), Lines: bad}
	}
	return ignored, nil
}

// definers lists the modules that define name at module level with def,
// outside mlagen's blocks.
func (s *session) definers(name string) []string {
	var out []string
	for p, fi := range s.infos {
		if fi == nil || fi.st.err != nil {
			continue
		}
		if defNode(fi, name) >= 0 {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// defNode is the function_definition of a module-level def of name, or -1.
func defNode(fi *fileInfo, name string) int32 {
	for _, b := range fi.scopes[0].binds[name] {
		if b.kind != bDef || inBlocks(fi.blocks, fi.st.nodes[b.node].start) {
			continue
		}
		if p := fi.st.nodes[b.node].parent; p >= 0 && fi.st.nodes[p].kind == "function_definition" {
			return p
		}
	}
	return -1
}

// pickModule chooses the defining module among candidates.
func pickModule(cands []string, opt Options, rec *Recipe) (string, error) {
	name := rec.Old
	if opt.Module != "" {
		m := path.Clean(strings.TrimPrefix(opt.Module, "./"))
		for _, c := range cands {
			if c == m {
				return c, nil
			}
		}
		return "", &Problem{Msg: fmt.Sprintf("--module %s does not define %s at module level", opt.Module, name), Lines: cands}
	}
	switch len(cands) {
	case 0:
		return "", &Problem{Msg: fmt.Sprintf("no module in this tree defines %s (upstream keeps it in %s; looked for a module-level def in every file that names it)", name, rec.SIMTModule)}
	case 1:
		return cands[0], nil
	}
	return "", &Problem{Msg: fmt.Sprintf("%d modules define %s; pick one with --module PATH:", len(cands), name), Lines: cands}
}

// environ finds SGLang's environ.py (a module-level class Envs), preferring
// sglang/srt/environ.py when a tree has several.
func (s *session) environ() *fileInfo {
	var found []*fileInfo
	for p, fi := range s.infos {
		if fi != nil && fi.envs >= 0 && path.Base(p) == s.rec.EnvironFile && fi.st.err == nil {
			found = append(found, fi)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		ai, aj := strings.HasSuffix(found[i].path, s.rec.EnvironPrefer), strings.HasSuffix(found[j].path, s.rec.EnvironPrefer)
		if ai != aj {
			return ai
		}
		return found[i].path < found[j].path
	})
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// moduleName is the dotted import name of a file: its package chain (by
// __init__.py), or, outside packages, its path with the recipe's source root
// ("python/" in SGLang) dropped.
func (s *session) moduleName(p string) string {
	parts := []string{strings.TrimSuffix(path.Base(p), ".py")}
	d := dirOf(p)
	for d != "" && s.r.idx.files[joinPath(d, "__init__.py")] {
		parts = append([]string{path.Base(d)}, parts...)
		d = dirOf(d)
	}
	if len(parts) == 1 {
		rel := strings.TrimSuffix(p, ".py")
		if s.rec.SourceRoot != "" {
			rel = strings.TrimPrefix(rel, s.rec.SourceRoot+"/")
		}
		return strings.ReplaceAll(rel, "/", ".")
	}
	return strings.Join(parts, ".")
}

func kernelHeader(rec *Recipe) string {
	return "# " + rec.Marker + " kernel module: written by `mlagen patch`, deleted by `mlagen patch --revert`.\n"
}

func kernelPath(rec *Recipe, module string) string { return joinPath(dirOf(module), rec.KernelModule) }

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

func applyEdits(src []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b bytes.Buffer
	b.Grow(len(src) + 4096)
	at := 0
	for _, e := range edits {
		b.Write(src[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.Write(src[at:])
	return b.Bytes()
}

// eolAt is the line ending that starts at offset at (a line end as
// lineEnd returns it); at the end of the file, or at a lone CR, it is the
// file's first line ending, or "\n". Inserted lines use it, so a CRLF file
// stays CRLF.
func eolAt(src []byte, at int) string {
	if at+1 < len(src) && src[at] == '\r' && src[at+1] == '\n' {
		return "\r\n"
	}
	if at < len(src) && src[at] == '\n' {
		return "\n"
	}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// lineEnd is the offset where the line containing off ends: its first CR or
// LF, or the end of the file.
func lineEnd(src []byte, off int) int {
	i := bytes.IndexAny(src[off:], "\r\n")
	if i < 0 {
		return len(src)
	}
	e := off + i
	// A node can end between the CR and the LF of a CRLF (a comment's
	// text runs to the LF): the line ends before the CR.
	if src[e] == '\n' && e > 0 && src[e-1] == '\r' {
		e--
	}
	return e
}

// Patch plans the wiring: kernel module beside the defining module,
// dispatcher after the old function, gate in environ.py, every reference
// renamed. It writes nothing; the report's proof is computed on the tree as
// it would be after the changes.
func Patch(t *Tree, opt Options) (*Result, error) {
	rec := opt.Recipe
	// The trees are kept so that the proof can re-parse edited files
	// incrementally.
	s, err := load(t, rec, true, opt.whole, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	// A tree patched before has the dispatcher; its module is the one.
	mod := ""
	if withBlock := s.blockFiles(partDispatcher); len(withBlock) == 1 && opt.Module == "" {
		mod = withBlock[0]
	} else {
		mod, err = pickModule(s.definers(rec.Old), opt, rec)
		if err != nil {
			return nil, s.explain(err)
		}
	}
	if err := s.also(strings.TrimSuffix(path.Base(mod), ".py")); err != nil {
		return nil, err
	}
	if _, err := s.syntaxCheck(rec.Old, rec.Dispatcher); err != nil {
		return nil, err
	}
	fi := s.infos[mod]
	def := defNode(fi, rec.Old)
	if def < 0 {
		return nil, &Problem{Msg: fmt.Sprintf("%s has a dispatcher block but no def %s", mod, rec.Old)}
	}
	if other := defNode(fi, rec.Dispatcher); other >= 0 {
		l, _ := lineCol(fi.st.src, int(fi.st.nodes[other].start))
		return nil, &Problem{Msg: fmt.Sprintf("%s:%d already defines %s, and not inside an mlagen block; refusing to shadow it", mod, l, rec.Dispatcher)}
	}
	// The dispatcher goes at top level right after the old function, which
	// is only sound when that function is itself a top-level statement (not
	// inside an if/try block that may continue after it).
	top := def
	if p := fi.st.nodes[def].parent; p >= 0 && fi.st.nodes[p].kind == "decorated_definition" {
		top = p
	}
	if p := fi.st.nodes[top].parent; p != 0 {
		l, _ := lineCol(fi.st.src, int(fi.st.nodes[def].start))
		return nil, &Problem{Msg: fmt.Sprintf("%s:%d: %s is defined inside a block (if/try/with), not at top level; wire it by hand", mod, l, rec.Old)}
	}
	sig, err := readSignature(fi.st, def, rec)
	if err != nil {
		return nil, &Problem{Msg: fmt.Sprintf("%s: %v", mod, err)}
	}
	if !hasBlock(fi, partDispatcher) {
		// Before the first patch nothing may refer to the dispatcher yet:
		// such a reference would be indistinguishable from a rewired one,
		// and --revert would turn it into the old name.
		var lines []string
		for _, st := range s.r.references(val{path: mod, name: rec.Dispatcher}, false).sites {
			lines = append(lines, st.Ref.String())
		}
		// In the module itself an unbound use of the name would become one
		// as soon as the dispatcher is defined there.
		for _, u := range fi.uses {
			if u.kind == uName && fi.st.text(u.node) == rec.Dispatcher && len(lookup(fi, u.scope, rec.Dispatcher)) == 0 {
				lines = append(lines, mkRef(fi, u.node, "unbound name").String())
			}
		}
		if len(lines) > 0 {
			return nil, &Problem{Msg: fmt.Sprintf("the tree already refers to %s in %s, which does not define it yet; rename these first:", rec.Dispatcher, mod), Lines: lines}
		}
	}
	target := val{path: mod, name: rec.Old}
	refs := s.r.references(target, false)
	if len(refs.conflicts) > 0 {
		return nil, &Problem{Msg: "cannot wire these references without guessing:", Lines: refs.conflicts}
	}
	edits := map[string][]edit{}
	what := map[string][]string{}
	renamed := map[string]int{}
	bare := map[string]bool{}
	for _, st := range refs.sites {
		if st.rename {
			edits[st.Path] = append(edits[st.Path], edit{start: int(st.start), end: int(st.end), text: rec.Dispatcher})
			renamed[st.Path]++
			bare[st.Path] = bare[st.Path] || st.bare
		}
	}
	if err := s.collisions(bare, target); err != nil {
		return nil, err
	}

	// The gate: through envs when the checkout has SGLang's environ.py.
	var g gateRead
	env := s.environ()
	envPath := ""
	if env != nil {
		envPath = env.path
		g.envsModule = s.moduleName(env.path)
		if !env.envsHas && !hasBlock(env, partGate) {
			body := env.envs
			src := env.st.src
			first := env.st.nodes[body].first
			indent := "    "
			if first >= 0 {
				ls := bytes.LastIndexByte(src[:env.st.nodes[first].start], '\n') + 1
				indent = string(src[ls:env.st.nodes[first].start])
			}
			if strings.Trim(indent, " \t") != "" || indent == "" {
				l, _ := lineCol(src, int(env.st.nodes[body].start))
				return nil, &Problem{Msg: fmt.Sprintf("%s:%d: class %s keeps its body on the class line; register %s = %s(False) in it by hand",
					env.path, l, rec.EnvironClass, rec.Gate, rec.EnvironField)}
			}
			at := lineEnd(src, int(env.st.nodes[body].end))
			eol := eolAt(src, at)
			text := eol + strings.Join(renderGate(rec, indent), eol)
			edits[env.path] = append(edits[env.path], edit{start: at, end: at, text: text})
			what[env.path] = append(what[env.path], "gate "+rec.Gate+" registered in class "+rec.EnvironClass)
		}
	}
	// A module inside a package (regular, or a namespace package without
	// __init__.py, as some SGLang directories are) imports its sibling
	// relatively; only a module at the top of the import path uses a plain
	// import, which would fail inside a package.
	kstem := strings.TrimSuffix(rec.KernelModule, ".py")
	if strings.Contains(s.moduleName(mod), ".") {
		g.kernelImp = "from . import " + kstem + " as mma_kernel"
	} else {
		g.kernelImp = "import " + kstem + " as mma_kernel"
	}

	// The dispatcher: inserted after the old function, or brought up to date
	// when the old signature changed since the last run.
	src := fi.st.src
	lines := renderDispatcher(rec, sig, g)
	if b, ok := findBlock(fi, partDispatcher); ok {
		eol := eolAt(src, lineEnd(src, b.open))
		want := strings.Join(lines, eol)
		if string(src[b.open:b.close]) != want {
			edits[mod] = append(edits[mod], edit{start: b.open, end: b.close, text: want})
			what[mod] = append(what[mod], "dispatcher "+rec.Dispatcher+" updated")
		}
	} else {
		defEnd := int(fi.st.nodes[def].end)
		at := lineEnd(src, defEnd)
		eol := eolAt(src, at)
		text := strings.Repeat(eol, blockLead[partDispatcher]) + strings.Join(lines, eol)
		edits[mod] = append(edits[mod], edit{start: at, end: at, text: text})
		line, _ := lineCol(src, at)
		what[mod] = append(what[mod], fmt.Sprintf("dispatcher %s inserted after line %d", rec.Dispatcher, line))
	}

	var changes []Change
	for p, es := range edits {
		f := t.Files[p]
		changes = append(changes, Change{Path: p, Before: f.Data, After: applyEdits(f.Data, es), Mode: f.Mode})
	}
	// The kernel module beside the defining module.
	kp := kernelPath(rec, mod)
	kernel := append([]byte(kernelHeader(rec)), opt.Kernel...)
	kernelWhat := ""
	if old, ok := t.Files[kp]; ok {
		if !bytes.HasPrefix(old.Data, []byte(kernelHeader(rec))) {
			return nil, &Problem{Msg: fmt.Sprintf("%s exists and was not written by mlagen; refusing to overwrite it", kp)}
		}
		if !bytes.Equal(old.Data, kernel) {
			changes = append(changes, Change{Path: kp, Before: old.Data, After: kernel, Mode: old.Mode})
			kernelWhat = "kernel module updated"
		}
	} else if contains(t.NonUTF8, kp) {
		return nil, &Problem{Msg: fmt.Sprintf("%s exists (not UTF-8) and was not written by mlagen; refusing to overwrite it", kp)}
	} else {
		mode := t.Files[mod].Mode
		changes = append(changes, Change{Path: kp, After: kernel, Mode: mode})
		kernelWhat = "kernel module"
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })

	rep := &Report{Command: "patch", Module: mod, KernelModule: kp, Environ: envPath}
	for _, c := range changes {
		fc := FileChange{Path: c.Path, Action: "edit"}
		var parts []string
		switch {
		case c.Before == nil:
			fc.Action = "create"
			parts = append(parts, kernelWhat)
		case c.Path == kp:
			parts = append(parts, kernelWhat)
		}
		parts = append(parts, what[c.Path]...)
		if n := renamed[c.Path]; n > 0 {
			parts = append(parts, plural(n, "reference")+" renamed")
		}
		fc.What = strings.Join(parts, "; ")
		rep.Changes = append(rep.Changes, fc)
	}
	proof, err := Verify(t.with(changes), Options{Recipe: rec, Module: mod, whole: opt.whole, reuse: &reuse{infos: s.infos, edits: edits}})
	if err != nil {
		return nil, fmt.Errorf("proof after patching: %w", err)
	}
	proof.Command = "patch"
	proof.Changes = rep.Changes
	proof.NothingToDo = len(changes) == 0
	proof.Scanned, proof.Parsed = len(t.paths), s.parsed
	return &Result{Changes: changes, Report: proof}, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasBlock(fi *fileInfo, part string) bool {
	_, ok := findBlock(fi, part)
	return ok
}

func findBlock(fi *fileInfo, part string) (block, bool) {
	for _, b := range fi.blocks {
		if b.part == part {
			return b, true
		}
	}
	return block{}, false
}

// blockFiles lists parsed files that hold an mlagen block of part.
func (s *session) blockFiles(part string) []string {
	var out []string
	for p, fi := range s.infos {
		if fi != nil && hasBlock(fi, part) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// explain adds the syntax errors of name-bearing files to a "no module"
// problem: the definition may be in a file that does not parse.
func (s *session) explain(err error) error {
	if _, serr := s.syntaxCheck(s.rec.Old); serr != nil {
		return serr
	}
	return err
}

// collisions refuses to rename a bare name in a file where the dispatcher's
// name already means something else (a binding of its own, or a use that is
// unbound or bound elsewhere): after the rename that use would silently
// denote the dispatcher, or the renamed one the other thing, and --revert
// could not tell them apart.
func (s *session) collisions(bare map[string]bool, target val) error {
	var lines []string
	wired := val{path: target.path, name: s.rec.Dispatcher}
	for p, ok := range bare {
		if !ok {
			continue
		}
		fi := s.infos[p]
		for _, sc := range fi.scopes {
			for _, b := range sc.binds[s.rec.Dispatcher] {
				if inBlocks(fi.blocks, fi.st.nodes[b.node].start) || has(s.r.binding(fi, b), wired) {
					continue
				}
				l, _ := lineCol(fi.st.src, int(fi.st.nodes[b.node].start))
				lines = append(lines, fmt.Sprintf("%s:%d binds %s", p, l, s.rec.Dispatcher))
			}
		}
		for _, u := range fi.uses {
			if u.kind != uName || fi.st.text(u.node) != s.rec.Dispatcher || inBlocks(fi.blocks, fi.st.nodes[u.node].start) {
				continue
			}
			if bs := lookup(fi, u.scope, s.rec.Dispatcher); len(bs) == 0 {
				l, _ := lineCol(fi.st.src, int(fi.st.nodes[u.node].start))
				lines = append(lines, fmt.Sprintf("%s:%d uses %s, which is not bound there", p, l, s.rec.Dispatcher))
			}
		}
	}
	if len(lines) > 0 {
		sort.Strings(lines)
		return &Problem{Msg: fmt.Sprintf("renaming to %s would collide with an existing name:", s.rec.Dispatcher), Lines: lines}
	}
	return nil
}
