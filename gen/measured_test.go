package gen

import (
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
