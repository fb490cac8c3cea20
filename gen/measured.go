package gen

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
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
//
// The batch buckets are the batches the results timed: the measured shapes 1,
// 16, 64 and 128 must be there, and any other timed batch (the harness also
// times 8 and 32) adds a bucket that runs up to it, so a decode batch is
// served by the variant measured at the nearest batch at or above it.
func SelectMeasured(r Results, fits map[string]bool, source string) (Selection, error) {
	batches := measuredBatches(r)
	s := Selection{Target: r.Target, Source: source, BatchBounds: bucketBounds(batches), TopkBounds: bucketBounds(bucketTopk)}
	ranked := rankShapes(r, fits)
	var missing []string
	for _, b := range batches {
		var row []string
		for _, tk := range bucketTopk {
			name := SIMTName
			if c := ranked[shape{b, tk}]; len(c) > 0 {
				name = c[0].name
			} else if !hasShape(r, b, tk) {
				missing = append(missing, fmt.Sprintf("batch %d topk %d", b, tk))
			}
			row = append(row, name)
		}
		s.Table = append(s.Table, row)
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("results have no timing for %s: the selection needs batch %v x topk %v (run the harness with its default --batches and --topks)",
			strings.Join(missing, ", "), batches, bucketTopk)
	}
	return s, nil
}

// measuredBatches is bucketBatch plus every other batch the results timed,
// ascending.
func measuredBatches(r Results) []int {
	batches := slices.Clone(bucketBatch)
	for _, t := range r.Timing {
		if t.Batch > 0 {
			batches = append(batches, t.Batch)
		}
	}
	slices.Sort(batches)
	return slices.Compact(batches)
}

// A NearTie is a bucket whose chosen variant is faster than the next
// passing one by less than the tolerance NearTies was given: a rerun of the
// harness may choose the other.
type NearTie struct {
	Batch, Topk          int
	Chosen, RunnerUp     string
	ChosenUS, RunnerUpUS float64
}

// NearTies lists, in bucket order, the buckets where the runner-up of
// SelectMeasured's ranking is within frac (0.02 for 2%) of the choice.
// It changes nothing: it tells whoever reviews a new selection which
// choices are within the run-to-run spread of the measurement.
func NearTies(r Results, fits map[string]bool, frac float64) []NearTie {
	ranked := rankShapes(r, fits)
	var ties []NearTie
	for _, b := range measuredBatches(r) {
		for _, tk := range bucketTopk {
			c := ranked[shape{b, tk}]
			if len(c) >= 2 && c[1].us <= c[0].us*(1+frac) {
				ties = append(ties, NearTie{b, tk, c[0].name, c[1].name, c[0].us, c[1].us})
			}
		}
	}
	return ties
}

type shape struct{ batch, topk int }

type timed struct {
	name string
	us   float64
}

// rankShapes orders, per timed shape, the variants among fits that passed
// every correctness case, fastest first; equal times go to the name that
// sorts first, so the table is stable.
func rankShapes(r Results, fits map[string]bool) map[shape][]timed {
	failed := map[string]bool{}
	for _, c := range r.Correctness {
		if !c.Passed {
			failed[c.Variant] = true
		}
	}
	// A variant timed twice at one shape counts with its faster time.
	fastest := map[shape]map[string]float64{}
	for _, t := range r.Timing {
		if !fits[t.Variant] || failed[t.Variant] {
			continue
		}
		us := t.US
		if t.GraphUS != nil {
			us = *t.GraphUS
		}
		k := shape{t.Batch, t.Topk}
		if fastest[k] == nil {
			fastest[k] = map[string]float64{}
		}
		if cur, ok := fastest[k][t.Variant]; !ok || us < cur {
			fastest[k][t.Variant] = us
		}
	}
	ranked := map[shape][]timed{}
	for k, byName := range fastest {
		c := make([]timed, 0, len(byName))
		for name, us := range byName {
			c = append(c, timed{name, us})
		}
		sort.Slice(c, func(i, j int) bool {
			if c[i].us != c[j].us {
				return c[i].us < c[j].us
			}
			return c[i].name < c[j].name
		})
		ranked[k] = c
	}
	return ranked
}

func hasShape(r Results, batch, topk int) bool {
	for _, t := range r.Timing {
		if t.Batch == batch && t.Topk == topk {
			return true
		}
	}
	return false
}
