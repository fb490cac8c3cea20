package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/sglanglog"
	"github.com/mlagen/mlagen/watch/smoke"
	"github.com/mlagen/mlagen/watch/source"
)

// These tests, on the wall clock with real files, are about what a watch
// must not take from an earlier run of the server, and about what the log
// says while the smoke request is out.

func kernelRequired() Config {
	var cfg Config
	expectKernel(&cfg)
	return cfg
}

// logOf writes text as a server log in a folder of the test's and returns
// its path.
func logOf(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// watchWith runs a watch of cfg.Source against a server answering with h,
// on the wall clock, with the smoke request of the watch's defaults; a
// Timeout, Quiet or KernelWait not set is short, and a Smoke.URL set is
// asked instead of h's.
func watchWith(t *testing.T, h http.Handler, cfg Config) (*Report, string) {
	t.Helper()
	ts := httptest.NewServer(h)
	defer ts.Close()
	var out bytes.Buffer
	cfg.Out = &out
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Quiet == 0 {
		cfg.Quiet = 50 * time.Millisecond
	}
	if cfg.KernelWait == 0 {
		cfg.KernelWait = 200 * time.Millisecond
	}
	if cfg.Smoke.URL == "" {
		cfg.Smoke.URL = ts.URL
	}
	cfg.Smoke.Prompt, cfg.Smoke.MaxTokens, cfg.Smoke.Contains = "The capital of France is", 16, "Paris"
	rep := Run(context.Background(), cfg)
	return rep, out.String()
}

// fileOf follows the log at path as mlagen watch --log does.
func fileOf(path string) *source.File {
	return &source.File{Path: path, Poll: 2 * time.Millisecond, StartsRun: sglanglog.StartsRun}
}

// runAgainst watches the log at path against srv.
func runAgainst(t *testing.T, srv *fakesglang.Server, path string, cfg Config) (*Report, string) {
	t.Helper()
	cfg.Source = fileOf(path)
	return watchWith(t, srv, cfg)
}

// The log holds a whole earlier run and after it ("tee -a") a second: only
// the second's lines count, and the file is read from its server_args=
// line on. An earlier run's kernel line does not make a second that logged
// none good, and a second with its own is good.
func TestAppendedRunIsJudgedAlone(t *testing.T) {
	for _, tt := range []struct {
		name          string
		first, second []fakesglang.Step
		outcome       Outcome
		served        string
	}{
		{"kernel line in the earlier run only", fakesglang.KernelStart(), fakesglang.CleanStart(), Failed, "unknown"},
		{"kernel line in the second run", fakesglang.CleanStart(), fakesglang.KernelStart(), Ready, "mma"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := logOf(t, fakesglang.Text(tt.first)+fakesglang.Text(tt.second))
			rep, out := runAgainst(t, fakesglang.NewServer(), path, kernelRequired())
			if rep.Outcome != tt.outcome || rep.Kernel.Served != tt.served {
				t.Fatalf("outcome %s, kernel served %q; want %s, %s:\n%s", rep.Outcome, rep.Kernel.Served, tt.outcome, tt.served, out)
			}
			want := fmt.Sprintf("of 2 runs of the server; reading it from the last one's start (line %d)", len(tt.first)+1)
			if !strings.Contains(out, want) {
				t.Errorf("the skipped run is not said (%q):\n%s", want, out)
			}
			if rep.Lines != len(tt.second) || len(rep.Timeline) != 6 {
				t.Errorf("%d lines read, %d phases; want the second run's %d and 6", rep.Lines, len(rep.Timeline), len(tt.second))
			}
		})
	}
}

// A log of one run after lines of something else (a launcher's output,
// import warnings) is read from the run's start, and not said to hold an
// earlier run.
func TestOneRunAfterOtherLines(t *testing.T) {
	path := logOf(t, "a launcher's line\nUserWarning: an import's\n"+fakesglang.Text(fakesglang.KernelStart()))
	rep, out := runAgainst(t, fakesglang.NewServer(), path, kernelRequired())
	if rep.Outcome != Ready {
		t.Fatalf("outcome %s:\n%s", rep.Outcome, out)
	}
	if want := "of one run of the server; reading it from that run's start (line 3)"; !strings.Contains(out, want) || strings.Contains(out, "runs of the server") {
		t.Errorf("want the notice %q, and no word of several runs:\n%s", want, out)
	}
}

