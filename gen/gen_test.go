package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	good := Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid variant refused: %v", err)
	}
	for _, tc := range []struct {
		v    Variant
		want string
	}{
		{Variant{BlockH: 8, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}, "BLOCK_H=8"},
		{Variant{BlockH: 48, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}, "BLOCK_H=48"},
		{Variant{BlockH: 16, BlockT: 24, SplitK: 1, NumWarps: 4, NumStages: 1}, "BLOCK_T=24"},
		{Variant{BlockH: 16, BlockT: 16, SplitK: 0, NumWarps: 4, NumStages: 1}, "SPLIT_K=0"},
		{Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 3, NumStages: 1}, "num_warps=3"},
		{Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 0}, "num_stages=0"},
		{Variant{BlockH: 16, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 2, WarpSpec: true}, "written for BLOCK_H=64"},
		{Variant{BlockH: 64, BlockT: 64, SplitK: 1, NumWarps: 4, NumStages: 2, WarpSpec: true}, "8 consumer warps"},
		{Variant{BlockH: 16, BlockT: 16, SplitK: 2, NumWarps: 4, NumStages: 1, ClusterMerge: true}, "warp-specialised kernel only"},
		{Variant{BlockH: 64, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 2, WarpSpec: true, ClusterMerge: true}, "2 to 8 splits"},
		{Variant{BlockH: 64, BlockT: 64, SplitK: 16, NumWarps: 8, NumStages: 2, WarpSpec: true, ClusterMerge: true}, "not SPLIT_K=16"},
	} {
		err := tc.v.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error naming %s", tc.v, err, tc.want)
		}
	}
}

// The warp-specialised family is budgeted by partition: it fits sm_90 with
// the shares the template sets, and is refused on a target without wgmma.
func TestCheckWarpSpec(t *testing.T) {
	v := Variant{BlockH: 64, BlockT: 64, SplitK: 2, NumWarps: 8, NumStages: 2, WarpSpec: true}
	sm90, _ := LookupTarget("sm_90")
	b := Check(sm90, v)
	if !b.Fits || b.RegsEst != WSMaxRegs || v.Threads() != 384 {
		t.Fatalf("sm_90: fits=%v regs=%d threads=%d reasons=%v", b.Fits, b.RegsEst, v.Threads(), b.Reasons)
	}
	shares := map[string]int{}
	for _, it := range b.Regs {
		shares[it.Name] = it.Value
	}
	// 168 x 384 registers, WSProducerRegs x 128 to the producer, the rest to
	// the 256 consumer threads rounded down to a multiple of 8.
	if shares["consumer_max"] != 192 || shares["producer_max"] != WSProducerRegs {
		t.Errorf("register shares %v", shares)
	}
	if used := WSMaxRegs * v.Threads(); used > RegsPerSM {
		t.Errorf("launch bound %d registers > %d", used, RegsPerSM)
	}
	sm120, _ := LookupTarget("sm_120")
	r := Check(sm120, v)
	if r.Fits || !strings.Contains(strings.Join(r.Reasons, "; "), "needs wgmma") {
		t.Errorf("sm_120: fits=%v reasons=%v, want a refusal naming wgmma", r.Fits, r.Reasons)
	}
	three := v
	three.NumStages = 3
	if Check(sm90, three).Fits {
		t.Error("3 K buffers (64 KB each) beside Q accepted within 227 KB")
	}
}

