package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// SelectionFile is the name of the measured selection kept beside the
// kernels. It is an input of emit (written by `mlagen select`), so that
// re-emitting reproduces the same index module.
const SelectionFile = "selection.json"

// Selection maps (batch size, topk) buckets to variant names. Buckets are
// upper bounds, checked in order; 0 means unbounded.
type Selection struct {
	Target string `json:"target"`
	// Source says where the choices came from: a results file with its GPU
	// and date, or the static rule used before any measurement.
	Source      string     `json:"source"`
	BatchBounds []int      `json:"batch_bounds"`
	TopkBounds  []int      `json:"topk_bounds"`
	Table       [][]string `json:"table"` // [batch bucket][topk bucket]
}

// Measured shapes (DESIGN.md): batch 1, 16, 64, 128 and topk 512, 2048. Each
// bucket runs up to the shape it was measured at (bucketBounds). Every
// results file must time these; SelectMeasured adds a batch bucket for any
// other timed batch.
var (
	bucketBatch = []int{1, 16, 64, 128}
	bucketTopk  = []int{512, 2048}
)

// bucketBounds turns measured shapes into bucket bounds: each bucket runs up
// to the shape it was measured at, and the last one has no bound (0).
func bucketBounds(measured []int) []int {
	bounds := slices.Clone(measured)
	bounds[len(bounds)-1] = 0
	return bounds
}

// ReadSelection loads dir/selection.json; ok is false when there is none.
func ReadSelection(dir string) (Selection, bool, error) {
	var s Selection
	data, err := os.ReadFile(filepath.Join(dir, SelectionFile))
	if os.IsNotExist(err) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, false, fmt.Errorf("%s: %w", filepath.Join(dir, SelectionFile), err)
	}
	return s, true, nil
}

// Validate checks the table's shape and that every name is among fits.
func (s Selection) Validate(fits map[string]bool) error {
	if len(s.Table) != len(s.BatchBounds) {
		return fmt.Errorf("selection: %d batch rows for %d batch buckets", len(s.Table), len(s.BatchBounds))
	}
	for i, row := range s.Table {
		if len(row) != len(s.TopkBounds) {
			return fmt.Errorf("selection: batch bucket %d has %d entries for %d topk buckets", i, len(row), len(s.TopkBounds))
		}
		for _, name := range row {
			if name != SIMTName && !fits[name] {
				return fmt.Errorf("selection names %s, which is not an emitted variant of this sweep (re-run `mlagen select` on fresh results)", name)
			}
		}
	}
	return nil
}

// HeuristicSelection is the static rule used until measurements exist: for
// each bucket, the fitting variant whose grid (head blocks x splits x batch)
// first reaches about one program per multiprocessor, widest head block and
// tile first. Measured choices from `mlagen select` replace it.
func HeuristicSelection(t Target, heads int, budgets []Budget) Selection {
	s := Selection{Target: t.Name, Source: "static rule (no measurements yet): fill about 128 programs, widest tiles first",
		BatchBounds: bucketBounds(bucketBatch), TopkBounds: bucketBounds(bucketTopk)}
	for _, batch := range bucketBatch {
		var row []string
		for _, topk := range bucketTopk {
			row = append(row, heuristicPick(heads, batch, topk, budgets))
		}
		s.Table = append(s.Table, row)
	}
	return s
}

func heuristicPick(heads, batch, topk int, budgets []Budget) string {
	const wantPrograms = 128
	best, bestScore := SIMTName, -1
	for _, b := range budgets {
		if !b.Fits {
			continue
		}
		v := b.Variant
		if v.BlockT*v.SplitK > topk {
			continue // splits that would get no tokens
		}
		programs := (heads + v.BlockH - 1) / v.BlockH * v.SplitK * batch
		// Reward reaching the program target, then the least waste beyond
		// it, then head-block and tile width, then more warps.
		score := 0
		if programs >= wantPrograms {
			score += 1 << 20
			score -= programs / wantPrograms << 12
		} else {
			score += programs << 8
		}
		score += v.BlockH*4 + v.BlockT + v.NumWarps
		if score > bestScore {
			best, bestScore = b.Name, score
		}
	}
	return best
}
