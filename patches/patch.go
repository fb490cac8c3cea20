package patches

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// editSet gathers the edits of one run, file by file, with what they do;
// Patch and Revert describe their changes from it the same way.
type editSet struct {
	edits   map[string][]resolve.Edit
	what    map[string][]string
	renamed map[string]int
}

func newEditSet() editSet {
	return editSet{edits: map[string][]resolve.Edit{}, what: map[string][]string{}, renamed: map[string]int{}}
}

func (es *editSet) add(file string, e resolve.Edit, what string) {
	es.edits[file] = append(es.edits[file], e)
	es.note(file, what)
}

func (es *editSet) note(file, what string) {
	if what != "" {
		es.what[file] = append(es.what[file], what)
	}
}

// changes applies the edits to the files of t.
func (es *editSet) changes(t *resolve.Tree) []Change {
	var out []Change
	for file, e := range es.edits {
		f := t.Files[file]
		out = append(out, Change{Path: file, Before: f.Data, After: resolve.ApplyEdits(f.Data, e), Mode: f.Mode})
	}
	return out
}

// describe lists the changes for a report: the action, what each does, and
// how many references it renamed (verb: "renamed", "restored").
func (es *editSet) describe(changes []Change, verb string) []FileChange {
	changes = append([]Change(nil), changes...) // the caller's keep their write order
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	var out []FileChange
	for _, c := range changes {
		fc := FileChange{Path: c.Path, Action: "edit"}
		switch {
		case c.Before == nil:
			fc.Action = "create"
		case c.After == nil:
			fc.Action = "delete"
		}
		parts := append([]string(nil), es.what[c.Path]...)
		if n := es.renamed[c.Path]; n > 0 {
			parts = append(parts, plural(n, "reference")+" "+verb)
		}
		fc.What = strings.Join(parts, "; ")
		out = append(out, fc)
	}
	return out
}

// planner plans one Patch.
type planner struct {
	editSet
	s    *session
	rec  *Recipe
	mod  string
	fi   *resolve.Info
	def  int32
	g    gateRead
	bare map[string]bool
	// whole: the kernel module being installed has the whole-call entry
	// points, so the whole call gets its guard.
	whole bool
	// routed is the first entry point that gets a route guard, which calls
	// the kernel module's defers_full ("" when none does).
	routed string
	// entries are the files that get a route guard; models those that get
	// a heads guard.
	entries, models map[string]bool
}

// Patch plans the wiring: kernel module beside the defining module,
// dispatcher after the old function, every reference renamed, the guarded
// entry of the whole call, the guard before SGLang's backend choice, the
// heads guard in the model, the gate in environ.py, the kernel module in
// RECORD. It writes nothing; the report's proof is computed on the
// checkout as it would be after the changes.
func Patch(co *Checkout, opt Options) (*Result, error) {
	rec := opt.Recipe
	// The trees are kept so that the proof can re-parse edited files
	// incrementally.
	s, err := load(co, rec, resolve.Options{Keep: true, Whole: opt.whole})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	mod, err := s.module(opt)
	if err != nil {
		return nil, err
	}
	if err := s.ParseSpelling(strings.TrimSuffix(path.Base(mod), ".py")); err != nil {
		return nil, err
	}
	if _, err := s.syntaxCheck(s.names()...); err != nil {
		return nil, err
	}
	if err := s.checkEdited("patching"); err != nil {
		return nil, err
	}
	p := &planner{editSet: newEditSet(), s: s, rec: rec, mod: mod, fi: s.Info(mod), bare: map[string]bool{},
		whole: hasWholeCall(opt.Kernel, rec), entries: map[string]bool{}, models: map[string]bool{}}
	for _, step := range []func() error{p.definition, p.renames, p.gate, p.dispatcher, p.wholeCall, p.route, p.heads} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	changes, err := p.files(opt)
	if err != nil {
		return nil, err
	}
	fcs := p.describe(changes, "renamed")
	// The proof reads the model backend's calls of each entry; where none
	// runs on the kernel module's target, nothing is written.
	proof, err := Verify(co.with(changes), Options{Recipe: rec, Module: mod, Emitted: opt.Emitted, AllowUnreached: opt.AllowUnreached, AcceptUnjudged: opt.AcceptUnjudged, Tritons: opt.Tritons, whole: opt.whole, reuse: s.Reuse(p.edits)})
	if err != nil {
		return nil, fmt.Errorf("proof after patching: %w", err)
	}
	if len(proof.unreached) > 0 && !opt.AllowUnreached {
		return nil, &Problem{Msg: "the kernel would never run on this tree (nothing was written):", Lines: append(proof.unreached, "to go on: "+proof.unreachedFix)}
	}
	proof.Command = "patch"
	proof.Changes = fcs
	proof.NothingToDo = len(changes) == 0
	proof.Scanned, proof.Parsed = len(co.Tree.Paths()), s.Parsed()
	return &Result{Changes: changes, Report: proof}, nil
}

