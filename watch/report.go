package watch

import (
	"github.com/mlagen/mlagen/watch/baseline"
	"github.com/mlagen/mlagen/watch/sglanglog"
	"github.com/mlagen/mlagen/watch/smoke"
)

// Outcome is how a watch ended.
type Outcome string

const (
	Ready       Outcome = "ready"       // ready and answered correctly
	Failed      Outcome = "failure"     // a failure signature, a bad answer, a regression, a dead server
	TimedOut    Outcome = "timeout"     // not ready within the time-out
	SourceLost  Outcome = "source-lost" // the log could not be read any more
	Interrupted Outcome = "interrupted" // Ctrl-C
)

// Exit statuses of mlagen watch; each outcome has its own.
const (
	ExitReady       = 0
	ExitFailed      = 1
	ExitTimedOut    = 3
	ExitSourceLost  = 4
	ExitInterrupted = 130 // the shell's convention for SIGINT
)

// ExitCode is the process status for an outcome.
func (o Outcome) ExitCode() int {
	switch o {
	case Ready:
		return ExitReady
	case TimedOut:
		return ExitTimedOut
	case SourceLost:
		return ExitSourceLost
	case Interrupted:
		return ExitInterrupted
	default:
		return ExitFailed
	}
}

// Report is everything a watch found; --json prints it.
type Report struct {
	// Command is "watch", as every mlagen command's --json object names
	// its command.
	Command  string  `json:"command"`
	Outcome  Outcome `json:"outcome"`
	ExitCode int     `json:"exit_code"`
	// Verdict is the last line printed for people.
	Verdict string `json:"verdict"`
	// Error is the verdict where the outcome is not ready: every failing
	// command's object has an "error".
	Error    string  `json:"error,omitempty"`
	Source   string  `json:"source"`
	ElapsedS float64 `json:"elapsed_s"`
	Lines    int     `json:"lines"`
	// Timeline holds the first occurrence of each phase, in order.
	Timeline []Mark `json:"timeline"`
	// Phases are the durations derived from the timeline (what baselines
	// store and compare).
	Phases   []baseline.Phase    `json:"phases"`
	Failures []sglanglog.Failure `json:"failures"`
	Notices  []Notice            `json:"notices"`
	Smoke    *smoke.Result       `json:"smoke,omitempty"`
	Baseline []baseline.Row      `json:"baseline,omitempty"`
	// Timeout is set when the watch timed out.
	Timeout *TimeoutInfo `json:"timeout,omitempty"`
	// Lost says why the log could not be read any more.
	Lost string `json:"lost,omitempty"`
	// Server says what became of a server the watch started.
	Server string `json:"server,omitempty"`
	// Kernel says which sparse-MLA decode path served, by the kernel
	// module's lines.
	Kernel *KernelReport `json:"kernel"`
}

// Mark is one phase line as it was seen.
type Mark struct {
	Phase    string  `json:"phase"`
	AtS      float64 `json:"at_s"`
	LogTime  string  `json:"log_time,omitempty"`
	Rank     string  `json:"rank,omitempty"`
	Line     int     `json:"line"`
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	AvailGB  float64 `json:"avail_mem_gb,omitempty"`
	UsedGB   float64 `json:"mem_usage_gb,omitempty"`
	Batches  string  `json:"batch_sizes,omitempty"`
	Text     string  `json:"text"`
}

// Notice is something the source said about itself.
type Notice struct {
	AtS  float64 `json:"at_s"`
	Text string  `json:"text"`
}

// TimeoutInfo names where a start got stuck.
type TimeoutInfo struct {
	AfterS        float64 `json:"after_s"`
	LastPhase     string  `json:"last_phase,omitempty"`
	LastPhaseAgoS float64 `json:"last_phase_ago_s,omitempty"`
	LastLineAgoS  float64 `json:"last_line_ago_s,omitempty"`
}
