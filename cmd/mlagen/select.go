package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/gen"
)

var selectUsage = `Usage: mlagen select [flags] RESULTS.json [--also OTHER.json]...

Read the results of the harness (kernels/<target>/harness.py) and pick, for
every (batch, topk) bucket, the fastest configuration that passed every
correctness case (CUDA-graph replay time where measured; a configuration
whose check failed at any timed shape is chosen at none). Writes the table
as gen/selections/<target>.json, the measured selection the generator builds
into mlagen: rebuild and re-emit ('make kernels') and emit and patch use it.
With --selections DIR it writes DIR/<target>.json instead, and 'mlagen patch
--selection DIR/<target>.json SGLANG_ROOT' installs the module rendered
with it without a rebuild ('mlagen emit --selection DIR/<target>.json
--kernels OUT' writes it for review: a table of your own card). A table
timed with other sweep flags than the target's default is rendered by emit
with those flags, then installed with 'mlagen patch --kernels OUT': select
prints the command. select writes over its own file only: a file there
that is not a selection (the results themselves, say) or is another
target's is refused (exit 2).

A shape the results timed where no configuration passed goes to SGLang's
own kernel (the module declines it): select lists such buckets (--json:
"to_sglang"). A shape where every row failed to run or was declined is
refused, with the first row's error: no time there says what serves it.
Results timed on a GPU of another target (the H200 standing in for an
sm_120 card) are named so (--json: "timed_on", "timed_on_other_gpu").

The table is static: the kernels never benchmark at run time (SGLang
captures CUDA graphs).

The batch buckets are the batches the results timed, each running up to its
batch and the last one unbounded: the harness times 1, 8, 16, 32, 64 and
128, and 1, 16, 64 and 128 are required. The topk buckets are 512 and 2048.
Each bucket's choice is the one timed at its largest batch. Inside the
bucket, and on a GPU with another number of multiprocessors, the module's
entry points run that choice's kernel with its split count fitted to the
GPU and the call's batch (fit_splits, docs/kernel-contract.md). For the
shipped tables that is the choice itself at every timed batch on the H200
(calib/splits.py checks it); for a table of your own, 'python3 -c "import
sparse_mla_mma as m; print(m.select(B, TOPK, HEADS, sms=N))"' in
kernels/<target> shows what runs on a GPU of N multiprocessors.

After the table it lists near ties: buckets whose runner-up is within ` + fmt.Sprint(gen.NearTiePercent) + `% of
the choice, about the run-to-run spread on the H200, where a rerun of the
harness may pick the other variant (per cache at the largest timed head
count, then the whole call's). The choice follows the numbers of the
results' own Triton release. Rows marked with another release ("triton":
"3.8.0" in a timing row: the Triton a newer SGLang installs) choose only
among such ties: the tied configuration whose worst time over the fastest
of them under those releases is smallest goes first (a configuration that
spills under a newer release, say), and the list says so. --also
OTHER.json adds the rows of a harness run on the same GPU under another
Triton release so marked (run the harness once under each Triton your
SGLang upgrades may bring), and its failed checks exclude a configuration
as RESULTS.json's do.

Only what the results time can be chosen. A kernel of the sweep (a
configuration at any split count) with no per-cache row is never chosen,
and select names those under the table; so is a configuration the
results never compared with the reference (no correctness row and no
timing row with its own check: the harness's --no-check checks only the
whole call's timed shapes), and results that check none are refused
(exit 1). Results of the harness's --variants selected time the module's
entry points, each shape on the configuration the built-in tables pick, so
select refuses them too (exit 1; the file's "variants", or its command
line): run the harness with --variants all, its default, to choose again.

Peers: the harness also times what SGLang runs without mlagen (FlashMLA,
FlashInfer, SGLang's own Triton path) on the same inputs, as rows named
"peer:NAME". A bucket where a peer that was checked and passed was faster than
every mlagen configuration goes to the peer, if SGLang's own path reaches
it once the module declines: the table names it, and with the gate set
SGLang's own code runs there. That path is SGLang's Triton kernel per
cache, and its sm_120 entry's backend choice (FlashInfer, that Triton
path, PyTorch) for the whole call; FlashMLA is on neither, so a bucket it
wins stays mlagen's fastest configuration. For the whole call the module's
defers_full() says so and the route guard leaves the call to SGLang's
backend choice (FlashInfer by default from SGLang 0.5.15); per cache,
supports() declines and SGLang's kernel runs. select lists, per bucket
where a peer was timed, which one wins and by how much (--json:
"verdicts").

The sweep flags must describe the sweep the results measured (default: the
target's curated sweep, the target taken from the results file).

Examples:
  mlagen select --check gpu/results/selection-input-sm90.json   # CI: the checked-in table is what the results give
  mlagen select --dry-run gpu/results/selection-input-sm120.json
  mlagen select --selections . gpu/results/selection-input-sm120.json   # writes ./sm120.json, for emit --selection
  mlagen select --json --dry-run gpu/results/selection-input-sm90.json | jq .selection.table
  mlagen select --selections . my-card-all.json --also my-card-all-triton-3.8.0.json   # ties broken by a 3.8.0 run

Run it from the repository root: the results path is recorded as given, and
the default --selections folder is relative to it.

Exit status: 0 written (or, with --check, the same), 1 results select
cannot choose from (a shape untimed, or one whose every row failed; a run
of --variants selected, which times only the entry points, or one with no
check at all, or one cut short, as RESULTS.json or --also; rows with and
without a head count mixed),
--check found a difference (the diff is printed) or a write that failed,
2 bad flags, a results or --also file that cannot be read or is not
harness results, results of another GPU than --target or than RESULTS.json
(--also: or of its Triton release), a target the file spells otherwise
than the harness, a --selections folder that does not exist or is not one,
or a <target>.json there that is not this target's selection (nothing
written). With --json every failure, a mistake in the flags too, also
prints {"command", "error", "details"} on stdout, or, where --check found
a difference, the report with an "error" (and the diff).
`

