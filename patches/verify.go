package patches

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// verifier is one proof in the making.
type verifier struct {
	s       *session
	rec     *Recipe
	rep     *Report
	mod     string
	fi      *resolve.Info
	g       gateRead
	emitted func(string) ([]byte, error)
	// allowUnreached: Options.AllowUnreached.
	allowUnreached bool
	// halfWritten: Options.halfWritten.
	halfWritten bool
}

// Verify is the proof: it parses the checkout as it is and resolves every
// reference to the old function and to the dispatcher, and traces the route
// a decode call takes with the gate set. The tree is wired when every
// reference denotes the dispatcher (the dispatcher's own fallback call,
// inside its block, is the one that stays), the whole call and every
// backend choice above it carry the guards mlagen writes, the kernel module
// (defining what they call) is beside the dispatcher, the gate is
// registered in SGLang's environ.py, and an installed SGLang's RECORD lists
// the kernel module.
func Verify(co *Checkout, opt Options) (*Report, error) {
	rec := opt.Recipe
	s, err := load(co, rec, resolve.Options{Whole: opt.whole, Reuse: opt.reuse})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rep := &Report{Command: "verify", Gate: rec.Gate, Old: rec.Old, New: rec.Dispatcher,
		Scanned: len(co.Tree.Paths()), NonUTF8: co.Tree.NonUTF8, Outside: co.Tree.Outside}
	mod := opt.Module
	if mod == "" {
		if mod, err = s.module(opt); err != nil {
			return nil, err
		}
	}
	mod = path.Clean(mod)
	if err := s.ParseSpelling(strings.TrimSuffix(path.Base(mod), ".py")); err != nil {
		return nil, err
	}
	if rep.SyntaxIgnored, err = s.syntaxCheck(s.names()...); err != nil {
		return nil, err
	}
	rep.Parsed, rep.Module, rep.KernelModule = s.Parsed(), mod, kernelPath(rec, mod)
	fi := s.Info(mod)
	if fi == nil && opt.Module != "" {
		// The flag's mistake: name it, and how its path is read, as
		// patch's --module does.
		return nil, &Problem{Msg: fmt.Sprintf("--module %s: no such Python file under the root (the path is relative to it)", opt.Module)}
	}
	if fi == nil {
		return nil, &Problem{Msg: fmt.Sprintf("%s: no such Python file in the tree", mod)}
	}
	v := &verifier{s: s, rec: rec, rep: rep, mod: mod, fi: fi, g: s.gateRead(mod), emitted: opt.Emitted, allowUnreached: opt.AllowUnreached, halfWritten: opt.halfWritten}
	v.structure()
	v.references()
	v.route()
	v.record()
	v.accept(opt.AcceptUnjudged)
	if v.untouched() {
		// Said first: the lines below are what patching adds, each
		// missing, not faults of a patched tree.
		rep.Problems = append([]string{"not patched: this tree holds no mlagen code; run mlagen patch on it (the problems below are what it adds)"}, rep.Problems...)
	}
	if (co.Triton != "" || len(co.Records) > 0) && len(opt.Tritons) > 0 {
		// An installed SGLang without a Triton beside it is said too: the
		// server then imports one mlagen cannot see from here.
		rep.Triton = &TritonCheck{Version: co.Triton, Checked: co.Triton != "" && slices.Contains(opt.Tritons, co.Triton), CheckedUnder: opt.Tritons}
	}
	return rep, nil
}

// untouched says whether the tree holds none of mlagen's code: no block
// of any part in the files the proof read, and no kernel module.
func (v *verifier) untouched() bool {
	if _, ok := v.s.co.Tree.Files[v.rep.KernelModule]; ok {
		return false
	}
	for part := range partNames {
		if len(v.s.blockFiles(part)) > 0 {
			return false
		}
	}
	return true
}

