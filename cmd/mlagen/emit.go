package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/mlagen/mlagen/gen"
)

const emitUsage = `Usage: mlagen emit [flags]

Budget-check every variant of a sweep against the target's shared-memory and
register limits, and write sparse_mla_mma.py (every variant that fits, as a
configuration, the static selection by batch and topk, and the launchers:
the single file 'mlagen patch' installs), simt_baseline.py, harness.py
(validates and times every configuration on your GPU) and VARIANTS.md (read
it first). The selection is the target's measured one (gen/selections,
written by 'mlagen select' and built into mlagen) where every variant it
names fits the sweep, else a static rule, and emit says so. --kernels
changes where the files go, never what they hold.

--block-h, --block-t, --split-k, --num-warps and --num-stages shape the
tl.dot family (mma_*) alone: the pipelined pp_* family (sm_80 to sm_89,
sm_100, sm_120) and the warp-specialised families (sm_90) have their own
flags, --pp-split-k and the --ws-* flags below, and keep the target's
curated lists unless those are given.

--selection FILE renders the module with a selection of your own instead:
the file 'mlagen select --selections DIR RESULTS.json' writes (DIR/sm120.json
for an sm_120 card's results), so that a table timed on your GPU reaches
'mlagen patch --kernels' without rebuilding mlagen. The file names its
target, which becomes emit's (--target, if given, must agree), and every
variant it names must fit the sweep (give the sweep flags the results were
timed with, if they were not the curated ones).

The folder is written all or nothing: every file goes through a temporary
file and a rename, and a failure puts back what was there. Emit records the
SHA-256 of each file it writes in the folder's .mlagen.sha256; it refuses,
naming the file and writing nothing, to overwrite a file that is not
mlagen's (a hand-written harness.py) or to replace or delete a generated
file that was edited by hand. Generated files the sweep no longer emits are
removed; other files are left alone.

On sm_90 the sweep also holds the warp-specialised family (ws_*, written in
Gluon: a producer warp group gathers and dequantises K tiles while two
consumer warp groups run the wgmma); --ws-split-k picks its SPLIT_K values,
--ws-cluster-split-k those of its wsc_* form, whose splits run as one
thread-block cluster and merge their partials without a combine kernel,
and --ws-narrow-split-k those of its narrow 16-head form (ws_h16_*); all
three "none" leave Gluon out, for Triton kernels only.

Examples:
  mlagen emit                                  # curated sm_120 sweep into kernels/sm120
  mlagen emit --target sm_90                   # curated sm_90 sweep into kernels/sm90
  mlagen emit --block-h 16,32 --block-t 16 --split-k 1,8 --dry-run
  mlagen emit --target sm_90 --check           # CI: fail when kernels/sm90 is stale
  mlagen emit --target sm_90 --check --diff    # ... and show how
  mlagen emit --target sm_90 --ws-split-k none --ws-cluster-split-k none \
      --ws-narrow-split-k none --kernels k-triton     # Triton kernels only
  mlagen emit --target sm_90 --per-variant --kernels k-all  # one module per variant too
  mlagen emit --selection sm120.json --kernels my-sm120    # your card's tables, then: mlagen patch --kernels my-sm120 ~/sglang

Exit status: 0 written (or up to date), 1 nothing fits, a --selection
that names a variant the sweep does not fit, --check found a difference, a
file emit refuses to overwrite (another target's folder included), or a
write that failed (the folder is as it was), 2 bad flags, a --kernels path
through a file or a dangling symlink (the folder or a folder above it), or
a --selection file that cannot be read, is not a selection, or is for
another GPU than --target (nothing written). With --json every failure,
a mistake in the flags too, also prints {"command", "error", "details"}
on stdout, or, where the report itself is printed (--check found a
difference, nothing fits), the report with an "error".
`

// emitOpts is what runEmit reads from its flags.
type emitOpts struct {
	sweep      gen.Sweep
	dir        string
	mode       string // "write", "dry-run" or "check"
	diff       bool
	asJSON     bool
	perVariant bool
	// selection is --selection's, read from selectionPath; nil: the
	// target's own (gen.Emit's choice).
	selection     *gen.Selection
	selectionPath string
}

