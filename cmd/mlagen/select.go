package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mlagen/mlagen/gen"
)

var selectUsage = `Usage: mlagen select [flags] RESULTS.json

Read the results of the harness (kernels/<target>/harness.py) and pick, for
every (batch, topk) bucket, the fastest configuration that passed every
correctness case (CUDA-graph replay time where measured). Writes the table
as gen/selections/<target>.json, the measured selection the generator builds
into mlagen: rebuild and re-emit ('make kernels') and emit and patch use it.
The table is static: the kernels never benchmark at run time (SGLang
captures CUDA graphs).

The batch buckets are the batches the results timed, each running up to its
batch and the last one unbounded: the harness times 1, 8, 16, 32, 64 and
128, and 1, 16, 64 and 128 are required. The topk buckets are 512 and 2048.

After the table it lists near ties: buckets whose runner-up is within ` + fmt.Sprint(nearTiePercent) + `% of
the choice, about the run-to-run spread on the H200, where a rerun of the
harness may pick the other variant. The choice still follows the numbers.

The sweep flags must describe the sweep the results measured (default: the
target's curated sweep, the target taken from the results file).

Examples:
  mlagen select kernels/sm90/results.json      # from the repository root
  mlagen select --dry-run gpu/results/run3-sm120.json
  mlagen select --out /tmp/sel results.json    # writes /tmp/sel/sm120.json

Exit status: 0 written, 1 unusable results, 2 bad flags.
`

func runSelect(e *env, args []string) int {
	fs := newFlagSet("select", e)
	var sf sweepFlags
	sf.register(fs)
	out := fs.String("out", gen.SelectionDir, "directory to write <target>.json into (run from the repository root for the default)")
	dryRun := fs.Bool("dry-run", false, "print the table; write nothing")
	if done, code := parseFlags(fs, e, args, selectUsage); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(e.stderr, "mlagen select: want exactly one RESULTS.json argument")
		return exitUsage
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen select: %v\n", err)
		return exitFail
	}
	res, err := gen.ParseResults(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen select: %s: %v\n", path, err)
		return exitFail
	}
	if !fs.Changed("target") {
		sf.target = res.Target
	}
	s, err := sf.sweep(fs)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen select: %v\n", err)
		return exitUsage
	}
	if s.Target.Name != res.Target {
		fmt.Fprintf(e.stderr, "mlagen select: %s holds %s results, not %s\n", path, res.Target, s.Target.Name)
		return exitUsage
	}
	fits := map[string]bool{}
	for _, b := range gen.CheckSweep(s) {
		if b.Fits {
			fits[b.Name] = true
		}
	}
	source := fmt.Sprintf("measured on %s (torch %s, Triton %s, %s), %s", res.GPU, res.Torch, res.Triton, res.Date, filepath.ToSlash(path))
	sel, err := gen.SelectMeasured(res, fits, source)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen select: %s: %v\n", path, err)
		return exitFail
	}
	printSelection(e.stdout, s.Target, source, sel, gen.NearTies(res, fits, nearTiePercent/100.0))
	if *dryRun {
		return exitOK
	}
	data, err = gen.MarshalSelection(sel)
	if err == nil {
		err = writeSelection(*out, gen.SelectionFile(s.Target), data)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen select: %v\n", err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "wrote %s; rebuild mlagen and re-emit ('make kernels') so that emit and patch use it\n",
		filepath.Join(*out, gen.SelectionFile(s.Target)))
	return exitOK
}

// printSelection is the table select prints, and the near ties under it.
func printSelection(w io.Writer, t gen.Target, source string, sel gen.Selection, ties []gen.NearTie) {
	fmt.Fprintf(w, "%s selection (%s):\n", t.Name, source)
	for i, row := range sel.Table {
		fmt.Fprintf(w, "  batch <= %-4s", boundString(sel.BatchBounds[i]))
		for j, name := range row {
			fmt.Fprintf(w, "  topk <= %s: %-24s", boundString(sel.TopkBounds[j]), name)
		}
		fmt.Fprintln(w)
	}
	if len(ties) == 0 {
		return
	}
	fmt.Fprintf(w, "near ties (runner-up within %d%%, about the run-to-run spread: a rerun may swap them):\n", nearTiePercent)
	for _, t := range ties {
		fmt.Fprintf(w, "  batch %d topk %d: %s %.2f us, %s %.2f us (+%.1f%%)\n",
			t.Batch, t.Topk, t.Chosen, t.ChosenUS, t.RunnerUp, t.RunnerUpUS, (t.RunnerUpUS/t.ChosenUS-1)*100)
	}
}

// writeSelection writes name into the existing directory dir through a
// temporary file and a rename, so that it is never half-written.
func writeSelection(dir, name string, data []byte) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: not a directory (the default %s is relative to the repository root)", dir, gen.SelectionDir)
	}
	return writeFileAtomic(filepath.Join(dir, name), data)
}

// nearTiePercent is how close a runner-up must be for select to point it out: the
// selected rows of repeated harness runs on the H200 moved by up to 1.6%.
const nearTiePercent = 2

func boundString(n int) string {
	if n == 0 {
		return "any"
	}
	return fmt.Sprint(n)
}
