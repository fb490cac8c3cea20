package gen

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	good := Variant{16, 16, 1, 4, 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid variant refused: %v", err)
	}
	for _, tc := range []struct {
		v    Variant
		want string
	}{
		{Variant{8, 16, 1, 4, 1}, "BLOCK_H=8"},
		{Variant{48, 16, 1, 4, 1}, "BLOCK_H=48"},
		{Variant{16, 24, 1, 4, 1}, "BLOCK_T=24"},
		{Variant{16, 16, 0, 4, 1}, "SPLIT_K=0"},
		{Variant{16, 16, 1, 3, 1}, "num_warps=3"},
		{Variant{16, 16, 1, 4, 0}, "num_stages=0"},
	} {
		err := tc.v.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error naming %s", tc.v, err, tc.want)
		}
	}
}

func TestLookupTarget(t *testing.T) {
	for _, name := range []string{"sm_120", "sm120", "120", " SM_120 "} {
		if tg, err := LookupTarget(name); err != nil || tg.Capability != 120 {
			t.Errorf("%q: got %v, %v", name, tg, err)
		}
	}
	if _, err := LookupTarget("sm_75"); err == nil || !strings.Contains(err.Error(), "sm_120") {
		t.Errorf("unknown target: got %v, want an error listing the known ones", err)
	}
}

func TestVariantNameRoundTrip(t *testing.T) {
	for _, tg := range Targets() {
		for _, v := range DefaultSweep(tg).Variants() {
			got, err := ParseVariantName(v.Name())
			if err != nil || got != v {
				t.Errorf("%s: parsed back as %v, %v", v.Name(), got, err)
			}
		}
	}
	if _, err := ParseVariantName("mma_h16_t16"); err == nil {
		t.Error("short name accepted")
	}
}

// The model's shared memory must equal what Triton 3.6 allocated for every
// variant of the last device calibration (gpu/results). A model change that
// breaks this needs a new calibration run, not a new number here.
func TestSmemModelMatchesDeviceCalibration(t *testing.T) {
	for _, f := range []string{"run3-sm90.calib.json", "run3-sm120.calib.json"} {
		data, err := os.ReadFile("../gpu/results/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Target string
			Rows   []struct {
				Variant string
				Smem    int
			}
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		tg, err := LookupTarget(c.Target)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Rows) == 0 {
			t.Fatalf("%s: no rows", f)
		}
		for _, r := range c.Rows {
			v, err := ParseVariantName(r.Variant)
			if err != nil {
				t.Fatal(err)
			}
			if got := Check(tg, v).SmemBytes; got != r.Smem {
				t.Errorf("%s %s: model %d B, compiler %d B", c.Target, r.Variant, got, r.Smem)
			}
		}
	}
}

func TestNearestFits(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	v := Variant{64, 64, 4, 8, 2}
	b := Check(tg, v)
	if b.Fits {
		t.Fatalf("%s should not fit sm_120 (%d B smem)", v.Name(), b.SmemBytes)
	}
	n, ok := Nearest(tg, v)
	if !ok || !Check(tg, n).Fits || n.SplitK != v.SplitK {
		t.Errorf("nearest %v (ok=%v) must fit and keep SPLIT_K", n, ok)
	}
}

func TestEmitNothingFits(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	s := DefaultSweep(tg)
	s.BlockH, s.BlockT = []int{64}, []int{64}
	e, err := Emit(s, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Fitting()) != 0 {
		t.Fatalf("expected nothing to fit, got %d", len(e.Fitting()))
	}
	for _, row := range e.Selection.Table {
		for _, n := range row {
			if n != SIMTName {
				t.Errorf("with nothing fitting the selection must fall back to %s, got %s", SIMTName, n)
			}
		}
	}
}
