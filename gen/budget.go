package gen

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// CalibratedWith names the compiler the budget model was fitted to. The
// calibration (calib/calibrate.py, run by CI) recompiles every default
// variant of each calibrated target with it and fails when a prediction
// drifts.
const CalibratedWith = "Triton 3.6.0 (ptxas 12.8 / ptxas-blackwell)"

// calibrations are the targets a committed calibration covers
// (calib/<dir>.budget.json, compiled by calib/calibrate.py), with the
// compiler it ran; a test checks this table against those files. For any
// other target the model is the same arithmetic, never compared with a
// compiler: an estimate.
var calibrations = map[string]string{
	"sm_90":  CalibratedWith,
	"sm_120": CalibratedWith,
}

// Calibration says whether a target's budget model was checked against
// the compiler, and against which.
type Calibration struct {
	Target string
	// Compiler is empty when no calibration covers the target.
	Compiler string
}

// CalibrationOf is t's calibration.
func CalibrationOf(t Target) Calibration { return Calibration{t.Name, calibrations[t.Name]} }

// Calibrated reports whether a committed calibration covers the target.
func (c Calibration) Calibrated() bool { return c.Compiler != "" }

// String is "calibrated against <compiler>" or "estimate, never compiled".
func (c Calibration) String() string {
	if c.Calibrated() {
		return "calibrated against " + c.Compiler
	}
	return "estimate, never compiled"
}

// Item is one line of a budget breakdown.
type Item struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
	Why   string `json:"why"`
}

// Budget is the verdict on one variant for one target, with the numbers that
// justify it.
type Budget struct {
	Variant Variant `json:"-"`
	Name    string  `json:"variant"`
	Target  string  `json:"target"`
	// Operands says where Q and the K tile live on this path.
	Operands string `json:"operands"`

	Smem      []Item `json:"smem_breakdown"`
	SmemBytes int    `json:"smem_bytes"`
	SmemLimit int    `json:"smem_limit"`

	Regs      []Item `json:"regs_breakdown"`
	RegsEst   int    `json:"regs_per_thread_est"`
	RegsLimit int    `json:"regs_limit"`

	Fits    bool     `json:"fits"`
	Reasons []string `json:"reasons,omitempty"`
	// Nearest is the closest variant that fits, for a refusal.
	Nearest string `json:"nearest_fit,omitempty"`
}

// Verdict is "fits" or "refused".
func (b Budget) Verdict() string {
	if b.Fits {
		return "fits"
	}
	return "refused"
}

// Summary is the one-line budget written into each emitted module.
func (b Budget) Summary() string {
	c := Calibration{b.Target, calibrations[b.Target]}
	model := "model " + c.String()
	if !c.Calibrated() {
		model = "model: " + c.String()
	}
	return fmt.Sprintf("shared memory %s of %s bytes, about %d registers per thread (%s)",
		commas(b.SmemBytes), commas(b.SmemLimit), b.RegsEst, model)
}

// usesWGMMA mirrors Triton 3.6's choice: warp-group MMA needs sm_90, an M of
// at least 64 (one warp group covers 64 rows) and at least one warp group.
func usesWGMMA(t Target, v Variant) bool {
	return t.Path == PathWGMMA && v.BlockH >= 64 && v.NumWarps >= 4
}

// The DeepSeek-V4 latent the kernels work on: 512 dims per token, held as
// bf16 in shared memory and gathered as fp8; 584 cache bytes per token (576
// data bytes and 8 scale bytes).
const (
	headDim    = 512
	bf16       = 2
	fp8        = 1
	tokenBytes = 584
	scaleWord  = 8 // a token's 7 UE8M0 exponents and a pad byte, loaded as one int64
)