// The server starts again while the watch reads the log (a supervisor
// restarting it, the log appended to): the first run's kernel line, logged
// during its graph capture, does not count for the second, which logs none.
func TestRestartInTheLogForgetsTheKernelLine(t *testing.T) {
	first := fakesglang.KernelStart()
	first = first[:len(first)-len(fakesglang.Tail())] // not ready yet
	second := fakesglang.CleanStart()
	end := first[len(first)-1].At
	for i := range second {
		second[i].At += end + time.Second
	}
	o := watchReplay(t, fixture{steps: append(first, second...), cfg: expectKernel})
	if o.rep.Outcome != Failed || o.rep.Kernel.Served != "unknown" {
		t.Fatalf("outcome %s, kernel served %q; want failure, unknown:\n%s", o.rep.Outcome, o.rep.Kernel.Served, o.out)
	}
	if !strings.Contains(o.out, "the server starts again") || !strings.Contains(o.out, "phases start over") {
		t.Errorf("the restart is not said:\n%s", o.out)
	}
}

// The server is restarted with "> log" after its kernel line: the new run,
// which logs none, is not good on the old one's.
func TestTruncatedLogForgetsTheKernelLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	first := fakesglang.KernelStart()
	first = first[:len(first)-len(fakesglang.Tail())] // not ready yet
	if err := os.WriteFile(path, []byte(fakesglang.Text(first)), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		replayInto(t, path, fakesglang.CleanStart(), os.O_TRUNC)
	}()
	rep, out := runAgainst(t, fakesglang.NewServer(), path, kernelRequired())
	if rep.Outcome != Failed || rep.Kernel.Served != "unknown" {
		t.Fatalf("outcome %s, kernel served %q; want failure, unknown:\n%s", rep.Outcome, rep.Kernel.Served, out)
	}
	if !strings.Contains(out, "phases start over") {
		t.Errorf("the restart is not said:\n%s", out)
	}
}

// The first decode crashes the server: the traceback comes while the smoke
// request waits for an answer that never comes. The watch reads it and
// fails with it at once, instead of waiting out --timeout for the answer.
func TestFailureWhileTheSmokeRequestIsOut(t *testing.T) {
	path := logOf(t, fakesglang.Text(fakesglang.CleanStart()))
	srv := fakesglang.NewServer()
	srv.Hang = true
	srv.OnGenerate = func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		f.WriteString(strings.Join(fakesglang.FailureText("cuda"), "\n") + "\n")
	}
	t0 := time.Now()
	rep, out := runAgainst(t, srv, path, Config{Timeout: 20 * time.Second})
	if rep.Outcome != Failed || len(rep.Failures) != 1 || rep.Failures[0].Kind != "cuda" {
		t.Fatalf("outcome %s, failures %+v; want one CUDA error:\n%s", rep.Outcome, rep.Failures, out)
	}
	if !strings.Contains(rep.Verdict, "while the smoke request was out") {
		t.Errorf("verdict %q does not say the failure came during the smoke request", rep.Verdict)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %s: the watch waited for the answer instead of reading the log", d)
	}
}

