package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// configJSON is a Config of the emitted module as JSON: the same fields, so
// that calib/calibrate.py builds the module's own Config(**config) from it.
type configJSON struct {
	Family       string `json:"family"`
	BlockH       int    `json:"block_h"`
	BlockT       int    `json:"block_t"`
	SplitK       int    `json:"split_k"`
	NumWarps     int    `json:"num_warps"`
	NumStages    int    `json:"num_stages"`
	ClusterMerge bool   `json:"cluster_merge"`
}

type calibrationRow struct {
	Variant   string     `json:"variant"`
	Config    configJSON `json:"config"`
	Fits      bool       `json:"fits"`
	SmemBytes int        `json:"smem_bytes"`
	RegsEst   int        `json:"regs_per_thread_est"`
	// QRegGroups: for the pipelined family, how many of Q's column groups
	// the model counts in registers; calibrate.py checks the module's
	// kernel is given as many.
	QRegGroups *int `json:"q_reg_groups,omitempty"`
}

type calibrationInput struct {
	Target         string           `json:"target"`
	CalibratedWith string           `json:"calibrated_with"`
	SmemLimit      int              `json:"smem_limit"`
	Fitting        int              `json:"fitting"`
	Refused        int              `json:"refused"`
	Variants       []calibrationRow `json:"variants"`
}

// CalibrationInput is what calib/calibrate.py compiles for a sweep: every
// variant, accepted or refused, with the model's prediction and its
// configuration as the emitted module's Config holds it. calibrate.py
// compiles each one with the kernels of the bundle (a refused one too: its
// Config is not in CONFIGS, but its family's kernel is) and compares. The
// default sweeps' inputs are checked in as calib/<target dir>.budget.json.
func CalibrationInput(s Sweep) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	in := calibrationInput{Target: s.Target.Name, CalibratedWith: CalibratedWith, SmemLimit: s.Target.SmemLimit}
	for _, b := range CheckSweep(s) {
		c := newConfigEntry(b.Variant)
		row := calibrationRow{
			Variant: b.Name,
			Config: configJSON{Family: c.Family, BlockH: c.BlockH, BlockT: c.BlockT, SplitK: c.SplitK,
				NumWarps: c.NumWarps, NumStages: c.NumStages, ClusterMerge: c.ClusterMerge},
			Fits: b.Fits, SmemBytes: b.SmemBytes, RegsEst: b.RegsEst,
		}
		if b.Variant.Pipelined {
			n := ppQRegGroups(s.Target, b.Variant)
			row.QRegGroups = &n
		}
		in.Variants = append(in.Variants, row)
		if b.Fits {
			in.Fitting++
		} else {
			in.Refused++
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(in); err != nil {
		return nil, fmt.Errorf("calibration input for %s: %w", s.Target.Name, err)
	}
	return buf.Bytes(), nil
}