// selectReport is select's --json output.
type selectReport struct {
	Command string `json:"command"` // "select", as in every --json object
	Target  string `json:"target"`
	Source  string `json:"source"`
	// Also are the --also files: other releases' rows, which break near ties.
	Also      []string      `json:"also,omitempty"`
	Selection gen.Selection `json:"selection"`
	NearTies  []nearTie     `json:"near_ties"`
	File      string        `json:"file"`
	Mode      string        `json:"mode"` // "write", "dry-run" or "check"
	Differs   bool          `json:"differs"`
	// Error is set where the run fails (exit 1): --check found a difference.
	Error string `json:"error,omitempty"`
	Diff  string `json:"diff,omitempty"`
	// Untimed are the sweep's kernels (a configuration less its split
	// count: gen.Coverage) with no per-cache row in the results at any
	// split count, of Kernels in all: the selection never chooses them.
	Untimed []string `json:"untimed_kernels"`
	Kernels int      `json:"kernels"`
	// Unchecked are the configurations the results time but never
	// compared with the reference (gen.Unchecked): never chosen.
	Unchecked []string `json:"unchecked"`
	// Heads are the head counts the per-cache rows time: with one, that
	// count's choices serve every H (a rank's 16 heads included).
	Heads []int `json:"per_cache_heads"`
	// ToSGLang are the buckets the table gives to SGLang's own kernel
	// (gen.SIMTName): timed, but no configuration passed its checks there.
	ToSGLang []bucket `json:"to_sglang"`
	// TimedOn is the GPU's compute capability as the harness recorded it
	// ("sm_90"); OtherGPU is set where that is not a GPU of the target's
	// (a proxy run, or the harness of another target's module).
	TimedOn  string `json:"timed_on,omitempty"`
	OtherGPU bool   `json:"timed_on_other_gpu"`
}

// bucket is one cell of a selection's tables by its upper bounds, 0 for
// unbounded as in the selection file; Topk counts the tokens of both
// caches in the whole call's.
type bucket struct {
	Entry string `json:"entry,omitempty"`
	Heads int    `json:"max_heads"`
	Batch int    `json:"max_batch"`
	Topk  int    `json:"max_topk"`
}

func (b bucket) String() string {
	unit := "topk"
	if b.Entry != "" {
		unit = "tokens"
	}
	return strings.TrimSpace(fmt.Sprintf("%s heads <= %s batch <= %s %s <= %s", b.Entry,
		boundString(b.Heads), boundString(b.Batch), unit, boundString(b.Topk)))
}

// sglangBuckets are the buckets of sel (the whole call's too) whose choice
// is the SIMT baseline, which the module hands to SGLang's kernel.
func sglangBuckets(sel gen.Selection) []bucket {
	out := []bucket{}
	for _, part := range []struct {
		entry string
		sel   *gen.Selection
	}{{"", &sel}, {gen.EntryWholeCall, sel.WholeCall}} {
		if part.sel == nil {
			continue
		}
		heads := part.sel.HeadBounds()
		for h, table := range part.sel.Tables() {
			for i, row := range table {
				for j, name := range row {
					if name == gen.SIMTName {
						out = append(out, bucket{part.entry, heads[h], part.sel.BatchBounds[i], part.sel.TopkBounds[j]})
					}
				}
			}
		}
	}
	return out
}

