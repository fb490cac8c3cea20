package gen

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// SelectionDir is where `mlagen select` writes a target's measured selection
// (<SelectionDir>/<target dir>.json, e.g. gen/selections/sm90.json) and where
// the generator embeds it from: emit, patch and the tests all read the
// embedded copy, so a binary renders the same module wherever it runs.
const SelectionDir = "gen/selections"

//go:embed selections/*.json
var selections embed.FS

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

// The shapes every measurement times: decode batches 1, 16, 64 and 128 (one
// request to a full server) and topk 512 and 2048 (DeepSeek-V4-Flash's
// compressed-cache token lists). Each bucket runs up to the shape it was measured at (bucketBounds). Every
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

// SelectionFile is the file name of t's measured selection under
// SelectionDir.
func SelectionFile(t Target) string { return t.Dir() + ".json" }

// MeasuredSelection returns the selection `mlagen select` measured for t, as
// this binary embeds it; ok is false when t has none.
func MeasuredSelection(t Target) (sel Selection, ok bool, err error) {
	data, err := selections.ReadFile("selections/" + SelectionFile(t))
	if errors.Is(err, fs.ErrNotExist) {
		return sel, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &sel)
	}
	if err == nil && sel.Target != t.Name {
		err = fmt.Errorf("it is for %s", sel.Target)
	}
	if err != nil {
		return sel, false, fmt.Errorf("embedded selection %s/%s: %w (rewrite it with `mlagen select`)", SelectionDir, SelectionFile(t), err)
	}
	return sel, true, nil
}

// MarshalSelection is the file `mlagen select` writes: indented JSON and a
// final newline, the form embedded under SelectionDir.
func MarshalSelection(sel Selection) ([]byte, error) {
	data, err := json.MarshalIndent(sel, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("selection for %s: %w", sel.Target, err)
	}
	return append(data, '\n'), nil
}

// selectionFor is the selection a sweep's module carries: the measured one
// when every variant it names fits in this sweep, else the static rule. note
// says why the measured one was not used ("" when it was, or there is none).
func selectionFor(s Sweep, budgets []Budget) (sel Selection, note string, err error) {
	measured, ok, err := MeasuredSelection(s.Target)
	if err != nil {
		return sel, "", err
	}
	if !ok {
		return HeuristicSelection(s.Target, s.Heads, budgets), "", nil
	}
	if verr := measured.Validate(fitNames(budgets)); verr != nil {
		note = fmt.Sprintf("the measured selection (%s/%s) does not fit this sweep (%v): static rule used",
			SelectionDir, SelectionFile(s.Target), verr)
		return HeuristicSelection(s.Target, s.Heads, budgets), note, nil
	}
	return measured, "", nil
}

func fitNames(budgets []Budget) map[string]bool {
	fits := map[string]bool{}
	for _, b := range budgets {
		if b.Fits {
			fits[b.Name] = true
		}
	}
	return fits
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
				return fmt.Errorf("selection names %s, which is not a fitting variant of this sweep (re-run `mlagen select` on fresh results)", name)
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
