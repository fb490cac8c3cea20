package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/pflag"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/watch"
	"github.com/mlagen/mlagen/watch/fakesglang"
)

func init() {
	scriptCmds["fakesglang"] = scriptFakeSGLang
	scriptCmds["sglanglog"] = scriptSGLangLog
	scriptCmds["waitpids"] = scriptWaitPids
	scriptCmds["signalpid"] = scriptSignalPid
	scriptCmds["groupgone"] = scriptGroupGone
	scriptCmds["killgroupatend"] = scriptKillGroupAtEnd
}

// scriptFakeSGLang starts a fake SGLang HTTP server on 127.0.0.1 for the
// rest of the script and puts its address in $SGLANG_URL.
//
//	fakesglang [health=CODE] [answer=TEXT]
func scriptFakeSGLang(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! fakesglang")
	}
	s := fakesglang.NewServer()
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "health":
			code, err := strconv.Atoi(v)
			ts.Check(err)
			s.HealthStatus = code
		case "answer":
			s.Answer = v
		default:
			ts.Fatalf("fakesglang: unknown argument %q", a)
		}
	}
	srv := httptest.NewServer(s)
	ts.Defer(srv.Close)
	ts.Setenv("SGLANG_URL", srv.URL)
}

// scriptSGLangLog writes one of the fake SGLang logs to a file: kernel and
// fallback are clean starts with the kernel module's lines (it ran, it
// declined), coloured-clean the clean start as a colouring formatter
// writes it, named the clean start in the words of the releases with
// DeepSeek-V4 (each graph capture named).
//
//	sglanglog clean|named|kernel|fallback|coloured-clean|stalled|head|fail-KIND FILE
func scriptSGLangLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sglanglog clean|named|kernel|fallback|coloured-clean|stalled|head|fail-KIND FILE")
	}
	var steps []fakesglang.Step
	switch name := args[0]; {
	case name == "clean":
		steps = fakesglang.CleanStart()
	case name == "named":
		steps = fakesglang.NamedStart()
	case name == "kernel":
		steps = fakesglang.KernelStart()
	case name == "fallback":
		steps = fakesglang.FallbackStart()
	case name == "coloured-clean":
		steps = fakesglang.Coloured(fakesglang.CleanStart())
	case name == "stalled":
		steps = fakesglang.Stalled()
	case name == "head":
		steps = fakesglang.Head()
	case strings.HasPrefix(name, "fail-"):
		steps = fakesglang.FailingStart(strings.TrimPrefix(name, "fail-"))
	default:
		ts.Fatalf("sglanglog: unknown log %q", name)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(fakesglang.Text(steps)), 0o644))
}

// pidsFrom reads field n (1-based) of a file of pids that a test server
// wrote ("echo $$ $PPID > pids": the server, then mlagen that started it).
func pidsFrom(ts *testscript.TestScript, file, field string) int {
	n, err := strconv.Atoi(field)
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	f := strings.Fields(string(data))
	if n < 1 || n > len(f) {
		ts.Fatalf("%s has no field %d: %q", file, n, data)
	}
	pid, err := strconv.Atoi(f[n-1])
	ts.Check(err)
	return pid
}

// scriptWaitPids waits until a test server has written its pids file (a
// line ending in a newline). It is a wait for an event, bounded only so
// that a broken test ends.
//
//	waitpids FILE
func scriptWaitPids(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitpids FILE")
	}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if data, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && strings.HasSuffix(string(data), "\n") {
			return
		}
	}
	ts.Fatalf("%s was never written", args[0])
}

// scriptSignalPid sends a signal, COUNT times in a row, to the process
// named in field FIELD of a pids file: as a closed terminal sends SIGHUP to
// mlagen (the kernel and the shell each send one).
//
//	signalpid HUP|TERM|INT FILE FIELD [COUNT]
func scriptSignalPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: signalpid HUP|TERM|INT FILE FIELD [COUNT]")
	}
	sig := map[string]syscall.Signal{"HUP": syscall.SIGHUP, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %q", args[0])
	}
	count := 1
	if len(args) == 4 {
		var err error
		count, err = strconv.Atoi(args[3])
		ts.Check(err)
	}
	pid := pidsFrom(ts, args[1], args[2])
	for i := 0; i < count; i++ {
		if err := syscall.Kill(pid, sig); err != nil && (i == 0 || err != syscall.ESRCH) {
			ts.Fatalf("kill -%s %d: %v", args[0], pid, err)
		}
	}
}