// Check runs the budget model for v on t. It never fails: a variant that does
// not fit gets Fits=false and the reasons; Nearest is filled by CheckSweep.
func Check(t Target, v Variant) Budget {
	b := Budget{Variant: v, Name: v.Name(), Target: t.Name, SmemLimit: t.SmemLimit, RegsLimit: MaxRegsPerThread}
	if err := v.Validate(); err != nil {
		// Only bounded parameters reach the arithmetic below; an invalid
		// variant (built in code, past Sweep.Validate) is refused as such.
		b.Reasons = []string{"not a valid variant: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
		return b
	}
	if v.WarpSpec {
		return checkWarpSpec(t, b)
	}
	wg := usesWGMMA(t, v)

	// Shared memory: what Triton 3.6 allocates for this kernel, buffer by
	// buffer. Conversion scratch for the epilogue reuses these buffers.
	b.Smem = append(b.Smem, Item{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, staged once for the score MMA"})
	kCopies := 2
	kWhy := "K tile [BLOCK_T, 512] bf16, one copy per dot-operand layout (K^T for scores, K for P.V)"
	if wg {
		kCopies = 1
		kWhy = "K tile [BLOCK_T, 512] bf16, one buffer read by both wgmma (scores use its transpose)"
		b.Operands = "wgmma: Q and K in shared memory, accumulators in registers"
	} else {
		b.Operands = "mma.sync: Q and K converted through shared memory into registers"
	}
	b.Smem = append(b.Smem, Item{"k", prod(kCopies, v.BlockT, headDim, bf16), kWhy})
	if v.NumStages >= 2 {
		// The pipeliner prefetches the next tile's gathered bytes with
		// cp.async: 512 fp8 bytes (7 groups of 64, padded to 8), 128 rope
		// bytes and the 8-byte scale word per token, one tile ahead whatever
		// num_stages is; the index loads run ahead num_stages-1 tiles (2 when
		// num_stages is 2).
		b.Smem = append(b.Smem, Item{"prefetch", prod(v.BlockT, 8*64*fp8+64*bf16+scaleWord), "next tile's fp8 nope, bf16 rope and scale words (cp.async)"})
		idxBufs := 1
		if v.NumStages >= 3 {
			idxBufs = v.NumStages
		}
		b.Smem = append(b.Smem, Item{"indices", prod(idxBufs, v.BlockT, 4), fmt.Sprintf("%d buffered index tile(s) [BLOCK_T] int32", idxBufs)})
	}
	b.SmemBytes = total(b.Smem)
	// The epilogue converts the [BLOCK_H, 512] result to a store layout
	// through scratch that reuses the buffers above; when the scratch is
	// larger (fp32 partials of split-K), it sets the total.
	elt := bf16
	if v.SplitK > 1 {
		elt = 4
	}
	if scratch := prod(v.BlockH, headDim, elt); scratch > b.SmemBytes {
		b.Smem = append(b.Smem, Item{"epilogue", scratch - b.SmemBytes, fmt.Sprintf("store-layout scratch for [BLOCK_H, 512] %s output needs %d B in all, more than the buffers it reuses", map[int]string{2: "bf16", 4: "fp32 partial"}[elt], scratch)})
		b.SmemBytes = scratch
	}

	b.Regs = tritonRegs(v, wg)
	b.RegsEst = total(b.Regs)
	for _, q := range compilerQuirks {
		if q.target == t.Name && q.match(v) {
			b.Reasons = append(b.Reasons, fmt.Sprintf("ptxas spills %d B at this shape although the estimate (%d) is under the limit: %s", q.spill, b.RegsEst, q.why))
		}
	}
	return judge(t, b)
}

// tritonRegs estimates the registers per thread of a Triton variant, term by
// term; wg is the wgmma path.
func tritonRegs(v Variant, wg bool) []Item {
	// Registers per thread: the accumulator is exact; the operand and
	// overhead terms are fitted to ptxas -v over the calibration grid
	// (calib/REPORT.md) and rounded up.
	threads := v.Threads()
	var regs []Item
	acc := prod(v.BlockH, headDim) / threads
	regs = append(regs, Item{"acc", acc, "fp32 accumulator [BLOCK_H, 512] spread over the threads"})
	if wg {
		regs = append(regs, Item{"p_k", prod(2, v.BlockH, v.BlockT) / threads, "scores/probabilities [BLOCK_H, BLOCK_T] fp32 and their bf16 copy"})
		regs = append(regs, Item{"overhead", 90, "addresses, masks, softmax state, dequantization temporaries (fitted)"})
	} else {
		// mma.sync needs the whole A operand in each warp: 16 rows of Q
		// by 512 bf16 is 128 registers per thread, and every extra 16
		// rows a warp covers adds that again.
		warpsM := min(v.NumWarps, max(1, v.BlockH/16))
		rowsPerWarp := v.BlockH / warpsM
		regs = append(regs, Item{"q_operand", prod(rowsPerWarp, headDim, bf16) / (32 * 4), "Q as the MMA A operand, kept in registers across the token loop"})
		extra := 0
		if warpsM > 1 {
			// Several warps along M replicate the K^T operand: measured
			// about 120 more registers at BLOCK_H 32 than at 16.
			extra = prod(60, warpsM-1, 2)
		}
		regs = append(regs, Item{"k_operand", 32 + extra, "K^T operand fragments and the dequantized tile in flight (fitted)"})
		regs = append(regs, Item{"overhead", 28, "addresses, masks, softmax state (fitted)"})
	}
	return regs
}

// compilerQuirks are the shapes where the register estimate sits within a
// few registers of 255 and ptxas, for its own scheduling reasons, spills
// while its neighbours do not. They were found by the calibration
// (calib/REPORT.md), which recompiles every default variant in CI: a quirk
// that disappears turns into "refused but compiles clean" and fails it, so
// this table cannot go stale silently.
var compilerQuirks = []struct {
	target string
	match  func(Variant) bool
	spill  int
	why    string
}{
	{"sm_90", func(v Variant) bool {
		return !v.WarpSpec && v.BlockH == 64 && v.BlockT == 64 && v.NumWarps == 8 && v.SplitK == 1 && v.NumStages == 1
	}, 8, "measured with Triton 3.6.0; the same tile with SPLIT_K 4, 16 or 32, or with 2 stages, compiles clean (calib/REPORT.md)"},
	{"sm_120", func(v Variant) bool {
		return !v.WarpSpec && v.BlockH == 16 && v.BlockT == 16 && v.NumWarps == 4 && v.SplitK == 1 && v.NumStages == 1
	}, 4, "measured with Triton 3.6.0 (ptxas-blackwell); SPLIT_K > 1 and 2 stages compile clean"},
}

// judge adds the reasons a budget does not fit its target.
func judge(t Target, b Budget) Budget {
	threads := b.Variant.Threads()
	if b.SmemBytes > t.SmemLimit {
		b.Reasons = append(b.Reasons, fmt.Sprintf("shared memory %s B > %s B limit of %s", commas(b.SmemBytes), commas(t.SmemLimit), t.Name))
	}
	if b.RegsEst > MaxRegsPerThread {
		b.Reasons = append(b.Reasons, fmt.Sprintf("about %d registers per thread > %d: ptxas would spill to local memory", b.RegsEst, MaxRegsPerThread))
	}
	if used := prod(min(b.RegsEst, MaxRegsPerThread), threads); used > RegsPerSM {
		b.Reasons = append(b.Reasons, fmt.Sprintf("%d threads x %d registers = %d > %d per multiprocessor", threads, min(b.RegsEst, MaxRegsPerThread), used, RegsPerSM))
	}
	b.Fits = len(b.Reasons) == 0
	return b
}

// checkWarpSpec budgets the warp-specialised family. Its registers are set,
// not estimated: the program is launched at WSMaxRegs per thread and
// setmaxnreg hands the producer WSProducerRegs and the consumers what is left,
// so the question is whether each partition's need fits its share.
func checkWarpSpec(t Target, b Budget) Budget {
	v := b.Variant
	b.Operands = "wgmma, warp-specialised: a producer warp group gathers and dequantises K into shared memory and prefetches the next tile's rows into L2; two consumer warp groups run the MMAs"
	b.Smem = []Item{
		{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, the score MMA's A operand"},
		{"k_ring", prod(v.NumStages, v.BlockT, headDim, bf16), fmt.Sprintf("%d K buffers [BLOCK_T, 512] bf16: the producer fills one while the consumers read another", v.NumStages)},
		{"reduce", 4096, "consumers' scratch for the row max/sum across the two warp groups and the probabilities' layout change"},
		// Measured for reduce + sync: 4,140 B with 2 buffers (4,132 before
		// Q's TMA barrier, and 4,124 with 1 buffer then): the barriers and
		// the producer's captured arguments, padded.
		{"sync", 16*v.NumStages + 64, "ready/empty mbarrier per buffer, Q's TMA mbarrier and the producer's captured arguments (a bound: alignment varies by a few bytes)"},
	}
	if v.ClusterMerge {
		// A cluster of two merges in shared memory it no longer uses (the K
		// buffers, dead after the tile loop: half the rows' bf16 partial,
		// 32 KB at BLOCK_H 64, their lse and an mbarrier); larger clusters read
		// the partials from global memory after a cluster barrier. Neither
		// adds shared memory, and the epilogue's registers are free by then.
		merge := "merge their partials from global memory after a cluster barrier"
		if v.MergesInSharedMemory() {
			merge = "merge in each other's shared memory (distributed shared memory), which the tile loop no longer uses"
		}
		b.Operands += "; the splits run as one thread-block cluster and " + merge
	}
	b.SmemBytes = total(b.Smem)
	consumers := 32 * v.NumWarps
	consumerRegs := (prod(WSMaxRegs, v.Threads()) - WSProducerRegs*32*WSProducerWarps) / consumers / 8 * 8
	acc := prod(v.BlockH, headDim) / consumers
	pk := prod(2, v.BlockH, v.BlockT) / consumers
	// Addresses, masks and loop state on either side (fitted).
	const overhead = 30
	consumerNeed := acc + pk + overhead
	// The producer holds one gathered tile in flight: tokenBytes per token
	// over its threads, 4 bytes a register.
	raw := (prod(v.BlockT, tokenBytes) + 32*WSProducerWarps*4 - 1) / (32 * WSProducerWarps * 4)
	producerNeed := raw + overhead
	b.Regs = []Item{
		{"acc", acc, "consumers: fp32 accumulator [BLOCK_H, 512] over the consumer threads"},
		{"p_k", pk, "consumers: scores/probabilities [BLOCK_H, BLOCK_T] fp32 and their bf16 copy"},
		{"overhead", overhead, "consumers: softmax state, indices, addresses (fitted)"},
		{"consumer_max", consumerRegs, fmt.Sprintf("what setmaxnreg leaves the %d consumer warps", v.NumWarps)},
		{"raw_tile", raw, "producer: one gathered tile (fp8 nope, rope, scale words) in flight"},
		{"producer_max", WSProducerRegs, fmt.Sprintf("setmaxnreg for the %d producer warps", WSProducerWarps)},
	}
	b.RegsEst = WSMaxRegs
	if t.Path != PathWGMMA {
		b.Reasons = append(b.Reasons, fmt.Sprintf("the warp-specialised kernel needs wgmma (sm_90); %s has %s", t.Name, t.Path))
	}
	if consumerNeed > consumerRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("consumers need about %d registers per thread > the %d setmaxnreg leaves them", consumerNeed, consumerRegs))
	}
	if producerNeed > WSProducerRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("producer needs about %d registers per thread > its %d", producerNeed, WSProducerRegs))
	}
	return judge(t, b)
}

