package main

import (
	"bytes"
	"strings"
	"testing"
)

// What `make build` stamps is what version prints, and a -dirty version
// says the tree had uncommitted changes.
func TestVersionStamped(t *testing.T) {
	defer func(v, c, d string) { version, commit, commitDate = v, c, d }(version, commit, commitDate)
	version, commit, commitDate = "v0.3.0-2-gabc1234-dirty", "abc1234def", "2026-12-01"
	var out, errb bytes.Buffer
	if code := mainEnv(&env{stdout: &out, stderr: &errb}, []string{"version"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"mlagen v0.3.0-2-gabc1234-dirty\n",
		"commit  abc1234def, 2026-12-01, with uncommitted changes\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	version = "v0.3.0"
	out.Reset()
	mainEnv(&env{stdout: &out, stderr: &errb}, []string{"--version"})
	if strings.Contains(out.String(), "uncommitted") {
		t.Errorf("a clean stamped build says it has uncommitted changes:\n%s", out.String())
	}
}

// version reads back the source select writes; anything else stays whole.
func TestSelectionSourceRoundTrip(t *testing.T) {
	s := formatSource("NVIDIA H200", "2.11.0+cu130", "3.6.0", "2026-11-30", "gpu/results/run31-sm90.json")
	got := parseSelectionSource(s)
	want := selectionSource{Source: s, GPU: "NVIDIA H200", Torch: "2.11.0+cu130", Triton: "3.6.0", Date: "2026-11-30", Results: "gpu/results/run31-sm90.json"}
	if got != want {
		t.Errorf("parse(format(...)) = %+v, want %+v", got, want)
	}
	if got := parseSelectionSource("static rule"); got != (selectionSource{Source: "static rule"}) {
		t.Errorf("a source select did not write: %+v", got)
	}
}