// scriptGroupGone checks that nothing of the process group named in a pids
// file still runs (zombies waiting to be reaped do not count).
//
//	groupgone FILE FIELD
func scriptGroupGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: groupgone FILE FIELD")
	}
	pgid := pidsFrom(ts, args[0], args[1])
	ents, err := os.ReadDir("/proc")
	ts.Check(err)
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(st[i+1:]); len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			ts.Fatalf("process group %d still runs: %s", pgid, st[:i+1])
		}
	}
}

// scriptKillGroupAtEnd makes sure that the process group named in a pids
// file (written later, by a test server) does not outlive the script, even
// when the script fails before it checks that the group is gone.
//
//	killgroupatend FILE FIELD
func scriptKillGroupAtEnd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: killgroupatend FILE FIELD")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	ts.Defer(func() {
		data, err := os.ReadFile(path)
		if err != nil {
			return // never written: nothing was started
		}
		if f := strings.Fields(string(data)); n >= 1 && n <= len(f) {
			if pgid, err := strconv.Atoi(f[n-1]); err == nil && pgid > 1 {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	})
}

// runWatchArgs runs "mlagen watch ARGS" in-process and returns its exit
// status, stdout and stderr.
func runWatchArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := mainEnv(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, append([]string{"watch"}, args...))
	return code, out.String(), errb.String()
}

func TestWatchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{}"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no log to watch"},
		{[]string{"--log", "x", "--cmd", "tail -F x"}, "give only one of"},
		{[]string{"--cmd", "c", "--", "python3", "-m", "sglang.launch_server"}, "give only one of"},
		{[]string{"--log", "x", "--env", "A=1"}, "--env only applies"},
		{[]string{"--env", "=1", "--", "sh"}, "is not NAME=VALUE"},
		{[]string{"--log", "x", "stray"}, `unexpected argument "stray"`},
		{[]string{"--log", "x", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--log", "x", "--interval", "-1s"}, "--interval must be positive"},
		{[]string{"--log", "x", "--expect", "a", "--expect-file", "f"}, "not both"},
		{[]string{"--log", "x", "--expect-file", filepath.Join(dir, "missing")}, "--expect-file"},
		{[]string{"--log", "x", "--baseline", bad}, "not a baseline"},
		{[]string{"--log", "x", "--url", "localhost:30000"}, "is not an http(s) URL"},
		{[]string{"--log", "x", "--model", "m"}, "--model only applies with --openai"},
		{[]string{"--cmd", "c", "--from-end"}, "--from-end only applies"},
		{[]string{"--no-such-flag"}, "unknown flag"},
		{[]string{"--", "no-such-server-binary", "--tp", "4"}, "cannot start the server"},
		{[]string{"--log", filepath.Join(dir, "no", "such", "dir", "s.log"), "--", "sh", "-c", "true"}, "cannot write the server log: the folder of "},
		{[]string{"--log", "x", "--max-response-bytes", "0"}, "--max-response-bytes must be positive"},
		{[]string{"--log", "x", "--stop-grace", "1s"}, "--stop-grace only applies"},
		{[]string{"--stop-grace", "0s", "--", "sh"}, "--stop-grace must be positive"},
		{[]string{"--log", "x", "--expect-kernel=maybe"}, "invalid argument"},
		{[]string{"--log", "x", "--api-key-env", "MLAGEN_TEST_NO_SUCH_VAR"}, "--api-key-env MLAGEN_TEST_NO_SUCH_VAR: that environment variable is unset or empty"},
		{[]string{"--log", "x", "--save-baseline", filepath.Join(dir, "typo", "base.json")}, "--save-baseline: the folder of "},
		{[]string{"--log", "x", "--save-answer", dir}, "--save-answer: " + dir + " is a directory, not a file"},
	}
	for _, tt := range tests {
		code, out, errs := runWatchArgs(t, tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("watch %q = exit %d, stdout %q, stderr %q; want 2, nothing on stdout, stderr containing %q", tt.args, code, out, errs, tt.want)
		}
		// The same mistake under --json: the same exit and words, and one
		// error object on stdout.
		args := append([]string{"--json"}, tt.args...)
		code, out, errs = runWatchArgs(t, args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("watch %q = exit %d, stderr %q; want 2, stderr containing %q", args, code, errs, tt.want)
			continue
		}
		if msg, _ := jsonFailure(t, "watch", out); !strings.Contains(msg, tt.want) {
			t.Errorf("watch %q: JSON error %q does not contain %q", args, msg, tt.want)
		}
	}
}

