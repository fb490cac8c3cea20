package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
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
		// The narrow tile is 16 heads, 64 tokens and one consumer warp group,
		// its splits merged by the combine.
		{Variant{BlockH: 32, BlockT: 64, SplitK: 1, NumWarps: 4, NumStages: 2, WarpSpec: true}, "BLOCK_H=16, BLOCK_T=64 and 4 consumer warps"},
		{Variant{BlockH: 16, BlockT: 64, SplitK: 2, NumWarps: 4, NumStages: 2, WarpSpec: true, ClusterMerge: true}, "without a cluster merge"},
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
	shares := func(b Budget) map[string]int {
		m := map[string]int{}
		for _, it := range b.Regs {
			m[it.Name] = it.Value
		}
		return m
	}
	// Without a cluster merge the consumers split by role: 168 x 384
	// registers, WSProducerRegs x 128 to the producer, WSValueRegs x 128 to
	// the value group, the rest to the score group's 128 threads; its need
	// (half the accumulator, the score tile, P) within it.
	if s := shares(b); s["score_max"] != 224 || s["value_max"] != WSValueRegs || s["producer_max"] != WSProducerRegs ||
		s["acc_half"]+s["s"]+s["p"]+s["overhead"] > s["score_max"] || s["acc_half"]+s["overhead"] > s["value_max"] {
		t.Errorf("role split: register shares %v", s)
	}
	// With one, the 256 consumer threads share the rest, rounded down to a
	// multiple of 8.
	merged := v
	merged.ClusterMerge = true
	if s := shares(Check(sm90, merged)); s["consumer_max"] != 192 || s["producer_max"] != WSProducerRegs {
		t.Errorf("column split: register shares %v", s)
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

// The narrow warp-specialised variants: 4 consumer and 8 producer warps (the
// same 384 threads at WSMaxRegs), the producer at WSNarrowProducerRegs and
// the consumer warp group at what that leaves, capped at a thread's 255; two
// and three 64 KB K buffers fit sm_90's 227 KB beside the 16-head Q, four
// do not.
func TestCheckWarpSpecNarrow(t *testing.T) {
	sm90, _ := LookupTarget("sm_90")
	for _, st := range WSNarrowStages {
		v := narrowVariant(1, st)
		b := Check(sm90, v)
		if !b.Fits || v.Threads() != 384 || b.RegsEst != WSMaxRegs {
			t.Fatalf("%s: fits=%v threads=%d regs=%d reasons=%v", v.Name(), b.Fits, v.Threads(), b.RegsEst, b.Reasons)
		}
		s := map[string]int{}
		for _, it := range b.Regs {
			s[it.Name] = it.Value
		}
		// The template keeps per-thread partial row sums beside S^T and P.
		if s["producer_max"] != WSNarrowProducerRegs || s["consumer_max"] != MaxRegsPerThread || s["acc"] != 64 ||
			s["s_p"] != 16 || s["l_part"] != 8 || s["raw_tile"]+wsOverhead > s["producer_max"] {
			t.Errorf("%s: register shares %v", v.Name(), s)
		}
	}
	four := narrowVariant(1, 4)
	if b := Check(sm90, four); b.Fits || !strings.Contains(strings.Join(b.Reasons, "; "), "shared memory") {
		t.Errorf("%s: fits=%v reasons=%v, want a shared-memory refusal", four.Name(), b.Fits, b.Reasons)
	}
	sm120, _ := LookupTarget("sm_120")
	if b := Check(sm120, narrowVariant(1, 2)); b.Fits || !strings.Contains(strings.Join(b.Reasons, "; "), "needs wgmma") {
		t.Errorf("sm_120: fits=%v reasons=%v, want a refusal naming wgmma", b.Fits, b.Reasons)
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
	for _, name := range []string{"sm_120", "sm120", "120", " SM_120 ", "sm_120a", "sm_120f", "sm-120", "12.0"} {
		if tg, err := LookupTarget(name); err != nil || tg.Capability != 120 {
			t.Errorf("%q: got %v, %v", name, tg, err)
		}
	}
	for name, want := range map[string]string{
		"sm_75":   "sm_80 and later",                  // too old: says why
		"7.5":     "sm_80 and later",                  // torch's spelling, too old
		"sm_12":   "did you mean sm_120?",             // a digit short, not an old GPU
		"sm-9":    "did you mean sm_90?",              // likewise
		"sm--90":  `unknown target "sm--90" (known: `, // not a negative capability
		"sm_121":  "--target sm_120's",                // a GPU another target serves: names it
		"sm_999":  `unknown target "sm_999" (known: `, // plain
		"sm_a":    `unknown target "sm_a" (known: `,
		"sm_12a0": `unknown target "sm_12a0" (known: `,
	} {
		_, err := LookupTarget(name)
		// The known targets in capability order, as the help lists them.
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(known: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120)") {
			t.Errorf("%q: got %v, want an error with %q listing the known targets in capability order", name, err, want)
		}
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

// A variant refused for a compiler quirk at its exact shape is pointed at
// its own tile with another warp or stage count where one is as near as a
// larger tile: that is what the quirk's text says compiles clean.
func TestNearestKeepsTheTileOnTies(t *testing.T) {
	for _, c := range []struct {
		target string
		v      Variant
		want   string
	}{
		{"sm_120", Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}, "mma_h16_t16_k1_w4_s2"},
		{"sm_100", Variant{BlockH: 64, BlockT: 32, SplitK: 1, NumWarps: 8, NumStages: 2, Pipelined: true}, "pp_h64_t32_k1_w8_s1"},
	} {
		tg, _ := LookupTarget(c.target)
		if Check(tg, c.v).Fits {
			t.Fatalf("%s %s fits: the case needs a refused variant", c.target, c.v.Name())
		}
		if n, ok := Nearest(tg, c.v); !ok || n.Name() != c.want {
			t.Errorf("%s %s: nearest %s (ok=%v), want %s", c.target, c.v.Name(), n.Name(), ok, c.want)
		}
	}
}

func TestEmitNothingFits(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	s := DefaultSweep(tg)
	s.BlockH, s.BlockT = []int{64}, []int{64}
	s.PPTiles = []PPTile{{BlockH: 64, BlockT: 64, NumWarps: 8, Bufs: 1}}
	e, err := Emit(s, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Fitting()) != 0 {
		t.Fatalf("expected nothing to fit, got %d", len(e.Fitting()))
	}
	for _, n := range e.Selection.Names() {
		if n != SIMTName {
			t.Errorf("with nothing fitting the selection must fall back to %s, got %s", SIMTName, n)
		}
	}
}

// A bundle lists every fitting variant as a configuration, and carries a
// kernel family's code only when one of its configurations uses it; the
// targets without fp8 e4m3 in Triton read the cache as bytes.
func TestBundleFamilies(t *testing.T) {
	sm80, _ := LookupTarget("sm_80")
	sm90, _ := LookupTarget("sm_90")
	sm120, _ := LookupTarget("sm_120")
	noWS := DefaultSweep(sm90)
	noWS.WSSplitK, noWS.WSClusterSplitK, noWS.WSNarrowSplitK = nil, nil, nil
	// The one MMA variant here is refused (a ptxas spill the model knows).
	wsOnly := DefaultSweep(sm90)
	wsOnly.BlockH, wsOnly.BlockT, wsOnly.SplitK, wsOnly.NumStages = []int{64}, []int{64}, []int{1}, []int{1}
	noPP := DefaultSweep(sm120)
	noPP.PPTiles = nil
	mmaCode := []string{"def _mma_decode_kernel(", "def _combine_kernel(", "def _mma_launches(", `"mma": _Family(_mma_launches, None, "float32")`}
	wsCode := []string{"from triton.experimental.gluon.language.nvidia.hopper import (", "def _ws_decode_kernel(",
		"def _ws_launches(", `"ws": _Family(_ws_launches, _why_not_ws, "bfloat16")`, "def _ws_narrow_kernel("}
	ppCode := []string{"from triton.experimental.gluon.language.nvidia.ampere import mma_v2", "def _pp_decode_kernel(",
		"def _pp_launches(", `"pp": _Family(_pp_launches, None, "bfloat16")`}
	gluonCode := []string{"from triton.experimental import gluon", "def _combine_bf16_kernel(", "def _gl_tile_source("}
	bytesCode := []string{"_FP8 = False", "def _e4m3_to_f32(x):", "def _e4m3_word_to_f32(w, j: tl.constexpr):", "def _gl_e4m3_word_to_f32(w, j: gl.constexpr):"}
	for _, tc := range []struct {
		name                string
		s                   Sweep
		mma, ws, pp, bytes_ bool
		fitCount            int
	}{
		{"sm_90 default", DefaultSweep(sm90), true, true, false, false, 58},
		{"sm_120 default", DefaultSweep(sm120), true, false, true, false, 47},
		{"sm_120 without pp", noPP, true, false, false, false, 23},
		{"sm_80 default", DefaultSweep(sm80), true, false, true, true, 0},
		{"sm_90 without ws", noWS, true, false, false, false, 31},
		{"sm_90 ws only", wsOnly, false, true, false, false, 27},
	} {
		e, err := Emit(tc.s, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		bundle := string(fileNamed(t, e.Files, BundleFile))
		if n := len(e.Fitting()); tc.fitCount > 0 && n != tc.fitCount {
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
		}{{tc.mma, mmaCode}, {tc.ws, wsCode}, {tc.pp, ppCode}, {tc.ws || tc.pp, gluonCode}, {tc.bytes_, bytesCode}} {
			for _, m := range family.markers {
				if got := strings.Contains(bundle, m); got != family.want {
					t.Errorf("%s: bundle contains %q = %v, want %v", tc.name, m, got, family.want)
				}
			}
		}
	}
}

// pyBoundsText is a bound list as the bundle writes it.
func pyBoundsText(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = "None"
		if n != 0 {
			parts[i] = fmt.Sprint(n)
		}
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
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
// and it carries the measured selection where the target has one (all but
// sm_100), else the static rule, by heads either way.
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
		// The bundle's tables have the selections' heads buckets: 16, 32 and
		// more for the static rule, the head counts measured otherwise.
		for _, want := range []string{
			"\nHEAD_BOUNDS = " + pyBoundsText(e.Selection.HeadBounds()) + "\n",
			"\nFULL_HEAD_BOUNDS = " + pyBoundsText(e.Selection.ForWholeCall().HeadBounds()) + "\n",
		} {
			if !strings.Contains(string(got), want) {
				t.Errorf("%s: the bundle has no %q", target, want)
			}
		}
		sel, ok, err := MeasuredSelection(tg)
		if err != nil {
			t.Fatal(err)
		}
		// sm_100 alone has no measured table: nothing lent stands in for it.
		if measured := target != "sm_100"; ok != measured {
			t.Fatalf("%s: embedded measured selection %v, want %v", target, ok, measured)
		}
		if !ok {
			if !slices.Equal(e.Selection.HeadBounds(), []int{16, 32, 0}) {
				t.Errorf("%s: the static rule's heads buckets are %v, want 16, 32 and more", target, e.Selection.HeadBounds())
			}
			if !strings.HasPrefix(e.Selection.Source, "static rule") || !strings.Contains(string(got), e.Selection.Source) {
				t.Errorf("%s: source %q, want the static rule, named in the bundle", target, e.Selection.Source)
			}
			continue
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
	// The curated sweep fits every one of them: the flags left them out,
	// and the emission names them (each once, none the sweep fits).
	if len(e.SelectionLeftOut) == 0 {
		t.Error("no variant named as left out by the sweep's flags")
	}
	fits := fitNames(e.Budgets)
	for i, name := range e.SelectionLeftOut {
		if fits[name] || !strings.HasPrefix(name, "ws_h64_t64_k") || slices.Contains(e.SelectionLeftOut[:i], name) {
			t.Errorf("left out %v: %s is not a missing ws_h64 variant named once", e.SelectionLeftOut, name)
		}
	}
	wider := DefaultSweep(tg)
	wider.SplitK = append(wider.SplitK, 2)
	e, err = Emit(wider, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.SelectionNote != "" || len(e.SelectionLeftOut) > 0 || !strings.HasPrefix(e.Selection.Source, "measured on") {
		t.Errorf("a wider sweep: note %q, left out %v, source %q; want the measured selection", e.SelectionNote, e.SelectionLeftOut, e.Selection.Source)
	}
}

// ParseSelection reads back what MarshalSelection writes, and names what is
// not a selection instead of reading it as an empty one.
func TestParseSelection(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	want, ok, err := MeasuredSelection(tg)
	if err != nil || !ok {
		t.Fatalf("sm_120's embedded selection: ok %v, %v", ok, err)
	}
	data, err := MarshalSelection(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSelection(data)
	if err != nil {
		t.Fatalf("ParseSelection(MarshalSelection(sm_120's)): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ name, data, err string }{
		{"results file", `{"target": "sm_120", "gpu": "H200", "correctness": [], "timing": []}`, "results file of the harness"},
		{"unknown field", `{"target": "sm_120", "tables": []}`, `unknown field "tables"`},
		{"no target", `{"batch_bounds": [1, 0]}`, `its target "" is not one of mlagen's`},
		{"target spelt otherwise", `{"target": "sm120"}`, `its target "sm120"`},
		{"not JSON", `target: sm_120`, "not a selection"},
		// What a table may hold, since a user's file is rendered into the
		// module: bounds that bucket every call, and names that are names.
		{"descending batch bounds", sel1(`[64, 16, 1, 0]`, `[512, 0]`, `"a"`), "batch_bounds [64 16 1 0]: bound 16 after 64"},
		{"repeated bound", sel1(`[1, 1, 64, 0]`, `[512, 0]`, `"a"`), "bound 1 after 1"},
		{"negative bound", sel1(`[-5, 16, 64, 0]`, `[512, 0]`, `"a"`), "want positive bounds"},
		{"unbounded in the middle", sel1(`[1, 0, 64, 0]`, `[512, 0]`, `"a"`), "want positive bounds"},
		{"topk bounds", sel1(`[1, 16, 64, 0]`, `[2048, 512]`, `"a"`), "topk_bounds [2048 512]"},
		{"quote in a name", sel1(`[1, 16, 64, 0]`, `[512, 0]`, `"a\", __import__(\"os\"), \""`), "not a configuration's name"},
		{"unknown peer", sel1(`[1, 16, 64, 0]`, `[512, 0]`, `"peer:bogus"`), `"peer:bogus": SGLang's path does not reach that peer per cache`},
		{"peer not reached per cache", sel1(`[1, 16, 64, 0]`, `[512, 0]`, `"peer:flashinfer"`), "reached: peer:sglang-triton, peer:simt-baseline"},
	} {
		if _, err := ParseSelection([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// A selection's source comes from a user's file (a results file's GPU name
// and path, through select) and lands in the module's docstring: whatever
// it holds, the docstring reads as it and ends where it did.
func TestSelectionSourceEscaped(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	sel, ok, err := MeasuredSelection(tg)
	if err != nil || !ok {
		t.Fatalf("sm_120's embedded selection: ok %v, %v", ok, err)
	}
	bundle := func(source string) string {
		s := sel
		s.Source = source
		e, err := Emit(DefaultSweep(tg), "mlagen emit --selection x.json", &s)
		if err != nil {
			t.Fatal(err)
		}
		return string(e.Bundle())
	}
	plain := bundle("H200 (results.json)")
	hostile := "X \"\"\" + __import__(\"os\").system(\"echo pwned\") + \"\"\" card\\Nrun.json\n\x07 \u2028"
	got := bundle(hostile)
	if n, want := strings.Count(got, `"""`), strings.Count(plain, `"""`); n != want {
		t.Errorf("the module has %d triple quotes with that source, %d with a plain one", n, want)
	}
	want := `X \"\"\" + __import__(\"os\").system(\"echo pwned\") + \"\"\" card\\Nrun.json\x0a\x07 \u2028`
	if !strings.Contains(got, "(source: "+want+")") {
		t.Errorf("the docstring does not hold the source escaped as %s", want)
	}
}

// sel1 is an sm_120 selection of the given bounds (JSON lists) whose every
// cell holds name (a JSON string).
func sel1(batch, topk, name string) string {
	var b, k []int
	_ = json.Unmarshal([]byte(batch), &b)
	_ = json.Unmarshal([]byte(topk), &k)
	row := strings.TrimSuffix(strings.Repeat(name+", ", len(k)), ", ")
	rows := strings.TrimSuffix(strings.Repeat("["+row+"], ", len(b)), ", ")
	return fmt.Sprintf(`{"target": "sm_120", "source": "test", "batch_bounds": %s, "topk_bounds": %s, "table": [%s]}`, batch, topk, rows)
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
		// Every cell of the per-cache tables, and the whole call's, which
		// are the same tables here.
		cells := 0
		for _, table := range e.Selection.Tables() {
			cells += 2 * len(table) * len(e.Selection.TopkBounds)
		}
		if n := strings.Count(text, fmt.Sprintf("            %q,\n", b.Name)); n != cells {
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
			WarpSpec: c.Family == FamilyWS, ClusterMerge: c.ClusterMerge, Pipelined: c.Family == FamilyPP}
		if r.Variant != b.Name || v != b.Variant || r.Fits != b.Fits || r.SmemBytes != b.SmemBytes || r.RegsEst != b.RegsEst {
			t.Errorf("row %d %+v does not match the budget of %s", i, r, b.Name)
		}
	}
	if in.SmemLimit != tg.SmemLimit || in.Target != tg.Name {
		t.Errorf("target %s limit %d", in.Target, in.SmemLimit)
	}
}

// The warp-specialised template is written for WSTile and, narrow, for
// 16-head tiles of WSNarrowStages K buffers: every such variant a default
// sweep holds has one of their shapes, whatever its SplitK.
func TestWarpSpecialisedVariantsHaveWSTile(t *testing.T) {
	seen, narrow := 0, 0
	for _, tg := range Targets() {
		for _, v := range DefaultSweep(tg).Variants() {
			if !v.WarpSpec {
				continue
			}
			seen++
			if v.Narrow() {
				narrow++
				if want := narrowVariant(v.SplitK, v.NumStages); v != want || !slices.Contains(WSNarrowStages, v.NumStages) {
					t.Errorf("%s: %s is not a narrow tile of %v K buffers: %+v", tg.Name, v.Name(), WSNarrowStages, v)
				}
				continue
			}
			shape := v
			shape.SplitK, shape.ClusterMerge = 0, false
			if shape != WSTile {
				t.Errorf("%s: %s has the shape %+v, not WSTile's %+v", tg.Name, v.Name(), shape, WSTile)
			}
		}
	}
	if seen == 0 || narrow == 0 {
		t.Fatalf("the default sweeps hold %d warp-specialised variants, %d of them narrow", seen, narrow)
	}
}

// The pipelined family's shared memory is Q, the K buffer sets and the
// probabilities' round trip, exactly what Triton 3.6 allocated for K1's
// compiled shapes (lab/sm120/NOTES.md); its refusals name the limit.
func TestCheckPipelined(t *testing.T) {
	sm120, _ := LookupTarget("sm_120")
	sm80, _ := LookupTarget("sm_80")
	for _, tc := range []struct {
		v    Variant
		smem int
		fits bool
	}{
		{PPTileH64.variant(2), 100352, true}, // 65,536 + 32,768 + 2,048 (two halves of 16)
		{PPTileH16.variant(8), 83968, true},  // 16,384 + 65,536 + 2,048
		{PPTile{64, 16, 8, 2}.variant(1), 100352, true},
		{PPTile{64, 32, 8, 2}.variant(1), 133120, false}, // two sets of 32 tokens beside 64 heads: > 99 KB
	} {
		b := Check(sm120, tc.v)
		if b.SmemBytes != tc.smem || b.Fits != tc.fits {
			t.Errorf("%s: smem %d fits %v (%v), want %d %v", tc.v.Name(), b.SmemBytes, b.Fits, b.Reasons, tc.smem, tc.fits)
		}
	}
	wide := Check(sm120, PPTile{64, 64, 8, 1}.variant(1))
	if reasons := strings.Join(wide.Reasons, "; "); wide.Fits || !strings.Contains(reasons, "101,376 B limit") {
		t.Errorf("pp_h64_t64 on sm_120: %v", wide.Reasons)
	}
	if n, ok := Nearest(sm120, wide.Variant); !ok || !n.Pipelined || !Check(sm120, n).Fits {
		t.Errorf("nearest fit of %s: %s (ok %v), want a fitting pipelined variant", wide.Name, n.Name(), ok)
	}
	// The nearest fit of a refused pipelined variant is one a sweep can
	// hold: a tile of the target's (the flags set only split counts).
	for _, tg := range Targets() {
		s := DefaultSweep(tg)
		for _, b := range CheckSweep(s) {
			if b.Fits || !b.Variant.Pipelined {
				continue
			}
			n, err := ParseVariantName(b.Nearest)
			inSweep := slices.ContainsFunc(s.PPTiles, func(p PPTile) bool { return p.variant(n.SplitK) == n })
			if err != nil || !inSweep || n.SplitK != b.Variant.SplitK {
				t.Errorf("%s: %s refused, nearest fit %q: want a tile of the sweep at its split count", tg.Name, b.Name, b.Nearest)
			}
		}
	}
	// sm_80 has 163 KB: the two buffer sets fit there as far as shared memory goes.
	if b := Check(sm80, PPTile{64, 32, 8, 2}.variant(1)); b.SmemBytes > sm80.SmemLimit {
		t.Errorf("sm_80: %d B", b.SmemBytes)
	}
}

// The pipelined template is written for 16-row warps down the heads, whole
// 8-column MMA tiles across the tokens and a gather of whole 32-bit words:
// other shapes are invalid.
func TestValidatePipelined(t *testing.T) {
	for _, tc := range []struct {
		v    Variant
		want string
	}{
		{Variant{BlockH: 128, BlockT: 32, SplitK: 1, NumWarps: 8, NumStages: 1, Pipelined: true}, "BLOCK_H 16, 32 or 64"},
		{Variant{BlockH: 64, BlockT: 32, SplitK: 1, NumWarps: 2, NumStages: 1, Pipelined: true}, "multiple of BLOCK_H / 16"},
		{Variant{BlockH: 16, BlockT: 32, SplitK: 1, NumWarps: 8, NumStages: 1, Pipelined: true}, "less than one 8-column MMA tile"},
		{Variant{BlockH: 64, BlockT: 32, SplitK: 1, NumWarps: 8, NumStages: 3, Pipelined: true}, "one or two K buffer sets"},
		// 32 bytes a thread of a group: the gather loads 1 to 4 32-bit words.
		{Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 1, NumStages: 1, Pipelined: true}, "whole 32-bit words"},
		{Variant{BlockH: 64, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 2, Pipelined: true, WarpSpec: true}, "no warp specialisation"},
	} {
		if err := tc.v.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.v, err, tc.want)
		}
	}
	for _, tile := range DefaultSweep(Targets()[0]).PPTiles {
		if err := tile.variant(4).Validate(); err != nil {
			t.Errorf("default tile %+v: %v", tile, err)
		}
	}
}

// The role-split tile: one shape (64 heads, 16-token slots, 2 to 4 of
// them), budgeted per partition against what setmaxnreg gives each, on the
// targets whose ptxas has setmaxnreg; in sm_120's sweep and module only.
func TestRoleSplit(t *testing.T) {
	rs := PPTileRoleSplit.variant(2)
	if !rs.RoleSplit() || rs.Name() != "pp_h64_t16_k2_w16_s3" || rs.Threads() != 512 {
		t.Fatalf("%s: role split %v, %d threads", rs.Name(), rs.RoleSplit(), rs.Threads())
	}
	if back, err := ParseVariantName(rs.Name()); err != nil || back != rs {
		t.Errorf("ParseVariantName(%s) = %+v, %v", rs.Name(), back, err)
	}
	for _, tc := range []struct {
		v    Variant
		want string
	}{
		{PPTile{64, 32, 16, 3}.variant(1), "16-token K slots"},
		{PPTile{32, 16, 16, 3}.variant(1), "BLOCK_H 64"},
		{PPTile{64, 16, 16, 1}.variant(1), "2 to 4 K slots"},
		{PPTile{64, 16, 16, 5}.variant(1), "2 to 4 K slots"},
	} {
		if err := tc.v.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.v.Name(), err, tc.want)
		}
	}
	// The partitions' registers add up to the launch's, 65,536 a program.
	if got := PPRoleSplitValueRegs()*PPRoleSplitValueWarps + PPRoleSplitScoreRegs*PPRoleSplitScoreWarps +
		PPRoleSplitProducerRegs*PPRoleSplitProducerWarps; got != PPRoleSplitMaxRegs*PPRoleSplitWarps || PPRoleSplitMaxRegs*32*PPRoleSplitWarps != RegsPerSM {
		t.Errorf("setmaxnreg shares %d registers a warp lane, want the launch's %d", got, PPRoleSplitMaxRegs*PPRoleSplitWarps)
	}
	sm120, _ := LookupTarget("sm_120")
	for _, tc := range []struct {
		slots, smem int
		fits        bool
	}{
		// Q's last 4 groups 32,768 + slots x 16,384 + P ring 4,096 +
		// softmax 1,024 + sync 640.
		{2, 71296, true},
		{3, 87680, true},   // compiled: 87,584 per cache, 87,632 as the whole call
		{4, 104064, false}, // over 101,376
	} {
		b := Check(sm120, PPTile{64, 16, 16, tc.slots}.variant(1))
		if b.SmemBytes != tc.smem || b.Fits != tc.fits || b.RegsEst != PPRoleSplitMaxRegs {
			t.Errorf("%d slots: smem %d, regs %d, fits %v (%v), want %d %v", tc.slots, b.SmemBytes, b.RegsEst, b.Fits, b.Reasons, tc.smem, tc.fits)
		}
	}
	for _, name := range []string{"sm_80", "sm_86", "sm_89"} {
		tg, _ := LookupTarget(name)
		b := Check(tg, rs)
		if b.Fits || !strings.Contains(strings.Join(b.Reasons, "; "), "setmaxnreg") {
			t.Errorf("%s on %s: fits %v, %v; want refused for want of setmaxnreg", rs.Name(), name, b.Fits, b.Reasons)
		}
	}
	for _, tg := range Targets() {
		inSweep := slices.Contains(DefaultSweep(tg).PPTiles, PPTileRoleSplit)
		bundle, err := Bundle(tg)
		if err != nil {
			t.Fatal(err)
		}
		inModule := strings.Contains(string(bundle), "def _rs_decode_kernel(")
		routed := strings.Contains(string(bundle), "return _rs_decode_kernel, dict(num_warps=_RS_VALUE_WARPS, maxnreg=_RS_MAXNREG)")
		if want := tg.Name == "sm_120"; inSweep != want || inModule != want || routed != want {
			t.Errorf("%s: role split in the sweep %v, kernel in the module %v, launched %v; want %v", tg.Name, inSweep, inModule, routed, want)
		}
	}
}

// A selection's heads buckets: ascending bounds, one table each of the
// batch x topk shape; the whole call runs the per-cache tables when it has
// none of its own.
func TestSelectionHeads(t *testing.T) {
	row := []string{"a", "b"}
	sel := Selection{Target: "sm_120", Source: "test", BatchBounds: []int{1, 0}, TopkBounds: []int{512, 0},
		Table: [][]string{row, row}, FewerHeads: []HeadsTable{{16, [][]string{row, {"c", "b"}}}, {32, [][]string{row, row}}}}
	fits := map[string]bool{"a": true, "b": true, "c": true}
	if err := sel.Validate(fits); err != nil {
		t.Fatal(err)
	}
	if got := sel.HeadBounds(); !slices.Equal(got, []int{16, 32, 0}) {
		t.Errorf("head bounds %v", got)
	}
	if tables := sel.Tables(); len(tables) != 3 || tables[0][1][0] != "c" {
		t.Errorf("tables %v", tables)
	}
	w := sel.ForWholeCall()
	if w.WholeCall != nil || !strings.Contains(w.Source, "per-cache selection at the call's total tokens") || len(w.Tables()) != 3 {
		t.Errorf("derived whole call %+v", w)
	}
	for _, bad := range []func(*Selection){
		func(s *Selection) { s.FewerHeads = []HeadsTable{{32, s.Table}, {16, s.Table}} },
		func(s *Selection) { s.FewerHeads = []HeadsTable{{16, [][]string{row}}} },
		func(s *Selection) {
			s.WholeCall = &Selection{BatchBounds: []int{0}, TopkBounds: []int{0}, Table: [][]string{{"zzz"}}}
		},
	} {
		s := sel
		bad(&s)
		if err := s.Validate(fits); err == nil {
			t.Errorf("%+v validated", s)
		}
	}
}

// The pipelined family takes every register (maxnreg 255) exactly where no
// two of its programs fit one multiprocessor's shared memory: every
// mma.sync target, but not sm_100, whose 228 KB hold two 16-head tiles.
func TestPipelinedRegisterBound(t *testing.T) {
	const bound = "_pp_decode_kernel, dict(num_warps=c.num_warps, maxnreg=_PP_MAXNREG)"
	for _, tc := range []struct {
		target string
		want   bool
	}{{"sm_80", true}, {"sm_86", true}, {"sm_89", true}, {"sm_100", false}, {"sm_120", true}} {
		tg, _ := LookupTarget(tc.target)
		bundle, err := Bundle(tg)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(bundle), "def _pp_launches(") {
			t.Fatalf("%s: the bundle has no pipelined family", tc.target)
		}
		got := strings.Contains(string(bundle), bound) && strings.Contains(string(bundle), "\n_PP_MAXNREG = 255\n")
		if got != tc.want {
			t.Errorf("%s: pipelined family launched at maxnreg 255 = %v, want %v", tc.target, got, tc.want)
		}
	}
	sm120, _ := LookupTarget("sm_120") // 101,376 B a program, 102,400 an SM
	for _, tc := range []struct {
		smem []int
		want bool
	}{
		{nil, false},
		{[]int{50176}, false},        // 2 x (50,176 + 1,024) = 102,400: two fit
		{[]int{50177}, true},         // one byte more: one
		{[]int{83968, 100352}, true}, // the shipped 16- and 64-head tiles
		{[]int{83968, 40000}, false}, // a small one could pair up
	} {
		if got := onePerSM(sm120, tc.smem); got != tc.want {
			t.Errorf("onePerSM(sm_120, %v) = %v, want %v", tc.smem, got, tc.want)
		}
	}
}

// The static rule's 16-head table (a rank's under tensor parallelism 4)
// runs 16-row tiles, not 64-row ones with 48 rows masked, wherever a
// 16-row one fits: both give the same programs. (At 32 heads the 64-row
// pipelined tile's half-masked rows can win: the narrower tiles there are
// 16 rows, twice the programs and twice the reads of each tile.)
func TestHeuristicHeadBlocks(t *testing.T) {
	for _, tg := range Targets() {
		s := DefaultSweep(tg)
		budgets := CheckSweep(s)
		sel := HeuristicSelection(tg, s.Heads, budgets)
		for i, h := range sel.FewerHeads {
			if h.MaxHeads != 16 {
				continue
			}
			narrow := slices.ContainsFunc(budgets, func(b Budget) bool { return b.Fits && b.Variant.BlockH <= h.MaxHeads })
			for _, row := range h.Table {
				for _, name := range row {
					v, err := ParseVariantName(name)
					if err == nil && narrow && v.BlockH > h.MaxHeads {
						t.Errorf("%s: heads bucket %d (<= %d) runs %s", tg.Name, i, h.MaxHeads, name)
					}
				}
			}
		}
	}
}