// The calibrated ptxas quirks are refused on their own target only, and
// their neighbours (another SPLIT_K or stage count) stay accepted.
func TestCompilerQuirks(t *testing.T) {
	sm90, _ := LookupTarget("sm_90")
	sm120, _ := LookupTarget("sm_120")
	for _, tc := range []struct {
		t    Target
		v    Variant
		fits bool
	}{
		{sm90, Variant{BlockH: 64, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 1}, false},
		{sm90, Variant{BlockH: 64, BlockT: 64, SplitK: 4, NumWarps: 8, NumStages: 1}, true},
		{sm90, Variant{BlockH: 64, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 2}, true},
		{sm120, Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}, false},
		{sm120, Variant{BlockH: 16, BlockT: 16, SplitK: 4, NumWarps: 4, NumStages: 1}, true},
		{sm120, Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 2}, true},
		{sm120, Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 8, NumStages: 1}, true},
	} {
		b := Check(tc.t, tc.v)
		if b.Fits != tc.fits {
			t.Errorf("%s %s: fits=%v, want %v (%v)", tc.t.Name, tc.v.Name(), b.Fits, tc.fits, b.Reasons)
		}
		if !tc.fits && !strings.Contains(strings.Join(b.Reasons, "; "), "ptxas spills") {
			t.Errorf("%s %s: reasons %v do not name the spill", tc.t.Name, tc.v.Name(), b.Reasons)
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
// Triton variant of the last device calibration (gpu/results), and bound it
// from above within 5% for the Gluon ones. A model change that breaks this
// needs a new calibration run, not a new number here.
func TestSmemModelMatchesDeviceCalibration(t *testing.T) {
	for _, f := range []string{"run31-sm90.calib.json", "run24-sm120.calib.json"} {
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
			got := Check(tg, v).SmemBytes
			if v.WarpSpec && (got < r.Smem || got*100 > r.Smem*105) {
				t.Errorf("%s %s: model %d B is not a bound within 5%% above the compiler's %d B", c.Target, r.Variant, got, r.Smem)
			}
			if !v.WarpSpec && got != r.Smem {
				t.Errorf("%s %s: model %d B, compiler %d B", c.Target, r.Variant, got, r.Smem)
			}
		}
	}
}

func TestNearestFits(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	v := Variant{BlockH: 64, BlockT: 64, SplitK: 4, NumWarps: 8, NumStages: 2}
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

// A bundle lists every fitting variant as a configuration, and carries a
// kernel family's code only when one of its configurations uses it.
func TestBundleFamilies(t *testing.T) {
	sm90, _ := LookupTarget("sm_90")
	sm120, _ := LookupTarget("sm_120")
	noWS := DefaultSweep(sm90)
	noWS.WSSplitK, noWS.WSClusterSplitK = nil, nil
	// The one MMA variant here is refused (a ptxas spill the model knows).
	wsOnly := DefaultSweep(sm90)
	wsOnly.BlockH, wsOnly.BlockT, wsOnly.SplitK, wsOnly.NumStages = []int{64}, []int{64}, []int{1}, []int{1}
	mmaCode := []string{"def _mma_decode_kernel(", "def _combine_kernel(", "def _run_mma(", `"mma": (_run_mma, None)`}
	wsCode := []string{"from triton.experimental import gluon", "def _ws_decode_kernel(", "def _combine_bf16_kernel(",
		"def _run_ws(", "def _launch_in_clusters(", `"ws": (_run_ws, _why_not_ws)`}
	for _, tc := range []struct {
		name     string
		s        Sweep
		mma, ws  bool
		fitCount int
	}{
		{"sm_90 default", DefaultSweep(sm90), true, true, 40},
		{"sm_120 default", DefaultSweep(sm120), true, false, 23},
		{"sm_90 without ws", noWS, true, false, 31},
		{"sm_90 ws only", wsOnly, false, true, 9},
	} {
		e, err := Emit(tc.s, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		bundle := string(fileNamed(t, e.Files, BundleFile))
		if n := len(e.Fitting()); n != tc.fitCount {
			t.Errorf("%s: %d variants fit, want %d", tc.name, n, tc.fitCount)
		}
		for _, b := range e.Fitting() {
			if !strings.Contains(bundle, fmt.Sprintf("    %q: Config(%q, ", b.Name, KernelFamily(b.Variant))) {
				t.Errorf("%s: CONFIGS has no entry for %s", tc.name, b.Name)
			}
		}
		for _, b := range e.Budgets {
			if !b.Fits && strings.Contains(bundle, fmt.Sprintf("%q: Config(", b.Name)) {
				t.Errorf("%s: CONFIGS lists the refused %s", tc.name, b.Name)
			}
		}
		for _, family := range []struct {
			want    bool
			markers []string
		}{{tc.mma, mmaCode}, {tc.ws, wsCode}} {
			for _, m := range family.markers {
				if got := strings.Contains(bundle, m); got != family.want {
					t.Errorf("%s: bundle contains %q = %v, want %v", tc.name, m, got, family.want)
				}
			}
		}
	}
}

func fileNamed(t *testing.T, files []File, name string) []byte {
	t.Helper()
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("no %s among the emitted files", name)
	return nil
}

// What patch installs (Bundle) is what emit writes for the default sweep,
// and it carries the measured selection.
func TestBundleIsEmitted(t *testing.T) {
	for _, target := range checkedIn {
		tg, _ := LookupTarget(target)
		e, err := Emit(DefaultSweep(tg), DefaultCommand(tg), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Bundle(tg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, fileNamed(t, e.Files, BundleFile)) {
			t.Errorf("%s: Bundle differs from the emitted %s", target, BundleFile)
		}
		sel, ok, err := MeasuredSelection(tg)
		if err != nil || !ok {
			t.Fatalf("%s: no embedded measured selection (%v)", target, err)
		}
		if diff := cmp.Diff(sel, e.Selection); diff != "" {
			t.Errorf("%s: the default sweep does not carry the measured selection (-want +got):\n%s", target, diff)
		}
		if !strings.Contains(string(got), sel.Source) {
			t.Errorf("%s: the bundle does not name its selection's source %q", target, sel.Source)
		}
	}
}

// A sweep the measured selection does not fit gets the static rule, and
// the emission says why; a sweep it fits keeps it.
func TestSelectionForSweep(t *testing.T) {
	tg, _ := LookupTarget("sm_90")
	s := DefaultSweep(tg)
	s.WSSplitK = []int{1, 2}
	e, err := Emit(s, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.SelectionNote, "does not fit this sweep") || !strings.Contains(e.SelectionNote, "ws_h64_t64_k") {
		t.Errorf("note %q does not say that the measured selection names a missing variant", e.SelectionNote)
	}
	if !strings.HasPrefix(e.Selection.Source, "static rule") {
		t.Errorf("selection source %q, want the static rule", e.Selection.Source)
	}
	wider := DefaultSweep(tg)
	wider.SplitK = append(wider.SplitK, 2)
	e, err = Emit(wider, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.SelectionNote != "" || !strings.HasPrefix(e.Selection.Source, "measured on") {
		t.Errorf("a wider sweep: note %q, source %q; want the measured selection", e.SelectionNote, e.Selection.Source)
	}
}

// --per-variant: one module per fitting variant, holding it alone in every
// bucket, and only its family's code.
func TestPerVariantFiles(t *testing.T) {
	tg, _ := LookupTarget("sm_90")
	e, err := Emit(DefaultSweep(tg), "mlagen emit --target sm_90", nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := e.PerVariantFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(e.Fitting()) {
		t.Fatalf("%d per-variant files for %d fitting variants", len(files), len(e.Fitting()))
	}
	for i, b := range e.Fitting() {
		f := files[i]
		text := string(f.Data)
		if f.Name != b.Name+".py" {
			t.Errorf("file %d is %s, want %s.py", i, f.Name, b.Name)
		}
		if n := strings.Count(text, ": Config("); n != 1 {
			t.Errorf("%s: %d CONFIGS entries, want 1", f.Name, n)
		}
		if n, cells := strings.Count(text, fmt.Sprintf("        %q,\n", b.Name)), len(e.Selection.BatchBounds)*len(e.Selection.TopkBounds); n != cells {
			t.Errorf("%s: named in %d selection cells, want %d", f.Name, n, cells)
		}
		if got, want := strings.Contains(text, "def _ws_decode_kernel("), b.Variant.WarpSpec; got != want {
			t.Errorf("%s: has the warp-specialised kernel = %v", f.Name, got)
		}
		if !strings.Contains(text, "# Command: mlagen emit --target sm_90 --per-variant\n") {
			t.Errorf("%s: header does not name the command", f.Name)
		}
	}
}

// The calibration input lists every variant of the sweep, refused ones too,
// with its Config fields and the model's prediction.
func TestCalibrationInput(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	s := DefaultSweep(tg)
	data, err := CalibrationInput(s)
	if err != nil {
		t.Fatal(err)
	}
	var in calibrationInput
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	budgets := CheckSweep(s)
	if len(in.Variants) != len(budgets) || in.Fitting+in.Refused != len(budgets) || in.Refused == 0 {
		t.Fatalf("%d rows (%d fit, %d refused) for %d variants", len(in.Variants), in.Fitting, in.Refused, len(budgets))
	}
	for i, b := range budgets {
		r := in.Variants[i]
		c := r.Config
		v := Variant{BlockH: c.BlockH, BlockT: c.BlockT, SplitK: c.SplitK, NumWarps: c.NumWarps, NumStages: c.NumStages,
			WarpSpec: c.Family == FamilyWS, ClusterMerge: c.ClusterMerge}
		if r.Variant != b.Name || v != b.Variant || r.Fits != b.Fits || r.SmemBytes != b.SmemBytes || r.RegsEst != b.RegsEst {
			t.Errorf("row %d %+v does not match the budget of %s", i, r, b.Name)
		}
	}
	if in.SmemLimit != tg.SmemLimit || in.Target != tg.Name {
		t.Errorf("target %s limit %d", in.Target, in.SmemLimit)
	}
}

// The warp-specialised template is written for WSTile alone: every such
// variant a default sweep holds has its shape, whatever its SplitK.
func TestWarpSpecialisedVariantsHaveWSTile(t *testing.T) {
	seen := 0
	for _, tg := range Targets() {
		for _, v := range DefaultSweep(tg).Variants() {
			if !v.WarpSpec {
				continue
			}
			seen++
			shape := v
			shape.SplitK, shape.ClusterMerge = 0, false
			if shape != WSTile {
				t.Errorf("%s: %s has the shape %+v, not WSTile's %+v", tg.Name, v.Name(), shape, WSTile)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no default sweep holds a warp-specialised variant")
	}
}
