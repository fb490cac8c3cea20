package main

import (
	"fmt"
	"github.com/mlagen/mlagen/gen"
)

const budgetUsage = `Usage: mlagen budget [flags]

Print, for every variant of a sweep, the shared memory it needs buffer by
buffer against the target's limit, the registers per thread it is estimated to
need term by term, and the verdict. A refusal names its reason and the nearest
variant that fits. For the targets a committed calibration covers the
model is checked against the Triton compiler (the output says "calibrated
against" and which Triton; calib/REPORT.md says how well); for the others it
says "estimate, never compiled". Writes nothing.

Examples:
  mlagen budget                                # the curated sm_120 sweep
  mlagen budget --target sm_90 --block-h 64 --block-t 64 --num-stages 2,3
  mlagen budget --json | jq '.variants[] | select(.fits | not)'

Exit status: 0 at least one variant fits, 1 none fits, 2 bad flags.
`

func runBudget(e *env, args []string) int {
	f := newCmdFlags("budget", budgetUsage)
	var sf sweepFlags
	sf.register(f.FlagSet, "sm_120", "GPU target: "+targetNames())
	_ = f.MarkHidden("heads") // emit's alone: refused below, with why
	asJSON := f.Bool("json", false, "print JSON instead of text")
	table := f.Bool("table", false, "one line per variant instead of the breakdowns")
	if done, code := f.parse(e, args); done {
		return code
	}
	if done, code := f.noArgs(e); done {
		return code
	}
	if *asJSON && *table {
		return f.usageError(e, "--json and --table are exclusive (the JSON has every variant's budget)")
	}
	if f.Changed("heads") {
		return f.usageError(e, "--heads does not change a budget (a program's heads are its BLOCK_H); it chooses emit's heuristic selection")
	}
	s, err := sf.sweep(f.FlagSet)
	if err != nil {
		return f.usageError(e, "%v", err)
	}
	bs := gen.CheckSweep(s)
	fits := 0
	for _, b := range bs {
		if b.Fits {
			fits++
		}
	}
	switch {
	case *asJSON:
		out := map[string]any{"command": "budget", "target": s.Target.Name, "variants": bs, "fitting": fits, "refused": len(bs) - fits}
		if fits == 0 {
			// A failure is an object with "error" for CI, as every command's.
			out["error"] = fmt.Sprintf("no variant of the sweep fits %s", s.Target.Name)
		}
		// calibrated_with only where a calibration covers the target.
		if c := gen.CalibrationOf(s.Target); c.Calibrated() {
			out["calibrated_with"] = c.Compiler
		} else {
			out["model"] = c.String()
		}
		emitJSON(e, out, true)
	case *table:
		gen.WriteBudgetTable(e.stdout, s, bs)
	default:
		gen.WriteBudgetReport(e.stdout, s, bs)
	}
	if fits == 0 {
		// The exit status says so; stderr says why, as every failure's,
		// with --json too (the object's "error" is for CI, this line for
		// whoever reads the log).
		fmt.Fprintf(e.stderr, "mlagen budget: no variant of the sweep fits %s (the refusals above say why)\n", s.Target.Name)
		return exitFail
	}
	return exitOK
}