// An existing --log the watch cannot read is an input it cannot use: exit
// 2 before anything starts, with the way round it, not "log source lost"
// (exit 4) from the file source's first open. Root reads any file, so as
// root (CI) the watch runs as nobody, through setpriv, from a copy of this
// test binary, which testscript.Main runs as mlagen under that name.
func TestWatchLogUnreadable(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	if err := os.WriteFile(logPath, []byte("starting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{"--log: cannot read " + logPath + ": permission denied", `--cmd "sudo tail -n +1 -F ` + logPath + `"`}
	check := func(name string, code int, out, errs string, asJSON bool) {
		t.Helper()
		if code != 2 {
			t.Errorf("%s: exit %d, want 2; stdout %q, stderr %q", name, code, out, errs)
		}
		if asJSON != strings.Contains(out, `"error": `) {
			t.Errorf("%s: stdout %q; want an error object exactly with --json", name, out)
		}
		for _, w := range want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q lacks %q", name, errs, w)
			}
		}
	}
	args := []string{"--timeout", "2s", "--log", logPath}
	if os.Geteuid() != 0 {
		if err := os.Chmod(logPath, 0); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runWatchArgs(t, args...)
		check("watch", code, out, errs, false)
		code, out, errs = runWatchArgs(t, append([]string{"--json"}, args...)...)
		check("watch --json", code, out, errs, true)
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("root without setpriv (util-linux): no user to whom the file's mode refuses it")
	}
	// nobody has to reach the log's folder and run the copy: the test's own
	// two folders are opened up, and the rest of the way must be open.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for d := filepath.Dir(filepath.Dir(dir)); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is closed to other users (TMPDIR?): nobody cannot reach the log", d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mlagen")
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		argv := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin, "watch"}, args...)
		if asJSON {
			argv = append(argv, "--json")
		}
		var out, errs bytes.Buffer
		cmd := exec.Command(setpriv, argv...)
		cmd.Stdout, cmd.Stderr = &out, &errs
		code := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		check(strings.Join(argv, " "), code, out.String(), errs.String(), asJSON)
	}
}

