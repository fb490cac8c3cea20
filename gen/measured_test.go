package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNearTies(t *testing.T) {
	// Every bucket shape is timed once by "a"; three shapes add rivals.
	data := `{"target": "sm_90", "gpu": "g", "torch": "t", "triton": "3.6.0", "date": "d",
	 "correctness": [{"variant": "bad", "case": "x", "passed": false}],
	 "timing": [
	  {"variant": "a", "batch": 1, "topk": 512, "us": 50, "graph_us": 10.0},
	  {"variant": "b", "batch": 1, "topk": 512, "us": 50, "graph_us": 10.1},
	  {"variant": "bad", "batch": 1, "topk": 512, "us": 50, "graph_us": 9.0},
	  {"variant": "a", "batch": 1, "topk": 2048, "us": 50, "graph_us": 20.0},
	  {"variant": "b", "batch": 1, "topk": 2048, "us": 50, "graph_us": 21.0},
	  {"variant": "a", "batch": 16, "topk": 512, "us": 30.0, "graph_us": null},
	  {"variant": "a", "batch": 16, "topk": 512, "us": 30.2, "graph_us": null},
	  {"variant": "a", "batch": 16, "topk": 2048, "us": 1, "graph_us": 40.0},
	  {"variant": "c", "batch": 16, "topk": 2048, "us": 1, "graph_us": 39.5},
	  {"variant": "a", "batch": 64, "topk": 512, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 64, "topk": 2048, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 128, "topk": 512, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 128, "topk": 2048, "us": 1, "graph_us": 1}]}`
	r, err := ParseResults([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	fits := map[string]bool{"a": true, "b": true, "c": true, "bad": true}
	got := NearTies(r, fits, 0.02)
	// B1 k512: b is 1% behind a (bad is faster but failed a case);
	// B1 k2048: 5% apart, no tie; B16 k512: a against itself is no tie;
	// B16 k2048: c wins by 1.3%.
	want := []NearTie{
		{Batch: 1, Topk: 512, Chosen: "a", RunnerUp: "b", ChosenUS: 10.0, RunnerUpUS: 10.1},
		{Batch: 16, Topk: 2048, Chosen: "c", RunnerUp: "a", ChosenUS: 39.5, RunnerUpUS: 40.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NearTies (-want +got):\n%s", diff)
	}
	sel, err := SelectMeasured(r, fits, "test")
	if err != nil {
		t.Fatal(err)
	}
	// The ties name the choices the selection made.
	if sel.Table[0][0] != "a" || sel.Table[1][1] != "c" {
		t.Errorf("selection %v disagrees with the ties' choices", sel.Table)
	}
	// Without "b", B1 k512 has no runner-up.
	delete(fits, "b")
	if got := NearTies(r, fits, 0.02); len(got) != 1 || got[0].Topk != 2048 {
		t.Errorf("without b: got %+v, want only the B16 k2048 tie", got)
	}
}

// timingRows wraps timing rows (see row) in a results file.
func timingRows(rows ...string) string {
	return `{"target": "sm_90", "gpu": "g", "torch": "t", "triton": "3.6.0", "date": "d",
	 "correctness": [], "timing": [` + strings.Join(rows, ",\n") + `]}`
}

// row is one timing row with graph time us.
func row(variant string, batch, topk int, us float64) string {
	return fmt.Sprintf(`{"variant": %q, "batch": %d, "topk": %d, "us": 99, "graph_us": %g}`, variant, batch, topk, us)
}

func TestSelectMeasuredExtraBatches(t *testing.T) {
	var rows []string
	for _, b := range []int{1, 8, 16, 32, 64, 128} {
		for _, tk := range []int{512, 2048} {
			rows = append(rows, row("a", b, tk, 10))
			// "b" wins only at the two batches the design does not name.
			us := 11.0
			if b == 8 || b == 32 {
				us = 9
			}
			rows = append(rows, row("b", b, tk, us))
		}
	}
	r, err := ParseResults([]byte(timingRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectMeasured(r, map[string]bool{"a": true, "b": true}, "test")
	if err != nil {
		t.Fatal(err)
	}
	want := Selection{
		Target: "sm_90", Source: "test",
		BatchBounds: []int{1, 8, 16, 32, 64, 0},
		TopkBounds:  []int{512, 0},
		Table:       [][]string{{"a", "a"}, {"b", "b"}, {"a", "a"}, {"b", "b"}, {"a", "a"}, {"a", "a"}},
	}
	if diff := cmp.Diff(want, sel); diff != "" {
		t.Errorf("SelectMeasured (-want +got):\n%s", diff)
	}
}

func TestSelectMeasuredMissingShapes(t *testing.T) {
	// Batch 8 timed at topk 512 only, and the required batch 128 not at all.
	var rows []string
	for _, b := range []int{1, 16, 64} {
		rows = append(rows, row("a", b, 512, 10), row("a", b, 2048, 10))
	}
	rows = append(rows, row("a", 8, 512, 10))
	r, err := ParseResults([]byte(timingRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = SelectMeasured(r, map[string]bool{"a": true}, "test")
	want := "results have no timing for batch 8 topk 2048, batch 128 topk 512, batch 128 topk 2048: " +
		"the selection needs batch [1 8 16 64 128] x topk [512 2048] (run the harness with its default --batches and --topks)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