// definition checks that the old function can have a dispatcher beside it.
func (p *planner) definition() error {
	rec, fi, mod := p.rec, p.fi, p.mod
	st := fi.Syntax()
	p.def = fi.TopDef(rec.Old)
	if p.def < 0 {
		return &Problem{Msg: fmt.Sprintf("%s has a dispatcher block but no def %s", mod, rec.Old)}
	}
	if other := fi.TopDef(rec.Dispatcher); other >= 0 {
		l, _ := resolve.LineCol(st.Src(), st.Start(other))
		return &Problem{Msg: fmt.Sprintf("%s:%d already defines %s, and not inside an mlagen block; refusing to shadow it", mod, l, rec.Dispatcher)}
	}
	// The dispatcher goes at top level right after the old function, which
	// is only sound when that function is itself a top-level statement (not
	// inside an if/try block that may continue after it).
	top := p.def
	if up := st.Parent(p.def); up >= 0 && st.Kind(up) == "decorated_definition" {
		top = up
	}
	if st.Parent(top) != 0 {
		l, _ := resolve.LineCol(st.Src(), st.Start(p.def))
		return &Problem{Msg: fmt.Sprintf("%s:%d: %s is defined inside a block (if/try/with), not at top level; wire it by hand", mod, l, rec.Old)}
	}
	// The dispatcher's fallback calls the old function by its module-level
	// name: a statement that binds that name again (a wrapper such as
	// torch.compiler.disable, whose argument the patch would rename) would
	// make the fallback the dispatcher itself, or something else.
	if again := p.s.Rebinds(mod, rec.Old, p.def); len(again) > 0 {
		var lines []string
		for _, r := range again {
			lines = append(lines, fmt.Sprintf("%s:%d: %s", r.Path, r.Line, r.Code))
		}
		return &Problem{Msg: fmt.Sprintf("%s binds %s besides its def; the dispatcher's fallback calls that name, so after the patch it would reach the dispatcher itself (endless recursion) or what the statement binds: wrap the function inside its def (a decorator), or wire it by hand:", mod, rec.Old), Lines: lines}
	}
	if hasBlock(fi, rec, partDispatcher) {
		return nil
	}
	// Before the first patch nothing may refer to the dispatcher yet: such a
	// reference would be indistinguishable from a rewired one, and --revert
	// would turn it into the old name. In the module itself an unbound use
	// of the name would become one as soon as the dispatcher is defined.
	var lines []string
	for _, site := range p.s.References(resolve.Def(mod, rec.Dispatcher), false).Sites {
		lines = append(lines, site.Ref.String())
	}
	for _, r := range p.s.UnboundUses(mod, rec.Dispatcher) {
		lines = append(lines, r.String())
	}
	if len(lines) > 0 {
		return &Problem{Msg: fmt.Sprintf("the tree already refers to %s in %s, which does not define it yet; rename these first:", rec.Dispatcher, mod), Lines: lines}
	}
	return nil
}

// renames renames every reference to the old function to the dispatcher,
// and every import of the old name through a module that re-exports the
// dispatcher now (one written after an earlier patch, which would raise
// ImportError).
func (p *planner) renames() error {
	target := resolve.Def(p.mod, p.rec.Old)
	refs := p.s.References(target, false)
	if len(refs.Conflicts) > 0 {
		return &Problem{Msg: "cannot wire these references without guessing:", Lines: refs.Conflicts}
	}
	refs.Sites = append(refs.Sites, p.s.throughRewired(p.mod).Sites...)
	for _, site := range refs.Sites {
		if site.Rename {
			p.add(site.Path, resolve.Edit{Start: site.Start, End: site.End, Text: p.rec.Dispatcher}, "")
			p.renamed[site.Path]++
			p.bare[site.Path] = p.bare[site.Path] || site.Bare
		}
	}
	return p.s.collisions(p.bare, target)
}

