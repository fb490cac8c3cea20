package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
