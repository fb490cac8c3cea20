package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/baseline"
	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/smoke"
	"github.com/mlagen/mlagen/watch/source"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type fixture struct {
	steps  []fakesglang.Step
	hang   time.Duration
	end    error
	server *fakesglang.Server
	cfg    func(*Config)
	stop   bool // the source pretends to have started the server
}

type outcome struct {
	rep *Report
	out string
	src *replay
}

// watchReplay runs a whole watch over a replayed log on a fake clock, with
// a fake SGLang answering HTTP on 127.0.0.1.
func watchReplay(t *testing.T, fx fixture) outcome {
	t.Helper()
	if fx.server == nil {
		fx.server = fakesglang.NewServer()
	}
	ts := httptest.NewServer(fx.server)
	defer ts.Close()
	clk := newFakeClock()
	rp := &replay{clk: clk, steps: fx.steps, hang: fx.hang, end: fx.end}
	var src source.Source = rp
	if fx.stop {
		src = stoppingReplay{rp}
	}
	var out bytes.Buffer
	cfg := Config{
		Source:   src,
		Clock:    clk,
		Out:      &out,
		Timeout:  10 * time.Minute,
		Interval: 20 * time.Second,
		Smoke:    smoke.Request{URL: ts.URL, Prompt: "The capital of France is", MaxTokens: 16, Contains: "Paris"},
	}
	if fx.cfg != nil {
		fx.cfg(&cfg)
	}
	done := make(chan *Report, 1)
	go func() { done <- Run(context.Background(), cfg) }()
	select {
	case rep := <-done:
		return outcome{rep: rep, out: out.String(), src: rp}
	case <-time.After(10 * time.Second):
		t.Fatalf("watch did not end; output so far:\n%s", out.String())
		return outcome{}
	}
}

func ph(name string, sec float64) baseline.Phase { return baseline.Phase{Name: name, Seconds: sec} }

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestWatchCleanStart(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart()})
	if o.rep.Outcome != Ready || o.rep.ExitCode != 0 {
		t.Fatalf("outcome %s (exit %d), want ready (0); output:\n%s", o.rep.Outcome, o.rep.ExitCode, o.out)
	}
	var phases []string
	for _, m := range o.rep.Timeline {
		phases = append(phases, m.Phase)
	}
	want := []string{"load-weights-begin", "load-weights-end", "cuda-graph-begin", "cuda-graph-batches", "cuda-graph-end", "ready"}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	wantDur := []baseline.Phase{ph("load-weights", 33.84), ph("cuda-graph-capture", 26.12), ph("startup", 68)}
	if diff := cmp.Diff(wantDur, o.rep.Phases); diff != "" {
		t.Errorf("phase durations (-want +got):\n%s", diff)
	}
	if o.rep.Smoke == nil || !o.rep.Smoke.OK {
		t.Errorf("smoke = %+v, want ok", o.rep.Smoke)
	}
	if len(o.rep.Failures) != 0 {
		t.Errorf("failures on a clean start: %+v", o.rep.Failures)
	}
	golden(t, "clean-start", o.out)
}

func TestWatchEachFailureSignatureStopsTheWatch(t *testing.T) {
	for _, kind := range fakesglang.FailureKinds() {
		t.Run(kind, func(t *testing.T) {
			o := watchReplay(t, fixture{steps: fakesglang.FailingStart(kind), hang: 20 * time.Minute})
			if o.rep.Outcome != Failed || o.rep.ExitCode != 1 {
				t.Fatalf("outcome %s (exit %d), want failure (1); output:\n%s", o.rep.Outcome, o.rep.ExitCode, o.out)
			}
			if len(o.rep.Failures) != 1 {
				t.Fatalf("got %d failures, want 1 (stop at the first)", len(o.rep.Failures))
			}
			f := o.rep.Failures[0]
			if f.Kind != kind {
				t.Errorf("kind %q, want %q", f.Kind, kind)
			}
			if want := min(ContextLines, f.Line-1); len(f.Context) != want {
				t.Errorf("%d context lines, want %d", len(f.Context), want)
			}
			if !strings.Contains(o.out, "FAILURE 1: "+f.Title) || !strings.Contains(o.rep.Verdict, "FAILED") {
				t.Errorf("output does not announce the failure:\n%s", o.out)
			}
			// The watch stopped soon after the failure (quiet spell), not at
			// the time-out.
			if o.rep.ElapsedS > 120 {
				t.Errorf("watch ended after %.0fs; it should stop right after the failure", o.rep.ElapsedS)
			}
		})
	}
}

