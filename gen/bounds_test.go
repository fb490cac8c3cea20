package gen

import (
	"math"
	"math/big"
	"runtime"
	"strings"
	"testing"
)

// Issue 30 bug 13: BLOCK_H 2^54 passed Validate (a power of two of at least
// 16), wrapped the shared memory to 32,768 B and gave negative registers.
func TestVariantBounds(t *testing.T) {
	base := Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}
	for _, tc := range []struct {
		set  func(*Variant)
		want string
	}{
		{func(v *Variant) { v.BlockH = 1 << 54 }, "BLOCK_H=18014398509481984: must be a power of two of at least 16 (tl.dot's smallest M) and at most 256"},
		{func(v *Variant) { v.BlockH = 512 }, "BLOCK_H=512"},
		{func(v *Variant) { v.BlockT = 512 }, "BLOCK_T=512"},
		{func(v *Variant) { v.BlockT = math.MinInt }, "BLOCK_T=-9223372036854775808"},
		{func(v *Variant) { v.SplitK = MaxSplitK + 1 }, "SPLIT_K=257: must be at least 1 and at most 256"},
		{func(v *Variant) { v.SplitK = math.MaxInt }, "SPLIT_K=9223372036854775807"},
		{func(v *Variant) { v.NumStages = MaxNumStages + 1 }, "num_stages=9: must be at least 1 and at most 8"},
		{func(v *Variant) { v.NumWarps = 1 << 40 }, "num_warps=1099511627776"},
	} {
		v := base
		tc.set(&v)
		if err := v.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", v, err, tc.want)
		}
	}
	for _, v := range []Variant{
		{BlockH: MaxBlockH, BlockT: MaxBlockT, SplitK: MaxSplitK, NumWarps: 16, NumStages: MaxNumStages},
		{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 1, NumStages: 1},
	} {
		if err := v.Validate(); err != nil {
			t.Errorf("%s at the bounds refused: %v", v.Name(), err)
		}
	}
}

// Check never computes with an unbounded value: an invalid variant built in
// code is refused as invalid, with no numbers.
func TestCheckExtremeValues(t *testing.T) {
	for _, tg := range Targets() {
		for _, x := range []int{math.MaxInt, math.MinInt, 1 << 54, 1 << 62, -16, 0} {
			for _, v := range []Variant{
				{BlockH: x, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1},
				{BlockH: 16, BlockT: x, SplitK: 1, NumWarps: 4, NumStages: 1},
				{BlockH: 16, BlockT: 16, SplitK: x, NumWarps: 4, NumStages: 1},
				{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: x, NumStages: 1},
				{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: x},
				{BlockH: 64, BlockT: 64, SplitK: x, NumWarps: 8, NumStages: 2, WarpSpec: true, ClusterMerge: true},
			} {
				b := Check(tg, v)
				if b.Fits || b.SmemBytes != 0 || b.RegsEst != 0 || len(b.Reasons) != 1 || !strings.HasPrefix(b.Reasons[0], "not a valid variant: ") {
					t.Fatalf("%s %+v: fits=%v smem=%d regs=%d reasons=%q", tg.Name, v, b.Fits, b.SmemBytes, b.RegsEst, b.Reasons)
				}
			}
		}
	}
}

// For every corner of the accepted ranges, on every target, each breakdown
// term and total is what exact (unbounded) arithmetic gives, so nothing
// wrapped, and the largest tiles are refused by the model itself.
func TestCheckAtTheBounds(t *testing.T) {
	for _, tg := range Targets() {
		for _, h := range []int{16, MaxBlockH} {
			for _, bt := range []int{16, MaxBlockT} {
				for _, k := range []int{1, MaxSplitK} {
					for _, w := range []int{1, 16} {
						for _, st := range []int{1, 2, MaxNumStages} {
							v := Variant{BlockH: h, BlockT: bt, SplitK: k, NumWarps: w, NumStages: st}
							b := Check(tg, v)
							exactTotals(t, tg, b)
							if (h == MaxBlockH || bt == MaxBlockT) && b.Fits {
								t.Errorf("%s %s fits: %d B", tg.Name, v.Name(), b.SmemBytes)
							}
						}
					}
				}
			}
		}
		for _, k := range []int{1, MaxSplitK} {
			exactTotals(t, tg, Check(tg, Variant{BlockH: 64, BlockT: 64, SplitK: k, NumWarps: 8, NumStages: 2, WarpSpec: true}))
		}
	}
}