// A --log that can never be a log file is bad usage, found before anything
// is started: a directory, or a file in a folder that does not exist (a
// typo that would otherwise only show as a time-out, or as a lost log).
// Each case has a short --timeout so that, without the check, it fails
// quickly with the wrong status instead of hanging.
func TestWatchLogPathChecked(t *testing.T) {
	dir := t.TempDir()
	noFolder := filepath.Join(dir, "typo")
	started := filepath.Join(dir, "started")
	server := []string{"--", "sh", "-c", "touch " + started}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A named pipe: opening it blocks until its other end opens, so a watch
	// that took it would hang (following it) or never start (writing it).
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--log", dir, "--expect-kernel"}, []string{"--log: " + dir + " is a directory, not a log file"}},
		{[]string{"--log", filepath.Join(noFolder, "x.log")}, []string{"--log: the folder of " + filepath.Join(noFolder, "x.log") + ", " + noFolder + ", does not exist (a typo?"}},
		{[]string{"--log", filepath.Join(plain, "x.log")}, []string{"--log: " + filepath.Join(plain, "x.log") + " cannot be a file: " + plain + " is a file, not a directory"}},
		{[]string{"--log", noFolder + "/"}, []string{"--log: " + noFolder + "/ names a folder (it ends in /), not a log file"}},
		{[]string{"--log", pipe}, []string{"--log: " + pipe + " is a named pipe: not a regular file", `--cmd "cat ` + pipe + `"`}},
		{append([]string{"--log", pipe}, server...), []string{"cannot write the server log: " + pipe + " is a named pipe: not a regular file", "leave --log out"}},
		{append([]string{"--log", dir}, server...), []string{"cannot write the server log: " + dir + " is a directory, not a log file"}},
		{append([]string{"--log", filepath.Join(noFolder, "x.log")}, server...), []string{"cannot write the server log: the folder of " + filepath.Join(noFolder, "x.log") + ", " + noFolder + ", does not exist", "not its folder"}},
	}
	for _, tt := range tests {
		args := append([]string{"--timeout", "1s"}, tt.args...)
		code, out, errs := runWatchArgs(t, args...)
		if code != 2 || out != "" {
			t.Errorf("watch %q = exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", args, code, out, errs)
		}
		// With --json the same error is one object on stdout too.
		if code, out, _ := runWatchArgs(t, append([]string{"--json"}, args...)...); code != 2 || !strings.Contains(out, `"command": "watch"`) || !strings.Contains(out, `"error": `) {
			t.Errorf("watch --json %q = exit %d, stdout %q; want 2 and an error object", args, code, out)
		}
		for _, want := range tt.want {
			if !strings.Contains(errs, want) {
				t.Errorf("watch %q: stderr %q lacks %q", args, errs, want)
			}
		}
		if _, err := os.Stat(started); err == nil {
			t.Fatalf("watch %q started the server", args)
		}
		if _, err := os.Stat(noFolder); err == nil {
			t.Fatalf("watch %q created %s", args, noFolder)
		}
	}
}

// A log file that never appears in an existing folder is waited for, and
// the time-out says it never appeared, not that it stayed empty.
func TestWatchLogNeverAppeared(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "server.log")
	code, out, errs := runWatchArgs(t, "--timeout", "1s", "--log", missing)
	if code != 3 || !strings.Contains(out, "TIMEOUT after 1") || !strings.Contains(out, "the log file never appeared") || strings.Contains(out, "stayed empty") {
		t.Errorf("watch --log %s = exit %d\nstdout %s\nstderr %s\nwant 3 and a time-out saying the file never appeared", missing, code, out, errs)
	}
	// Once it exists, empty, the time-out says so.
	if err := os.WriteFile(missing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runWatchArgs(t, "--timeout", "1s", "--log", missing); code != 3 || !strings.Contains(out, "the log stayed empty") {
		t.Errorf("watch --log (empty) = exit %d, stdout %s; want 3 and \"the log stayed empty\"", code, out)
	}
}

func TestWatchHelpTeaches(t *testing.T) {
	code, out, _ := runWatchArgs(t, "--help")
	for _, want := range []string{"Examples:", "mlagen watch --env SGLANG_SM120_MMA_FLASHMLA=1 --log", "--expect-kernel", "--max-response-bytes", "--stop-grace",
		"the MMA kernel never", "SIGHUP", "--save-baseline", "Exit status:", "4    log source lost",
		"but its folder must", "a --log that is a folder"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d, want 0", code)
	}
}

// The help states the watch's waits as numbers; it must say what the
// watch package does.
func TestWatchHelpStatesTheWaits(t *testing.T) {
	_, out, _ := runWatchArgs(t, "--help")
	secs := func(d time.Duration) string { return fmt.Sprintf("%gs", d.Seconds()) }
	for _, want := range []string{
		fmt.Sprintf("read on until it pauses for %s (%s at most)", secs(watch.AnswerPause), secs(watch.AnswerReadMax)),
		fmt.Sprintf("the watch waits up to %s for it", secs(watch.DefaultKernelWait)),
		fmt.Sprintf("gets %s more", secs(watch.DefaultKernelSettle)),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q (the watch package's value)", want)
		}
	}
}