func TestWatchFailureOutput(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.FailingStart("cuda-graph-capture"), hang: 20 * time.Minute})
	golden(t, "failure", o.out)
}

// With --keep-going, four ranks running out of memory and the launcher's
// SIGQUIT are five failures; the dead server never becomes ready, and that
// is a failure (exit 1), not a time-out.
func TestWatchKeepGoingCollectsAll(t *testing.T) {
	steps := fakesglang.Head()
	at := steps[len(steps)-1].At + time.Second
	for _, rank := range []string{"TP0", "TP1", "TP2", "TP3"} {
		for _, l := range fakesglang.FailureText("oom")[:6] {
			steps = append(steps, fakesglang.Step{At: at, Line: strings.Replace(l, "TP0", rank, 1)})
		}
	}
	steps = append(steps, fakesglang.Step{At: at, Line: fakesglang.FailureText("sigquit")[0]})
	o := watchReplay(t, fixture{steps: steps, hang: 20 * time.Minute, cfg: func(c *Config) { c.KeepGoing = true }})
	var got []string
	for _, f := range o.rep.Failures {
		got = append(got, f.Kind+"/"+f.Rank)
	}
	if diff := cmp.Diff([]string{"oom/TP0", "oom/TP1", "oom/TP2", "oom/TP3", "sigquit/"}, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if o.rep.ExitCode != 1 || !strings.Contains(o.rep.Verdict, "4× out of memory") || !strings.Contains(o.rep.Verdict, "TIMEOUT") {
		t.Errorf("exit %d, verdict %q; want 1 and both the failures and the time-out named", o.rep.ExitCode, o.rep.Verdict)
	}
}

func TestWatchTimeout(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.Stalled(), hang: time.Hour})
	if o.rep.Outcome != TimedOut || o.rep.ExitCode != 3 {
		t.Fatalf("outcome %s (exit %d), want timeout (3); output:\n%s", o.rep.Outcome, o.rep.ExitCode, o.out)
	}
	if o.rep.ElapsedS != 600 {
		t.Errorf("ended after %.1fs, want exactly the 10m time-out", o.rep.ElapsedS)
	}
	ti := o.rep.Timeout
	if ti == nil || ti.LastPhase != "cuda-graph-begin" || ti.LastPhaseAgoS != 564 {
		t.Errorf("timeout info = %+v, want last phase cuda-graph-begin 564s ago", ti)
	}
	want := "TIMEOUT after 10m00s: the server was not ready; last phase reached: cuda graph capture begin, 9m24s ago (log line 17)"
	if !strings.HasPrefix(o.rep.Verdict, want) {
		t.Errorf("verdict = %q\nwant prefix %q", o.rep.Verdict, want)
	}
	// A status line every 20 s while waiting: 30 of them in 10 minutes.
	if n := strings.Count(o.out, "] waiting: "); n != 29 {
		t.Errorf("%d status lines, want 29 (every 20s before the 10m time-out)", n)
	}
}