// throughRewired lists the references to the old name in modules that no
// longer bind it but re-export mod's dispatcher: the modules a previous
// patch rewired. Renamed, they reach the dispatcher as every other
// reference does.
func (s *session) throughRewired(mod string) resolve.RefSet {
	wired := resolve.Def(mod, s.rec.Dispatcher)
	return s.Find(resolve.Query{Names: []string{s.rec.Old}, Match: func(v resolve.Val) bool {
		return v.Name() == s.rec.Old && v.Path() != mod && s.Bound(v) == resolve.No && hasVal(s.Symbol(v.Path(), s.rec.Dispatcher), wired)
	}}, false)
}

// gate registers the gate in SGLang's environ.py when the checkout has one
// (the inserted code then reads it through envs).
func (p *planner) gate() error {
	rec := p.rec
	env := p.s.environ()
	p.g = p.s.gateRead(p.mod)
	if env == nil {
		return nil
	}
	body, registered := env.TopClass(rec.EnvironClass, rec.Gate)
	if registered || hasBlock(env, rec, partGate) {
		return nil
	}
	st := env.Syntax()
	src := st.Src()
	indent := "    "
	if first := st.First(body); first >= 0 {
		indent = string(src[lineStart(src, st.Start(first)):st.Start(first)])
	}
	if strings.Trim(indent, " \t") != "" || indent == "" {
		l, _ := resolve.LineCol(src, st.Start(body))
		return &Problem{Msg: fmt.Sprintf("%s:%d: class %s keeps its body on the class line; register %s = %s(False) in it by hand",
			env.Path(), l, rec.EnvironClass, rec.Gate, rec.EnvironField)}
	}
	at := lineEnd(src, st.End(body))
	eol := eolAt(src, at)
	p.add(env.Path(), resolve.Edit{Start: at, End: at, Text: eol + strings.Join(renderGate(rec, indent), eol)},
		"gate "+rec.Gate+" registered in class "+rec.EnvironClass)
	return nil
}

// dispatcher inserts the dispatcher after the old function, or brings it
// up to date when the old signature changed since the last run.
func (p *planner) dispatcher() error {
	st := p.fi.Syntax()
	src := st.Src()
	lines, err := dispatcherLines(p.rec, st, p.def, p.g)
	if err != nil {
		return &Problem{Msg: fmt.Sprintf("%s: %v", p.mod, err)}
	}
	if b, ok := findBlock(p.fi, p.rec, partDispatcher); ok {
		eol := eolAt(src, lineEnd(src, b.open))
		if want := strings.Join(lines, eol); string(src[b.open:b.close]) != want {
			p.add(p.mod, resolve.Edit{Start: b.open, End: b.close, Text: want}, "dispatcher "+p.rec.Dispatcher+" updated")
		}
		return nil
	}
	at := lineEnd(src, st.End(p.def))
	w := &want{part: partDispatcher, lines: lines, eol: eolAt(src, at)}
	line, _ := resolve.LineCol(src, at)
	p.add(p.mod, resolve.Edit{Start: at, End: at, Text: w.insertion()}, fmt.Sprintf("dispatcher %s inserted after line %d", p.rec.Dispatcher, line))
	return nil
}

// dispatcherLines renders the dispatcher for the old function at node def.
func dispatcherLines(rec *Recipe, st *resolve.Syntax, def int32, g gateRead) ([]string, error) {
	sig, err := readSignature(st, def, rec.Old)
	if err != nil {
		return nil, err
	}
	args, err := sig.dispatcherArgs(rec)
	if err != nil {
		return nil, err
	}
	return renderDispatcher(rec, sig, args, g), nil
}