// SGLang logs some handled exceptions as a warning with their traceback and
// goes on (0.5.23: "post-warmup freeze_gc failed"): not a failure.
func TestHandledWarningTracebackIsNoFailure(t *testing.T) {
	steps := fakesglang.CleanStart()
	tail := len(steps) - 1
	// withTraceback is the start with a traceback logged under record just
	// before the ready line, as 0.5.23 logs its post-warmup freeze_gc.
	withTraceback := func(record string) string {
		lines := []string{
			record,
			`Traceback (most recent call last):`,
			`  File "/usr/lib/python3/dist-packages/sglang/srt/entrypoints/http_server.py", line 2567, in _wait_and_warmup`,
			`    freeze_gc()`,
			`RuntimeError: CUDA error: an illegal memory access was encountered`,
		}
		return fakesglang.Text(steps[:tail]) + strings.Join(lines, "\n") + "\n" + fakesglang.Text(steps[tail:])
	}
	rep, out := runAgainst(t, fakesglang.NewServer(), logOf(t, withTraceback(`[2026-06-17 22:07:39] post-warmup freeze_gc failed`)), Config{})
	if rep.Outcome != Ready || len(rep.Failures) != 0 {
		t.Fatalf("outcome %s, failures %+v; want ready, none:\n%s", rep.Outcome, rep.Failures, out)
	}
	if !strings.Contains(out, "handled exception") {
		t.Errorf("the handled traceback is not noted:\n%s", out)
	}
	// The same traceback after any other record is a failure.
	rep, out = runAgainst(t, fakesglang.NewServer(), logOf(t, withTraceback(`[2026-06-17 22:07:39] Scheduler hit an exception:`)), Config{})
	if rep.Outcome != Failed {
		t.Fatalf("outcome %s; want failure for an unhandled traceback:\n%s", rep.Outcome, out)
	}
}

// A server started with --api-key refuses the completion without it; the
// verdict says how to give it, and with it the start is good.
func TestSmokeWithTheServersAPIKey(t *testing.T) {
	path := logOf(t, fakesglang.Text(fakesglang.CleanStart()))
	srv := fakesglang.NewServer()
	srv.APIKey = "sk-test"
	rep, out := runAgainst(t, srv, path, Config{})
	if rep.Outcome != Failed || !strings.Contains(rep.Verdict, "--api-key-env") {
		t.Fatalf("outcome %s, verdict %q; want failure naming --api-key-env:\n%s", rep.Outcome, rep.Verdict, out)
	}
	rep, out = runAgainst(t, srv, path, Config{Smoke: smoke.Request{APIKey: "sk-test"}})
	if rep.Outcome != Ready {
		t.Fatalf("with the key: outcome %s:\n%s", rep.Outcome, out)
	}
}

// The log says the server listens on another port than --url's: the
// verdict says so.
func TestSmokeAtAnotherPortSaysWhereTheServerListens(t *testing.T) {
	path := logOf(t, fakesglang.Text(fakesglang.CleanStart()))
	rep, out := runAgainst(t, fakesglang.NewServer(), path, Config{Smoke: smoke.Request{URL: "http://127.0.0.1:1"}})
	if rep.Outcome != Failed || !strings.Contains(rep.Verdict, "listens on http://127.0.0.1:30000") {
		t.Fatalf("outcome %s, verdict %q; want failure naming the log's address:\n%s", rep.Outcome, rep.Verdict, out)
	}
}

func TestMatchStartAndHandled(t *testing.T) {
	for text, want := range map[string]bool{
		"server_args=ServerArgs(model_path='x')": true,
		"  server_args=":                         false,
		"the server_args=":                       false,
	} {
		if got := sglanglog.MatchStart(text); got != want {
			t.Errorf("MatchStart(%q) = %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]bool{
		"post-warmup freeze_gc failed":                         true,
		"Failed to prefetch checkpoint file /x/y.safetensors.": true,
		"post-warmup freeze_gc failed badly":                   false,
		"Scheduler hit an exception:":                          false,
	} {
		if got := sglanglog.MatchHandled(text); got != want {
			t.Errorf("MatchHandled(%q) = %v, want %v", text, got, want)
		}
	}
}

// The server logs a traceback as it dies on the smoke request and answers
// (or drops the connection) before the traceback has gone quiet: the
// traceback, still being read, is the verdict's reason, never READY.
func TestAnswerWhileATracebackIsRead(t *testing.T) {
	for _, answers := range []bool{true, false} {
		path := logOf(t, fakesglang.Text(fakesglang.CleanStart()))
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health" {
				return
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			f.WriteString(strings.Join(fakesglang.FailureText("cuda"), "\n") + "\n")
			f.Close()
			time.Sleep(100 * time.Millisecond) // read by the watch, not yet quiet
			if !answers {
				panic(http.ErrAbortHandler)
			}
			w.Write([]byte(`{"text": "` + fakesglang.GoodAnswer + `"}`))
		})
		// Quiet longer than the request: the traceback is still open.
		rep, out := watchWith(t, h, Config{Source: fileOf(path), Timeout: 10 * time.Second, Quiet: 5 * time.Second})
		if rep.Outcome != Failed || len(rep.Failures) != 1 || rep.Failures[0].Kind != "cuda" {
			t.Errorf("answers %v: outcome %s, failures %+v; want failure with the CUDA error:\n%s", answers, rep.Outcome, rep.Failures, out)
		}
	}
}

