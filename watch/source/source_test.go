package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/fakesglang"
)

// run starts src and returns a channel of its events and one of its result.
func run(t *testing.T, ctx context.Context, src Source) (<-chan Event, <-chan error) {
	t.Helper()
	events := make(chan Event, 1024)
	result := make(chan error, 1)
	go func() { result <- src.Run(ctx, events) }()
	return events, result
}

// collect reads events until until() is satisfied by what was read, or fails
// the test after a few seconds.
func collect(t *testing.T, events <-chan Event, until func([]Event) bool) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(5 * time.Second)
	for !until(got) {
		select {
		case ev := <-events:
			got = append(got, ev)
		case <-deadline:
			t.Fatalf("timed out; events so far: %+v", got)
		}
	}
	return got
}

func lineCount(n int) func([]Event) bool {
	return func(evs []Event) bool {
		c := 0
		for _, e := range evs {
			if e.Notice == "" {
				c++
			}
		}
		return c >= n
	}
}

func linesOf(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if e.Notice == "" {
			out = append(out, e.Line)
		}
	}
	return out
}

func noticesOf(evs []Event) []string {
	var out []string
	for _, e := range evs {
		if e.Notice != "" {
			out = append(out, e.Notice)
		}
	}
	return out
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestFileWaitsForFileThenFollowsReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, result := run(t, ctx, &File{Path: path, Poll: 2 * time.Millisecond})

	first := collect(t, events, func(evs []Event) bool { return len(evs) > 0 })
	steps := fakesglang.CleanStart()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fakesglang.Replay(ctx, f, steps, 2000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got := append(first, collect(t, events, lineCount(len(steps)))...)
	if diff := cmp.Diff(fakesglang.Lines(steps), linesOf(got)); diff != "" {
		t.Errorf("lines mismatch (-want +got):\n%s", diff)
	}
	notices := noticesOf(got)
	if len(notices) < 1 || !strings.Contains(notices[0], "waiting for") {
		t.Errorf("notices = %q, want a 'waiting for' first", notices)
	}
	cancel()
	if err := <-result; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}

// A server's own log (Server.Run) that the server wrote to before the
// first look holds this run's lines, not an earlier run's: no warning.
func TestFileOwnLogNoEarlierRunNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendFile(t, path, "started\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := run(t, ctx, &File{Path: path, Poll: 2 * time.Millisecond, own: true})
	if n := noticesOf(collect(t, events, lineCount(1))); len(n) != 0 {
		t.Errorf("notices = %q, want none for the server's own log", n)
	}
}

// A named pipe where the log file should be (one that took a missing
// file's place after mlagen watch checked --log) ends the source at once,
// saying what it is: opened for reading the usual way it would wait for a
// writer past every time-out.
func TestFileNamedPipeIsLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, result := run(t, context.Background(), &File{Path: path, Poll: 2 * time.Millisecond})
	var err error
	select {
	case err = <-result:
	case <-time.After(5 * time.Second):
		t.Fatal("the file source still waits on a named pipe after 5s")
	}
	var lost *LostError
	if !errors.As(err, &lost) || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), path+" is a named pipe: not a regular file") {
		t.Errorf("Run = %v, want a *LostError saying %s is a named pipe", err, path)
	}
}

