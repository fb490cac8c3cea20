package watch

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/smoke"
	"github.com/mlagen/mlagen/watch/source"
)

// These tests use real sources, processes and files on the wall clock, with
// the log replayed 1000 times faster than SGLang writes it.

const speedup = 1000

func watchReal(t *testing.T, src source.Source) (*Report, string) {
	t.Helper()
	return watchWith(t, fakesglang.NewServer(), Config{Source: src, Interval: time.Second})
}

func replayInto(t *testing.T, path string, steps []fakesglang.Step, flag int) {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if err := fakesglang.Replay(context.Background(), f, steps, speedup); err != nil {
		t.Error(err)
	}
}

func TestWatchFollowFileCleanStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dsv4_mma.log")
	go replayInto(t, path, fakesglang.CleanStart(), os.O_TRUNC)
	rep, out := watchReal(t, &source.File{Path: path, Poll: 2 * time.Millisecond})
	if rep.Outcome != Ready {
		t.Fatalf("outcome %s; output:\n%s", rep.Outcome, out)
	}
}

// The server is restarted with "> log" while the watch follows the log: the
// old start's phases are dropped and the new start is followed to ready.
func TestWatchFollowFileTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dsv4_mma.log")
	head := fakesglang.Head()
	os.WriteFile(path, []byte(fakesglang.Text(head)), 0o644)
	go func() {
		time.Sleep(20 * time.Millisecond)
		replayInto(t, path, fakesglang.CleanStart(), os.O_TRUNC)
	}()
	rep, out := watchReal(t, &source.File{Path: path, Poll: 2 * time.Millisecond})
	if rep.Outcome != Ready {
		t.Fatalf("outcome %s; output:\n%s", rep.Outcome, out)
	}
	// "was truncated", or, when the new start outgrew the old one between
	// two polls, "was truncated and written again (its first bytes
	// changed)".
	if !strings.Contains(out, "was truncated") || !strings.Contains(out, "reading it again from the start") || !strings.Contains(out, "phases start over") {
		t.Errorf("truncation not reported:\n%s", out)
	}
	if n := strings.Count(out, "load weights begin"); n != 2 {
		t.Errorf("load weights begin printed %d times, want 2 (old start, new start):\n%s", n, out)
	}
}

func TestWatchFollowFileRotated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dsv4_mma.log")
	os.WriteFile(path, []byte(fakesglang.Text(fakesglang.Head())), 0o644)
	go func() {
		time.Sleep(20 * time.Millisecond)
		if err := os.Rename(path, path+".1"); err != nil {
			t.Error(err)
		}
		time.Sleep(10 * time.Millisecond)
		rest := append(fakesglang.Capture(), fakesglang.Tail()...)
		for i := range rest {
			rest[i].At -= rest[0].At
		}
		replayInto(t, path, rest, os.O_TRUNC)
	}()
	rep, out := watchReal(t, &source.File{Path: path, Poll: 2 * time.Millisecond})
	if rep.Outcome != Ready {
		t.Fatalf("outcome %s; output:\n%s", rep.Outcome, out)
	}
	if !strings.Contains(out, "was rotated; following the new file") {
		t.Errorf("rotation not reported:\n%s", out)
	}
	if len(rep.Timeline) != 6 {
		t.Errorf("timeline has %d phases across the rotation, want 6: %+v", len(rep.Timeline), rep.Timeline)
	}
}

func TestWatchCommandFailsAtOnce(t *testing.T) {
	rep, out := watchReal(t, &source.Command{Line: `echo "ssh: connect to host 10.1.230.171 port 22: Connection timed out" >&2; exit 255`})
	if rep.ExitCode != ExitSourceLost {
		t.Fatalf("exit %d, want %d; output:\n%s", rep.ExitCode, ExitSourceLost, out)
	}
	for _, want := range []string{"LOG SOURCE LOST", "exit status 255", "Connection timed out", "no startup phase was reached"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestWatchCommandDiesMidway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "head.log")
	os.WriteFile(path, []byte(fakesglang.Text(fakesglang.Head())), 0o644)
	rep, out := watchReal(t, &source.Command{Line: "cat " + path + "; sleep 0.05; echo 'client_loop: send disconnect: Broken pipe' >&2; exit 255"})
	if rep.ExitCode != ExitSourceLost || !strings.Contains(out, "last phase reached: load weights end") {
		t.Fatalf("exit %d, want %d naming the last phase; output:\n%s", rep.ExitCode, ExitSourceLost, out)
	}
}

func TestWatchServerCommand(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.log")
	os.WriteFile(clean, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	head := filepath.Join(dir, "head.log")
	os.WriteFile(head, []byte(fakesglang.Text(fakesglang.Head())), 0o644)

	t.Run("ready", func(t *testing.T) {
		logPath := filepath.Join(dir, "server-ok.log")
		rep, out := watchReal(t, &source.Server{Argv: []string{"sh", "-c", "cat " + clean + "; exec sleep 30"}, LogPath: logPath, Poll: 2 * time.Millisecond})
		if rep.Outcome != Ready || !strings.Contains(out, "the server runs on: pid") {
			t.Fatalf("outcome %s; output:\n%s", rep.Outcome, out)
		}
		// The test's own server must not outlive the test.
		t.Cleanup(func() { stopPidFrom(rep.Server) })
	})
	t.Run("exits before ready", func(t *testing.T) {
		logPath := filepath.Join(dir, "server-bad.log")
		rep, out := watchReal(t, &source.Server{Argv: []string{"sh", "-c", "cat " + head + "; exit 3"}, LogPath: logPath, Poll: 2 * time.Millisecond})
		if rep.ExitCode != ExitFailed || len(rep.Failures) != 1 || rep.Failures[0].Kind != "server-exit" {
			t.Fatalf("exit %d, failures %+v; output:\n%s", rep.ExitCode, rep.Failures, out)
		}
		if !strings.Contains(out, "exit status 3") || !strings.Contains(out, "had already exited") {
			t.Errorf("output should give the status and say the server is gone:\n%s", out)
		}
	})
}

// The kernel module logs at first use; here that is the smoke request: the
// fake server writes the line to the log while it answers, and the watch,
// following the real file, waits for it and calls the start good.
func TestWatchKernelLineLoggedByTheSmokeRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dsv4_mma.log")
	os.WriteFile(path, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	srv := fakesglang.NewServer()
	srv.OnGenerate = func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		f.WriteString(fakesglang.KernelRanLine("TP0", "whole call", fakesglang.Target, fakesglang.Config) + "\n")
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var out bytes.Buffer
	rep := Run(context.Background(), Config{
		Source:       &source.File{Path: path, Poll: 2 * time.Millisecond},
		Out:          &out,
		Timeout:      5 * time.Second,
		Smoke:        smoke.Request{URL: ts.URL, Prompt: "The capital of France is", MaxTokens: 16, Contains: "Paris"},
		ExpectKernel: true, ExpectKernelWhy: "--expect-kernel",
	})
	if rep.Outcome != Ready || rep.Kernel.Served != "mma" {
		t.Fatalf("outcome %s, kernel %+v; output:\n%s", rep.Outcome, rep.Kernel, out.String())
	}
}
