package baseline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSaveLoadCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.json")
	good := []Phase{{Name: "load-weights", Seconds: 33.84}, {Name: "cuda-graph-capture", Seconds: 26.12}, {Name: "startup", Seconds: 68}}
	data, err := Encode(File{Phases: good, Saved: "2026-06-17T22:07:39Z"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(good, base.Phases); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	now := []Phase{{Name: "load-weights", Seconds: 33.84 * 1.25}, {Name: "cuda-graph-capture", Seconds: 40}, {Name: "piecewise-cuda-graph-capture", Seconds: 3}, {Name: "startup", Seconds: 60}}
	var got []string
	for _, r := range Compare(base, now) {
		mark := "ok"
		if r.Regressed {
			mark = "REGRESSED"
		}
		got = append(got, r.Phase+" "+mark)
	}
	// Exactly 25% slower is allowed; graph capture at +53% is not; the
	// piecewise phase has no baseline and is left out.
	want := []string{"load-weights ok", "cuda-graph-capture REGRESSED", "startup ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
}

func TestLoadRejectsNonBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(path, []byte(`{"phases": []}`), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not a baseline") {
		t.Errorf("Load = %v, want 'not a baseline'", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// A file in the baseline's shape whose phases are none a watch measures
// is refused: compared with nothing, it would pass every start.
func TestLoadRefusesForeignPhases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "foreign.json")
	os.WriteFile(path, []byte(`{"version": 1, "phases": [{"name": "warmup", "seconds": 3}]}`), 0o644)
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), `none of its phases ("warmup") is one a watch measures`) {
		t.Fatalf("Load = %v; want the foreign phases named", err)
	}
	os.WriteFile(path, []byte(`{"version": 1, "phases": [{"name": "warmup", "seconds": 3}, {"name": "startup", "seconds": 60}]}`), 0o644)
	if _, err := Load(path); err != nil {
		t.Errorf("a baseline with one known phase: %v", err)
	}
}