func TestWatchEmptyLogTimesOut(t *testing.T) {
	o := watchReplay(t, fixture{hang: time.Hour, cfg: func(c *Config) { c.Timeout = time.Minute }})
	if o.rep.ExitCode != 3 || !strings.Contains(o.rep.Verdict, "no startup phase was reached; the log stayed empty") {
		t.Errorf("exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

func TestWatchWrongAnswer(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), server: &fakesglang.Server{Answer: " the the the the the"}})
	if o.rep.Outcome != Failed || !strings.Contains(o.rep.Verdict, `does not contain "Paris"`) {
		t.Errorf("outcome %s, verdict %q; want a failure naming the answer", o.rep.Outcome, o.rep.Verdict)
	}
	if !strings.Contains(o.out, "WRONG") {
		t.Errorf("output does not mark the answer WRONG:\n%s", o.out)
	}
}

func TestWatchEmptyAnswer(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), server: &fakesglang.Server{Answer: ""},
		cfg: func(c *Config) { c.Smoke.Contains = "" }})
	if o.rep.ExitCode != 1 || !strings.Contains(o.rep.Verdict, "the answer is empty") {
		t.Errorf("exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

func TestWatchHealthFailing(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), server: &fakesglang.Server{HealthStatus: 503, Answer: fakesglang.GoodAnswer}})
	if o.rep.ExitCode != 1 || !strings.Contains(o.rep.Verdict, "GET /health answered 503") {
		t.Errorf("exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

func TestWatchBaseline(t *testing.T) {
	good := &baseline.File{Phases: []baseline.Phase{ph("load-weights", 33), ph("cuda-graph-capture", 25), ph("startup", 66)}}
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: func(c *Config) { c.Baseline, c.BaselinePath = good, "good.json" }})
	if o.rep.ExitCode != 0 || len(o.rep.Baseline) != 3 {
		t.Errorf("against a similar baseline: exit %d, rows %+v; want 0 and 3 rows", o.rep.ExitCode, o.rep.Baseline)
	}

	// Graph capture took 26.12 s; a baseline of 20 s makes that +31%.
	fast := &baseline.File{Phases: []baseline.Phase{ph("load-weights", 33), ph("cuda-graph-capture", 20), ph("startup", 66)}}
	o = watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: func(c *Config) { c.Baseline, c.BaselinePath = fast, "fast.json" }})
	if o.rep.ExitCode != 1 || !strings.Contains(o.rep.Verdict, "cuda-graph-capture regressed more than 25% against fast.json") {
		t.Errorf("exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
	if !strings.Contains(o.out, "+30.6%  REGRESSION") {
		t.Errorf("output does not show the regression row:\n%s", o.out)
	}
}

func TestWatchSourceLost(t *testing.T) {
	lost := &source.LostError{What: `the log command "ssh gpu1 tail -F /root/dsv4_mma.log" ended after 41s`, Err: errors.New("exit status 255"),
		Stderr: []string{"client_loop: send disconnect: Broken pipe"}}
	o := watchReplay(t, fixture{steps: fakesglang.Head(), end: lost})
	if o.rep.Outcome != SourceLost || o.rep.ExitCode != 4 {
		t.Fatalf("outcome %s (exit %d), want source-lost (4); output:\n%s", o.rep.Outcome, o.rep.ExitCode, o.out)
	}
	for _, want := range []string{"LOG SOURCE LOST", "exit status 255", "Broken pipe", "not a success", "last phase reached: load weights end"} {
		if !strings.Contains(o.rep.Verdict, want) {
			t.Errorf("verdict %q lacks %q", o.rep.Verdict, want)
		}
	}
}

// A log that ends in the middle of a traceback reports the failure, not a
// lost source: what was read already proves the start failed.
func TestWatchFailureThenSourceEnds(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.FailingStart("nccl"), end: &source.LostError{What: "ended"}})
	if o.rep.ExitCode != 1 || len(o.rep.Failures) != 1 || o.rep.Failures[0].Kind != "nccl" {
		t.Errorf("exit %d, failures %+v; want 1 and one nccl failure", o.rep.ExitCode, o.rep.Failures)
	}
}

