package gen

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
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

// Cluster code (the helpers, the CLUSTER_MERGE branches, the cluster
// launcher) goes only into modules that hold a wsc_* variant: a reader of
// ws_* or of a bundle without a cluster configuration sees none of it.
func TestClusterCodeOnlyInClusterModules(t *testing.T) {
	tg, err := LookupTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Emit(DefaultSweep(tg), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	markers := []string{"CLUSTER_MERGE", "_cluster_barrier", "_cluster_merge", "DSMEM_SPLIT_K", "_launch_in_clusters"}
	bundleHasCluster := false
	for _, row := range e.Selection.Table {
		for _, n := range row {
			bundleHasCluster = bundleHasCluster || strings.HasPrefix(n, "wsc_")
		}
	}
	seen := map[string]int{}
	for _, f := range e.Files {
		var want bool
		switch {
		case strings.HasPrefix(f.Name, "wsc_"):
			want = true
		case strings.HasPrefix(f.Name, "ws_"):
			want = false
		case f.Name == BundleFile:
			want = bundleHasCluster
		default:
			continue
		}
		seen[f.Name[:strings.IndexAny(f.Name, "_.")]]++
		for _, m := range markers {
			if got := strings.Contains(string(f.Data), m); got != want {
				t.Errorf("%s: contains %q = %v, want %v", f.Name, m, got, want)
			}
		}
	}
	if seen["ws"] == 0 || seen["wsc"] == 0 {
		t.Fatalf("the default sm_90 sweep emitted %d ws_* and %d wsc_* modules; the test needs both", seen["ws"], seen["wsc"])
	}
}