func runEmit(e *env, args []string) int {
	o, done, code := parseEmit(e, args)
	if done {
		return code
	}
	var extra []string
	if o.selection != nil {
		extra = append(extra, "--selection "+shellWord(o.selectionPath))
	}
	em, err := gen.Emit(o.sweep, sweepCommand("emit", o.sweep, extra...), o.selection)
	if err == nil && o.perVariant {
		var extra []gen.File
		extra, err = em.PerVariantFiles()
		em.Files = append(em.Files, extra...)
	}
	if err != nil {
		return failed(e, "emit", o.asJSON, exitFail, err.Error())
	}
	if em.SelectionNote != "" {
		em.SelectionNote = selectionNote(o.sweep, em)
	}
	if o.sweep.Heads != gen.DefaultSweep(o.sweep.Target).Heads && !em.Selection.StaticRule() {
		// --heads keys the static rule's tables alone: say so rather
		// than let a module with other tables read as shaped by it.
		from := "the measured selection's"
		if o.selection != nil {
			from = "--selection's"
		}
		note := fmt.Sprintf("--heads %d shapes only the static rule's tables, and this module carries %s, keyed by the head counts its results timed", o.sweep.Heads, from)
		if em.SelectionNote != "" {
			note = em.SelectionNote + "; " + note
		}
		em.SelectionNote = note
	}
	if len(em.Fitting()) == 0 {
		msg := fmt.Sprintf("no variant of the sweep fits %s; nothing written (see 'mlagen budget' for the breakdowns)", o.sweep.Target.Name)
		if o.asJSON {
			rep := emitReport(o, em, gen.DirPlan{})
			rep["error"] = msg
			emitJSON(e, rep, false)
		} else {
			printVerdicts(e.stdout, o.sweep, em.Budgets)
		}
		fmt.Fprintf(e.stderr, "mlagen emit: %s\n", msg)
		return exitFail
	}
	plan, err := gen.PlanDir(o.dir, em.Files)
	if err != nil {
		return refused(e, o.dir, err, o.asJSON)
	}
	if o.mode == "write" {
		if _, err := plan.Set.Apply(e.write); err != nil {
			return writeFailed(e, "emit", o.dir, err, o.asJSON)
		}
	}
	code = exitOK
	if o.mode == "check" && plan.Differs() {
		code = exitFail
	}
	if o.asJSON {
		rep := emitReport(o, em, plan)
		if code != exitOK {
			rep["error"] = fmt.Sprintf("%s differs from what '%s' would emit", o.dir, em.Command)
		}
		return max(code, emitJSON(e, rep, true))
	}
	if em.SelectionNote != "" {
		fmt.Fprintf(e.stdout, "note: %s\n", em.SelectionNote)
	}
	printVerdicts(e.stdout, o.sweep, em.Budgets)
	printPlan(e.stdout, o, em, plan)
	return code
}

// parseEmit reads the flags; done is true when runEmit must return code.
func parseEmit(e *env, args []string) (o emitOpts, done bool, code int) {
	f := newCmdFlags("emit", emitUsage)
	var sf sweepFlags
	sf.register(f.FlagSet, "sm_120", "GPU target: "+targetNames())
	f.StringVar(&o.dir, "kernels", "", "the kernels `DIR` to write (default kernels/<target>, e.g. kernels/sm120)")
	f.alias(&o.dir, "out", "kernels")
	dryRun := f.Bool("dry-run", false, "write nothing; list what would be written")
	check := f.Bool("check", false, "write nothing; exit 1 when the folder differs from what would be emitted")
	f.BoolVar(&o.diff, "diff", false, "write nothing; print the unified diff of what writing would change (with --check: and fail on one)")
	f.BoolVar(&o.asJSON, "json", false, "print a JSON report instead of tables")
	f.BoolVar(&o.perVariant, "per-variant", false, "also write each fitting variant alone as <variant>.py (never installed: the bundle ships)")
	f.StringVar(&o.selectionPath, "selection", "", "render the module with the selection in `FILE` (as 'mlagen select --selections DIR' writes it)\ninstead of the one built into mlagen; its target is emit's")
	if done, code := f.parse(e, args); done {
		return o, true, code
	}
	if done, code := f.emptyGiven(e, "kernels", "out", "selection"); done {
		return o, true, code
	}
	if done, code := f.noArgs(e); done {
		return o, true, code
	}
	// Flag mistakes first, then the inputs the flags name.
	o.mode = "write"
	switch {
	case *dryRun && *check:
		return o, true, f.usageError(e, "--dry-run and --check are exclusive")
	case *check:
		o.mode = "check"
	case *dryRun || o.diff:
		o.mode = "dry-run"
	}
	var err error
	if o.selectionPath != "" {
		if o.selection, err = readSelection(o.selectionPath, &sf, f.Changed("target")); err != nil {
			return o, true, failed(e, "emit", o.asJSON, exitUsage, fmt.Sprintf("--selection %s: %v", o.selectionPath, err))
		}
	}
	if o.sweep, err = sf.sweep(f.FlagSet); err != nil {
		return o, true, f.usageError(e, "%v", err)
	}
	if o.dir == "" {
		o.dir = filepath.Join("kernels", o.sweep.Target.Dir())
	}
	if msg := notAFolder(o.dir); msg != "" {
		return o, true, failed(e, "emit", o.asJSON, exitUsage, msg+" (--kernels names the folder to write)")
	}
	return o, false, exitOK
}