func exactTotals(t *testing.T, tg Target, b Budget) {
	t.Helper()
	sum := new(big.Int)
	for _, it := range b.Smem {
		if it.Value < 0 || it.Value >= math.MaxInt {
			t.Fatalf("%s %s: %s = %d", tg.Name, b.Name, it.Name, it.Value)
		}
		sum.Add(sum, big.NewInt(int64(it.Value)))
	}
	if sum.Cmp(big.NewInt(int64(b.SmemBytes))) != 0 {
		t.Errorf("%s %s: shared memory %d, items sum to %s", tg.Name, b.Name, b.SmemBytes, sum)
	}
	q := new(big.Int).Mul(big.NewInt(int64(b.Variant.BlockH)), big.NewInt(headDim*bf16))
	if b.Smem[0].Name != "q" || q.Cmp(big.NewInt(int64(b.Smem[0].Value))) != 0 {
		t.Errorf("%s %s: q tile %d B, exactly %s", tg.Name, b.Name, b.Smem[0].Value, q)
	}
	for _, it := range b.Regs {
		if it.Value < 0 {
			t.Errorf("%s %s: register term %s = %d", tg.Name, b.Name, it.Name, it.Value)
		}
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	for _, tc := range []struct{ got, want int }{
		{satMul(1<<32, 1<<32), math.MaxInt},
		{satMul(math.MaxInt, 2), math.MaxInt},
		{satMul(-1, 2), math.MaxInt},
		{satMul(1<<31, 1<<31), 1 << 62},
		{satMul(0, math.MaxInt), 0},
		{satAdd(math.MaxInt, 1), math.MaxInt},
		{satAdd(math.MaxInt-1, 1), math.MaxInt},
		{satAdd(-5, 1), math.MaxInt},
		{prod(1<<54, headDim, bf16), math.MaxInt},
		{prod(64, headDim, bf16), 65536},
	} {
		if tc.got != tc.want {
			t.Errorf("got %d, want %d", tc.got, tc.want)
		}
	}
}

func TestSweepBounds(t *testing.T) {
	tg, _ := LookupTarget("sm_90")
	big := DefaultSweep(tg)
	big.BlockH = []int{1 << 54}
	if err := big.Validate(); err == nil || !strings.Contains(err.Error(), "--block-h 18014398509481984: BLOCK_H=18014398509481984") {
		t.Errorf("BLOCK_H 2^54: %v", err)
	}
	cl := DefaultSweep(tg)
	cl.WSClusterSplitK = []int{16}
	if err := cl.Validate(); err == nil || !strings.Contains(err.Error(), "--ws-cluster-split-k 16") {
		t.Errorf("cluster of 16: %v", err)
	}
	heads := DefaultSweep(tg)
	heads.Heads = 1 << 40
	if err := heads.Validate(); err == nil || !strings.Contains(err.Error(), "--heads=1099511627776") {
		t.Errorf("heads 2^40: %v", err)
	}
	// Exactly MaxVariants is accepted; one more is not.
	s := Sweep{Target: tg, Heads: 64, BlockH: []int{16, 32, 64, 128}, BlockT: []int{16, 32, 64, 128},
		SplitK: seq(1, 32), NumWarps: []int{1, 2, 4, 8}, NumStages: []int{1, 2}}
	if err := s.Validate(); err != nil || s.Size() != MaxVariants || len(s.Variants()) != MaxVariants {
		t.Fatalf("a sweep of exactly %d: size %d, err %v", MaxVariants, s.Size(), err)
	}
	s.WSSplitK = []int{1}
	err := s.Validate()
	want := "the sweep asks for 4,097 variants (4 --block-h x 4 --block-t x 32 --split-k x 4 --num-warps x 2 --num-stages + 1 --ws-split-k), more than the 4,096"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("one past the cap: %v", err)
	}
}

// Issue 30 bug 14: 20,000 --split-k values were OOM-killed at 24 GB. The
// bounds and the cap are checked on the lists, before any variant exists.
func TestSweepCapBeforeExpanding(t *testing.T) {
	tg, _ := LookupTarget("sm_120")
	for _, tc := range []struct {
		splitK, stages []int
		want           string
	}{
		{seq(1, 20000), []int{1}, "--split-k 257: SPLIT_K=257"},
		{repeat(seq(1, 256), 80), seq(1, 8), "the sweep asks for 16,424 variants (2 --block-h x 2 --block-t x 256 --split-k x 2 --num-warps x 8 --num-stages + 5 pipelined tiles x 8 --pp-split-k)"},
	} {
		s := DefaultSweep(tg)
		s.SplitK, s.NumStages = tc.splitK, tc.stages
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := s.Validate()
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d values: err = %v, want %q", len(tc.splitK), err, tc.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%d values: Validate allocated %d bytes before refusing", len(tc.splitK), alloc)
		}
	}
	// Repeated values are one variant: 20,000 copies of one SPLIT_K is fine
	// (16 Triton variants, and the 5 x 5 pipelined ones).
	s := DefaultSweep(tg)
	s.SplitK = repeat([]int{4}, 20000)
	s.PPSplitK = repeat([]int{2, 2, 8, 1, 16, 32}, 3000)
	if err := s.Validate(); err != nil || s.Size() != 16+25 || len(s.Variants()) != s.Size() {
		t.Errorf("20,000 copies of SPLIT_K 4: size %d, err %v", s.Size(), err)
	}
}

func seq(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func repeat(l []int, n int) []int {
	var out []int
	for range n {
		out = append(out, l...)
	}
	return out
}