func TestWatchServerExitsBeforeReady(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.Head(), end: &source.ExitError{Pid: 4242, Err: errors.New("exit status 1")}, stop: true})
	if o.rep.ExitCode != 1 || len(o.rep.Failures) != 1 || o.rep.Failures[0].Kind != "server-exit" {
		t.Fatalf("exit %d, failures %+v; want 1 and a server-exit failure", o.rep.ExitCode, o.rep.Failures)
	}
	if n := len(o.rep.Failures[0].Context); n != len(fakesglang.Head()) {
		t.Errorf("server-exit failure shows %d lines, want the %d it wrote", n, len(fakesglang.Head()))
	}
	if o.src.stopped != 1 {
		t.Errorf("Stop called %d times, want 1 (a failed start's server is stopped)", o.src.stopped)
	}
}

// A failure, or a server's exit, after a single log line shows "the line
// before it" / "its last line", not "the 1 lines".
func TestWatchOneLineOfContextIsSingular(t *testing.T) {
	one := fakesglang.Head()[:1]
	failing := append(append([]fakesglang.Step(nil), one...), fakesglang.Step{At: time.Second, Line: fakesglang.FailureText("nccl")[0]})
	for _, tt := range []struct {
		name       string
		fx         fixture
		want, nots string
	}{
		{"failure", fixture{steps: failing, hang: 20 * time.Minute}, "  the line before it:\n", "1 lines"},
		{"server exit", fixture{steps: one, end: &source.ExitError{Pid: 4242, Err: errors.New("exit status 1")}, stop: true}, "  its last line:\n", "1 lines"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := watchReplay(t, tt.fx)
			if o.rep.ExitCode != 1 {
				t.Fatalf("exit %d, want 1; output:\n%s", o.rep.ExitCode, o.out)
			}
			if !strings.Contains(o.out, tt.want) || strings.Contains(o.out, tt.nots) {
				t.Errorf("output should say %q, never %q:\n%s", tt.want, tt.nots, o.out)
			}
		})
	}
}

// A slower start than the baseline fails the watch, but the server it
// started answered correctly: it is left running, not stopped.
func TestWatchRegressionLeavesTheServerRunning(t *testing.T) {
	fast := &baseline.File{Phases: []baseline.Phase{ph("load-weights", 33), ph("cuda-graph-capture", 20), ph("startup", 66)}}
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), stop: true, cfg: func(c *Config) { c.Baseline, c.BaselinePath = fast, "fast.json" }})
	if o.rep.ExitCode != 1 || o.src.stopped != 0 {
		t.Errorf("exit %d, Stop called %d times; want 1 and 0", o.rep.ExitCode, o.src.stopped)
	}
}

func TestWatchStartedServerRunsOnWhenReady(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), stop: true})
	if o.rep.ExitCode != 0 || o.src.stopped != 0 {
		t.Errorf("exit %d, Stop called %d times; want 0 and 0", o.rep.ExitCode, o.src.stopped)
	}
}

func TestWatchInterrupt(t *testing.T) {
	clk := newFakeClock()
	rp := &replay{clk: clk, steps: fakesglang.Head(), hang: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan *Report, 1)
	go func() { done <- Run(ctx, Config{Source: stoppingReplay{rp}, Clock: clk, Out: &out}) }()
	// Wait until the replay has played everything, then press Ctrl-C.
	for clk.Now().Sub(newFakeClock().now) < fakesglang.Head()[len(fakesglang.Head())-1].At+time.Second {
		time.Sleep(time.Millisecond)
	}
	cancel()
	rep := <-done
	if rep.Outcome != Interrupted || rep.ExitCode != 130 || rp.stopped != 1 {
		t.Errorf("outcome %s (exit %d), Stop called %d times; want interrupted (130) and the server stopped", rep.Outcome, rep.ExitCode, rp.stopped)
	}
}