// sameFamily says whether capability (as the harness records it, "sm_89";
// "" or "interpreter" when it has none) is a GPU of t's: t itself, or, for
// a capability mlagen has no target of (sm_121), the same major version,
// as SGLang's test of the GPU reads it (12.x for sm_120).
func sameFamily(capability string, t gen.Target) bool {
	digits, ok := strings.CutPrefix(capability, "sm_")
	if !ok || len(digits) < 2 || strings.Trim(digits, "0123456789") != "" {
		return true // nothing recorded to judge by
	}
	if got, err := gen.LookupTarget(capability); err == nil {
		return got.Name == t.Name
	}
	return digits[:len(digits)-1] == fmt.Sprint(t.Capability/10)
}

type nearTie struct {
	Entry      string  `json:"entry,omitempty"`
	Batch      int     `json:"batch"`
	Topk       int     `json:"topk"`
	Chosen     string  `json:"chosen"`
	RunnerUp   string  `json:"runner_up"`
	ChosenUS   float64 `json:"chosen_us"`
	RunnerUpUS float64 `json:"runner_up_us"`
	// Releases timed both under other Triton releases, which decided
	// between them; Worst is the chosen's and the runner-up's largest
	// time there over the fastest of the tied configurations.
	Releases []string  `json:"releases,omitempty"`
	Worst    []float64 `json:"worst,omitempty"`
}

func runSelect(e *env, args []string) int {
	f := newCmdFlags("select", selectUsage)
	var sf sweepFlags
	sf.register(f.FlagSet, "", "GPU target the sweep flags describe (default: the results file's target)")
	_ = f.MarkHidden("heads") // emit's alone: refused below, with why
	var dir string
	f.StringVar(&dir, "selections", gen.SelectionDir, "the selections `DIR` to write <target>.json into (relative to the repository root by default)")
	f.alias(&dir, "out", "selections")
	dryRun := f.Bool("dry-run", false, "print the table; write nothing")
	check := f.Bool("check", false, "write nothing; exit 1, with the diff, when DIR/<target>.json differs from what the results give")
	asJSON := f.Bool("json", false, "print the report as JSON on stdout")
	var also []string
	f.StringArrayVar(&also, "also", nil, "a harness results `FILE` of the same GPU under another Triton release, whose rows break near ties (repeatable)")
	if done, code := f.parse(e, args); done {
		return code
	}
	if done, code := f.emptyGiven(e, "selections", "out"); done {
		return code
	}
	if f.NArg() != 1 {
		return f.usageError(e, "want exactly one RESULTS.json argument, got %d", f.NArg())
	}
	if *dryRun && *check {
		return f.usageError(e, "--dry-run and --check are exclusive")
	}
	if f.Changed("heads") {
		return f.usageError(e, "--heads is not read: select takes the head counts from the results' rows (time yours with the harness's --heads)")
	}
	// An input select cannot use (unreadable, not results, another GPU's
	// or release's, no folder to write into) is bad usage, exit 2; with
	// --json it is reported on stdout too. Results it can read but not
	// choose from are the job's problem, exit 1.
	bad := func(format string, args ...any) int {
		return failed(e, "select", *asJSON, exitUsage, fmt.Sprintf(format, args...))
	}
	path := f.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return bad("%v", err)
	}
	res, err := gen.ParseResults(data)
	if err != nil {
		return bad("%s: %v", path, err)
	}
	for _, p := range also {
		data, err := os.ReadFile(p)
		if err != nil {
			return bad("--also: %v", err)
		}
		other, err := gen.ParseResults(data)
		if err == nil {
			res, err = gen.AddRelease(res, other)
		}
		if errors.Is(err, gen.ErrEntryPointsOnly) || errors.Is(err, gen.ErrIncomplete) {
			// Results it reads but cannot choose from, as RESULTS.json's.
			return failed(e, "select", *asJSON, exitFail, fmt.Sprintf("--also %s: %v", p, err))
		}
		if err != nil {
			return bad("--also %s: %v", p, err)
		}
	}
	// A target the file spells otherwise than the harness is the file's
	// fault, whether or not --target is given.
	if t, err := gen.LookupTarget(res.Target); err != nil || t.Name != res.Target {
		return bad("%s: its target %q is not one of mlagen's as the harness writes it (%s): results come from kernels/<target>/harness.py unedited", path, res.Target, targetNames())
	}
	if !f.Changed("target") {
		sf.target = res.Target
	}
	s, err := sf.sweep(f.FlagSet)
	if err != nil {
		return f.usageError(e, "%v", err)
	}
	if s.Target.Name != res.Target {
		return bad("%s holds %s results, not %s (leave --target out: select takes it from the results)", path, res.Target, s.Target.Name)
	}
	if msg := notAFolder(dir); msg != "" {
		return bad("--selections %s (--selections names the folder to write %s into)", msg, gen.SelectionFile(s.Target))
	}
	if _, err := os.Stat(dir); err != nil && !*dryRun {
		if !errors.Is(err, fs.ErrNotExist) {
			return bad("--selections %v", err)
		}
		if f.Changed("selections") || f.Changed("out") {
			return bad("--selections %s: no such directory (create it first)", dir)
		}
		return bad("--selections %s: no such directory: the default is relative to the repository root (run select from there, or give --selections DIR)", dir)
	}
	if !*dryRun && !*check {
		// select rewrites its own file; anything else there (the results
		// themselves, another target's table) is the user's to move.
		if msg := notASelection(filepath.Join(dir, gen.SelectionFile(s.Target)), s.Target); msg != "" {
			return bad("%s", msg)
		}
	}
	rep, set, err := selection(s, res, path, dir)
	if err != nil {
		return failed(e, "select", *asJSON, exitFail, err.Error())
	}
	rep.Also = also
	rep.Mode = map[bool]string{true: "dry-run", false: "write"}[*dryRun]
	if *check {
		rep.Mode, rep.Diff = "check", set.Diff()
	}
	if rep.Mode == "write" && rep.Differs {
		if _, err := set.Apply(e.write); err != nil {
			return writeFailed(e, "select", rep.File, err, *asJSON)
		}
	}
	code := exitOK
	if rep.Mode == "check" && rep.Differs {
		code = exitFail
		rep.Error = rep.File + " differs from what the results give"
	}
	if *asJSON {
		return max(code, emitJSON(e, rep, true))
	}
	printSelection(e.stdout, s, rep)
	return code
}