// structure checks the dispatcher, the kernel module and the gate.
func (v *verifier) structure() {
	rec, rep, fi := v.rec, v.rep, v.fi
	if err := v.s.checkEdited("patching or reverting"); err != nil {
		// patch and --revert refuse such a tree, so "run mlagen patch
		// again" would send the user in a circle: say what unblocks it.
		rep.Problems = append(rep.Problems, err.(*Problem).Lines...)
		rep.Problems = append(rep.Problems, "patch and --revert keep out of a block edited by hand: move the change out of it (or delete the block by hand if it is not wanted), then run mlagen patch again")
	}
	b, ok := findBlock(fi, rec, partDispatcher)
	def := fi.TopDef(rec.Old)
	switch {
	case !ok:
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s has no %s dispatcher (not patched)", v.mod, rec.Dispatcher))
	case def < 0:
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s no longer defines %s, which the dispatcher falls back to", v.mod, rec.Old))
	default:
		src := fi.Syntax().Src()
		lines, err := dispatcherLines(rec, fi.Syntax(), def, v.g)
		if err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", v.mod, err))
		} else if !b.unfinished && v.s.edited(fi, b) == "" && string(src[b.open:b.close]) != strings.Join(lines, eolAt(src, lineEnd(src, b.open))) {
			// (An edited block is reported above, with what unblocks it.)
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s:%d: the %s dispatcher is not what mlagen writes now (edited, or %s's signature changed): run mlagen patch again", v.mod, b.openLine, rec.Dispatcher, rec.Old))
		}
	}
	v.kernel()
	if env := v.s.environ(); env != nil {
		rep.Environ = env.Path()
		if _, registered := env.TopClass(rec.EnvironClass, rec.Gate); !registered {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: gate %s is not registered in class %s", env.Path(), rec.Gate, rec.EnvironClass))
		}
	}
}

// kernel checks the installed kernel module: mlagen's, Python, defining
// what the wiring calls; the report says what else it is.
func (v *verifier) kernel() {
	rec, rep := v.rec, v.rep
	k, ok := v.s.co.Tree.Files[rep.KernelModule]
	if !ok || !bytes.HasPrefix(k.Data, []byte(kernelHeader(rec))) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("kernel module %s is missing", rep.KernelModule))
		return
	}
	ks, err := readKernel(k.Data)
	if err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("kernel module %s: %v", rep.KernelModule, err))
		return
	}
	if why := ks.fault(rec); why != "" {
		rep.Problems = append(rep.Problems, fmt.Sprintf("kernel module %s cannot be used: %s: run mlagen patch again", rep.KernelModule, why))
	}
	body, _, _ := installedBody(rec, k.Data)
	rep.Kernel = ks.check(rep.KernelModule, body, rec, v.emitted)
}

// references lists what goes through the dispatcher and what still reaches
// the old function; what the tree cannot judge fails the proof too.
func (v *verifier) references() {
	rep := v.rep
	wired := v.s.References(resolve.Def(v.mod, v.rec.Dispatcher), false)
	missed := v.s.References(resolve.Def(v.mod, v.rec.Old), true)
	rep.Problems = append(rep.Problems, wired.Conflicts...)
	rep.Problems = append(rep.Problems, missed.Conflicts...)
	files := map[string]bool{}
	for _, site := range wired.Sites {
		rep.Wired = append(rep.Wired, site.Ref)
		files[site.Path] = true
	}
	for _, site := range missed.Sites {
		rep.Missed = append(rep.Missed, site.Ref)
	}
	rep.Missed = append(rep.Missed, v.s.brokenRefs(rep)...)
	sort.SliceStable(rep.Missed, func(i, j int) bool { return refLess(rep.Missed[i], rep.Missed[j]) })
	var unjudged []resolve.Ref
	for _, r := range append(wired.Unjudged, missed.Unjudged...) {
		if r.Kind == resolve.NotAModule && testPath(r.Path) {
			// A test's call through a reloaded module or a fixture: the
			// old function stays, so it still works; for review.
			rep.Review = append(rep.Review, r)
			continue
		}
		unjudged = append(unjudged, r)
	}
	var byName []string
	for _, r := range missed.Review {
		switch {
		case r.Kind == resolve.AllEntry && r.Path != v.mod:
			// The defining module keeps the name; a module re-exporting it
			// by name has its import renamed.
			byName = append(byName, unjudgedLine(r, "the name in __all__ of a module whose import of it is rewired",
				"once the import is rewired, `from` that module `import *` would raise AttributeError (take it out of __all__: a private name needs no entry there)"))
		case strings.HasPrefix(r.Kind, "string") && !testPath(r.Path):
			// In tests such a string is usually a mock.patch target, for
			// review; in the server's code it is a lookup by name.
			byName = append(byName, unjudgedLine(r, "the name as a string outside tests (getattr, importlib, a registry)",
				"mlagen cannot follow a lookup by name, which would keep the old kernel (refer to it through a name imported from its module, or wire it by hand)"))
		default:
			rep.Review = append(rep.Review, r)
		}
	}
	rep.Unjudged = append(rep.Unjudged, v.s.unjudged(unjudged)...)
	rep.Unjudged = append(rep.Unjudged, byName...)
	rep.Unjudged = append(rep.Unjudged, v.s.kernelLaunches(v.fi)...)
	rep.Files = len(files)
}

