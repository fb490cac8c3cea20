package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mlagen/mlagen/watch/fakesglang"
)

func init() {
	scriptCmds["fakesglang"] = scriptFakeSGLang
	scriptCmds["sglanglog"] = scriptSGLangLog
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

// scriptSGLangLog writes one of the fake SGLang logs to a file.
//
//	sglanglog clean|stalled|head|fail-KIND FILE
func scriptSGLangLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sglanglog clean|stalled|head|fail-KIND FILE")
	}
	var steps []fakesglang.Step
	switch name := args[0]; {
	case name == "clean":
		steps = fakesglang.CleanStart()
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
		{[]string{"--log", filepath.Join(dir, "no", "such", "dir", "s.log"), "--", "sh", "-c", "true"}, "cannot write the server log"},
	}
	for _, tt := range tests {
		code, out, errs := runWatchArgs(t, tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("watch %q = exit %d, stdout %q, stderr %q; want 2, nothing on stdout, stderr containing %q", tt.args, code, out, errs, tt.want)
		}
	}
}

func TestWatchHelpTeaches(t *testing.T) {
	code, out, _ := runWatchArgs(t, "--help")
	for _, want := range []string{"Examples:", "SGLANG_SM120_MMA_FLASHMLA=1", "--save-baseline", "Exit status:", "4    log source lost"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d, want 0", code)
	}
}

// A good start saves its baseline and answer; the next start is held to
// both, and --json reports it.
func TestWatchSaveThenCompare(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "server.log")
	os.WriteFile(logPath, []byte(fakesglang.Text(fakesglang.CleanStart())), 0o644)
	srv := httptest.NewServer(fakesglang.NewServer())
	defer srv.Close()
	base, answer := filepath.Join(dir, "base.json"), filepath.Join(dir, "answer.txt")

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