// notASelection says why select must not write over path (a file there
// that is not a selection, or another target's), "" where it may (no file,
// or t's selection).
func notASelection(path string, t gen.Target) string {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return fmt.Sprintf("%s: %v", path, err)
	}
	sel, err := gen.ParseSelection(data)
	if err != nil {
		return fmt.Sprintf("%s exists and is not a selection select wrote (%v): select writes only over its own; move it away, or give --selections another folder", path, err)
	}
	if sel.Target != t.Name {
		return fmt.Sprintf("%s holds the selection for %s, not %s: move it away, or give --selections another folder", path, sel.Target, t.Name)
	}
	return ""
}

// selection is the measured selection of res for the sweep s and the
// change that writes it into dir as <target>.json.
func selection(s gen.Sweep, res gen.Results, path, dir string) (selectReport, changeset.Set, error) {
	fits := map[string]bool{}
	for _, b := range gen.CheckSweep(s) {
		if b.Fits {
			fits[b.Name] = true
		}
	}
	rep := selectReport{Command: "select", Target: s.Target.Name, NearTies: []nearTie{},
		Source: formatSource(res.GPU, res.Torch, res.Triton, res.Date, filepath.ToSlash(path))}
	set := changeset.Set{Root: dir}
	sel, err := gen.SelectMeasured(res, fits, rep.Source)
	if err != nil {
		return rep, set, fmt.Errorf("%s: %w", path, err)
	}
	if err := sel.Validate(fits); err != nil {
		// What select writes, emit and patch must read.
		return rep, set, fmt.Errorf("%s: the selection made from it is not one emit would take (%v): a bug in mlagen select, please report it with the results file", path, err)
	}
	rep.Selection = sel
	rep.ToSGLang = sglangBuckets(sel)
	if rep.TimedOn = res.Capability; !sameFamily(res.Capability, s.Target) {
		rep.OtherGPU = true
	}
	rep.Heads = gen.PerCacheHeads(res)
	timed, kernels := gen.Coverage(res, fits)
	rep.Kernels, rep.Untimed = len(kernels), []string{}
	for _, k := range kernels {
		if !slices.Contains(timed, k) {
			rep.Untimed = append(rep.Untimed, k)
		}
	}
	rep.Unchecked = append([]string{}, gen.Unchecked(res, fits)...)
	for _, t := range gen.NearTies(res, fits, gen.NearTiePercent/100.0) {
		rep.NearTies = append(rep.NearTies, nearTie(t))
	}
	data, err := gen.MarshalSelection(sel)
	if err == nil {
		err = set.Write(gen.SelectionFile(s.Target), data)
	}
	rep.File, rep.Differs = filepath.Join(dir, gen.SelectionFile(s.Target)), len(set.Changes) > 0
	return rep, set, err
}