// brokenRefs are the references to the old function's or the dispatcher's
// name that the module they are looked up in does not bind (an import of
// the old name from a module that re-exports only the dispatcher now, or
// of the dispatcher from one that no longer has it): they fail with
// ImportError or AttributeError when they run. A module that may provide
// the name in a way the tree does not show is reported as a problem.
func (s *session) brokenRefs(rep *Report) []Ref {
	names := []string{s.rec.Old, s.rec.Dispatcher}
	var out []Ref
	bound := map[resolve.Val]resolve.Answer{}
	q := resolve.Query{Names: names, Match: func(v resolve.Val) bool {
		if v.Name() != s.rec.Old && v.Name() != s.rec.Dispatcher {
			return false
		}
		a, ok := bound[v]
		if !ok {
			a = s.Bound(v)
			bound[v] = a
		}
		return a != resolve.Yes
	}}
	for _, site := range s.Find(q, false).Sites {
		if bound[site.Val] == resolve.Unknown {
			rep.Unjudged = append(rep.Unjudged, fmt.Sprintf("%s:%d: %s is looked up in %s, which mlagen cannot read or which may provide names dynamically (module __getattr__, a star import from outside the tree): cannot tell what it reaches",
				site.Path, site.Line, site.Val.Name(), site.Val.Path()))
			continue
		}
		r := site.Ref
		r.Kind += fmt.Sprintf(": %s does not define %s (fails when it runs)", site.Val.Path(), site.Val.Name())
		out = append(out, r)
	}
	return out
}

// unjudged turns what the resolver cannot judge into problems (imports of
// the names from modules outside the tree, the name as an attribute of
// something not a module of it), with the files mlagen cannot read that
// spell them (not UTF-8, or linked from outside the tree).
func (s *session) unjudged(refs []resolve.Ref) []string {
	var out []string
	for _, r := range refs {
		why := "mlagen cannot tell whether it is the one it wires (patch the tree that holds that module, or import from the module in this tree)"
		if r.Kind == resolve.NotAModule {
			why = "mlagen cannot tell whether it is the one it wires (call it through a name imported from its module, or, if it is another function, name it otherwise)"
		}
		out = append(out, unjudgedLine(r, r.Kind, why))
	}
	for _, p := range s.co.Tree.OutsideSpelling(s.rec.Old, s.rec.Dispatcher) {
		out = append(out, fmt.Sprintf("%s is a symlink to a file outside the tree, which mlagen neither reads as the tree's nor writes, and it names %s or %s: give the root that holds the file, or replace the link with a copy", p, s.rec.Old, s.rec.Dispatcher))
	}
	for _, p := range s.co.Tree.NonUTF8Spelling(s.rec.Old, s.rec.Dispatcher) {
		out = append(out, fmt.Sprintf("%s is neither UTF-8 nor declares a single-byte encoding (# -*- coding: latin-1 -*-), so mlagen cannot read it, and it names %s or %s: fix its encoding (or its declaration) and run again", p, s.rec.Old, s.rec.Dispatcher))
	}
	return out
}

// accept moves the unjudged references at the places the user accepted
// (Options.AcceptUnjudged) to Accepted. A place with none is a problem:
// the lines moved or the reference went, and the user should look again
// rather than keep a flag that may one day pass something else there.
func (v *verifier) accept(places []string) {
	if len(places) == 0 {
		return
	}
	rep := v.rep
	used := map[string]bool{}
	var left []string
	for _, u := range rep.Unjudged {
		if at := unjudgedPlace(u); at != "" && slices.Contains(places, at) {
			rep.Accepted = append(rep.Accepted, u)
			used[at] = true
			continue
		}
		left = append(left, u)
	}
	rep.Unjudged = left
	for _, at := range places {
		if !used[at] {
			rep.Problems = append(rep.Problems, fmt.Sprintf("--accept-unjudged %s: nothing there cannot be judged (the tree changed, or the place is mistyped): run without it to see the places the proof prints", at))
		}
	}
}