func TestFileTruncation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendFile(t, path, "old 1\nold 2\nold 3\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := run(t, ctx, &File{Path: path, Poll: 2 * time.Millisecond})
	first := collect(t, events, lineCount(3))
	if n := noticesOf(first); len(n) != 1 || !strings.Contains(n[0], "already holds 18 bytes") {
		t.Errorf("notices = %q, want one saying the file already held content", n)
	}

	// A restart with "> log": the file is emptied, then written anew.
	if err := os.WriteFile(path, []byte("new 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := collect(t, events, lineCount(1))
	if diff := cmp.Diff([]string{"new 1"}, linesOf(got)); diff != "" {
		t.Errorf("lines after truncation (-want +got):\n%s", diff)
	}
	if len(got) == 0 || !got[0].Restarted || !strings.Contains(got[0].Notice, "truncated") {
		t.Errorf("first event after truncation = %+v, want a truncation notice", got)
	}
}

func TestFileRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	appendFile(t, path, "a 1\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := run(t, ctx, &File{Path: path, Poll: 2 * time.Millisecond})
	collect(t, events, lineCount(1))

	// logrotate renames the file; the server keeps writing to its old
	// descriptor for a moment (here: a line without newline yet), then the
	// new file appears.
	old, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	old.WriteString("a 2\na 3 (no newline)")
	old.Close()
	got := collect(t, events, func(evs []Event) bool {
		return len(noticesOf(evs)) > 0 && lineCount(1)(evs)
	})
	appendFile(t, path, "b 1\nb 2\n")
	got = append(got, collect(t, events, func(evs []Event) bool {
		return lineCount(4)(append(got, evs...))
	})...)
	if diff := cmp.Diff([]string{"a 2", "a 3 (no newline)", "b 1", "b 2"}, linesOf(got)); diff != "" {
		t.Errorf("lines across rotation (-want +got):\n%s", diff)
	}
	n := noticesOf(got)
	if len(n) != 2 || !strings.Contains(n[0], "renamed or removed") || !strings.Contains(n[1], "rotated") {
		t.Errorf("notices = %q, want 'renamed or removed' then 'rotated'", n)
	}
}

func TestFileOffsetEndSkipsOldContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendFile(t, path, "[2026-06-17 22:07:39] The server is fired up and ready to roll!\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := run(t, ctx, &File{Path: path, Poll: 2 * time.Millisecond, Offset: -1})
	time.Sleep(10 * time.Millisecond)
	appendFile(t, path, "fresh\n")
	got := collect(t, events, lineCount(1))
	if diff := cmp.Diff([]string{"fresh"}, linesOf(got)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestCommandFailsAtOnce(t *testing.T) {
	ctx := context.Background()
	events, result := run(t, ctx, &Command{Line: `echo "ssh: connect to host 10.1.230.171 port 22: Connection refused" >&2; exit 255`})
	var err error
	select {
	case err = <-result:
	case <-time.After(5 * time.Second):
		t.Fatal("command source did not end")
	}
	var lost *LostError
	if !errors.As(err, &lost) {
		t.Fatalf("Run = %v, want a *LostError", err)
	}
	if !strings.Contains(err.Error(), "exit status 255") || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("error %q should name the status and the stderr", err)
	}
	if len(events) != 0 {
		t.Errorf("got %d events from a command that printed nothing", len(events))
	}
}

func TestCommandDiesMidway(t *testing.T) {
	ctx := context.Background()
	events, result := run(t, ctx, &Command{Line: `printf 'line 1\nline 2\n'; sleep 0.02; printf 'line 3'; exit 0`})
	err := <-result
	var lost *LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "status 0") {
		t.Fatalf("Run = %v, want a *LostError saying it ended with status 0", err)
	}
	got := collect(t, events, lineCount(3))
	if diff := cmp.Diff([]string{"line 1", "line 2", "line 3"}, linesOf(got)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// stopTook starts line, cancels it once it has printed its first line, and
// says how long the command source took to end.
func stopTook(t *testing.T, line string, grace time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	events, result := run(t, ctx, &Command{Line: line, Grace: grace})
	collect(t, events, lineCount(1))
	t0 := time.Now()
	cancel()
	if err := <-result; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	return time.Since(t0)
}

func TestCommandStopsWithContext(t *testing.T) {
	if d := stopTook(t, `echo up; sleep 30`, time.Second); d > 900*time.Millisecond {
		t.Errorf("stopping took %s; the sleep should have been signalled at once", d)
	}
}

// A member that joins the group after its SIGTERM (here, the one the
// leader starts on SIGTERM; in life, the child a shell forks as the signal
// goes out) is sent one of its own, not left for the grace period's SIGKILL.
func TestCommandStopsALateMember(t *testing.T) {
	line := `trap 'sleep 30 & wait; exit 0' TERM; echo up; while :; do sleep 0.01; done`
	if d := stopTook(t, line, 5*time.Second); d > 2*time.Second {
		t.Errorf("stopping took %s; the sleep started after the SIGTERM should have had one of its own", d)
	}
}

// A member of a stopping group that runs another program after its
// SIGTERM is sent one more (in life, a shell's child caught between fork
// and exec, whose shell's handler takes the signal): the program never saw
// the first. Here the late member is a shell that traps SIGTERM and execs a
// sleep afterwards.
func TestCommandStopsALateMemberThatExecs(t *testing.T) {
	line := `trap 'sh -c "trap : TERM; sleep 0.3; exec sleep 30" & wait; exit 0' TERM; echo up; while :; do sleep 0.01; done`
	if d := stopTook(t, line, 5*time.Second); d > 2*time.Second {
		t.Errorf("stopping took %s; the sleep the late member exec'd should have had a SIGTERM of its own", d)
	}
}

// What a stopping group is told apart by, read from /proc/<pid>/stat
// lines as Linux writes them.
func TestParseStat(t *testing.T) {
	// A dash child between fork and exec, then the sleep it became.
	shell := "21019 (sh) R 21017 21017 19055 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 7351914 2654208 0 18446744073709551615 94430994788352 94430994865081 140732678421120 0 0 0 0 0 81922 0 0 0 17 1 0 0 0 0 0 94430994894384 94430994899520 94431967014912 140732678425175 140732678425256 140732678425256 140732678426604 0\n"
	sleep := "21019 (sleep) S 21017 21017 19055 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 7351911 2990080 419 18446744073709551615 94363807633408 94363807651337 140733683484048 0 0 0 0 6 0 1 0 0 17 0 0 0 0 0 0 94363807665424 94363807666688 94364627394560 140733683489436 140733683489445 140733683489445 140733683490793 0\n"
	for _, tt := range []struct {
		name, stat string
		pgid       int
		want       member
		ok         bool
	}{
		{"shell", shell, 21017, member{pid: 21019, image: image{"sh", 94430994788352}}, true},
		{"sleep", sleep, 21017, member{pid: 21019, image: image{"sleep", 94363807633408}}, true},
		{"other group", shell, 21016, member{}, false},
		{"zombie", strings.Replace(sleep, ") S ", ") Z ", 1), 21017, member{}, false},
		{"comm with ') '", strings.Replace(sleep, "(sleep)", "(a) S 1 2 b)", 1), 21017, member{pid: 21019, image: image{"a) S 1 2 b", 94363807633408}}, true},
		{"cut short", "21019 (sh) R 21017 21017", 21017, member{pid: 21019, image: image{name: "sh"}}, true},
		{"no comm", "21019 sh R 21017 21017", 21017, member{}, false},
	} {
		got, ok := parseStat(21019, tt.stat, tt.pgid)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: parseStat = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// When a member counts as running another program than it did.
func TestImageSame(t *testing.T) {
	for _, tt := range []struct {
		a, b image
		want bool
	}{
		{image{"sleep", 94363807633408}, image{"sleep", 94363807633408}, true},
		{image{"sh", 94430994788352}, image{"sleep", 94363807633408}, false},
		{image{"sh", 94430994788352}, image{"sh", 94195381760000}, false}, // a shell that exec'd a shell
		{image{"python3", 94430994788352}, image{"python3", 0}, true},     // made itself undumpable
		{image{name: "sh"}, image{"sleep", 94363807633408}, false},
	} {
		if got := tt.a.same(tt.b); got != tt.want {
			t.Errorf("%+v.same(%+v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := tt.b.same(tt.a); got != tt.want {
			t.Errorf("%+v.same(%+v) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestServerExitsBeforeReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendFile(t, path, "an earlier run\n")
	srv := &Server{
		Argv:    []string{"sh", "-c", `echo "gate=$SGLANG_SM120_MMA_FLASHMLA"; echo "[2026-06-17 22:06:31 TP0] Load weight begin. avail mem=93.71 GB" >&2; exit 3`},
		Env:     []string{"SGLANG_SM120_MMA_FLASHMLA=1"},
		LogPath: path,
		Poll:    2 * time.Millisecond,
	}
	events, result := run(t, context.Background(), srv)
	var err error
	select {
	case err = <-result:
	case <-time.After(5 * time.Second):
		t.Fatal("server source did not end")
	}
	var exit *ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Run = %v, want an *ExitError with status 3", err)
	}
	got := collect(t, events, lineCount(2))
	want := []string{"gate=1", "[2026-06-17 22:06:31 TP0] Load weight begin. avail mem=93.71 GB"}
	if diff := cmp.Diff(want, linesOf(got)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "an earlier run\ngate=1\n") {
		t.Errorf("log file = %q; the earlier run must be kept and this one appended", data)
	}
	if msg := srv.Stop(); !strings.Contains(msg, "already exited") {
		t.Errorf("Stop after exit = %q", msg)
	}
}

func TestServerStop(t *testing.T) {
	for _, tt := range []struct {
		name, script, want string
	}{
		{"term", `echo up; exec sleep 30`, "on SIGTERM"},
		{"kill", `trap "" TERM; echo up; while :; do sleep 0.01; done`, "on SIGKILL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			srv := &Server{Argv: []string{"sh", "-c", tt.script}, LogPath: path, Poll: 2 * time.Millisecond, Grace: 100 * time.Millisecond}
			ctx, cancel := context.WithCancel(context.Background())
			events, result := run(t, ctx, srv)
			collect(t, events, lineCount(1))
			cancel()
			if err := <-result; err != nil {
				t.Fatalf("Run after cancel = %v, want nil (the server runs on)", err)
			}
			pid := srv.Pid()
			msg := srv.Stop()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("Stop = %q, want it to say %q", msg, tt.want)
			}
			// Nothing of the group is left running. (Killed children may
			// linger as zombies until init reaps them; they run nothing.)
			if live := liveMembers(pid); len(live) > 0 {
				t.Errorf("process group %d still runs after Stop: %v", pid, live)
			}
		})
	}
}

// killGroupAtEnd makes sure that nothing of the server's process group
// outlives the test, whatever the test found.
func killGroupAtEnd(t *testing.T, srv *Server) {
	t.Cleanup(func() {
		if pid := srv.Pid(); pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
}

// cpuTime is the CPU time this process has used so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A server whose leader exits before the watch stops it, leaving a child
// running (as SGLang's scheduler outlives a launcher that died): Stop does
// not stop at "had already exited" but ends the child too, says so, and
// waits out the grace period without spinning.
func TestServerStopAfterLeaderExitedEndsItsGroup(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		want         []string
	}{
		{"term", `sleep 30 & echo child up; exit 3`,
			[]string{"had already exited; 1 other process (pid ", ") of its group was still running: it exited on SIGTERM after "}},
		// The child ignores SIGTERM, and so does the sleep it becomes (an
		// ignored signal stays ignored across exec); it says it is up once
		// the trap is set, and the leader waits for that in the log ($0)
		// before it exits.
		{"kill", `(trap "" TERM; echo child up; exec sleep 30) & until grep -q "child up" "$0"; do sleep 0.01; done; exit 3`,
			[]string{"had already exited; 1 other process (pid ", ") of its group was still running: it ignored SIGTERM for the 500ms grace period and was sent SIGKILL"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			grace := 500 * time.Millisecond
			srv := &Server{Argv: []string{"sh", "-c", tt.script, path}, LogPath: path, Poll: 2 * time.Millisecond, Grace: grace}
			killGroupAtEnd(t, srv)
			events, result := run(t, context.Background(), srv)
			collect(t, events, lineCount(1))
			select {
			case err := <-result:
				var exit *ExitError
				if !errors.As(err, &exit) {
					t.Fatalf("Run = %v, want an *ExitError", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the server's leader did not exit")
			}
			pid := srv.Pid()
			if live := liveMembers(pid); len(live) != 1 {
				t.Fatalf("process group %d runs %v after the leader's exit, want the child alone", pid, live)
			}
			cpu0 := cpuTime(t)
			msg := srv.Stop()
			if cpu := cpuTime(t) - cpu0; cpu > grace/2 {
				t.Errorf("Stop used %s of CPU time within a %s grace period: it should poll, not spin", cpu, grace)
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("Stop = %q, want it to say %q", msg, want)
				}
			}
			if live := liveMembers(pid); len(live) > 0 {
				t.Errorf("process group %d still runs after Stop: %v", pid, live)
			}
		})
	}
}

// A server whose leader exits on SIGTERM but whose child ignores it: the
// child is not left behind, and Stop says what exited on which signal.
func TestServerStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	// The subshell ignores SIGTERM, and so does everything it runs; it says
	// so once the trap is set, and the leader waits for it.
	script := `(trap "" TERM; echo child up; while :; do sleep 0.01; done) & wait`
	srv := &Server{Argv: []string{"sh", "-c", script}, LogPath: path, Poll: 2 * time.Millisecond, Grace: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	events, result := run(t, ctx, srv)
	collect(t, events, lineCount(1))
	cancel()
	if err := <-result; err != nil {
		t.Fatalf("Run after cancel = %v, want nil (the server runs on)", err)
	}
	pid := srv.Pid()
	msg := srv.Stop()
	for _, want := range []string{"it exited on SIGTERM, but ", " other process", "ignored SIGTERM for the 100ms grace period and w", "sent SIGKILL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stop = %q, want it to say %q", msg, want)
		}
	}
	if live := liveMembers(pid); len(live) > 0 {
		t.Errorf("process group %d still runs after Stop: %v", pid, live)
	}
}

// The follower is stepped by hand here, so that "within one poll" is exact:
// the log is emptied and written again, longer than before, between two
// looks. The new start (a CUDA error) is read from its first line.
func TestFileRewrittenPastItsOldSizeWithinOnePoll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	old := fakesglang.Lines(fakesglang.Head())[:3]
	appendFile(t, path, strings.Join(old, "\n")+"\n")
	out := make(chan Event, 1024)
	fl := &follower{File: &File{Path: path}, out: out}
	defer fl.close()
	ctx := context.Background()
	if err := fl.step(ctx); err != nil {
		t.Fatal(err)
	}
	drain := func() []Event {
		var evs []Event
		for {
			select {
			case ev := <-out:
				evs = append(evs, ev)
			default:
				return evs
			}
		}
	}
	if got := linesOf(drain()); len(got) != 3 {
		t.Fatalf("first look read %q, want the 3 old lines", got)
	}

	fresh := fakesglang.FailureText("cuda")
	if err := os.WriteFile(path, []byte(strings.Join(fresh, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() <= int64(len(strings.Join(old, "\n"))+1) {
		t.Fatalf("the rewritten log (%d bytes) must be longer than the old one", st.Size())
	}
	if err := fl.step(ctx); err != nil {
		t.Fatal(err)
	}
	evs := drain()
	if diff := cmp.Diff(fresh, linesOf(evs)); diff != "" {
		t.Errorf("lines after the rewrite (-want +got):\n%s", diff)
	}
	if len(evs) == 0 || !evs[0].Restarted || !strings.Contains(evs[0].Notice, "written again") {
		t.Errorf("first event after the rewrite = %+v, want a restart notice", evs)
	}

	// Appending is not a rewrite.
	appendFile(t, path, "[2026-06-17 22:07:10 TP0] more\n")
	if err := fl.step(ctx); err != nil {
		t.Fatal(err)
	}
	evs = drain()
	if diff := cmp.Diff([]string{"[2026-06-17 22:07:10 TP0] more"}, linesOf(evs)); diff != "" || len(noticesOf(evs)) != 0 {
		t.Errorf("after an append: events %+v", evs)
	}
}

// The same with a log followed from its end (--from-end): the skipped
// start is what tells the rewrite apart.
func TestFileFromEndNoticesARewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	appendFile(t, path, "an earlier run's line\n")
	out := make(chan Event, 64)
	fl := &follower{File: &File{Path: path, Offset: -1}, out: out}
	defer fl.close()
	ctx := context.Background()
	if err := fl.step(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("a new run, longer than the old one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fl.step(ctx); err != nil {
		t.Fatal(err)
	}
	close(out)
	var evs []Event
	for ev := range out {
		evs = append(evs, ev)
	}
	if diff := cmp.Diff([]string{"a new run, longer than the old one"}, linesOf(evs)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// A phrase that straddles the line cap is whole in the continuation piece,
// which repeats the end of the piece before it.
func TestLineCapKeepsAPhraseWhole(t *testing.T) {
	ready := "[2026-06-17 22:07:39] The server is fired up and ready to roll!"
	for _, cut := range []int{1, 10, len(ready) / 2, len(ready) - 1} {
		// The line goes on past the phrase: a reader sees no newline
		// before the cap.
		line := strings.Repeat("#", maxLine-cut) + ready + strings.Repeat("=", 100<<10)
		var got []Event
		var s lineSplitter
		emit := func(ev Event) bool { got = append(got, ev); return true }
		data := []byte(line + "\nnext\n")
		// In small reads, as a pipe delivers them.
		for len(data) > 0 {
			n := min(len(data), 4096)
			s.feed(data[:n], emit)
			data = data[n:]
		}
		s.flush(emit)
		if len(got) != 3 {
			t.Fatalf("cut %d: %d events, want 3 (two pieces, then the next line)", cut, len(got))
		}
		if got[0].Continued || !got[1].Continued || got[2].Continued {
			t.Errorf("cut %d: Continued = %v %v %v, want false true false", cut, got[0].Continued, got[1].Continued, got[2].Continued)
		}
		if strings.Contains(got[0].Line, ready) || !strings.Contains(got[1].Line, ready) {
			t.Errorf("cut %d: the phrase is not whole in the second piece", cut)
		}
		if len(got[0].Line) != maxLine || len(got[1].Line) != len(line)-maxLine+lineOverlap {
			t.Errorf("cut %d: pieces of %d and %d bytes", cut, len(got[0].Line), len(got[1].Line))
		}
		if got[2].Line != "next" {
			t.Errorf("cut %d: then %q, want \"next\"", cut, got[2].Line)
		}
	}
	// A line cut exactly at the cap with nothing after it yields no
	// empty piece that repeats the overlap.
	var got []Event
	var s lineSplitter
	s.feed([]byte(strings.Repeat("#", maxLine+1)), func(ev Event) bool { got = append(got, ev); return true })
	s.feed([]byte("\n\n"), func(ev Event) bool { got = append(got, ev); return true })
	if len(got) != 3 || got[1].Line != strings.Repeat("#", lineOverlap+1) || got[2].Line != "" || got[2].Continued {
		t.Errorf("got %d events, want the cut line's two pieces and the empty line after it", len(got))
	}
}

// A command's output is held to the same cap. (How many pieces depends on
// how the pipe delivers the bytes; what they hold does not.)
func TestCommandLongLineInPieces(t *testing.T) {
	ctx := context.Background()
	events, result := run(t, ctx, &Command{Line: `head -c 2100000 /dev/zero | tr '\0' x; echo; echo end`})
	<-result
	var got []Event
	for len(got) == 0 || got[len(got)-1].Line != "end" {
		select {
		case ev := <-events:
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("no \"end\" line after %d events", len(got))
		}
	}
	pieces := got[:len(got)-1]
	total := 0
	for i, p := range pieces {
		if p.Continued != (i > 0) || len(p.Line) > maxLine+64<<10 || strings.Trim(p.Line, "x") != "" {
			t.Errorf("piece %d: continued %v, %d bytes", i, p.Continued, len(p.Line))
		}
		total += len(p.Line)
		if i > 0 {
			total -= lineOverlap
		}
	}
	if len(pieces) < 2 || total != 2100000 {
		t.Errorf("%d pieces holding %d bytes of the line, want at least 2 holding 2100000", len(pieces), total)
	}
}

// What Stop says about the processes a dead leader left behind, in each
// way they can end.
func TestDescribeOrphans(t *testing.T) {
	grace := 10 * time.Second
	for _, tt := range []struct {
		orphans []int
		res     stopped
		want    string
	}{
		{[]int{11}, stopped{leaderExited: true, took: 30 * time.Millisecond},
			"1 other process (pid 11) of its group was still running: it exited on SIGTERM after 0.0s"},
		{[]int{11, 12}, stopped{leaderExited: true, took: 1200 * time.Millisecond},
			"2 other processes (pid 11, 12) of its group were still running: they exited on SIGTERM after 1.2s"},
		{[]int{11, 12}, stopped{leaderExited: true, took: grace, killed: []int{12, 11}},
			"2 other processes (pid 11, 12) of its group were still running: they ignored SIGTERM for the 10s grace period and were sent SIGKILL"},
		{[]int{11, 12, 13}, stopped{leaderExited: true, took: grace, killed: []int{13}},
			"3 other processes (pid 11, 12, 13) of its group were still running: 1 process (pid 13) ignored SIGTERM for the 10s grace period and was sent SIGKILL, the others exited on SIGTERM"},
		{[]int{11, 12}, stopped{leaderExited: true, took: grace, killed: []int{12}, remain: []int{12}},
			"2 other processes (pid 11, 12) of its group were still running: 1 process (pid 12) ignored SIGTERM for the 10s grace period and was sent SIGKILL, the other exited on SIGTERM; 1 process (pid 12) still runs after SIGKILL (stuck in the kernel?): see pgrep -a -g 10"},
	} {
		if got := tt.res.describeOrphans(tt.orphans, 10, grace); got != tt.want {
			t.Errorf("describeOrphans(%v, %+v) =\n  %q\nwant\n  %q", tt.orphans, tt.res, got, tt.want)
		}
	}
}
