package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The calibration table says exactly which targets a committed calibration
// covers: calib/<dir>.budget.json is what calib/calibrate.py compiles, and
// each names the compiler it was calibrated with. A file for a target the
// table omits, or a table entry with no file, fails.
func TestCalibrationTableMatchesCalibFiles(t *testing.T) {
	for _, tg := range Targets() {
		path := filepath.Join("..", "calib", tg.Dir()+".budget.json")
		data, err := os.ReadFile(path)
		c := CalibrationOf(tg)
		if os.IsNotExist(err) {
			if c.Calibrated() {
				t.Errorf("%s: the table says calibrated against %s, but %s does not exist", tg.Name, c.Compiler, path)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Target         string `json:"target"`
			CalibratedWith string `json:"calibrated_with"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.Target != tg.Name || !c.Calibrated() || f.CalibratedWith != c.Compiler {
			t.Errorf("%s: %s is for %s with %q; the table says %q", tg.Name, path, f.Target, f.CalibratedWith, c)
		}
	}
}

// Issue 29 item 4: budget says, per target, whether its model is calibrated
// and against which Triton, and "estimate, never compiled" where it is not.
func TestBudgetReportsSayCalibratedOrEstimate(t *testing.T) {
	for _, tg := range Targets() {
		s := DefaultSweep(tg)
		bs := CheckSweep(s)
		var report, table bytes.Buffer
		WriteBudgetReport(&report, s, bs)
		WriteBudgetTable(&table, s, bs)
		first := func(text string, n int) string {
			return strings.Join(strings.SplitN(text, "\n", n+1)[:n], "\n")
		}
		head := first(report.String(), 2) + "\n" + first(table.String(), 1)
		summary := bs[0].Summary()
		if CalibrationOf(tg).Calibrated() {
			for _, text := range []string{head, summary} {
				if !strings.Contains(text, "calibrated against Triton 3.6.0") || strings.Contains(text, "estimate") {
					t.Errorf("%s (calibrated): %q", tg.Name, text)
				}
			}
			continue
		}
		for _, text := range []string{head, summary} {
			if !strings.Contains(text, "estimate, never compiled") || strings.Contains(text, "calibrated against") {
				t.Errorf("%s (no calibration): %q", tg.Name, text)
			}
		}
	}
}

// The budget tables of the targets no calibration covers, so that a change
// to the model shows there too.
func TestGoldenBudgetEstimates(t *testing.T) {
	for _, tg := range Targets() {
		if CalibrationOf(tg).Calibrated() {
			continue // TestGoldenBudget holds those
		}
		s := DefaultSweep(tg)
		var buf bytes.Buffer
		WriteBudgetTable(&buf, s, CheckSweep(s))
		checkGolden(t, filepath.Join("..", "golden", "budget", tg.Dir()+".txt"), buf.Bytes())
	}
}