// readSelection reads --selection's file and makes its target the sweep's,
// or checks it against --target where that was given.
func readSelection(path string, sf *sweepFlags, targetGiven bool) (*gen.Selection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sel, err := gen.ParseSelection(data)
	if err != nil {
		return nil, err
	}
	if !targetGiven {
		sf.target = sel.Target
	} else if t, err := gen.LookupTarget(sf.target); err == nil && t.Name != sel.Target {
		return nil, fmt.Errorf("the selection is for %s, --target is %s (drop --target, or select from that GPU's results)", sel.Target, t.Name)
	}
	return &sel, nil
}

// notAFolder says why dir cannot be the folder a command writes into
// when dir, or the nearest of its parents that exists, is not a directory
// (a path under a file: nothing could be created there); "" otherwise,
// a missing folder included.
func notAFolder(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		// A path under a file fails with ENOTDIR, not ENOENT: go up
		// until something exists, whatever the error.
		st, err := os.Stat(d)
		if lst, lerr := os.Lstat(d); errors.Is(err, fs.ErrNotExist) && lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			// A dangling link would read as a folder still to create.
			to, _ := os.Readlink(d)
			if d == filepath.Clean(dir) {
				return fmt.Sprintf("%s is a symlink to %s, which does not exist", dir, to)
			}
			return fmt.Sprintf("%s: %s is a symlink to %s, which does not exist", dir, d, to)
		}
		switch {
		case err == nil && st.IsDir():
			return ""
		case err == nil:
			what := "is not a directory"
			if st.Mode().IsRegular() {
				what = "is a file, not a directory"
			}
			if d == filepath.Clean(dir) {
				return fmt.Sprintf("%s %s", dir, what)
			}
			return fmt.Sprintf("%s: %s %s, so no folder can be created under it", dir, d, what)
		case filepath.Dir(d) == d:
			return ""
		}
	}
}

// refused reports PlanDir's refusal (exit 1): one line per file it will
// not touch.
func refused(e *env, dir string, err error, asJSON bool) int {
	var lines []string
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, one := range joined.Unwrap() {
			lines = append(lines, one.Error())
		}
	} else {
		lines = []string{err.Error()}
	}
	return failed(e, "emit", asJSON, exitFail, dir+": nothing written", lines...)
}

// selectionNote is em.SelectionNote (why the target's measured selection
// was not used) in the user's terms: where the sweep's own flags left out
// the variants it names (em.SelectionLeftOut), it says which and which
// flags; gen's note (a selection timed on another sweep) stays otherwise.
func selectionNote(s gen.Sweep, em gen.Emission) string {
	left := em.SelectionLeftOut
	if len(left) == 0 {
		return em.SelectionNote
	}
	flags := map[string]bool{}
	for _, name := range left {
		v, err := gen.ParseVariantName(name)
		if err != nil {
			return em.SelectionNote
		}
		for _, f := range familyFlags(v) {
			flags[f] = true
		}
	}
	// The flags of those families this sweep sets, in the sweep's order.
	var given []string
	for _, f := range strings.Fields(sweepCommand("emit", s)) {
		if flags[f] {
			given = append(given, f)
		}
	}
	names := strings.Join(left[:min(2, len(left))], " and ")
	if len(left) > 2 {
		names = fmt.Sprintf("%s, %s and %d more", left[0], left[1], len(left)-2)
	}
	by := "the sweep flags"
	if len(given) > 0 {
		by += " (" + strings.Join(given, ", ") + ")"
	}
	return fmt.Sprintf("the measured selection (%s/%s) is not used: it names %s, which %s left out of the target's curated sweep, so the module carries the static rule (emit without those flags for the measured selection, or give --selection a table timed on this sweep)",
		gen.SelectionDir, gen.SelectionFile(s.Target), names, by)
}

// familyFlags are the sweep flags that shape v's family.
func familyFlags(v gen.Variant) []string {
	switch {
	case v.WarpSpec && v.ClusterMerge:
		return []string{"--ws-cluster-split-k"}
	case v.Narrow():
		return []string{"--ws-narrow-split-k"}
	case v.WarpSpec:
		return []string{"--ws-split-k"}
	case v.Pipelined:
		return []string{"--pp-split-k"}
	}
	return []string{"--block-h", "--block-t", "--split-k", "--num-warps", "--num-stages"}
}

