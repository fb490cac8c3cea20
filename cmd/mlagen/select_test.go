package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlagen/mlagen/changeset"
)

// The measured selections the generator embeds must be exactly what `mlagen
// select` makes of the committed GPU results: nobody edits a table by hand.
func TestSelectReproducesEmbedded(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// Every embedded table, so that none is added by hand.
	tables, err := filepath.Glob(filepath.Join(root, "gen", "selections", "*.json"))
	if err != nil || len(tables) < 5 {
		t.Fatalf("gen/selections: %d tables (%v); want those of sm_80, sm_86, sm_89, sm_90 and sm_120", len(tables), err)
	}
	for _, table := range tables {
		dir := strings.TrimSuffix(filepath.Base(table), ".json")
		results := "gpu/results/selection-input-" + dir + ".json"
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		// select records the results path as given; run it as the README
		// does, from the repository root.
		t.Chdir(root)
		code := mainEnv(&env{stdout: &stdout, stderr: &stderr, getenv: os.Getenv}, []string{"select", "--out", out, results})
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", dir, code, stderr.String())
		}
		got, err := os.ReadFile(filepath.Join(out, dir+".json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(table)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("gen/selections/%s.json differs from what 'mlagen select %s' writes", dir, results)
		}
	}
}

// Harness results for select's failure tests: the sweep of selectSweep
// timed at every required shape, on "Fake GPU" under Triton 3.6.0.
const selectResults = `{"target": "sm_120", "gpu": "Fake GPU", "torch": "2.11", "triton": "3.6.0", "date": "2026-11-29",
 "correctness": [{"variant": "mma_h16_t16_k4_w8_s1", "case": "a", "passed": true}],
 "timing": [
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 1, "topk": 512, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 1, "topk": 2048, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 16, "topk": 512, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 16, "topk": 2048, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 64, "topk": 512, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 64, "topk": 2048, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 128, "topk": 512, "us": 30.0, "graph_us": 10.0},
  {"variant": "mma_h16_t16_k4_w8_s1", "batch": 128, "topk": 2048, "us": 30.0, "graph_us": 10.0}]}`

var selectSweep = []string{"select", "--target", "sm_120", "--block-h", "16", "--block-t", "16", "--split-k", "4", "--num-warps", "8", "--num-stages", "1", "--pp-split-k", "none"}

// Every failure of select after its flags, under --json: the exit status
// (2 for an input it cannot use, 1 for results it cannot choose from or a
// failed write), one error object on stdout (patch's shape), the human
// text on stderr; nothing written. A mistake in the flags stays on stderr
// alone, as for patch.
func TestSelectJSONFailures(t *testing.T) {
	args := func(extra ...string) []string { return append(append([]string{}, selectSweep...), extra...) }
	files := map[string]string{
		"results.json":   selectResults,
		"bad.json":       `{"target": "sm_120",`,
		"other-gpu.json": strings.Replace(strings.Replace(selectResults, "Fake GPU", "Other GPU", 1), `"3.6.0"`, `"3.8.0"`, 1),
		"sm90.json":      strings.Replace(selectResults, `"sm_120"`, `"sm_90"`, 1),
		"partial.json":   strings.TrimSuffix(strings.Split(selectResults, "\n  {\"variant\": \"mma_h16_t16_k4_w8_s1\", \"batch\": 16")[0], ",") + "]}",
		"afile":          "x",
	}
	failFirst := func(changeset.Step) error { return errors.New("injected failure") }
	for _, c := range []struct {
		name   string
		hook   func(changeset.Step) error
		args   []string
		code   int
		errHas string
	}{
		{name: "missing results", args: args("--selections", "sel", "nope.json"), code: exitUsage, errHas: "open nope.json"},
		{name: "malformed results", args: args("--selections", "sel", "bad.json"), code: exitUsage, errHas: "bad.json: results: "},
		{name: "malformed results, dry run", args: args("--dry-run", "bad.json"), code: exitUsage, errHas: "bad.json: results: "},
		{name: "another target's results", args: args("--selections", "sel", "sm90.json"), code: exitUsage, errHas: "sm90.json holds sm_90 results, not sm_120"},
		{name: "also of another GPU", args: args("--selections", "sel", "results.json", "--also", "other-gpu.json"), code: exitUsage, errHas: "--also other-gpu.json: timed on Other GPU"},
		{name: "also of another target", args: args("--selections", "sel", "results.json", "--also", "sm90.json"), code: exitUsage, errHas: "--also sm90.json: sm_90 results, not sm_120"},
		{name: "also unreadable", args: args("--selections", "sel", "results.json", "--also", "nope.json"), code: exitUsage, errHas: "--also: open nope.json"},
		{name: "selections is a file", args: args("--selections", "afile", "results.json"), code: exitUsage, errHas: "--selections afile is a file, not a directory"},
		{name: "selections is a file, dry run", args: args("--selections", "afile", "--dry-run", "results.json"), code: exitUsage, errHas: "--selections afile is a file"},
		{name: "selections under a file", args: args("--selections", "afile/x", "results.json"), code: exitUsage, errHas: "afile is a file, not a directory"},
		{name: "selections missing", args: args("--selections", "nodir", "results.json"), code: exitUsage, errHas: "--selections nodir: no such directory"},
		{name: "untimed shapes", args: args("--selections", "sel", "partial.json"), code: exitFail, errHas: "no timing for"},
		{name: "failed write", hook: failFirst, args: args("--selections", "sel", "results.json"), code: exitFail, errHas: "injected failure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range files {
				must(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
			}
			must(t, os.Mkdir(filepath.Join(dir, "sel"), 0o755))
			code, stdout, stderr := runIn(t, dir, c.hook, append(c.args, "--json")...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			if msg, _ := jsonFailure(t, "select", stdout); !strings.Contains(msg, c.errHas) {
				t.Errorf("error %q does not say %q", msg, c.errHas)
			}
			if !strings.HasPrefix(stderr, "mlagen select: ") || !strings.Contains(stderr, c.errHas) {
				t.Errorf("stderr %q: want the error in words", stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "sel", "sm120.json")); err == nil {
				t.Errorf("sel/sm120.json was written")
			}
			if _, err := os.Stat(filepath.Join(dir, "nodir")); err == nil {
				t.Errorf("nodir was created")
			}
		})
	}
	t.Run("flag mistake", func(t *testing.T) {
		code, stdout, stderr := runIn(t, t.TempDir(), nil, "select", "--json", "--dry-run", "--check", "results.json")
		if code != exitUsage || !strings.Contains(stderr, "exclusive") {
			t.Errorf("exit %d, stderr %q; want 2 and the flags' mistake", code, stderr)
		}
		if msg, _ := jsonFailure(t, "select", stdout); msg != "--dry-run and --check are exclusive" {
			t.Errorf("error %q; want the flags' mistake", msg)
		}
	})
	// The results themselves are fine: the same run writes the table.
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(selectResults), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sel"), 0o755))
	if code, _, stderr := runIn(t, dir, nil, args("--selections", "sel", "results.json")...); code != exitOK {
		t.Fatalf("select on good results: exit %d: %s", code, stderr)
	}
}
