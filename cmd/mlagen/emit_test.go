package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/gen"
)

// runIn runs mlagen with args in dir (the working directory), its writes
// going through hook.
func runIn(t *testing.T, dir string, hook func(changeset.Step) error, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, write: changeset.Options{Hook: hook}}
	code = mainEnv(e, args)
	return code, out.String(), errb.String()
}

// jsonFailure checks that stdout is one JSON object, and nothing else, in
// the shape patch's problem() prints on a failure under --json, and
// returns its error and details.
func jsonFailure(t *testing.T, cmd, stdout string) (msg string, details []string) {
	t.Helper()
	var got errorReport
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not one {command, error, details} object: %v\n%s", err, stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	if got.Command != cmd || got.Error == "" || got.Details == nil || !strings.Contains(stdout, `"details": [`) {
		t.Fatalf("stdout %s: want command %q, an error and a details list", stdout, cmd)
	}
	return got.Error, got.Details
}

// Every failure of emit after its flags, under --json: the exit status, one
// error object on stdout (patch's shape), the human text on stderr; a
// mistake in the flags too, as for every command (cli_test.go).
func TestEmitJSONFailures(t *testing.T) {
	sweep := []string{"emit", "--target", "sm_120", "--block-h", "16", "--block-t", "16", "--split-k", "1", "--num-warps", "8", "--num-stages", "1", "--pp-split-k", "none"}
	sm120, err := gen.LookupTarget("sm_120")
	if err != nil {
		t.Fatal(err)
	}
	sel, ok, err := gen.MeasuredSelection(sm120)
	if err != nil || !ok {
		t.Fatalf("no measured selection to test with: %v", err)
	}
	selData, err := gen.MarshalSelection(sel)
	if err != nil {
		t.Fatal(err)
	}
	failFirst := func(changeset.Step) error { return errors.New("injected failure") }
	for _, c := range []struct {
		name    string
		files   map[string]string
		hook    func(changeset.Step) error
		args    []string
		code    int
		errHas  string
		details string
	}{
		{name: "refused file", files: map[string]string{"mine/harness.py": "# mine\n"}, args: append(sweep, "--kernels", "mine"),
			code: exitFail, errHas: "mine: nothing written", details: "mine/harness.py exists and is not mlagen's"},
		{name: "failed write", hook: failFirst, args: append(sweep, "--kernels", "k"),
			code: exitFail, errHas: "injected failure"},
		{name: "kernels is a file", files: map[string]string{"afile": "x"}, args: append(sweep, "--kernels", "afile"),
			code: exitUsage, errHas: "afile is a file, not a directory"},
		{name: "kernels under a file", files: map[string]string{"afile": "x"}, args: append(sweep, "--kernels", "afile/x"),
			code: exitUsage, errHas: "afile/x: afile is a file, not a directory"},
		{name: "selection unreadable", args: append(sweep, "--kernels", "k", "--selection", "nope.json"),
			code: exitUsage, errHas: "--selection nope.json: open nope.json"},
		{name: "selection malformed", files: map[string]string{"bad.json": "{"}, args: append(sweep, "--kernels", "k", "--selection", "bad.json"),
			code: exitUsage, errHas: "--selection bad.json: not a selection"},
		{name: "selection the sweep does not fit", files: map[string]string{"sel.json": string(selData)}, args: append(sweep, "--kernels", "k", "--selection", "sel.json"),
			code: exitFail, errHas: "which is not a fitting variant of this sweep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range c.files {
				p := filepath.Join(dir, name)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(data), 0o644))
			}
			code, stdout, stderr := runIn(t, dir, c.hook, append(c.args, "--json")...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			msg, details := jsonFailure(t, "emit", stdout)
			if !strings.Contains(msg, c.errHas) {
				t.Errorf("error %q does not say %q", msg, c.errHas)
			}
			if c.details != "" && (len(details) == 0 || !strings.Contains(strings.Join(details, "\n"), c.details)) {
				t.Errorf("details %q do not say %q", details, c.details)
			}
			if !strings.HasPrefix(stderr, "mlagen emit: ") || !strings.Contains(stderr, c.errHas) {
				t.Errorf("stderr %q: want the error in words", stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "k")); err == nil {
				t.Errorf("k was written")
			}
			// Without --json: the same on stderr, nothing on stdout.
			if code, stdout, _ := runIn(t, dir, c.hook, c.args...); code != c.code || strings.Contains(stdout, `"error"`) {
				t.Errorf("without --json: exit %d, stdout %q", code, stdout)
			}
		})
	}
	t.Run("flag mistake", func(t *testing.T) {
		code, stdout, stderr := runIn(t, t.TempDir(), nil, "emit", "--json", "--block-h", "8")
		if code != exitUsage || !strings.Contains(stderr, "BLOCK_H=8") {
			t.Errorf("exit %d, stderr %q; want 2 and the flag's mistake", code, stderr)
		}
		if msg, _ := jsonFailure(t, "emit", stdout); !strings.Contains(msg, "BLOCK_H=8") {
			t.Errorf("error %q does not name the mistake", msg)
		}
	})
}

// The help's "Triton kernels only" example writes no Gluon kernel: every
// warp-specialised family (ws_*, wsc_*, ws_h16_*) is left out.
func TestEmitTritonOnlyExample(t *testing.T) {
	var ex string
	for line := range strings.SplitSeq(strings.ReplaceAll(emitUsage, "\\\n", ""), "\n") {
		if before, ok := strings.CutSuffix(strings.TrimSpace(line), "# Triton kernels only"); ok {
			ex = strings.Join(strings.Fields(before), " ")
		}
	}
	args, ok := strings.CutPrefix(ex, "mlagen ")
	if !ok {
		t.Fatalf("emit's help has no \"# Triton kernels only\" example")
	}
	t.Logf("running %s", ex)
	dir := t.TempDir()
	if code, _, stderr := runIn(t, dir, nil, strings.Fields(args)...); code != exitOK {
		t.Fatalf("%s: exit %d: %s", ex, code, stderr)
	}
	out := strings.Fields(args)[len(strings.Fields(args))-1]
	bundle, err := os.ReadFile(filepath.Join(dir, out, gen.BundleFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range []string{`"ws_`, `"wsc_`, "gluon"} {
		if bytes.Contains(bundle, []byte(family)) {
			t.Errorf("%s: %s holds %s: not Triton kernels only", ex, gen.BundleFile, family)
		}
	}
}

// The --selection path goes into a generated file's header as one word of
// the command that regenerates it: whatever the path, the header stays one
// comment line of UTF-8, and the word reads back as the path in bash.
func TestShellWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gpu/results/sm120.json", "gpu/results/sm120.json"},
		{"my card.json", "'my card.json'"},
		{"it's.json", `'it'\''s.json'`},
		{"", "''"},
		{"card\nimport os.json", `$'card\x0aimport os.json'`},
		{"a'\\b\x07.json", `$'a\'\\b\x07.json'`},
		{"caf\xe9.json", `$'caf\xe9.json'`},
		{"café.json", "'café.json'"},
	} {
		if got := shellWord(c.in); got != c.want {
			t.Errorf("shellWord(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