// unjudgedPlace is where an unjudged line says it is: PATH:LINE for a
// reference, PATH for a whole file ("" when it says neither).
func unjudgedPlace(u string) string {
	if m := placeRE.FindStringSubmatch(u); m != nil {
		return m[1]
	}
	if path, _, ok := strings.Cut(u, " is "); ok && !strings.Contains(path, " ") {
		return path
	}
	return ""
}

var placeRE = regexp.MustCompile(`^([^\s:][^:]*:[0-9]+): `)

// unjudgedLine is one reference the proof cannot pass: where, what kind,
// the code, and why, with the way round.
func unjudgedLine(r resolve.Ref, kind, why string) string {
	return fmt.Sprintf("%s:%d: %s: %s; %s", r.Path, r.Line, kind, r.Code, why)
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

// route checks the whole call's guard and every entry's route guard, and
// describes the route.
func (v *verifier) route() {
	rec, rep, src := v.rec, v.rep, v.fi.Syntax().Src()
	kstem := strings.TrimSuffix(rec.KernelModule, ".py")
	_, hasKernel := v.s.co.Tree.Files[rep.KernelModule]
	khow := "the generated MMA kernel module"
	if rep.Kernel != nil {
		khow = rep.Kernel.describe()
	}
	rt := &RouteReport{Env: rec.Gate + "=1", Kernel: RouteHop{Path: rep.KernelModule, Wired: hasKernel, How: khow}}
	how := fmt.Sprintf("per cache: %s.sparse_decode when supports() accepts the inputs, else %s (%s)", kstem, rec.Old, plural(len(rep.Wired), "reference"))
	if b, ok := findBlock(v.fi, rec, partDispatcher); ok {
		line, _ := v.fi.Syntax().LineCol(b.open)
		rt.Dispatcher = &RouteHop{Path: v.mod, Line: line + 1, Function: rec.Dispatcher, How: how, Wired: len(rep.Missed) == 0}
	} else if def := v.fi.TopDef(rec.Old); def >= 0 {
		line, _ := resolve.LineCol(src, v.fi.Syntax().Start(def))
		rt.Dispatcher = &RouteHop{Path: v.mod, Line: line, Function: rec.Old, How: rec.Dispatcher + " beside it, " + how}
	}
	w, prob := v.s.wholeCallWant(v.fi, v.g)
	switch {
	case prob != "":
		rep.Problems = append(rep.Problems, prob)
	case w == nil:
		rt.Notes = append(rt.Notes, fmt.Sprintf("%s defines no %s: callers reach the per-cache dispatcher directly", v.mod, rec.WholeCall.Function))
	default:
		rt.WholeCall = v.wholeCallHop(w, kstem)
		v.entries(rt)
	}
	v.heads(rt)
	rep.Route = rt
}

// heads checks the heads guard at every place of the models that pads a
// rank's heads: there as mlagen writes it where the shape is known, and no
// guard anywhere else.
func (v *verifier) heads(rt *RouteReport) {
	rec, rep := v.rec, v.rep
	guarded := map[string]bool{}
	for _, h := range v.s.headsSites() {
		hop := RouteHop{Path: h.path, Line: h.line, Function: h.where, How: h.describe(rec), Wired: h.want != nil}
		if h.want != nil {
			src := v.s.Info(h.path).Syntax().Src()
			if pr := h.want.problem(src); pr != "" {
				rep.Problems = append(rep.Problems, pr)
				hop.Wired = false
			}
			if h.want.have != nil {
				guarded[fmt.Sprintf("%s:%d", h.path, h.want.have.open)] = true
			}
		}
		rt.Heads = append(rt.Heads, hop)
	}
	for _, m := range v.s.modelsWithoutHeads(rt.Heads) {
		rt.Notes = append(rt.Notes, fmt.Sprintf("%s: no place that sets a rank's query heads in a shape mlagen knows (%s, `%s = ...`), so no heads guard: if this SGLang still pads them to 64 under tensor parallelism, the kernel runs its 64-head configurations for a rank's own heads (correct, but slower: docs/sglang.md, \"The heads a call gets under tensor parallelism\")",
			m, rec.Heads.Method, rec.Heads.Padded))
	}
	v.stray(partHeads, guarded, "is at no place that pads a rank's heads in a shape mlagen knows")
}

// stray reports every block of part that no wanted place accounts for
// (guarded holds "file:offset" of those that one does): what it guards is
// gone or no longer understood, so what it promises is not proven.
func (v *verifier) stray(part string, guarded map[string]bool, why string) {
	for _, file := range v.s.blockFiles(part) {
		for _, b := range blocksOf(v.s.Info(file), v.rec) {
			if b.part == part && !guarded[fmt.Sprintf("%s:%d", file, b.open)] {
				v.rep.Problems = append(v.rep.Problems, fmt.Sprintf("%s:%d: this mlagen %s %s (SGLang changed there?); take it out with mlagen patch --revert and patch again", file, b.openLine, partNames[part], why))
			}
		}
	}
}

// wholeCallHop checks the whole call's guard against the kernel module: the
// guard belongs there exactly when the module has the whole-call entry
// points; without them the whole call runs its old body, per cache, and
// the route says so.
func (v *verifier) wholeCallHop(w *want, kstem string) *RouteHop {
	rec, rep, src := v.rec, v.rep, v.fi.Syntax().Src()
	k, ok := v.s.co.Tree.Files[rep.KernelModule]
	whole := !ok || hasWholeCall(k.Data, rec) // a missing module is reported on its own
	def := v.fi.TopDef(rec.WholeCall.Function)
	line, _ := resolve.LineCol(src, v.fi.Syntax().Start(def))
	hop := &RouteHop{Path: v.mod, Line: line, Function: rec.WholeCall.Function, Wired: whole && w.state(src) == "",
		How: fmt.Sprintf("whole call: the guard at the top of its body returns %s.%s when %s() accepts the inputs, else its old body runs", kstem, rec.WholeCall.Decode, rec.WholeCall.Supports)}
	switch {
	case whole:
		if pr := w.problem(src); pr != "" {
			rep.Problems = append(rep.Problems, pr)
		}
	case w.have != nil:
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s:%d: the whole-call guard calls %s.%s, which the kernel module does not define: run mlagen patch again", v.mod, w.have.openLine, kstem, rec.WholeCall.Decode))
	default:
		hop.How = fmt.Sprintf("whole call: its old body runs, per cache (the kernel module has no %s/%s; patch with one that has them to fuse the whole call)", rec.WholeCall.Supports, rec.WholeCall.Decode)
	}
	return hop
}

// callers adds entry e's callers to its hop re: a problem when each runs
// only on other GPUs than the kernel module's target (a note with
// allowUnreached), a note when the tree has none.
func (v *verifier) callers(rt *RouteReport, e entry, re *RouteEntry) {
	target := ""
	if v.rep.Kernel != nil {
		target = v.rep.Kernel.Target
	}
	hops, why, err := v.s.entryReach(e, target)
	switch {
	case err != nil:
		v.rep.Problems = append(v.rep.Problems, fmt.Sprintf("%s:%d: the calls of %s cannot be read: %v", e.path, e.line, e.fn, err))
	case why != "":
		v.rep.unreached = append(v.rep.unreached, why)
		v.rep.unreachedFix = unreachedFix(e.fn, target)
		if v.allowUnreached {
			rt.Notes = append(rt.Notes, why+"; wired anyway (--allow-unreached)")
		} else {
			v.rep.Problems = append(v.rep.Problems, why+": "+v.rep.unreachedFix)
		}
	case !slices.ContainsFunc(hops, func(h RouteCaller) bool { return !h.InTest }):
		rt.Notes = append(rt.Notes, fmt.Sprintf("no call of %s() was found in the tree outside tests, so on which GPUs the server reaches it is not proven (a caller outside the tree, or through a name mlagen does not resolve)", e.fn))
	}
	re.Callers = hops
}

// entries checks the route guards of the whole call's entry points.
func (v *verifier) entries(rt *RouteReport) {
	rec, rep := v.rec, v.rep
	rs := v.s.routes(v.mod, v.g)
	rep.Problems = append(rep.Problems, rs.problems...)
	rt.Notes = append(rt.Notes, rs.notes...)
	kstem := strings.TrimSuffix(rec.KernelModule, ".py")
	k, hasKernel := v.s.co.Tree.Files[rep.KernelModule]
	defers := !hasKernel || hasDefers(k.Data, rec) // a missing module is reported on its own
	guarded := map[string]bool{}
	for _, e := range rs.entries {
		re := RouteEntry{RouteHop: RouteHop{Path: e.path, Line: e.line, Function: e.fn, Wired: true,
			How: fmt.Sprintf("forwards to %s whatever the environment says", rec.WholeCall.Function)}}
		if e.choice != nil {
			re.Choice, re.Variable, re.Releases = e.choice.describe(), e.choice.variable, e.choice.releases
			re.How = fmt.Sprintf("the route guard runs the branch that calls %s before SGLang's backend choice %s, unless %s.%s() says the selection gives the call's shape to a peer (SGLang's choice then runs)",
				rec.WholeCall.Function, e.choice.describe(), kstem, rec.WholeCall.Defers)
			src := v.s.Info(e.path).Syntax().Src()
			pr := e.guard.problem(src)
			switch {
			case pr != "" && e.guard.have != nil && previousRoute(src, *e.guard.have, rec) && e.guard.state(src) == "stale":
				pr = fmt.Sprintf("%s:%d: the mlagen route guard of %s is an earlier mlagen's: it sends every decode call into %s, a shape the selection gives to a peer included, without asking %s.%s() first: run mlagen patch again to upgrade it",
					e.path, e.guard.have.openLine, e.fn, rec.WholeCall.Function, kstem, rec.WholeCall.Defers)
			case pr == "" && !defers:
				pr = fmt.Sprintf("%s:%d: the mlagen route guard of %s calls %s.%s, which the kernel module does not define: run mlagen patch again",
					e.path, e.guard.have.openLine, e.fn, kstem, rec.WholeCall.Defers)
			}
			if pr != "" {
				rep.Problems = append(rep.Problems, pr)
				re.Wired = false
			}
			if e.guard.have != nil {
				guarded[fmt.Sprintf("%s:%d", e.path, e.guard.have.open)] = true
			}
		}
		v.callers(rt, e, &re)
		rt.Entries = append(rt.Entries, re)
	}
	v.stray(partRoute, guarded, "precedes no backend choice mlagen understands")
	if len(rs.entries) == 0 && len(rs.problems) == 0 {
		rt.Notes = append(rt.Notes, fmt.Sprintf("no function in this tree calls %s: its callers (outside the tree) reach the guarded whole call directly", rec.WholeCall.Function))
	}
}

// record checks an installed SGLang's RECORD: it must list the kernel
// module, and a RECORD that lists it where the wiring is gone is the sign
// of a pip install that replaced SGLang's files. Where more than one
// dist-info lists SGLang's files (recordsFor), each must list the module,
// and the report names the others. Not judged on a tree an interrupted run
// left half written: patch lists the module in RECORD before it writes the
// dispatcher, and revert takes the line out after removing it, so the half
// tree looks like pip's work; the journal's line says what happened and
// what to run.
func (v *verifier) record() {
	rep := v.rep
	rs := v.s.co.recordsFor(v.mod)
	if len(rs) == 0 {
		return
	}
	rep.Record = rs[0].Path
	for _, r := range rs[1:] {
		rep.OtherRecords = append(rep.OtherRecords, OtherRecord{Path: r.Path, Listed: r.listed, Mismatched: r.mismatched,
			Stale: r.mismatched > rs[0].mismatched, InstalledMismatched: rs[0].mismatched})
	}
	if v.halfWritten {
		return
	}
	k, hasKernel := v.s.co.Tree.Files[rep.KernelModule]
	hasKernel = hasKernel && bytes.HasPrefix(k.Data, []byte(kernelHeader(v.rec)))
	wired := hasBlock(v.fi, v.rec, partDispatcher)
	var listing, unlisted []string
	for _, r := range rs {
		if _, _, ok := recordLine(r.Data, r.Prefix+rep.KernelModule); ok {
			listing = append(listing, r.Path)
		} else {
			unlisted = append(unlisted, r.Path)
		}
	}
	switch {
	case len(listing) > 0 && (!hasKernel || !wired):
		target := "TARGET"
		if hasKernel {
			if t := kernelTarget(k.Data); t != "" {
				target = t
			}
		}
		rep.Problems = []string{fmt.Sprintf("the mlagen wiring is gone (%s lists %s, but SGLang's files are upstream again: pip reinstalled or upgraded it); restore it with: mlagen patch --target %s %s",
			listing[0], rep.KernelModule, target, v.s.co.Tree.Root)}
	case hasKernel:
		for _, r := range unlisted {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s does not list %s, so pip uninstall would leave it behind: run mlagen patch again", r, rep.KernelModule))
		}
	}
}
