package gen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// coverageRows ends a fixture's timing list: batches 64 and 128, timed by
// "a" alone, so the selection covers every bucket of the table.
const coverageRows = `
	  {"variant": "a", "batch": 64, "topk": 512, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 64, "topk": 2048, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 128, "topk": 512, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 128, "topk": 2048, "us": 1, "graph_us": 1}]}`

func TestNearTies(t *testing.T) {
	// Every bucket shape is timed once by "a"; three shapes add rivals.
	data := `{"target": "sm_90", "gpu": "g", "torch": "t", "triton": "3.6.0", "date": "d",
	 "correctness": [{"variant": "bad", "case": "x", "passed": false}, {"variant": "a", "case": "x", "passed": true},
	  {"variant": "b", "case": "x", "passed": true}, {"variant": "c", "case": "x", "passed": true}],
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
` + coverageRows
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

// timingRows wraps timing rows (see row) in a results file in which every
// configuration they time passed a correctness case.
func timingRows(rows ...string) string {
	var checks []string
	for _, m := range variantRE.FindAllStringSubmatch(strings.Join(rows, "\n"), -1) {
		if c := fmt.Sprintf(`{"variant": %q, "case": "x", "passed": true}`, m[1]); !slices.Contains(checks, c) {
			checks = append(checks, c)
		}
	}
	return `{"target": "sm_90", "gpu": "g", "torch": "t", "triton": "3.6.0", "date": "d",
	 "correctness": [` + strings.Join(checks, ", ") + `], "timing": [` + strings.Join(rows, ",\n") + `]}`
}

var variantRE = regexp.MustCompile(`"variant": "([^"]+)"`)

// uncheckedRows wraps timing rows in a results file with no correctness
// rows, as the harness's --no-check writes.
func uncheckedRows(rows ...string) string {
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

// Results that time none of the sweep's configurations give no selection:
// every bucket would otherwise go to the SIMT baseline, as though each
// configuration had failed its checks. The harness's --variants selected
// writes such a file (its rows are the module's entry points, "selected").
func TestSelectMeasuredNothingTimed(t *testing.T) {
	fits := map[string]bool{"a": true}
	for _, c := range []struct{ name, variant, want string }{
		{"--variants selected", "selected", "their timing rows name only: selected): the harness ran with --variants selected"},
		{"another sweep's", "mma_h16_t16_k1_w4_s1", "their timing rows name only: mma_h16_t16_k1_w4_s1): run the harness with --variants all"},
	} {
		var rows []string
		for _, b := range []int{1, 16, 64, 128} {
			rows = append(rows, row(c.variant, b, 512, 10), row(c.variant, b, 2048, 10))
		}
		r, err := ParseResults([]byte(timingRows(rows...)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Rows of many other names: the first four are named, the rest counted.
	var rows []string
	for i, b := range []int{1, 16, 64, 128} {
		rows = append(rows, row(fmt.Sprintf("x%d", 2*i), b, 512, 10), row(fmt.Sprintf("x%d", 2*i+1), b, 2048, 10))
	}
	r, err := ParseResults([]byte(timingRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	want := "their timing rows name only: x0, x1, x2, x3 and 4 more)"
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("eight other names: error %v, want one containing %q", err, want)
	}
}

// Coverage counts kernels, not split counts: a kernel timed at one split
// count is covered at all of them (the entry points fit the count).
func TestCoverage(t *testing.T) {
	fits := map[string]bool{
		"ws_h16_t64_k1_w4_s2": true, "ws_h16_t64_k8_w4_s2": true, "ws_h16_t64_k8_w4_s3": true,
		"wsc_h64_t64_k2_w8_s2": true, "mma_h16_t32_k4_w8_s1": true,
	}
	r, err := ParseResults([]byte(timingRows(
		row("ws_h16_t64_k8_w4_s2", 16, 512, 10),
		rowAt("wsc_h64_t64_k2_w8_s2", EntryWholeCall, 64, 16, 640, 10), // the whole call's rows do not count
		row("peer:flashmla", 16, 512, 9),
		row("mma_h16_t32_k1_w8_s1", 16, 512, 9), // not a configuration of this sweep
	)))
	if err != nil {
		t.Fatal(err)
	}
	timed, kernels := Coverage(r, fits)
	if diff := cmp.Diff([]string{"ws_h16_t64_k1_w4_s2"}, timed); diff != "" {
		t.Errorf("timed (-want +got):\n%s", diff)
	}
	want := []string{"mma_h16_t32_k1_w8_s1", "ws_h16_t64_k1_w4_s2", "ws_h16_t64_k1_w4_s3", "wsc_h64_t64_k1_w8_s2"}
	if diff := cmp.Diff(want, kernels); diff != "" {
		t.Errorf("kernels (-want +got):\n%s", diff)
	}
}

// rowAt is a timing row with heads and an entry ("" per cache).
func rowAt(variant, entry string, heads, batch, topk int, us float64) string {
	return fmt.Sprintf(`{"variant": %q, "entry": %q, "heads": %d, "batch": %d, "topk": %d, "us": 99, "graph_us": %g}`,
		variant, entry, heads, batch, topk, us)
}

// Results timed at several head counts give a table per head count (each
// running up to it, the largest above it too); whole-call rows give the
// whole call's selection over the token totals they timed.
func TestSelectMeasuredHeads(t *testing.T) {
	var rows []string
	for _, h := range []int{16, 64} {
		for _, b := range []int{1, 16, 64, 128} {
			for _, tk := range []int{512, 2048} {
				// "small" wins at 16 heads, "big" at 64.
				small, big := 10.0, 11.0
				if h == 64 {
					small, big = 11, 10
				}
				rows = append(rows, rowAt("small", "", h, b, tk, small), rowAt("big", "", h, b, tk, big))
			}
			// The whole call at 640 and 2176 tokens: "big" except at H 16 B 1.
			for _, tk := range []int{640, 2176} {
				us := 9.0
				if h == 16 && b == 1 {
					us = 12
				}
				rows = append(rows, rowAt("small", EntryWholeCall, h, b, tk, 10), rowAt("big", EntryWholeCall, h, b, tk, us))
			}
		}
	}
	r, err := ParseResults([]byte(timingRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	fits := map[string]bool{"small": true, "big": true}
	sel, err := SelectMeasured(r, fits, "test")
	if err != nil {
		t.Fatal(err)
	}
	all := func(name string) [][]string {
		return [][]string{{name, name}, {name, name}, {name, name}, {name, name}}
	}
	want := Selection{
		Target: "sm_90", Source: "test", BatchBounds: []int{1, 16, 64, 0}, TopkBounds: []int{512, 0},
		Table: all("big"), FewerHeads: []HeadsTable{{16, all("small")}},
		WholeCall: &Selection{
			Target: "sm_90", Source: "test (whole call)", BatchBounds: []int{1, 16, 64, 0}, TopkBounds: []int{640, 0},
			Table: all("big"), FewerHeads: []HeadsTable{{16, [][]string{{"small", "small"}, {"big", "big"}, {"big", "big"}, {"big", "big"}}}},
		},
	}
	if diff := cmp.Diff(want, sel); diff != "" {
		t.Errorf("SelectMeasured (-want +got):\n%s", diff)
	}
	if err := sel.Validate(fits); err != nil {
		t.Error(err)
	}
	// An untimed cell of a smaller head count takes the larger one's choice;
	// an untimed cell of the largest is an error that names it.
	r.Timing = slices.DeleteFunc(r.Timing, func(t Timing) bool {
		return t.Entry == "" && t.Heads == 16 && t.Batch == 1 && t.Topk == 512
	})
	sel, err = SelectMeasured(r, fits, "test")
	if err != nil || sel.FewerHeads[0].Table[0][0] != "big" || sel.FewerHeads[0].Table[0][1] != "small" {
		t.Errorf("H 16 without B 1 topk 512: %v, %v", sel.FewerHeads, err)
	}
	r.Timing = slices.DeleteFunc(r.Timing, func(t Timing) bool {
		return t.Entry == "" && t.Heads == 64 && t.Batch == 16 && t.Topk == 2048
	})
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), "no timing for heads 64 batch 16 topk 2048") {
		t.Errorf("missing shape: %v", err)
	}
}

func TestNearTiesBrokenByOtherReleases(t *testing.T) {
	// Under the file's 3.6.0, a and b tie at B1 k512 (1%), a beats c by 5%
	// at B1 k2048, and d ties a peer's time at B16 k512. Rows under 3.8.0
	// (and one under 3.7.1) time some of them again.
	data := `{"target": "sm_120", "gpu": "g", "torch": "t", "triton": "3.6.0", "date": "d",
	 "correctness": [{"variant": "a", "case": "x", "passed": true}, {"variant": "b", "case": "x", "passed": true},
	  {"variant": "c", "case": "x", "passed": true}, {"variant": "d", "case": "x", "passed": true},
	  {"variant": "peer:sglang-triton", "case": "x", "passed": true}],
	 "timing": [
	  {"variant": "a", "batch": 1, "topk": 512, "us": 1, "graph_us": 10.0},
	  {"variant": "b", "batch": 1, "topk": 512, "us": 1, "graph_us": 10.1},
	  {"variant": "a", "batch": 1, "topk": 512, "us": 1, "graph_us": 13.1, "triton": "3.8.0"},
	  {"variant": "b", "batch": 1, "topk": 512, "us": 1, "graph_us": 12.1, "triton": "3.8.0"},
	  {"variant": "b", "batch": 1, "topk": 512, "us": 1, "graph_us": 20.0, "triton": "3.7.1"},
	  {"variant": "a", "batch": 1, "topk": 2048, "us": 1, "graph_us": 20.0},
	  {"variant": "c", "batch": 1, "topk": 2048, "us": 1, "graph_us": 21.0},
	  {"variant": "a", "batch": 1, "topk": 2048, "us": 1, "graph_us": 30.0, "triton": "3.8.0"},
	  {"variant": "c", "batch": 1, "topk": 2048, "us": 1, "graph_us": 20.0, "triton": "3.8.0"},
	  {"variant": "d", "batch": 16, "topk": 512, "us": 1, "graph_us": 5.0},
	  {"variant": "peer:sglang-triton", "batch": 16, "topk": 512, "us": 1, "graph_us": 5.05},
	  {"variant": "a", "batch": 16, "topk": 512, "us": 1, "graph_us": 5.06},
	  {"variant": "a", "batch": 16, "topk": 512, "us": 1, "graph_us": 1.0, "triton": "3.8.0"},
	  {"variant": "d", "batch": 16, "topk": 512, "us": 1, "graph_us": 9.0, "triton": "3.8.0"},
	  {"variant": "a", "batch": 16, "topk": 2048, "us": 1, "graph_us": 1},
	  {"variant": "a", "batch": 32, "topk": 512, "us": 1, "graph_us": 1, "triton": "3.8.0"},
` + coverageRows
	r, err := ParseResults([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	fits := map[string]bool{"a": true, "b": true, "c": true, "d": true}
	sel, err := SelectMeasured(r, fits, "test")
	if err != nil {
		t.Fatal(err)
	}
	// B1 k512: 3.8.0 timed both and b is faster there (3.7.1 timed only b
	// and does not judge); B1 k2048: 5% apart under 3.6.0, so 3.8.0's rows
	// change nothing; B16 k512: the peer between d and a ends the tie, so d
	// stays. The 3.8.0-only batch 32 adds no bucket.
	want := [][]string{{"b", "a"}, {"d", "a"}, {"a", "a"}, {"a", "a"}}
	if diff := cmp.Diff(want, sel.Table); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 16, 64, 0}, sel.BatchBounds); diff != "" {
		t.Errorf("batch bounds (-want +got):\n%s", diff)
	}
	ties := NearTies(r, fits, 0.02)
	wantTies := []NearTie{
		{Batch: 1, Topk: 512, Chosen: "b", RunnerUp: "a", ChosenUS: 10.1, RunnerUpUS: 10.0,
			Releases: []string{"3.8.0"}, Worst: []float64{1, 13.1 / 12.1}},
		{Batch: 16, Topk: 512, Chosen: "d", RunnerUp: "peer:sglang-triton", ChosenUS: 5.0, RunnerUpUS: 5.05},
	}
	if diff := cmp.Diff(wantTies, ties); diff != "" {
		t.Errorf("NearTies (-want +got):\n%s", diff)
	}
	// Without the other releases' rows the file's own order stands.
	r.Timing = slices.DeleteFunc(r.Timing, func(t Timing) bool { return t.Triton != "" })
	sel, err = SelectMeasured(r, fits, "test")
	if err != nil {
		t.Fatal(err)
	}
	if sel.Table[0][0] != "a" {
		t.Errorf("without 3.8.0's rows B1 k512 chose %s, want a", sel.Table[0][0])
	}
}

// The harness's --variants selected names each row after the configuration
// the module's tables picked, so its rows look like a sweep's; a selection
// from them would only repeat the built-in tables. The file says which run
// it is (variants), or its command line does (files from before).
func TestSelectMeasuredEntryPointsOnly(t *testing.T) {
	var rows []string
	for _, b := range []int{1, 16, 64, 128} {
		rows = append(rows, row("a", b, 512, 10), row("a", b, 2048, 10))
	}
	fits := map[string]bool{"a": true}
	for _, c := range []struct {
		name, variants, command string
		refused                 bool
	}{
		{"recorded", "selected", "", true},
		{"in the command", "", "python3 harness.py --variants selected --out x.json", true},
		{"in the command, one word", "", "python3 harness.py --variants=selected", true},
		{"all", "all", "python3 harness.py --variants all", false},
		{"a list", "a,b", "python3 harness.py --variants a,b", false},
		{"the default", "", "python3 harness.py --out x.json", false},
		{"a list naming it", "", "python3 harness.py --variants selected_x", false},
	} {
		var r Results
		if err := json.Unmarshal([]byte(timingRows(rows...)), &r); err != nil {
			t.Fatal(err)
		}
		r.Variants, r.Command = c.variants, c.command
		_, err := SelectMeasured(r, fits, "test")
		if got := err != nil && strings.Contains(err.Error(), "--variants selected: it timed the module's entry points"); got != c.refused {
			t.Errorf("%s: error %v, refused %v, want %v", c.name, err, got, c.refused)
		}
		base, _ := ParseResults([]byte(timingRows(rows...)))
		base.Triton = "3.8.0"
		if _, err := AddRelease(base, r); (err != nil && strings.Contains(err.Error(), "--variants selected")) != c.refused {
			t.Errorf("%s as --also: error %v, want refused %v", c.name, err, c.refused)
		}
	}
}

// A configuration never compared with the reference (no correctness row,
// no timing row with its own check, as a --no-check run leaves it) is never
// chosen, however fast; results that check none of theirs are refused.
func TestSelectMeasuredUnchecked(t *testing.T) {
	var rows []string
	for _, b := range []int{1, 16, 64, 128} {
		for _, tk := range []int{512, 2048} {
			rows = append(rows, row("checked", b, tk, 10), row("fast", b, tk, 5))
		}
	}
	fits := map[string]bool{"checked": true, "fast": true}
	r, err := ParseResults([]byte(uncheckedRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), "results check none of the 2 configurations they time") {
		t.Errorf("nothing checked: error %v", err)
	}
	if diff := cmp.Diff([]string{"checked", "fast"}, Unchecked(r, fits)); diff != "" {
		t.Errorf("Unchecked (-want +got):\n%s", diff)
	}
	r.Correctness = append(r.Correctness, CaseCheck{"checked", "x", true})
	sel, err := SelectMeasured(r, fits, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range sel.Table {
		for _, name := range line {
			if name != "checked" {
				t.Errorf("table %v chooses an unchecked configuration", sel.Table)
			}
		}
	}
	if diff := cmp.Diff([]string{"fast"}, Unchecked(r, fits)); diff != "" {
		t.Errorf("Unchecked (-want +got):\n%s", diff)
	}
	// A timing row's own check counts: "fast" then wins where it passed.
	passed := true
	for i := range r.Timing {
		if r.Timing[i].Variant == "fast" {
			r.Timing[i].Passed = &passed
		}
	}
	if sel, err = SelectMeasured(r, fits, "test"); err != nil || sel.Table[0][0] != "fast" {
		t.Errorf("with its rows' checks: %v, %v; want fast chosen", sel.Table, err)
	}
	if got := Unchecked(r, fits); len(got) != 0 {
		t.Errorf("Unchecked = %v, want none", got)
	}
}

// A configuration whose check failed at one timed shape is chosen nowhere
// (as with a failed case), a peer never compared with the reference wins
// no bucket, a shape where no row has a time is untimed, not SGLang's, and
// rows that record heads do not mix with rows that record none.
func TestSelectMeasuredChecksAndGaps(t *testing.T) {
	fits := map[string]bool{"slow": true, "fast": true}
	results := func(edit func(b, tk int, fast, peer *string)) Results {
		t.Helper()
		var rows []string
		for _, b := range []int{1, 16, 64, 128} {
			for _, tk := range []int{512, 2048} {
				fast := fmt.Sprintf(`{"variant": "fast", "heads": 64, "batch": %d, "topk": %d, "us": 99, "graph_us": 5}`, b, tk)
				peer := ""
				edit(b, tk, &fast, &peer)
				rows = append(rows, rowAt("slow", "", 64, b, tk, 10), fast)
				if peer != "" {
					rows = append(rows, peer)
				}
			}
		}
		r, err := ParseResults([]byte(timingRows(rows...)))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	chosen := func(sel Selection) map[string]bool {
		out := map[string]bool{}
		for _, name := range sel.Names() {
			out[name] = true
		}
		return out
	}
	// "fast" failed its own check at B 128 topk 2048 only.
	r := results(func(b, tk int, fast, _ *string) {
		if b == 128 && tk == 2048 {
			*fast = strings.Replace(*fast, `"graph_us": 5`, `"graph_us": 5, "passed": false`, 1)
		}
	})
	if sel, err := SelectMeasured(r, fits, "test"); err != nil || chosen(sel)["fast"] {
		t.Errorf("a failed timed check: %v, %v; want fast chosen nowhere", sel.Table, err)
	}
	// A peer faster everywhere, with no check of its own: never chosen;
	// with one it takes the buckets (SGLang's Triton path is reached).
	peerRows := func(b, tk int, _, peer *string) {
		*peer = fmt.Sprintf(`{"variant": "peer:sglang-triton", "heads": 64, "batch": %d, "topk": %d, "us": 99, "graph_us": 1}`, b, tk)
	}
	r = results(peerRows)
	r.Correctness = slices.DeleteFunc(r.Correctness, func(c CaseCheck) bool { return IsPeer(c.Variant) })
	if sel, err := SelectMeasured(r, fits, "test"); err != nil || chosen(sel)["peer:sglang-triton"] {
		t.Errorf("an unchecked peer: %v, %v; want it chosen nowhere", sel.Table, err)
	}
	r.Correctness = append(r.Correctness, CaseCheck{"peer:sglang-triton", "x", true})
	if sel, err := SelectMeasured(r, fits, "test"); err != nil || sel.Table[0][0] != "peer:sglang-triton" {
		t.Errorf("a checked peer: %v, %v; want it chosen", sel.Table, err)
	}
	// Every row at B 128 topk 2048 failed to run: refused, with the error,
	// at the largest head count and at a smaller one (which must not take
	// the larger one's choice: it may be what failed there).
	r = results(func(b, tk int, fast, _ *string) {})
	for i := range r.Timing {
		if r.Timing[i].Batch == 128 && r.Timing[i].Topk == 2048 {
			r.Timing[i].Error = "out of memory"
		}
	}
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), "every per-cache row at batch 128 topk 2048 (slow: out of memory) failed to run or was declined") {
		t.Errorf("a shape whose rows all failed: error %v", err)
	}
	r = results(func(b, tk int, fast, _ *string) {})
	for _, b := range []int{1, 16, 64, 128} {
		for _, tk := range []int{512, 2048} {
			errs := ""
			if b == 128 && tk == 2048 {
				errs = "illegal memory access"
			}
			r.Timing = append(r.Timing, Timing{Variant: "fast", Heads: 16, Batch: b, Topk: tk, US: 5, Error: errs})
		}
	}
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), "heads 16 batch 128 topk 2048 (fast: illegal memory access)") {
		t.Errorf("a smaller head count's shape whose rows all failed: error %v", err)
	}
	// One row without its head count.
	r = results(func(b, tk int, fast, _ *string) {
		if b == 16 && tk == 512 {
			*fast = strings.Replace(*fast, `"heads": 64, `, "", 1)
		}
	})
	if _, err := SelectMeasured(r, fits, "test"); err == nil || !strings.Contains(err.Error(), "the per-cache rows mix runs that record a head count ([64]) with rows that record none") {
		t.Errorf("rows with and without heads: error %v", err)
	}
}

// A decoding error says where it lies in the file and what was wanted,
// not the decoder's Go types.
func TestJSONError(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`[1, 2]`, "results: line 1, column 2: the file is a JSON array, want an object"},
		{"{\"target\": \"sm_120\",\n \"timing\": {\"a\": 1}}", `results: line 2, column 13: "timing" is a JSON object, want a list`},
		{"{\"target\": \"sm_120\",\n \"timing\": [1,,]}", "results: not JSON: line 2, column 16: invalid character ',' looking for beginning of value"},
		{`{"target": 5}`, `results: line 1, column 13: "target" is a JSON number, want a string`},
		{`{"target": "sm_120", "timing": [{"us": 1e400}]}`, `results: line 1, column 45: "timing.us" is a JSON number 1e400, want a number in float64's range`},
		{`{"target": "sm_120", "timing": [{"batch": 1.5}]}`, `results: line 1, column 46: "timing.batch" is a JSON number 1.5, want a whole number in range`},
	} {
		_, err := ParseResults([]byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseResults(%q) = %v, want %q", c.data, err, c.want)
		}
	}
	if _, err := ParseSelection([]byte(`{"target": "sm_120", "batch_bounds": "x"}`)); err == nil ||
		err.Error() != `not a selection: line 1, column 41: "batch_bounds" is a JSON string, want a list` {
		t.Errorf("ParseSelection: %v", err)
	}
}

// The file of a harness run cut short says "complete": false: its rows
// stop at the section it reached, and a selection from them would choose
// among those. Refused, as RESULTS.json and as --also; files from before
// the field (none) are read as they were.
func TestSelectMeasuredIncomplete(t *testing.T) {
	var rows []string
	for _, b := range []int{1, 16, 64, 128} {
		rows = append(rows, row("a", b, 512, 10), row("a", b, 2048, 10))
	}
	fits := map[string]bool{"a": true}
	for _, c := range []struct {
		field   string
		refused bool
	}{{`"complete": false,`, true}, {`"complete": true,`, false}, {``, false}} {
		r, err := ParseResults([]byte(strings.Replace(timingRows(rows...), `"date": "d",`, `"date": "d", `+c.field, 1)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = SelectMeasured(r, fits, "test")
		if got := err != nil && strings.Contains(err.Error(), `the harness run did not finish (its file says "complete": false`); got != c.refused {
			t.Errorf("%q: error %v, want refused %v", c.field, err, c.refused)
		}
		base, _ := ParseResults([]byte(timingRows(rows...)))
		base.Triton = "3.8.0"
		if _, err := AddRelease(base, r); (err != nil) != c.refused {
			t.Errorf("%q as --also: error %v, want refused %v", c.field, err, c.refused)
		}
	}
}

// A whole-call batch the largest head count did not time at every token
// count (the harness declines a shape out of GPU memory, and memory grows
// with the heads) gives no bucket: its calls go to the largest one below,
// and the rest of the table stands, where it used to be refused.
func TestSelectMeasuredWholeCallBatchDeclined(t *testing.T) {
	var rows []string
	for _, h := range []int{16, 64} {
		for _, b := range []int{1, 16, 64, 128, 2048} {
			for _, tk := range []int{512, 2048} {
				rows = append(rows, rowAt("a", "", h, min(b, 128), tk, 10))
			}
			for _, tk := range []int{640, 2176} {
				if h == 64 && b == 2048 && tk == 2176 {
					continue // out of memory: declined
				}
				rows = append(rows, rowAt("a", EntryWholeCall, h, b, tk, 10))
			}
		}
	}
	r, err := ParseResults([]byte(timingRows(rows...)))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectMeasured(r, map[string]bool{"a": true}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 16, 64, 0}, sel.WholeCall.BatchBounds); diff != "" {
		t.Errorf("whole-call batch bounds (-want +got):\n%s", diff)
	}
	// Timed at every token count, batch 2048 is a bucket of its own.
	rows = append(rows, rowAt("a", EntryWholeCall, 64, 2048, 2176, 10))
	if r, err = ParseResults([]byte(timingRows(rows...))); err != nil {
		t.Fatal(err)
	}
	if sel, err = SelectMeasured(r, map[string]bool{"a": true}, "test"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 16, 64, 128, 0}, sel.WholeCall.BatchBounds); diff != "" {
		t.Errorf("with batch 2048 timed, bounds (-want +got):\n%s", diff)
	}
}