// printSelection is the table select prints, the near ties under it, and
// what was done with the file.
func printSelection(w io.Writer, sw gen.Sweep, rep selectReport) {
	t := sw.Target
	sel := rep.Selection
	fmt.Fprintf(w, "%s selection (%s):\n", t.Name, rep.Source)
	if len(rep.Also) > 0 {
		fmt.Fprintf(w, "  near ties broken by the rows of %s (other Triton releases)\n", strings.Join(rep.Also, ", "))
	}
	printTables(w, sel, "topk")
	if sel.WholeCall != nil {
		fmt.Fprintln(w, "whole call (tokens of both caches):")
		printTables(w, *sel.WholeCall, "tokens")
	}
	for _, part := range []struct {
		what, unit string
		sel        *gen.Selection
	}{{"per cache", "topk", &sel}, {"whole call", "tokens", sel.WholeCall}} {
		if part.sel == nil || len(part.sel.Verdicts) == 0 {
			continue
		}
		fmt.Fprintf(w, "against the peers timed beside it (%s; µs, CUDA-graph replay where measured):\n", part.what)
		for _, v := range part.sel.Verdicts {
			peer := strings.TrimPrefix(v.Peer, gen.PeerPrefix)
			verdict := fmt.Sprintf("mlagen, %.2fx the peer's speed", 1/v.Ratio())
			switch {
			case v.Winner == v.Peer:
				verdict = fmt.Sprintf("%s (mlagen takes %.2fx its time): the module declines this bucket", peer, v.Ratio())
			case gen.IsPeer(v.Winner):
				verdict = fmt.Sprintf("%s takes it at %.1f (mlagen takes %.2fx that; %s, faster, is not reached when the module declines): the module declines this bucket",
					strings.TrimPrefix(v.Winner, gen.PeerPrefix), v.WinnerUS, v.MlagenUS/v.WinnerUS, peer)
			case v.Ratio() > 1:
				verdict = fmt.Sprintf("%s is faster (mlagen takes %.2fx its time), but a call the module declines does not reach it (SGLang's %s path): mlagen keeps the bucket", peer, v.Ratio(), part.what)
			}
			fmt.Fprintf(w, "  heads %d batch %d %s %d: %s %.1f, %s %.1f: %s\n",
				v.Heads, v.Batch, part.unit, v.Topk,
				v.Mlagen, v.MlagenUS, peer, v.PeerUS, verdict)
		}
	}
	if len(rep.Untimed) > 0 {
		fmt.Fprintf(w, "note: the results time %d of the sweep's %d kernels per cache (at any split count); the %d they leave out are never chosen (the harness's --variants all times every one): %s\n",
			rep.Kernels-len(rep.Untimed), rep.Kernels, len(rep.Untimed), strings.Join(rep.Untimed, ", "))
	}
	if len(rep.Unchecked) > 0 {
		fmt.Fprintf(w, "note: the results time %d configurations they never compared with the reference (no correctness row, no checked timing row); these are never chosen: %s\n",
			len(rep.Unchecked), strings.Join(rep.Unchecked, ", "))
	}
	if len(rep.Heads) == 1 {
		// One table for every H: where that H is not a rank's 16, a
		// tensor-parallel deployment runs choices timed at another count.
		switch h := rep.Heads[0]; {
		case h == 0:
			fmt.Fprintln(w, "note: the per-cache rows record no head count, so one table serves every head count (the harness's default --heads 64,16 times a whole model's and a tensor-parallel rank's)")
		case h > 16:
			fmt.Fprintf(w, "note: the per-cache rows time %d heads only, so their choices serve every head count, a rank's 16 under tensor parallelism 4 among them (the harness's default --heads 64,16 times both)\n", h)
		default:
			fmt.Fprintf(w, "note: the per-cache rows time %d heads only, so their choices serve every head count (the harness's default --heads 64,16 times 64 as well)\n", h)
		}
	}
	if len(rep.ToSGLang) > 0 {
		var where []string
		for _, b := range rep.ToSGLang {
			where = append(where, b.String())
		}
		fmt.Fprintf(w, "note: %d buckets go to SGLang's own kernel (the module declines them): the results timed them, but no configuration passed its checks there: %s\n",
			len(rep.ToSGLang), strings.Join(where, "; "))
	}
	if rep.OtherGPU {
		fmt.Fprintf(w, "note: the results were timed on an %s GPU, not on a %s one (%s): the table ranks the kernels as that GPU ran them, a stand-in for yours\n",
			rep.TimedOn, t.Name, t.GPUs)
	}
	if len(rep.NearTies) > 0 {
		fmt.Fprintf(w, "near ties (runner-up within %d%%, about the run-to-run spread: a rerun may swap them):\n", gen.NearTiePercent)
		for _, t := range rep.NearTies {
			where, size := "", "topk"
			if t.Entry != "" {
				where, size = t.Entry+" ", "tokens"
			}
			fmt.Fprintf(w, "  %sbatch %d %s %d: %s %.2f us, %s %.2f us (%+.1f%%)",
				where, t.Batch, size, t.Topk, t.Chosen, t.ChosenUS, t.RunnerUp, t.RunnerUpUS, (t.RunnerUpUS/t.ChosenUS-1)*100)
			if len(t.Releases) > 0 {
				fmt.Fprintf(w, "; under Triton %s at most %.2fx and %.2fx the fastest of the tied",
					strings.Join(t.Releases, ", "), t.Worst[0], t.Worst[1])
			}
			fmt.Fprintln(w)
		}
	}
	switch {
	case rep.Mode == "check" && rep.Differs && filepath.Dir(rep.File) == filepath.Clean(gen.SelectionDir):
		fmt.Fprintf(w, "%s differs from what the results give:\n%sRun 'mlagen select' without --check, rebuild and re-emit ('make kernels'), and commit the result.\n", rep.File, rep.Diff)
	case rep.Mode == "check" && rep.Differs:
		fmt.Fprintf(w, "%s differs from what the results give:\n%sRun 'mlagen select' without --check to rewrite it.\n", rep.File, rep.Diff)
	case rep.Mode == "check":
		fmt.Fprintf(w, "%s is what the results give\n", rep.File)
	case rep.Mode == "write" && rep.Differs && filepath.Dir(rep.File) == filepath.Clean(gen.SelectionDir):
		fmt.Fprintf(w, "wrote %s; rebuild mlagen and re-emit ('make kernels') so that emit and patch use it\n", rep.File)
	case rep.Mode == "write" && rep.Differs && sweepCommand("emit", sw) != sweepCommand("emit", gen.DefaultSweep(t)):
		// patch --selection renders with the default sweep, which does
		// not hold what this one timed: emit (which takes the sweep's
		// flags), then patch the rendered module.
		fmt.Fprintf(w, "wrote %s; '%s' renders the module with it (this sweep's flags), then 'mlagen patch --kernels DIR SGLANG_ROOT' installs it (patch --selection renders with the default sweep)\n",
			rep.File, sweepCommand("emit", sw, "--selection "+shellWord(rep.File), "--kernels DIR"))
	case rep.Mode == "write" && rep.Differs:
		fmt.Fprintf(w, "wrote %s; 'mlagen patch --selection %s SGLANG_ROOT' installs the module rendered with it ('mlagen emit --selection %s --kernels DIR' writes it for review)\n", rep.File, shellWord(rep.File), shellWord(rep.File))
	case rep.Mode == "write":
		fmt.Fprintf(w, "%s already holds this selection; nothing written\n", rep.File)
	}
}

// printTables prints a selection's tables, one block per heads bucket when
// there are several; unit names the last bucket ("topk", "tokens").
func printTables(w io.Writer, sel gen.Selection, unit string) {
	tables, heads := sel.Tables(), sel.HeadBounds()
	for h, table := range tables {
		indent := "  "
		if len(tables) > 1 {
			fmt.Fprintf(w, "  heads <= %s:\n", boundString(heads[h]))
			indent = "    "
		}
		for i, row := range table {
			line := fmt.Sprintf("%sbatch <= %-4s", indent, boundString(sel.BatchBounds[i]))
			for j, name := range row {
				line += fmt.Sprintf("  %s <= %s: %-24s", unit, boundString(sel.TopkBounds[j]), name)
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
}

func boundString(n int) string {
	if n == 0 {
		return "any"
	}
	return fmt.Sprint(n)
}