// wholeCall puts the guarded entry at the top of the whole call's body, or,
// when the kernel module being installed has no whole-call entry points,
// leaves the whole call to its old body (taking out a guard that would call
// what the module lacks).
func (p *planner) wholeCall() error {
	w, prob := p.s.wholeCallWant(p.fi, p.g)
	if prob != "" {
		return &Problem{Msg: prob}
	}
	if w == nil || p.whole {
		return p.apply(w, p.fi, "whole-call guard", "at the top of")
	}
	if w.have == nil {
		return nil
	}
	start, end, err := w.have.removal(p.fi.Syntax().Src(), p.mod)
	if err != nil {
		return &Problem{Msg: "cannot take out the whole-call guard exactly:", Lines: []string{err.Error()}}
	}
	p.add(p.mod, resolve.Edit{Start: start, End: end}, fmt.Sprintf("whole-call guard removed (the kernel module has no %s)", p.rec.WholeCall.Decode))
	return nil
}

// route puts a guard before every backend choice an entry makes.
func (p *planner) route() error {
	rs := p.s.routes(p.mod, p.g)
	if len(rs.problems) > 0 {
		return &Problem{Msg: "the gate would not take effect on this tree's backend choice (nothing was written):", Lines: rs.problems}
	}
	for _, e := range rs.entries {
		if e.guard == nil {
			continue
		}
		if p.routed == "" {
			p.routed = fmt.Sprintf("%s (%s:%d)", e.fn, e.path, e.line)
		}
		p.entries[e.path] = true
		fi := p.s.Info(e.path)
		if e.guard.have != nil && previousRoute(fi.Syntax().Src(), *e.guard.have, p.rec) && e.guard.state(fi.Syntax().Src()) == "stale" {
			p.add(e.path, resolve.Edit{Start: e.guard.have.open, End: e.guard.have.close, Text: e.guard.body()},
				fmt.Sprintf("route guard before the backend choice of %s upgraded: it asks %s first, so a shape the selection gives to a peer goes on to SGLang's backend choice", e.fn, p.rec.WholeCall.Defers))
			continue
		}
		if err := p.apply(e.guard, fi, "route guard", "before the backend choice of"); err != nil {
			return err
		}
	}
	return nil
}

// heads puts the heads guard at every place of the models that pads a
// rank's heads in a shape mlagen knows; the others stay padded (the route
// says so).
func (p *planner) heads() error {
	for _, h := range p.s.headsSites() {
		if h.want == nil {
			continue
		}
		where := "at the top of"
		if h.shape == headsPadding {
			where = "after the padding in"
		}
		if err := p.apply(h.want, p.s.Info(h.path), "heads guard", where); err != nil {
			return err
		}
		p.models[h.path] = true
	}
	return nil
}

// apply plans the edit that brings the block w into the tree.
func (p *planner) apply(w *want, fi *resolve.Info, what, where string) error {
	if w == nil {
		return nil
	}
	src := fi.Syntax().Src()
	state := w.state(src)
	e, ok, err := w.edit(src)
	if err != nil || !ok {
		return err
	}
	if state == "missing" {
		line, _ := resolve.LineCol(src, w.at)
		p.add(w.path, e, fmt.Sprintf("%s inserted %s %s (line %d)", what, where, w.where, line))
	} else {
		p.add(w.path, e, fmt.Sprintf("%s %s %s updated", what, where, w.where))
	}
	return nil
}

