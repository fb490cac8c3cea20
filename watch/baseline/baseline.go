// Package baseline keeps the phase durations of a good server start and
// compares later starts with them. A kernel change that makes Triton
// compile longer, or graph capture slower, shows up here before anywhere
// else.
package baseline

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limit is how much slower than the baseline a phase may be (25%).
const Limit = 0.25

// Phase is one measured duration.
type Phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// File is what --save-baseline writes.
type File struct {
	Version int     `json:"version"`
	Saved   string  `json:"saved"`
	Source  string  `json:"source,omitempty"`
	Phases  []Phase `json:"phases"`
}

// Encode is the baseline file's content for f (version 1, stamped now
// unless f says when). The caller writes it all or nothing: a half-written
// baseline would flag every later start.
func Encode(f File) ([]byte, error) {
	f.Version = 1
	if f.Saved == "" {
		f.Saved = time.Now().UTC().Format(time.RFC3339)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding baseline: %w", err)
	}
	return append(data, '\n'), nil
}

// The phase durations a watch measures, by their names in a baseline.
const (
	LoadWeights    = "load-weights"
	GraphCapture   = "cuda-graph-capture"
	PrefillCapture = "piecewise-cuda-graph-capture" // the prefill graph's older name, kept for saved files
	Startup        = "startup"
)

var known = []string{LoadWeights, GraphCapture, PrefillCapture, Startup}

// Load reads a baseline file (Encode's content). One whose phases are none
// of those a watch measures (another tool's, or hand-written) is refused:
// compared with nothing, it would pass every start while looking like a
// guard.
func Load(path string) (File, error) {
	var f File
	data, err := os.ReadFile(path)
	if err != nil {
		return f, fmt.Errorf("reading baseline: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("reading baseline %s: %w", path, err)
	}
	if f.Version != 1 || len(f.Phases) == 0 {
		return f, fmt.Errorf("reading baseline %s: not a baseline (version %d, %d phases)", path, f.Version, len(f.Phases))
	}
	var names []string
	for _, p := range f.Phases {
		if slices.Contains(known, p.Name) {
			return f, nil
		}
		names = append(names, strconv.Quote(p.Name))
	}
	return f, fmt.Errorf("reading baseline %s: none of its phases (%s) is one a watch measures (%s): save one with mlagen watch --save-baseline", path, strings.Join(names, ", "), strings.Join(known, ", "))
}

// Row compares one phase with its baseline.
type Row struct {
	Phase     string  `json:"phase"`
	Seconds   float64 `json:"seconds"`
	Baseline  float64 `json:"baseline_seconds"`
	SlowerPct float64 `json:"slower_pct"`
	Regressed bool    `json:"regressed"`
}

// Compare lines up the phases measured now with the baseline, in the order
// measured. Phases that only one side has are left out: a start that did
// not capture graphs has nothing to compare there.
func Compare(base File, now []Phase) []Row {
	ref := map[string]float64{}
	for _, p := range base.Phases {
		ref[p.Name] = p.Seconds
	}
	var rows []Row
	for _, p := range now {
		b, ok := ref[p.Name]
		if !ok || b <= 0 {
			continue
		}
		pct := (p.Seconds/b - 1) * 100
		rows = append(rows, Row{
			Phase:     p.Name,
			Seconds:   p.Seconds,
			Baseline:  b,
			SlowerPct: pct,
			Regressed: p.Seconds > b*(1+Limit),
		})
	}
	return rows
}
