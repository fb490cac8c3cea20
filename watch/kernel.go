package watch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mlagen/mlagen/watch/sglanglog"
)

// KernelReport says which sparse-MLA decode path served, from the lines
// mlagen's kernel module logs (once per process per distinct message).
type KernelReport struct {
	// Required is set when READY needs an "on the MMA kernel" line.
	Required bool `json:"required"`
	// RequiredBecause says why ("--expect-kernel", the gate the server was
	// started with).
	RequiredBecause string `json:"required_because,omitempty"`
	// Served is "mma" when a line says decode ran on the MMA kernel,
	// "sglang" when only lines saying it did not came, and "unknown" when
	// the log held no line of the module.
	Served string `json:"served"`
	// Lines holds each distinct message once, in the order first seen,
	// with every rank that logged it.
	Lines []KernelSeen `json:"lines"`
}

// KernelSeen is one distinct line of the kernel module.
type KernelSeen struct {
	sglanglog.KernelLine
	// Ranks are the process tags that logged it ("TP0", "TP3").
	Ranks []string `json:"ranks,omitempty"`
	// Line is where it was first seen, among the lines read.
	Line int     `json:"line"`
	AtS  float64 `json:"at_s"`
}

func newKernelReport(cfg Config) *KernelReport {
	k := &KernelReport{Required: cfg.ExpectKernel, Served: "unknown", Lines: []KernelSeen{}}
	if cfg.ExpectKernel {
		k.RequiredBecause = cfg.ExpectKernelWhy
	}
	return k
}

// kernelLine records a line of the kernel module and prints it the first
// time its message is seen.
func (w *watcher) kernelLine(k sglanglog.KernelLine, rec sglanglog.Record) {
	rep := w.rep.Kernel
	for i := range rep.Lines {
		if rep.Lines[i].KernelLine == k {
			if rec.Rank != "" && !slices.Contains(rep.Lines[i].Ranks, rec.Rank) {
				rep.Lines[i].Ranks = append(rep.Lines[i].Ranks, rec.Rank)
			}
			return
		}
	}
	seen := KernelSeen{KernelLine: k, Line: w.det.Lines(), AtS: w.since().Seconds()}
	if rec.Rank != "" {
		seen.Ranks = []string{rec.Rank}
	}
	rep.Lines = append(rep.Lines, seen)
	switch {
	case k.Ran:
		rep.Served = "mma"
	case rep.Served == "unknown":
		rep.Served = "sglang"
	}
	where := strings.TrimSpace(rec.Rank + " " + logClock(rec.Stamp))
	if where != "" {
		where = "  (" + where + ")"
	}
	switch {
	case k.Ran:
		w.p.line("%s kernel: decode on the MMA kernel (%s)%s", stamp(w.since()), k, where)
	case k.Deferred:
		w.p.line("%s kernel: decode NOT on the MMA kernel (%s); SGLang's backend choice runs%s", stamp(w.since()), k, where)
	default:
		w.p.line("%s kernel: decode NOT on the MMA kernel (%s); SGLang's kernel runs%s", stamp(w.since()), k, where)
	}
}

// kernelSettled reports whether the kernel check lets the watch end: a
// line said the MMA kernel ran, or, where it is not required, any line of
// the module came (what served is known).
func (w *watcher) kernelSettled() bool {
	if !w.rep.Kernel.Required {
		return w.rep.Kernel.Served != "unknown"
	}
	return w.rep.Kernel.Served == "mma"
}

// kernelWaitOver is the verdict once the wait for the kernel module's line
// is over (its time passed, or the log ended): READY where the kernel is
// not required (the report says what served, "unknown" where no line
// came), the kernel's failure where it is.
func (w *watcher) kernelWaitOver() (Outcome, string) {
	if !w.rep.Kernel.Required {
		return w.readyVerdict()
	}
	return w.kernelNeverRan()
}

// kernelSaid is what the log says about the kernel, short of it running:
// the fallbacks' reasons, or that nothing was said.
func (w *watcher) kernelSaid() string {
	var why []string
	for _, l := range w.rep.Kernel.Lines {
		if !l.Ran {
			why = append(why, l.String())
		}
	}
	if len(why) == 0 {
		return "no mlagen line in the log"
	}
	return strings.Join(why, "; ")
}

func (w *watcher) kernelNeverRan() (Outcome, string) {
	if w.rep.Kernel.Served == "unknown" {
		gate := ""
		if !strings.Contains(w.rep.Kernel.RequiredBecause, "SGLANG_SM120_MMA_FLASHMLA") {
			gate = " Was the server started with SGLANG_SM120_MMA_FLASHMLA=1 in its environment? With the gate unset the module says nothing. Its line is logged at INFO: a server started with --log-level warning or above does not show it."
		}
		w.p.line("%s kernel: no line of mlagen's kernel module came (required: %s).%s Is the tree the server imports patched, and does SGLang reach the route on this GPU? mlagen verify proves the wiring and prints the route from the model backend's calls, with the GPUs they run on (stock SGLang calls the sm_120 entry on compute capability 12.x GPUs only)",
			stamp(w.since()), w.rep.Kernel.RequiredBecause, gate)
	} else {
		w.p.line("%s kernel: the MMA kernel was required (%s) and did not run", stamp(w.since()), w.rep.Kernel.RequiredBecause)
	}
	return Failed, fmt.Sprintf("FAILED after %s: the server answered, but the MMA kernel never ran: %s.", short(w.since()), w.kernelSaid())
}

// kernelVerdict is what READY adds about the kernel.
func (w *watcher) kernelVerdict() string {
	var ran []string
	for _, l := range w.rep.Kernel.Lines {
		if l.Ran {
			ran = append(ran, l.String())
		}
	}
	switch w.rep.Kernel.Served {
	case "mma":
		return fmt.Sprintf("; decode ran on the MMA kernel (%s)", strings.Join(ran, "; "))
	case "sglang":
		return fmt.Sprintf("; the MMA kernel did not run (%s), SGLang's kernel served (--expect-kernel makes that a failure)", w.kernelSaid())
	}
	return ""
}
