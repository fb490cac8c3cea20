package gen

import (
	"fmt"
	"io"
	"strings"
)

// WriteBudgetReport is the human budget report `mlagen budget` prints;
// golden/budget holds it for the default sweeps.
func WriteBudgetReport(w io.Writer, s Sweep, bs []Budget) {
	fmt.Fprintf(w, "%s (%s, %s): shared memory limit %d B per block, %d registers per thread\n",
		s.Target.Name, s.Target.GPUs, s.Target.Path, s.Target.SmemLimit, MaxRegsPerThread)
	fmt.Fprintf(w, "budget %s\n", modelLine(s.Target))
	fits := 0
	for _, b := range bs {
		if b.Fits {
			fits++
		}
		fmt.Fprintf(w, "\n%s  %s\n", b.Name, b.Variant)
		fmt.Fprintf(w, "  %s\n", b.Operands)
		// The term names' column widens for a long one (the role split's
		// producer_max), the totals' labels with it.
		width := 10
		for _, it := range append(append([]Item(nil), b.Smem...), b.Regs...) {
			width = max(width, len(it.Name))
		}
		fmt.Fprintf(w, "  %-*s%7d B of %d\n", width+3, "shared memory", b.SmemBytes, b.SmemLimit)
		for _, it := range b.Smem {
			fmt.Fprintf(w, "    %-*s %7d  %s\n", width, it.Name, it.Value, it.Why)
		}
		fmt.Fprintf(w, "  %-*s%7d per thread of %d (estimate)\n", width+3, "registers", b.RegsEst, b.RegsLimit)
		for _, it := range b.Regs {
			fmt.Fprintf(w, "    %-*s %7d  %s\n", width, it.Name, it.Value, it.Why)
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

// WriteBudgetTable is the compact form: one line per variant. golden/budget
// holds it for the default sweeps, so a model change shows as a short diff.
func WriteBudgetTable(w io.Writer, s Sweep, bs []Budget) {
	fmt.Fprintf(w, "# %s (%s): shared memory limit %d B, %d registers per thread; %s\n",
		s.Target.Name, s.Target.Path, s.Target.SmemLimit, MaxRegsPerThread, modelLine(s.Target))
	fmt.Fprintf(w, "%-24s %8s %5s  %s\n", "variant", "smem B", "regs", "verdict")
	fits := 0
	for _, b := range bs {
		v := "fits"
		if b.Fits {
			fits++
		} else {
			v = "refused: " + strings.Join(b.Reasons, "; ")
			if b.Nearest != "" {
				v += " -> nearest fit " + b.Nearest
			}
		}
		fmt.Fprintf(w, "%-24s %8d %5d  %s\n", b.Name, b.SmemBytes, b.RegsEst, v)
	}
	fmt.Fprintf(w, "%d of %d variants fit\n", fits, len(bs))
}

// modelLine says how far to trust the numbers: "model calibrated against
// ..." or, for a target no calibration covers, "model: estimate, never
// compiled (...)".
func modelLine(t Target) string {
	c := CalibrationOf(t)
	if c.Calibrated() {
		return "model " + c.String()
	}
	return fmt.Sprintf("model: %s (no committed calibration covers %s; calib/REPORT.md says how to add one)", c, t.Name)
}