func TestWatchTerminalStatusLineIsRedrawnInPlace(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: func(c *Config) { c.TTY = true }})
	if !strings.Contains(o.out, clearLine+"[  20.0s] waiting: load weights begin 19.4s ago") {
		t.Errorf("no in-place status line on a terminal:\n%q", o.out)
	}
	// A status is never ended by a newline: it is erased before the next
	// line or status.
	for _, seg := range strings.Split(o.out, clearLine) {
		if strings.Contains(seg, "waiting:") && strings.Contains(seg, "\n") {
			t.Errorf("status line not erased before the next line: %q", seg)
		}
	}
	plain := watchReplay(t, fixture{steps: fakesglang.CleanStart()})
	if strings.Contains(plain.out, "\r") || strings.Contains(plain.out, "\x1b") {
		t.Errorf("plain output contains terminal control characters:\n%q", plain.out)
	}
}

func TestWatchReportJSON(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.FailingStart("oom"), hang: time.Hour})
	data, err := json.Marshal(o.rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"outcome", "exit_code", "verdict", "timeline", "phases", "failures", "notices", "lines"} {
		if _, ok := back[key]; !ok {
			t.Errorf("JSON report lacks %q: %s", key, data)
		}
	}
	if back["outcome"] != "failure" {
		t.Errorf("outcome = %v", back["outcome"])
	}
}

// A status line wider than the terminal would wrap, and "\r" only returns
// to the start of its last row: it is clipped to the width instead.
func TestWatchTerminalStatusLineFitsTheWidth(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: func(c *Config) { c.TTY, c.Width = true, 40 }})
	n := 0
	for _, seg := range strings.Split(o.out, clearLine) {
		if strings.Contains(seg, "waiting:") {
			n++
			if len([]rune(seg)) > 39 {
				t.Errorf("status %q is %d columns on a 40-column terminal", seg, len([]rune(seg)))
			}
		}
	}
	if n == 0 {
		t.Errorf("no status line:\n%q", o.out)
	}
}

// Piecewise CUDA graph capture is a phase of its own, timed from its begin
// and end lines.
func TestWatchPiecewiseCapture(t *testing.T) {
	steps := append(fakesglang.Head(),
		fakesglang.Step{At: 36 * time.Second, Line: "[2026-06-17 22:07:07 TP0] Capture piecewise CUDA graph begin. avail mem=37.09 GB"},
		fakesglang.Step{At: 41 * time.Second, Line: "[2026-06-17 22:07:12 TP0] Capture piecewise CUDA graph end. Time elapsed: 5.21 s. mem usage=0.42 GB. avail mem=36.60 GB."},
		fakesglang.Step{At: 43 * time.Second, Line: "[2026-06-17 22:07:14] The server is fired up and ready to roll!"},
	)
	o := watchReplay(t, fixture{steps: steps})
	want := []baseline.Phase{ph("load-weights", 33.84), ph("piecewise-cuda-graph-capture", 5.21), ph("startup", 43)}
	if diff := cmp.Diff(want, o.rep.Phases); diff != "" {
		t.Errorf("phase durations (-want +got):\n%s", diff)
	}
	if !strings.Contains(o.out, "prefill cuda graph capture end") {
		t.Errorf("piecewise (prefill) phase not printed:\n%s", o.out)
	}
}

