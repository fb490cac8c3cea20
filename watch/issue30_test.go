package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/baseline"
	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/source"
)

// contextLengthWarning is the line SGLang logs when a user overrides the
// derived context length: prose about CUDA errors, not one.
const contextLengthWarning = "[2026-06-17 22:06:31] Warning: User-specified context_length (1048576) is greater than the derived context_length (163840). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config."

// Issue 30 bug 17: the warning is no failure, and a server the watch
// started is not stopped for it.
func TestWarningProseIsNoFailure(t *testing.T) {
	steps := fakesglang.CleanStart()
	steps = append(append(append([]fakesglang.Step(nil), steps[:2]...), fakesglang.Step{At: steps[1].At, Line: contextLengthWarning}), steps[2:]...)
	o := watchReplay(t, fixture{steps: steps, stop: true})
	if o.rep.Outcome != Ready || len(o.rep.Failures) != 0 || o.src.stopped != 0 {
		t.Fatalf("outcome %s, %d failures, Stop called %d times; want ready, none, 0; output:\n%s", o.rep.Outcome, len(o.rep.Failures), o.src.stopped, o.out)
	}
}

// Issue 30 bug 21: a coloured log gives the same timeline and durations as
// a plain one (the baseline's startup is 68 s, not the 0.012 s of a first
// stamp that was never read), and no escape reaches the output.
func TestColouredLogReadsLikePlain(t *testing.T) {
	plain := watchReplay(t, fixture{steps: fakesglang.CleanStart()})
	col := watchReplay(t, fixture{steps: fakesglang.Coloured(fakesglang.CleanStart())})
	if col.rep.Outcome != Ready {
		t.Fatalf("outcome %s; output:\n%q", col.rep.Outcome, col.out)
	}
	want := []baseline.Phase{ph("load-weights", 33.84), ph("cuda-graph-capture", 26.12), ph("startup", 68)}
	if diff := cmp.Diff(want, col.rep.Phases); diff != "" {
		t.Errorf("phase durations of the coloured log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(plain.rep.Timeline, col.rep.Timeline); diff != "" {
		t.Errorf("timeline differs from the plain log's (-plain +coloured):\n%s", diff)
	}
	if strings.Contains(col.out, "\x1b") {
		t.Errorf("escape sequences in the output:\n%q", col.out)
	}
	// Against a baseline saved from the plain log: no regression.
	b := &baseline.File{Phases: plain.rep.Phases}
	o := watchReplay(t, fixture{steps: fakesglang.Coloured(fakesglang.CleanStart()), cfg: func(c *Config) { c.Baseline, c.BaselinePath = b, "plain.json" }})
	if o.rep.ExitCode != 0 {
		t.Errorf("coloured log against the plain baseline: exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

// Issue 30 bug 22: the smoke request has what is left of --timeout, not a
// fixed minute: a server that never answers ends the watch at the
// time-out, as a time-out.
func TestSmokeRequestBoundedByTimeout(t *testing.T) {
	// Ready at 68.1 s of a 68.3 s time-out: 0.2 s for the request.
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), server: &fakesglang.Server{Hang: true},
		cfg: func(c *Config) { c.Timeout = 68300 * time.Millisecond }})
	if o.rep.Outcome != TimedOut || o.rep.ExitCode != 3 {
		t.Fatalf("outcome %s (exit %d), want timeout (3); output:\n%s", o.rep.Outcome, o.rep.ExitCode, o.out)
	}
	want := "TIMEOUT after 1m08s: the server logged ready, but the smoke request got no answer within the 0.2s left of --timeout 1m08s: POST /generate failed: no answer before the time-out."
	if o.rep.Verdict != want {
		t.Errorf("verdict\n%q\nwant\n%q", o.rep.Verdict, want)
	}
	if o.rep.Smoke == nil || !o.rep.Smoke.TimedOut || o.rep.Timeout == nil || o.rep.Timeout.LastPhase != "ready" {
		t.Errorf("smoke %+v, timeout %+v", o.rep.Smoke, o.rep.Timeout)
	}
}

// Issue 30 bug 22: a response over the limit fails, saying so.
func TestSmokeResponseOverTheLimit(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), server: &fakesglang.Server{Answer: strings.Repeat(" Paris", 100)},
		cfg: func(c *Config) { c.Smoke.MaxResponseBytes = 300 }})
	if o.rep.ExitCode != 1 || !strings.Contains(o.rep.Verdict, "the response is longer than 300 bytes (--max-response-bytes)") {
		t.Errorf("exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

// Issue 30 bug 20, end to end: the ready line straddles the 1 MiB cap of
// a line that a progress bar wrote without a newline. Two places: the cap
// itself (1 MiB into the line), and the first 64 KiB read boundary past it
// (where a reader that flushes whatever it holds once over the cap cuts).
func TestReadyLineStraddlingTheLineCap(t *testing.T) {
	head := fakesglang.Text(concatSteps(fakesglang.Head(), fakesglang.Capture()))
	ready := "[2026-06-17 22:07:39] The server is fired up and ready to roll!"
	for _, middle := range []int{len(head) + 1<<20, 17 * 64 << 10} {
		path := filepath.Join(t.TempDir(), "server.log")
		// Progress bar segments up to the phrase (each ends in \r, as tqdm
		// writes them); the phrase's middle falls at file offset middle.
		n := middle - len(ready)/2 - len(head)
		seg := "Capturing batches (bs=64): 100%|##########| 12/12\r"
		bar := strings.Repeat(seg, n/len(seg)+1)
		bar = bar[len(bar)-n:]
		// More output after it on the same line, as a second process
		// writes it: the reader meets no newline for a while.
		tail := strings.Repeat("=", 64<<10)
		if err := os.WriteFile(path, []byte(head+bar+ready+tail+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := strings.Index(head+bar+ready, ready) + len(ready)/2; got != middle {
			t.Fatalf("phrase middle at %d, want %d", got, middle)
		}
		rep, out := watchReal(t, &source.File{Path: path, Poll: 2 * time.Millisecond})
		if rep.Outcome != Ready {
			t.Errorf("phrase across offset %d: outcome %s; output:\n%s", middle, rep.Outcome, clip(out, 3000))
		}
	}
}

func concatSteps(parts ...[]fakesglang.Step) []fakesglang.Step {
	var out []fakesglang.Step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Issue 30 bug 18: the verdict of an interrupted watch says what
// interrupted it (the CLI names the signal).
func TestInterruptNamesItsCause(t *testing.T) {
	clk := newFakeClock()
	rp := &replay{clk: clk, steps: fakesglang.Head(), hang: time.Second}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan *Report, 1)
	go func() { done <- Run(ctx, Config{Source: stoppingReplay{rp}, Clock: clk}) }()
	for clk.Now().Sub(newFakeClock().now) < fakesglang.Head()[len(fakesglang.Head())-1].At+time.Second {
		time.Sleep(time.Millisecond)
	}
	cancel(errors.New("SIGHUP: the terminal or ssh session closed"))
	rep := <-done
	if rep.Outcome != Interrupted || rp.stopped != 1 || !strings.HasPrefix(rep.Verdict, "INTERRUPTED (SIGHUP: the terminal or ssh session closed) after ") {
		t.Errorf("outcome %s, Stop called %d times, verdict %q", rep.Outcome, rp.stopped, rep.Verdict)
	}
}