// emitReport is emit's --json output.
func emitReport(o emitOpts, em gen.Emission, plan gen.DirPlan) map[string]any {
	files := plan.Files
	if files == nil {
		files = []gen.FileStatus{}
	}
	out := map[string]any{
		// command names the subcommand, as in every --json object;
		// generated_by is the command the files' headers record.
		"command": "emit", "generated_by": em.Command,
		"target": o.sweep.Target.Name, "out": o.dir, "mode": o.mode,
		"budget_model": gen.CalibrationOf(o.sweep.Target).String(),
		"variants":     em.Budgets, "selection": em.Selection, "files": files,
		"unverified": append([]string{}, plan.Unverified...),
		"fitting":    len(em.Fitting()), "refused": len(em.Budgets) - len(em.Fitting()),
	}
	if em.SelectionNote != "" {
		out["selection_note"] = em.SelectionNote
	}
	if o.diff {
		out["diff"] = plan.Diff()
	}
	return out
}

// printPlan says what emit did or would do to the folder.
func printPlan(w io.Writer, o emitOpts, em gen.Emission, plan gen.DirPlan) {
	counts := map[string]int{}
	for _, st := range plan.Files {
		counts[st.Status]++
	}
	if len(plan.Unverified) > 0 {
		fmt.Fprintf(w, "note: %s has no %s, so these generated files are replaced or removed on the strength of their header alone: %s\n",
			o.dir, gen.ManifestName, strings.Join(plan.Unverified, ", "))
	}
	switch {
	case o.diff:
		fmt.Fprintf(w, "\n%s", plan.Diff())
		if !plan.Differs() {
			fmt.Fprintf(w, "%s is up to date (%d files)\n", o.dir, len(plan.Files))
		}
	case o.mode == "dry-run":
		fmt.Fprintf(w, "\nwould write to %s (nothing written):\n", o.dir)
		for _, st := range plan.Files {
			fmt.Fprintf(w, "  %-9s %s\n", st.Status, filepath.Join(o.dir, st.Name))
		}
	case o.mode == "check" && !plan.Differs():
		fmt.Fprintf(w, "\n%s is up to date (%d files)\n", o.dir, len(plan.Files))
	case o.mode == "check":
		fmt.Fprintf(w, "\n%s differs from what '%s' would emit:\n", o.dir, em.Command)
		for _, st := range plan.Files {
			if st.Status != gen.StatusUnchanged {
				fmt.Fprintf(w, "  %-9s %s\n", st.Status, filepath.Join(o.dir, st.Name))
			}
		}
		// 'make kernels' rewrites the checked-in folders of mlagen's own
		// repository; a folder of the user's is rewritten by the command
		// with --kernels.
		switch {
		case gen.IsDefaultCommand(em.Command) && o.dir == filepath.Join("kernels", o.sweep.Target.Dir()):
			fmt.Fprintln(w, "Run 'make kernels' (or that command) and commit the result; --diff shows the difference.")
		default:
			fmt.Fprintf(w, "Run that command with --kernels %s to rewrite it; --diff shows the difference.\n", o.dir)
		}
	default:
		fmt.Fprintf(w, "\n%s: %d new, %d changed, %d unchanged, %d stale removed (%d variants fit, %d refused)\n",
			o.dir, counts[gen.StatusNew], counts[gen.StatusChanged], counts[gen.StatusUnchanged], counts[gen.StatusStale],
			len(em.Fitting()), len(em.Budgets)-len(em.Fitting()))
	}
}

// printVerdicts is the short per-variant table emit prints, under a line
// that says whether the target's budget model was ever compiled against.
func printVerdicts(w io.Writer, s gen.Sweep, bs []gen.Budget) {
	fmt.Fprintf(w, "%s (%s), shared memory limit %d B, %d variants:\n", s.Target.Name, s.Target.GPUs, s.Target.SmemLimit, len(bs))
	fmt.Fprintf(w, "budget model: %s\n", gen.CalibrationOf(s.Target))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tsmem B\tregs\tverdict")
	for _, b := range bs {
		v := b.Verdict()
		if !b.Fits {
			v += ": " + strings.Join(b.Reasons, "; ")
			if b.Nearest != "" {
				v += " (nearest fit: " + b.Nearest + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", b.Name, b.SmemBytes, b.RegsEst, v)
	}
	tw.Flush()
}