// goodStart is a folder holding a clean start's log, a server that answers
// it well (closed with the test), and where the baseline and the answer
// are saved.
func goodStart(t *testing.T) (dir, logPath string, srv *httptest.Server, base, answer string) {
	dir = t.TempDir()
	logPath = filepath.Join(dir, "server.log")
	os.WriteFile(logPath, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	srv = httptest.NewServer(fakesglang.NewServer())
	t.Cleanup(srv.Close)
	return dir, logPath, srv, filepath.Join(dir, "base.json"), filepath.Join(dir, "answer.txt")
}

// A good start saves its baseline and answer; the next start is held to
// both, and --json reports it.
func TestWatchSaveThenCompare(t *testing.T) {
	dir, logPath, srv, base, answer := goodStart(t)

	code, out, errs := runWatchArgs(t, "--log", logPath, "--url", srv.URL, "--save-baseline", base, "--save-answer", answer)
	if code != 0 {
		t.Fatalf("first watch exit %d\n%s%s", code, out, errs)
	}
	if got, _ := os.ReadFile(answer); string(got) != fakesglang.GoodAnswer {
		t.Errorf("saved answer %q", got)
	}
	code, out, errs = runWatchArgs(t, "--log", logPath, "--url", srv.URL, "--baseline", base, "--expect-file", answer, "--json")
	if code != 0 {
		t.Fatalf("second watch exit %d\n%s%s", code, out, errs)
	}
	var rep struct {
		Outcome  string
		ExitCode int `json:"exit_code"`
		Baseline []struct {
			Phase     string
			Regressed bool
		}
		Smoke struct{ Check string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, out)
	}
	if rep.Outcome != "ready" || len(rep.Baseline) != 3 || rep.Smoke.Check != "equals the saved answer" {
		t.Errorf("report = %+v", rep)
	}
	if !strings.Contains(errs, "READY after") {
		t.Errorf("with --json the progress goes to stderr; got %q", errs)
	}

	// A server that now answers something else fails the saved answer, and
	// nothing is saved from a bad start.
	wrong := httptest.NewServer(&fakesglang.Server{Answer: " Lyon."})
	defer wrong.Close()
	code, out, _ = runWatchArgs(t, "--log", logPath, "--url", wrong.URL, "--expect-file", answer, "--save-baseline", filepath.Join(dir, "never.json"))
	if code != 1 || !strings.Contains(out, "differs from the saved answer") || !strings.Contains(out, "not saving a baseline") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "never.json")); err == nil {
		t.Error("a baseline was saved from a failed start")
	}
}

// The baseline and the answer are written all or nothing: a write that
// fails (or a watch killed) before the rename leaves the files a later
// start is judged by exactly as they were.
func TestWatchSavesAllOrNothing(t *testing.T) {
	dir, logPath, srv, base, answer := goodStart(t)
	os.WriteFile(base, []byte("old baseline"), 0o644)
	os.WriteFile(answer, []byte("old answer"), 0o644)

	var renames int
	failRename := func(s changeset.Step) error {
		if s.Op == changeset.OpRename && !s.Undo {
			renames++
			return errors.New("disk full")
		}
		return nil
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
		write: changeset.Options{Hook: failRename}}
	code := mainEnv(e, []string{"watch", "--log", logPath, "--url", srv.URL, "--save-baseline", base, "--save-answer", answer})
	if code != 1 || renames != 2 {
		t.Errorf("exit %d after %d failed renames, want 1 after 2\n%s%s", code, renames, out.String(), errb.String())
	}
	for _, want := range []string{"saving the baseline", "saving the answer", "disk full"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	for path, want := range map[string]string{base: "old baseline", answer: "old answer"} {
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s holds %q after a failed save, want %q", filepath.Base(path), got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("the failed saves left files behind: %v", names)
	}
}

// A save that fails makes the exit 1; --json says why in its "error", as
// every failing command's object does, not a bare "ready" with exit 1.
func TestWatchSaveFailureInTheJSON(t *testing.T) {
	_, logPath, srv, _, answer := goodStart(t)
	failRename := func(s changeset.Step) error {
		if s.Op == changeset.OpRename && !s.Undo {
			return errors.New("disk full")
		}
		return nil
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
		write: changeset.Options{Hook: failRename}}
	code := mainEnv(e, []string{"watch", "--log", logPath, "--url", srv.URL, "--save-answer", answer, "--json"})
	var rep struct {
		ExitCode int `json:"exit_code"`
		Error    string
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, out.String())
	}
	if code != 1 || rep.ExitCode != 1 || !strings.Contains(rep.Error, "saving the answer") || !strings.Contains(rep.Error, "disk full") {
		t.Errorf("exit %d, report exit %d, error %q; want 1, 1 and the failed save\n%s", code, rep.ExitCode, rep.Error, errb.String())
	}
}