// The releases with DeepSeek-V4 name each capture ("Capture target decode
// CUDA graph begin. ..."): the decode graph is the capture phase, its batch
// list comes from its end line, the prefill graph is the piecewise one, and
// a start that stalls there says it stalled in graph capture.
func TestWatchNamedCapture(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.NamedStart()})
	if o.rep.Outcome != Ready {
		t.Fatalf("outcome %s, want ready; output:\n%s", o.rep.Outcome, o.out)
	}
	var phases []string
	batches := ""
	for _, m := range o.rep.Timeline {
		phases = append(phases, m.Phase)
		if m.Phase == "cuda-graph-end" {
			batches = m.Batches
		}
	}
	want := []string{"load-weights-begin", "load-weights-end", "piecewise-cuda-graph-begin", "piecewise-cuda-graph-end", "cuda-graph-begin", "cuda-graph-end", "ready"}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if batches != "1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64" {
		t.Errorf("cuda-graph-end batches = %q, want the end line's bs=[...]", batches)
	}
	wantDur := []baseline.Phase{ph("load-weights", 33.84), ph("cuda-graph-capture", 26.12), ph("piecewise-cuda-graph-capture", 0.42), ph("startup", 68)}
	if diff := cmp.Diff(wantDur, o.rep.Phases); diff != "" {
		t.Errorf("phase durations (-want +got):\n%s", diff)
	}
	for _, s := range []string{"cuda graph capture begin", "prefill cuda graph capture end", "bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]"} {
		if !strings.Contains(o.out, s) {
			t.Errorf("output lacks %q:\n%s", s, o.out)
		}
	}
	stalled := concatSteps(fakesglang.Head(), fakesglang.NamedCapture()[:4])
	o = watchReplay(t, fixture{steps: stalled, hang: time.Hour, cfg: func(c *Config) { c.Timeout = time.Minute }})
	if o.rep.Timeout == nil || o.rep.Timeout.LastPhase != "cuda-graph-begin" {
		t.Errorf("timeout = %+v, want graph capture as the last phase", o.rep.Timeout)
	}
}

// Some SGLang versions announce graph capture only with the batch list; that
// line then starts the phase, for the time-out message and the durations.
func TestWatchCaptureAnnouncedByBatchList(t *testing.T) {
	steps := append(fakesglang.Head(),
		fakesglang.Step{At: 36 * time.Second, Line: "[2026-06-17 22:07:07 TP0] Capture cuda graph bs [1, 2, 4, 8]"},
		fakesglang.Step{At: 50 * time.Second, Line: "[2026-06-17 22:07:21] The server is fired up and ready to roll!"},
	)
	o := watchReplay(t, fixture{steps: steps})
	want := []baseline.Phase{ph("load-weights", 33.84), ph("cuda-graph-capture", 14), ph("startup", 50)}
	if diff := cmp.Diff(want, o.rep.Phases); diff != "" {
		t.Errorf("phase durations (-want +got):\n%s", diff)
	}
	o = watchReplay(t, fixture{steps: steps[:len(steps)-1], hang: time.Hour, cfg: func(c *Config) { c.Timeout = time.Minute }})
	if o.rep.Timeout == nil || o.rep.Timeout.LastPhase != "cuda-graph-batches" {
		t.Errorf("timeout = %+v, want the batch list as the last phase", o.rep.Timeout)
	}
}

// A line of 128 KB (a progress bar written without newlines) before a
// failure is shown cut for people, not a megabyte to the terminal that
// pushes the failure out of sight; the JSON report keeps it whole.
func TestLongLinesShownCut(t *testing.T) {
	steps := fakesglang.FailingStart("oom")
	long := "[2026-06-17 22:07:06 TP0] Loading " + strings.Repeat("#", 1<<17)
	for i := range steps {
		if strings.Contains(steps[i].Line, "Load weight end") {
			steps = append(steps[:i+1], append([]fakesglang.Step{{At: steps[i].At, Line: long}}, steps[i+1:]...)...)
			break
		}
	}
	o := watchReplay(t, fixture{steps: steps, hang: time.Hour})
	if o.rep.Outcome != Failed {
		t.Fatalf("outcome %s; want failure", o.rep.Outcome)
	}
	if len(o.out) > 64<<10 {
		t.Errorf("%d bytes printed for people; the long line was not cut", len(o.out))
	}
	whole := false
	for _, l := range o.rep.Failures[0].Context {
		whole = whole || l == long
	}
	if !whole {
		t.Errorf("the report's context lacks the long line whole")
	}
}