// files turns the edits into file changes, with the kernel module beside
// the defining module and, for an installed SGLang, its RECORD line.
func (p *planner) files(opt Options) ([]Change, error) {
	rec, t, kernelSrc := p.rec, p.s.co.Tree, opt.Kernel
	k, err := readKernel(kernelSrc)
	if err != nil {
		return nil, err
	}
	if why := k.fault(rec); why != "" {
		return nil, &Problem{Msg: fmt.Sprintf("the kernel module to install cannot be used: %s; use a kernel module emitted by this mlagen (nothing was written)", why)}
	}
	if miss := k.missing([]string{rec.WholeCall.Defers}); p.routed != "" && len(miss) > 0 {
		return nil, &Problem{Msg: fmt.Sprintf("the kernel module to install cannot be used: it does not define %s, which the route guard before the backend choice of %s calls; use a kernel module emitted by this mlagen (nothing was written)",
			rec.WholeCall.Defers, p.routed)}
	}
	changes := p.changes(t)
	kp := kernelPath(rec, p.mod)
	kernel := installedKernel(rec, kernelSrc, opt.KernelFrom)
	if old, ok := t.Files[kp]; ok {
		if !bytes.HasPrefix(old.Data, []byte(kernelHeader(rec))) {
			return nil, &Problem{Msg: fmt.Sprintf("%s exists and was not written by mlagen; refusing to overwrite it", kp)}
		}
		if !bytes.Equal(old.Data, kernel) {
			if err := p.keepKernel(kp, old.Data, kernelSrc, opt); err != nil {
				return nil, err
			}
			was, _, _ := installedBody(rec, old.Data)
			changes = append(changes, Change{Path: kp, Before: old.Data, After: kernel, Mode: old.Mode})
			p.note(kp, kernelUpdate(was, kernelSrc))
		}
	} else if contains(t.NonUTF8, kp) {
		return nil, &Problem{Msg: fmt.Sprintf("%s exists (not UTF-8) and was not written by mlagen; refusing to overwrite it", kp)}
	} else {
		changes = append(changes, Change{Path: kp, After: kernel, Mode: t.Files[p.mod].Mode})
		p.note(kp, "kernel module")
	}
	// Every RECORD that lists SGLang's files lists the module: pip
	// uninstall removes it whichever dist-info it takes (recordsFor).
	for _, r := range p.s.co.recordsFor(p.mod) {
		if c := recordAdd(r.Record, p.mod, kp, kernel); c != nil {
			changes = append(changes, *c)
			p.note(c.Path, rec.KernelModule+" listed, so that pip uninstall removes it")
		}
	}
	return inWriteOrder(changes, p.s.roles(p.mod, p.entries, p.models), false), nil
}

// kernelUpdate says, for the report, what replacing the installed kernel
// module (was, below mlagen's header) with now does: one emitted by another
// command (another target, a selection of the user's) was the user's
// choice, one that differs under the same command is an earlier mlagen's
// (keepKernel refused one edited by hand), and the same module gets the
// digest an earlier mlagen did not record. The module is generated code,
// replaced, never merged.
func kernelUpdate(was, now []byte) string {
	before, after := kernelCommand(was), kernelCommand(now)
	switch {
	case bytes.Equal(was, now):
		return "kernel module's install header rewritten: the SHA-256 of its lines, by which an edit by hand is refused, and whether it came from --kernels or --selection"
	case before != "" && before != after:
		return fmt.Sprintf("kernel module replaced: the installed one was emitted by `%s`, this one by `%s`", before, after)
	}
	return fmt.Sprintf("kernel module updated: the installed one is an earlier mlagen's; this is what `%s` emits now", after)
}

// roles names the files of the wiring around mod, for the write order.
func (s *session) roles(mod string, entries, models map[string]bool) roles {
	r := roles{kernel: kernelPath(s.rec, mod), module: mod, entries: entries, models: models}
	if env := s.environ(); env != nil {
		r.environ = env.Path()
	}
	return r
}

// collisions refuses to rename a bare name in a file where the dispatcher's
// name already means something else (a binding of its own, or a use that is
// unbound or bound elsewhere): after the rename that use would silently
// denote the dispatcher, or the renamed one the other thing, and --revert
// could not tell them apart.
func (s *session) collisions(bare map[string]bool, target resolve.Val) error {
	var lines []string
	wired := resolve.Def(target.Path(), s.rec.Dispatcher)
	for file, ok := range bare {
		if !ok {
			continue
		}
		for _, b := range s.Bindings(file, s.rec.Dispatcher) {
			if !hasVal(b.Denotes, wired) {
				lines = append(lines, fmt.Sprintf("%s:%d binds %s", file, b.Line, s.rec.Dispatcher))
			}
		}
		for _, u := range s.UnboundUses(file, s.rec.Dispatcher) {
			lines = append(lines, fmt.Sprintf("%s:%d uses %s, which is not bound there", file, u.Line, s.rec.Dispatcher))
		}
	}
	if len(lines) > 0 {
		sort.Strings(lines)
		return &Problem{Msg: fmt.Sprintf("renaming to %s would collide with an existing name:", s.rec.Dispatcher), Lines: lines}
	}
	return nil
}

func hasVal(vs []resolve.Val, v resolve.Val) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