func TestWatchOtherPromptNeedsOwnExpect(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	os.WriteFile(logPath, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	srv := httptest.NewServer(&fakesglang.Server{Answer: " 4"})
	defer srv.Close()
	code, out, _ := runWatchArgs(t, "--log", logPath, "--url", srv.URL, "--prompt", "2+2=")
	if code != 0 || !strings.Contains(out, "only checked to be non-empty") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// When the watch starts the server, the gate in the server's environment
// decides whether the MMA kernel is required; --expect-kernel decides
// either way.
func TestWatchKernelExpectation(t *testing.T) {
	tests := []struct {
		args   []string
		env    string // mlagen's own SGLANG_SM120_MMA_FLASHMLA
		want   bool
		why    string
		notice string
	}{
		{[]string{"--log", "x"}, "1", false, "", ""},
		{[]string{"--log", "x", "--expect-kernel"}, "", true, "--expect-kernel", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=1", "--", "sh"}, "", true, "the server is started with SGLANG_SM120_MMA_FLASHMLA=1 (--env)", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=True", "--", "sh"}, "", true, "the server is started with SGLANG_SM120_MMA_FLASHMLA=True (--env)", ""},
		{[]string{"--", "sh"}, "yes", true, "the server is started with SGLANG_SM120_MMA_FLASHMLA=yes (inherited)", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=0", "--", "sh"}, "1", false, "", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=1", "--env", "SGLANG_SM120_MMA_FLASHMLA=false", "--", "sh"}, "", false, "", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=1", "--expect-kernel=false", "--", "sh"}, "", false, "--expect-kernel", ""},
		{[]string{"--env", "SGLANG_SM120_MMA_FLASHMLA=on", "--", "sh"}, "", false, "", `SGLANG_SM120_MMA_FLASHMLA="on" is not a value SGLang reads as true`},
		{[]string{"--env", "OTHER=1", "--", "sh"}, "", false, "", ""},
	}
	for _, tt := range tests {
		var o watchOpts
		fs := pflag.NewFlagSet("watch", pflag.ContinueOnError)
		fs.StringArrayVar(&o.env, "env", nil, "")
		fs.StringVar(&o.logPath, "log", "", "")
		fs.BoolVar(&o.expectKernel, "expect-kernel", false, "")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if fs.ArgsLenAtDash() == 0 {
			o.server = fs.Args()
		}
		var note bytes.Buffer
		e := &env{getenv: func(k string) string {
			if k == gateVar {
				return tt.env
			}
			return ""
		}}
		got, why := o.kernelExpectation(e, fs, &note)
		if got != tt.want || (got && why != tt.why) || !strings.Contains(note.String(), tt.notice) || (tt.notice == "" && note.Len() > 0) {
			t.Errorf("%q with %s=%q: required %v (%q), note %q; want %v (%q), note %q", tt.args, gateVar, tt.env, got, why, note.String(), tt.want, tt.why, tt.notice)
		}
	}
}

// A server started with --api-key: the key named by --api-key-env goes with
// the smoke request, and without it the verdict says how to give it.
func TestWatchAPIKeyFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	os.WriteFile(logPath, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	fake := fakesglang.NewServer()
	fake.APIKey = "sk-from-env"
	srv := httptest.NewServer(fake)
	defer srv.Close()
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		getenv := func(name string) string {
			if name == "SGLANG_KEY" {
				return "sk-from-env"
			}
			return ""
		}
		code := mainEnv(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: getenv}, append([]string{"watch", "--log", logPath, "--url", srv.URL}, args...))
		return code, out.String() + errb.String()
	}
	if code, out := run(); code != 1 || !strings.Contains(out, "401") || !strings.Contains(out, "--api-key-env") {
		t.Errorf("without the key: exit %d; want 1, a 401 and the flag named:\n%s", code, out)
	}
	if code, out := run("--api-key-env", "SGLANG_KEY"); code != 0 {
		t.Errorf("with --api-key-env SGLANG_KEY: exit %d; want 0:\n%s", code, out)
	}
}
