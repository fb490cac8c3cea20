package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mlagen/mlagen/gen"
)

const budgetUsage = `Usage: mlagen budget [flags]

Print, for every variant of a sweep, the shared memory it needs buffer by
buffer against the target's limit, the registers per thread it is estimated to
need term by term, and the verdict. A refusal names its reason and the nearest
variant that fits. The model is calibrated against the Triton compiler
(calib/REPORT.md says how well). Writes nothing.

Examples:
  mlagen budget                                # the curated sm_120 sweep
  mlagen budget --target sm_90 --block-h 64 --block-t 64 --num-stages 2,3
  mlagen budget --json | jq '.variants[] | select(.fits | not)'

Exit status: 0 at least one variant fits, 1 none fits, 2 bad flags.
`

func runBudget(e *env, args []string) int {
	fs := newFlagSet("budget", budgetUsage, e)
	var sf sweepFlags
	sf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if done, code := parseFlags(fs, e, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "mlagen budget: unexpected argument %q (budget takes flags only)\n", fs.Arg(0))
		return exitUsage
	}
	s, err := sf.sweep(fs)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen budget: %v\n", err)
		return exitUsage
	}
	bs := gen.CheckSweep(s)
	fits := 0
	for _, b := range bs {
		if b.Fits {
			fits++
		}
	}
	code := exitOK
	if fits == 0 {
		code = exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"target": s.Target.Name, "calibrated_with": gen.CalibratedWith, "variants": bs, "fitting": fits, "refused": len(bs) - fits})
		return code
	}
	writeBudgetText(e.stdout, s, bs)
	return code
}

// writeBudgetText is the human budget report; golden files hold it for the
// default sweeps.
func writeBudgetText(w io.Writer, s gen.Sweep, bs []gen.Budget) {
	fmt.Fprintf(w, "%s (%s, %s): shared memory limit %d B per block, %d registers per thread\n",
		s.Target.Name, s.Target.GPUs, s.Target.Path, s.Target.SmemLimit, gen.MaxRegsPerThread)
	fmt.Fprintf(w, "budget model calibrated against %s\n", gen.CalibratedWith)
	fits := 0
	for _, b := range bs {
		if b.Fits {
			fits++
		}
		fmt.Fprintf(w, "\n%s  %s\n", b.Name, b.Variant)
		fmt.Fprintf(w, "  %s\n", b.Operands)
		fmt.Fprintf(w, "  shared memory %7d B of %d\n", b.SmemBytes, b.SmemLimit)
		for _, it := range b.Smem {
			fmt.Fprintf(w, "    %-10s %7d  %s\n", it.Name, it.Value, it.Why)
		}
		fmt.Fprintf(w, "  registers    %7d per thread of %d (estimate)\n", b.RegsEst, b.RegsLimit)
		for _, it := range b.Regs {
			fmt.Fprintf(w, "    %-10s %7d  %s\n", it.Name, it.Value, it.Why)
		}
		if b.Fits {
			fmt.Fprintln(w, "  verdict: fits")
			continue
		}
		for _, r := range b.Reasons {
			fmt.Fprintf(w, "  verdict: refused: %s\n", r)
		}
		if b.Nearest != "" {
			fmt.Fprintf(w, "  nearest variant that fits: %s\n", b.Nearest)
		} else {
			fmt.Fprintln(w, "  no nearby variant fits")
		}
	}
	fmt.Fprintf(w, "\n%d of %d variants fit %s\n", fits, len(bs), s.Target.Name)
}