// --cmd "cat LOG" (or "sudo tail -n +1 -F LOG") of a log of two runs: the
// first run's "ready" sends the smoke request while the second run's lines
// wait to be read; the answer is taken after them, and it is the first
// run's, set aside.
func TestCommandSourceOfTwoRuns(t *testing.T) {
	var filler strings.Builder
	for range 2000 {
		filler.WriteString("[2026-06-17 22:08:00] INFO:     127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK\n")
	}
	path := logOf(t, fakesglang.Text(fakesglang.KernelStart())+filler.String()+fakesglang.Text(fakesglang.CleanStart()))
	cfg := kernelRequired()
	cfg.Source, cfg.Timeout = &source.Command{Line: "cat " + path}, 60*time.Second
	rep, out := watchWith(t, fakesglang.NewServer(), cfg)
	if rep.Outcome != Failed || rep.Kernel.Served != "unknown" {
		t.Fatalf("outcome %s, kernel served %q; want failure, unknown (the kernel line is the first run's):\n%s", rep.Outcome, rep.Kernel.Served, out)
	}
}

// On a replayed clock: a line saying the server starts again, read within
// AnswerPause of the smoke answer, sets the answer aside (it was on its way
// when the answer came); one after the pause comes once the answer is
// judged.
func TestRestartReadOnAfterTheAnswer(t *testing.T) {
	restart := fakesglang.Lines(fakesglang.Head()[:1])[0]
	for _, tt := range []struct {
		after   time.Duration // after the answer, at 68.1s
		outcome Outcome
	}{
		{AnswerPause / 2, TimedOut},
		{AnswerPause * 2, Ready},
	} {
		steps := append(fakesglang.KernelStart(), fakesglang.Step{At: 68100*time.Millisecond + tt.after, Line: restart})
		o := watchReplay(t, fixture{steps: steps, hang: time.Hour, cfg: func(c *Config) {
			expectKernel(c)
			c.Timeout = 80 * time.Second
		}})
		aside := strings.Contains(o.out, "what it answered before is set aside")
		if o.rep.Outcome != tt.outcome || aside != (tt.outcome == TimedOut) {
			t.Errorf("restart %s after the answer: outcome %s, answer set aside %v; want %s:\n%s", tt.after, o.rep.Outcome, aside, tt.outcome, o.out)
		}
		if want := 68.1 + AnswerPause.Seconds(); tt.outcome == Ready && fmt.Sprintf("%.3f", o.rep.ElapsedS) != fmt.Sprintf("%.3f", want) {
			t.Errorf("ready after %.3fs; want %.3fs (the answer, then the log's pause)", o.rep.ElapsedS, want)
		}
	}
}

// exitingSource is a started server's log that ends with its exit.
type exitingSource struct{ lines []string }

func (s exitingSource) Describe() string { return "a server that exits" }

func (s exitingSource) Run(ctx context.Context, out chan<- source.Event) error {
	for _, l := range s.lines {
		out <- source.Event{Line: l}
	}
	time.Sleep(50 * time.Millisecond)
	return &source.ExitError{Pid: 42, Err: errors.New("signal: segmentation fault")}
}