// CheckSweep budgets every variant of s and, for each refusal, names the
// nearest variant that fits.
func CheckSweep(s Sweep) []Budget {
	vs := s.Variants()
	out := make([]Budget, len(vs))
	for i, v := range vs {
		out[i] = Check(s.Target, v)
		if !out[i].Fits {
			if n, ok := Nearest(s.Target, v); ok {
				out[i].Nearest = n.Name()
			}
		}
	}
	return out
}

// Nearest finds the fitting variant closest to v: fewest halvings or
// doublings of its parameters, SPLIT_K kept, larger tiles preferred on ties.
func Nearest(t Target, v Variant) (Variant, bool) {
	var best Variant
	bestDist := -1
	for _, h := range []int{16, 32, 64, 128} {
		for _, bt := range []int{16, 32, 64, 128} {
			for _, w := range []int{4, 8, 16} {
				for _, st := range []int{1, 2, 3} {
					c := Variant{BlockH: h, BlockT: bt, SplitK: v.SplitK, NumWarps: w, NumStages: st}
					if !Check(t, c).Fits {
						continue
					}
					d := log2Dist(h, v.BlockH) + log2Dist(bt, v.BlockT) + log2Dist(w, v.NumWarps) + abs(st-v.NumStages)
					better := bestDist < 0 || d < bestDist ||
						(d == bestDist && h*bt > best.BlockH*best.BlockT)
					if better {
						best, bestDist = c, d
					}
				}
			}
		}
	}
	return best, bestDist >= 0
}

func log2Dist(a, b int) int {
	if a <= 0 || b <= 0 {
		return 8
	}
	return abs(bits.Len(uint(a)) - bits.Len(uint(b)))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// The budget's arithmetic saturates at math.MaxInt instead of wrapping:
// with Validate's bounds no product comes near it, and were one ever to,
// the budget would only grow and refuse, never wrap to a small number that
// fits (issue 30: BLOCK_H 2^54 once gave 32,768 B and "fits").

// prod multiplies non-negative factors, saturating.
func prod(xs ...int) int {
	p := 1
	for _, x := range xs {
		p = satMul(p, x)
	}
	return p
}

// total sums the items of a breakdown, saturating.
func total(items []Item) int {
	n := 0
	for _, it := range items {
		n = satAdd(n, it.Value)
	}
	return n
}

// satMul and satAdd are a*b and a+b for non-negative a and b, or
// math.MaxInt where the result would not fit; a negative operand (never
// produced by a valid variant) also gives math.MaxInt.
func satMul(a, b int) int {
	if a < 0 || b < 0 {
		return math.MaxInt
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return math.MaxInt
	}
	return int(lo)
}

func satAdd(a, b int) int {
	if a < 0 || b < 0 || a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// commas formats 101376 as "101,376".
func commas(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
