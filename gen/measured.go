package gen

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Results is the part of a harness results file (harness.py) that
// selection reads.
type Results struct {
	Target      string `json:"target"`
	GPU         string `json:"gpu"`
	Torch       string `json:"torch"`
	Triton      string `json:"triton"`
	Date        string `json:"date"`
	Correctness []struct {
		Variant string `json:"variant"`
		Case    string `json:"case"`
		Passed  bool   `json:"passed"`
	} `json:"correctness"`
	Timing []struct {
		Variant string   `json:"variant"`
		Batch   int      `json:"batch"`
		Topk    int      `json:"topk"`
		US      float64  `json:"us"`
		GraphUS *float64 `json:"graph_us"`
	} `json:"timing"`
}

// ParseResults decodes a harness results file.
func ParseResults(data []byte) (Results, error) {
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("results: %w", err)
	}
	if r.Target == "" || len(r.Timing) == 0 {
		return r, fmt.Errorf("results: no target or no timing rows (run the harness without --no-timing)")
	}
	return r, nil
}

// SelectMeasured picks, for every (batch, topk) bucket, the fastest variant
// among fits that passed every correctness case. A call's time is its
// CUDA-graph replay time where measured (what SGLang's decode sees), else
// its plain launch time. A bucket with no passing MMA variant gets the SIMT
// baseline, which the bundle hands back to SGLang's own kernel.
func SelectMeasured(r Results, fits map[string]bool, source string) (Selection, error) {
	s := Selection{Target: r.Target, Source: source, BatchBounds: defaultBatchBounds, TopkBounds: defaultTopkBounds}
	failed := map[string]bool{}
	for _, c := range r.Correctness {
		if !c.Passed {
			failed[c.Variant] = true
		}
	}
	type key struct{ batch, topk int }
	best := map[key]string{}
	bestUS := map[key]float64{}
	for _, t := range r.Timing {
		if !fits[t.Variant] || failed[t.Variant] {
			continue
		}
		us := t.US
		if t.GraphUS != nil {
			us = *t.GraphUS
		}
		k := key{t.Batch, t.Topk}
		// Ties go to the name that sorts first, so the table is stable.
		if cur, ok := bestUS[k]; !ok || us < cur || (us == cur && t.Variant < best[k]) {
			best[k], bestUS[k] = t.Variant, us
		}
	}
	var missing []string
	for _, b := range bucketBatch {
		var row []string
		for _, tk := range bucketTopk {
			name, ok := best[key{b, tk}]
			if !ok {
				if !hasShape(r, b, tk) {
					missing = append(missing, fmt.Sprintf("batch %d topk %d", b, tk))
				}
				name = SIMTName
			}
			row = append(row, name)
		}
		s.Table = append(s.Table, row)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return s, fmt.Errorf("results have no timing for %v: the selection needs batch %v x topk %v", missing, bucketBatch, bucketTopk)
	}
	return s, nil
}

func hasShape(r Results, batch, topk int) bool {
	for _, t := range r.Timing {
		if t.Batch == batch && t.Topk == topk {
			return true
		}
	}
	return false
}
