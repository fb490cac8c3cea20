package main

import (
	"strings"
	"testing"
)

// A mistake in the flags, on a command line that asks for --json, is one
// error object on stdout beside the words on stderr, for every command
// that has --json, wherever on the line --json is; a line that does not
// ask for it (--json=false, or "--json" read as another flag's value)
// gets nothing on stdout.
func TestJSONFlagMistakes(t *testing.T) {
	tests := []struct {
		args   []string
		report string // "" when stdout must stay empty
		want   string // in the error (and on stderr)
	}{
		{[]string{"budget", "--json", "--no-such-flag"}, "budget", "unknown flag: --no-such-flag"},
		{[]string{"budget", "--no-such-flag", "--json"}, "budget", "unknown flag: --no-such-flag"},
		{[]string{"budget", "--json", "--table"}, "budget", "--json and --table are exclusive"},
		{[]string{"budget", "--json", "extra"}, "budget", `unexpected argument "extra"`},
		{[]string{"budget", "--target", "--json", "--no-such-flag"}, "", "unknown flag"},
		{[]string{"budget", "--json=false", "--no-such-flag"}, "", "unknown flag"},
		{[]string{"budget", "--json", "--no-such-flag", "--json=false"}, "", "unknown flag"},
		{[]string{"emit", "--blok-h", "16", "--json"}, "emit", "did you mean --block-h?"},
		{[]string{"emit", "--json", "--kernels="}, "emit", "--kernels is empty"},
		{[]string{"emit", "--json", "--split-k", "1,x"}, "emit", `"x" is not an integer`},
		{[]string{"emit", "--kernels", "--json", "--blok-h", "16"}, "", "did you mean --block-h?"},
		{[]string{"select", "r.json", "--json", "--heads", "16"}, "select", "--heads is not read"},
		{[]string{"select", "--json", "a.json", "b.json"}, "select", "want exactly one RESULTS.json argument, got 2"},
		{[]string{"patch", "--json", "--check", "--revert", "tree"}, "revert", "--check cannot be combined"},
		{[]string{"patch", "--json", "--no-such-flag", "--revert", "tree"}, "revert", "unknown flag"},
		{[]string{"patch", "tree", "--json", "--target", "sm_75"}, "patch", "--target: "},
		{[]string{"patch", "--json"}, "patch", "want exactly one SGLANG_ROOT, got 0 arguments"},
		{[]string{"patch", "--module", "--json", "--no-such-flag", "tree"}, "", "unknown flag"},
		{[]string{"verify", "-j", "--json", "tree"}, "verify", "unknown shorthand flag: 'j'"},
		{[]string{"verify", "--json", "a", "b"}, "verify", "want exactly one SGLANG_ROOT, got 2 arguments"},
		{[]string{"version", "--json", "extra"}, "version", `unexpected argument "extra"`},
		{[]string{"watch", "--json", "--log"}, "watch", "flag needs an argument: --log"},
		{[]string{"watch", "--log", "--json", "--no-such-flag"}, "", "unknown flag"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runIn(t, t.TempDir(), nil, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("mlagen %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
			continue
		}
		if !strings.Contains(stderr, "--help' for usage") {
			t.Errorf("mlagen %q: stderr %q has no usage hint", tt.args, stderr)
		}
		if tt.report == "" {
			if stdout != "" {
				t.Errorf("mlagen %q: stdout %q; want nothing (no --json asked)", tt.args, stdout)
			}
			continue
		}
		if msg, _ := jsonFailure(t, tt.report, stdout); !strings.Contains(msg, tt.want) {
			t.Errorf("mlagen %q: JSON error %q does not contain %q", tt.args, msg, tt.want)
		}
	}
}