// The started server exits while the smoke request is out, which it had
// answered: a server that is gone is not ready.
func TestServerExitsAfterAnswering(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			time.Sleep(200 * time.Millisecond)
			w.Write([]byte(`{"text": "` + fakesglang.GoodAnswer + `"}`))
		}
	})
	rep, out := watchWith(t, h, Config{Source: exitingSource{fakesglang.Lines(fakesglang.CleanStart())}, Timeout: 10 * time.Second})
	if rep.Outcome != Failed || !strings.Contains(rep.Verdict, "segmentation fault") {
		t.Fatalf("outcome %s, verdict %q; want failure naming the exit:\n%s", rep.Outcome, rep.Verdict, out)
	}
}

// The started server exits while the watch waits for the kernel module's
// line, after a good answer: the verdict says the kernel never ran, and
// that the server is gone, with its exit.
func TestServerExitsDuringTheKernelWait(t *testing.T) {
	cfg := kernelRequired()
	cfg.Source, cfg.Timeout, cfg.KernelWait = exitingSource{fakesglang.Lines(fakesglang.CleanStart())}, 10*time.Second, 5*time.Second
	rep, out := watchWith(t, fakesglang.NewServer(), cfg)
	if rep.Outcome != Failed || !strings.Contains(rep.Verdict, "the MMA kernel never ran") || !strings.Contains(rep.Verdict, "segmentation fault") {
		t.Fatalf("outcome %s, verdict %q; want a failure naming the kernel and the exit:\n%s", rep.Outcome, rep.Verdict, out)
	}
}

// The server is restarted with "> log" once it has answered, while the
// watch waits for the kernel line (a supervisor restarting a server that
// died after its first request): the new run's kernel line does not make
// the old run's answer good. As for a restart appended to the log, the
// answer is set aside, and the new run, which never logs ready, times out.
func TestTruncatedLogSetsTheAnswerAside(t *testing.T) {
	path := logOf(t, fakesglang.Text(fakesglang.CleanStart()))
	srv := fakesglang.NewServer()
	var once sync.Once
	srv.OnGenerate = func() {
		once.Do(func() {
			// Truncated, then written again with the new run's first
			// lines and its kernel line, after the answer is taken.
			go func() {
				time.Sleep(100 * time.Millisecond)
				head := fakesglang.Lines(fakesglang.Head()[:2])
				text := strings.Join(append(head, fakesglang.KernelRanLine("TP0", "whole call", fakesglang.Target, fakesglang.Config)), "\n") + "\n"
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Error(err)
				}
			}()
		})
	}
	cfg := kernelRequired()
	cfg.Timeout, cfg.KernelWait = 2*time.Second, time.Second
	rep, out := runAgainst(t, srv, path, cfg)
	if rep.Outcome != TimedOut || rep.Smoke != nil {
		t.Fatalf("outcome %s, smoke %+v; want a time-out with the old run's answer set aside:\n%s", rep.Outcome, rep.Smoke, out)
	}
	if !strings.Contains(out, "what it answered before is set aside") {
		t.Errorf("setting the answer aside is not said:\n%s", out)
	}
}

// A server stuck in its first decode answers nothing and logs nothing: the
// status line still comes every --interval while the smoke request is out,
// instead of nothing at all until --timeout.
func TestStatusWhileTheSmokeRequestIsOut(t *testing.T) {
	srv := fakesglang.NewServer()
	srv.Hang = true
	cfg := Config{Timeout: time.Second, Interval: 100 * time.Millisecond}
	rep, out := runAgainst(t, srv, logOf(t, fakesglang.Text(fakesglang.CleanStart())), cfg)
	if rep.Outcome != TimedOut {
		t.Fatalf("outcome %s; want a time-out:\n%s", rep.Outcome, out)
	}
	if n := strings.Count(out, "waiting: for the smoke request's answer"); n < 3 {
		t.Errorf("%d status lines while the request was out for 1s at --interval 100ms; want about 9:\n%s", n, out)
	}
}
