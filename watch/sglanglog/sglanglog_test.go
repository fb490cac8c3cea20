package sglanglog

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/fakesglang"
)

func TestParsePrefix(t *testing.T) {
	tests := []struct {
		line string
		want Record
	}{
		{"[2026-06-17 22:07:05 TP0] Load weight end.", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 5, 0, time.UTC), Rank: "TP0", Text: "Load weight end.", Prefixed: true}},
		{"[2026-06-17 22:07:39] The server is fired up and ready to roll!", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 0, time.UTC), Text: "The server is fired up and ready to roll!", Prefixed: true}},
		{"[2026-06-17 22:07:39 DP1 TP3] x", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 0, time.UTC), Rank: "DP1 TP3", Text: "x", Prefixed: true}},
		{`  File "x.py", line 1`, Record{Text: `  File "x.py", line 1`}},
		{"[not a stamp] x", Record{Text: "[not a stamp] x"}},
		{"Capturing batches (bs=1):  10%|#\rCapturing batches (bs=64): 100%|###", Record{Text: "Capturing batches (bs=64): 100%|###"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Parse(tt.line)); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestMatchPhaseOnCleanStart(t *testing.T) {
	var got []Phase
	for _, l := range fakesglang.Lines(fakesglang.CleanStart()) {
		if p, ok := MatchPhase(Parse(l).Text); ok {
			got = append(got, p)
		}
	}
	want := []Phase{
		{Kind: LoadBegin, AvailGB: 93.71},
		{Kind: LoadBegin, AvailGB: 93.71},
		{Kind: LoadEnd, ElapsedS: 33.84, AvailGB: 52.30, UsedGB: 41.41},
		{Kind: LoadEnd, ElapsedS: 33.90, AvailGB: 52.30, UsedGB: 41.41},
		{Kind: CaptureBegin, AvailGB: 37.09},
		{Kind: CaptureBegin, AvailGB: 37.09},
		{Kind: CaptureBatches, Batches: "1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64"},
		{Kind: CaptureEnd, ElapsedS: 26.12, UsedGB: 1.85, AvailGB: 35.24},
		{Kind: Ready},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phases mismatch (-want +got):\n%s", diff)
	}
}

func TestMatchPhasePiecewise(t *testing.T) {
	p, ok := MatchPhase("Capture piecewise CUDA graph end. Time elapsed: 5.21 s. mem usage=0.42 GB. avail mem=30.10 GB.")
	if !ok || p.Kind != PiecewiseEnd || p.ElapsedS != 5.21 || p.AvailGB != 30.10 {
		t.Errorf("piecewise end: got %+v, %v", p, ok)
	}
	p, ok = MatchPhase("Capture piecewise CUDA graph begin. avail mem=35.00 GB")
	if !ok || p.Kind != PiecewiseBegin {
		t.Errorf("piecewise begin: got %+v, %v", p, ok)
	}
	if _, ok := MatchPhase("Capture cuda graph failed: CUDA out of memory"); ok {
		t.Errorf("a capture failure must not read as a phase")
	}
}

func feedAll(d *Detector, lines []string) []*Failure {
	var out []*Failure
	for _, l := range lines {
		if f := d.Feed(l); f != nil {
			out = append(out, f)
		}
	}
	if f := d.Flush(); f != nil {
		out = append(out, f)
	}
	return out
}

// Every signature of DESIGN.md, in the text it is met in, is exactly one
// failure of its own kind, and the normal start around it is none.
func TestEachSignatureIsOneFailure(t *testing.T) {
	for _, kind := range fakesglang.FailureKinds() {
		t.Run(kind, func(t *testing.T) {
			lines := fakesglang.Lines(fakesglang.FailingStart(kind))
			got := feedAll(&Detector{}, lines)
			wantN := 1
			if kind == "oom" {
				wantN = 2 // the OOM traceback, then the launcher's SIGQUIT line
			}
			if len(got) != wantN {
				for _, f := range got {
					t.Logf("failure %s at %d: %q", f.Kind, f.Line, f.Lines)
				}
				t.Fatalf("got %d failures, want %d", len(got), wantN)
			}
			f := got[0]
			if f.Kind != kind {
				t.Errorf("kind = %q, want %q", f.Kind, kind)
			}
			first := fakesglang.FailureText(kind)[0]
			if f.Lines[0] != first && !strings.Contains(first, "terminate called") {
				t.Errorf("failure starts at %q, want %q", f.Lines[0], first)
			}
			if len(f.Context) != 20 && f.Line > 20 {
				t.Errorf("context has %d lines, want 20", len(f.Context))
			}
			if f.Line-1 < 20 && len(f.Context) != f.Line-1 {
				t.Errorf("context has %d lines, want all %d before line %d", len(f.Context), f.Line-1, f.Line)
			}
		})
	}
}

func TestChainedTracebackSummaryIsOutermost(t *testing.T) {
	got := feedAll(&Detector{}, fakesglang.FailureText("compilation"))
	if len(got) != 1 {
		t.Fatalf("got %d failures, want 1 (a chained traceback is one failure)", len(got))
	}
	if want := "RuntimeError: Triton kernel _mma_sparse_decode failed to compile"; got[0].Summary != want {
		t.Errorf("summary = %q, want %q", got[0].Summary, want)
	}
	if n, want := len(got[0].Lines), len(fakesglang.FailureText("compilation")); n != want {
		t.Errorf("failure has %d lines, want all %d", n, want)
	}
}

// Four ranks crashing one after the other are four failures, prefixed or
// not, and the launcher's SIGQUIT is a fifth.
func TestSeveralCrashesAreCountedApart(t *testing.T) {
	var lines []string
	for _, rank := range []string{"TP0", "TP1", "TP2", "TP3"} {
		for _, l := range fakesglang.FailureText("oom")[:6] {
			lines = append(lines, strings.Replace(l, "TP0", rank, 1))
		}
	}
	lines = append(lines, fakesglang.FailureText("sigquit")...)
	got := feedAll(&Detector{}, lines)
	var kinds []string
	for _, f := range got {
		kinds = append(kinds, f.Kind+"/"+f.Rank)
	}
	if diff := cmp.Diff([]string{"oom/TP0", "oom/TP1", "oom/TP2", "oom/TP3", "sigquit/"}, kinds); diff != "" {
		t.Errorf("failures mismatch (-want +got):\n%s", diff)
	}

	// The same tracebacks written raw to stderr, without prefixes.
	var raw []string
	for i := 0; i < 3; i++ {
		raw = append(raw, "Traceback (most recent call last):", `  File "x.py", line 1, in <module>`, "ValueError: boom")
	}
	if n := len(feedAll(&Detector{}, raw)); n != 3 {
		t.Errorf("three raw tracebacks gave %d failures, want 3", n)
	}
}

func TestCleanStartHasNoFailure(t *testing.T) {
	if got := feedAll(&Detector{}, fakesglang.Lines(fakesglang.CleanStart())); len(got) != 0 {
		t.Errorf("clean start gave failures: %+v", got)
	}
}

func TestMaxLinesClosesRunawayIncident(t *testing.T) {
	d := &Detector{MaxLines: 5}
	lines := []string{"Traceback (most recent call last):"}
	for i := 0; i < 20; i++ {
		lines = append(lines, "  more")
	}
	got := feedAll(d, lines)
	if len(got) != 1 || len(got[0].Lines) != 5 {
		t.Fatalf("got %d failures (first %d lines), want 1 of 5 lines", len(got), len(got[0].Lines))
	}
}
