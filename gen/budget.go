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
	"sm_80":  CalibratedWith,
	"sm_86":  CalibratedWith,
	"sm_89":  CalibratedWith,
	"sm_90":  CalibratedWith,
	"sm_100": CalibratedWith,
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

// tritonPath mirrors Triton 3.6's choice for the mma family's tl.dot:
// warp-group MMA needs sm_90, an M of at least 64 (one warp group covers 64
// rows) and at least one warp group; tcgen05 on sm_100 takes the same
// shapes; every other dot is mma.sync.
func tritonPath(t Target, v Variant) MMAPath {
	if (t.Path == PathWGMMA || t.Path == PathTCGen05) && v.BlockH >= 64 && v.NumWarps >= 4 {
		return t.Path
	}
	return PathMMASync
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
	if v.Pipelined {
		return checkPipelined(t, b)
	}
	path := tritonPath(t, v)
	b.Operands = map[MMAPath]string{
		PathMMASync: "mma.sync: Q and K converted through shared memory into registers",
		PathWGMMA:   "wgmma: Q and K in shared memory, accumulators in registers",
		PathTCGen05: "tcgen05: Q and K in shared memory, the accumulator in tensor memory",
	}[path]
	b.Smem = tritonSmem(v, path)
	b.SmemBytes = total(b.Smem)
	b.Regs = tritonRegs(v, path)
	b.RegsEst = total(b.Regs)
	return judge(t, quirks(t, b))
}

// tritonSmem is what Triton 3.6 allocates in shared memory for the mma
// family's kernel, buffer by buffer.
func tritonSmem(v Variant, path MMAPath) []Item {
	items := []Item{{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, staged once for the score MMA"}}
	switch path {
	case PathMMASync:
		items = append(items, Item{"k", prod(2, v.BlockT, headDim, bf16), "K tile [BLOCK_T, 512] bf16, one copy per dot-operand layout (K^T for scores, K for P.V)"})
	default:
		items = append(items, Item{"k", prod(v.BlockT, headDim, bf16), "K tile [BLOCK_T, 512] bf16, one buffer read by both MMAs (scores use its transpose)"})
	}
	if v.NumStages >= 2 {
		// The pipeliner prefetches the next tile's gathered bytes with
		// cp.async: 512 fp8 bytes (7 groups of 64, padded to 8), 128 rope
		// bytes and the 8-byte scale word per token, one tile ahead whatever
		// num_stages is; the index loads run ahead num_stages-1 tiles (2 when
		// num_stages is 2).
		items = append(items, Item{"prefetch", prod(v.BlockT, 8*64*fp8+64*bf16+scaleWord), "next tile's fp8 nope, bf16 rope and scale words (cp.async)"})
		idxBufs := 1
		if v.NumStages >= 3 {
			idxBufs = v.NumStages
		}
		items = append(items, Item{"indices", prod(idxBufs, v.BlockT, 4), fmt.Sprintf("%d buffered index tile(s) [BLOCK_T] int32", idxBufs)})
	}
	if path == PathTCGen05 {
		// Measured on sm_100 (calib/): 512 B at one stage, 528 at two, the
		// same at BLOCK_T 16 and 64; the accumulator leaves tensor memory
		// for its stores with no store-layout scratch.
		return append(items, Item{"tmem_sync", 512 + 16*(v.NumStages-1), "tensor-memory allocation and MMA completion barriers (measured)"})
	}
	// The epilogue converts the [BLOCK_H, 512] result to a store layout
	// through scratch that reuses the buffers above; when the scratch is
	// larger (fp32 partials of split-K), it sets the total.
	elt := bf16
	if v.SplitK > 1 {
		elt = 4
	}
	if scratch, sum := prod(v.BlockH, headDim, elt), total(items); scratch > sum {
		items = append(items, Item{"epilogue", scratch - sum, fmt.Sprintf("store-layout scratch for [BLOCK_H, 512] %s output needs %d B in all, more than the buffers it reuses", map[int]string{2: "bf16", 4: "fp32 partial"}[elt], scratch)})
	}
	return items
}

// tritonRegs estimates the registers per thread of a Triton variant on its
// MMA path, term by term.
func tritonRegs(v Variant, path MMAPath) []Item {
	// Registers per thread: the accumulator is exact; the operand and
	// overhead terms are fitted to ptxas -v over the calibration grid
	// (calib/REPORT.md) and rounded up.
	threads := v.Threads()
	acc := prod(v.BlockH, headDim) / threads
	switch path {
	case PathWGMMA:
		return []Item{
			{"acc", acc, "fp32 accumulator [BLOCK_H, 512] spread over the threads"},
			{"p_k", prod(2, v.BlockH, v.BlockT) / threads, "scores/probabilities [BLOCK_H, BLOCK_T] fp32 and their bf16 copy"},
			{"overhead", 90, "addresses, masks, softmax state, dequantization temporaries (fitted)"},
		}
	case PathTCGen05:
		regs := []Item{
			{"acc_rescale", acc, "the accumulator lives in tensor memory; each tile's rescale by the new row maximum passes it through registers"},
			{"p_k", prod(2, v.BlockH, v.BlockT) / threads, "scores/probabilities [BLOCK_H, BLOCK_T] fp32 and their bf16 copy"},
			{"overhead", 90, "addresses, masks, softmax state, dequantization temporaries (fitted)"},
		}
		if v.NumStages >= 2 {
			// Fitted: every 2-stage tile spills on sm_100 (4 B at BLOCK_T
			// 16, 36-68 B at 64), every 1-stage one fits.
			regs = append(regs, Item{"pipelined", 40, "the software pipeline's next tile in flight (fitted)"})
		}
		return regs
	}
	// mma.sync needs the whole A operand in each warp: 16 rows of Q by 512
	// bf16 is 128 registers per thread, and every extra 16 rows a warp
	// covers adds that again.
	warpsM := min(v.NumWarps, max(1, v.BlockH/16))
	rowsPerWarp := v.BlockH / warpsM
	extra := 0
	if warpsM > 1 {
		// Several warps along M replicate the K^T operand: measured about
		// 120 more registers at BLOCK_H 32 than at 16.
		extra = prod(60, warpsM-1, 2)
	}
	return []Item{
		{"acc", acc, "fp32 accumulator [BLOCK_H, 512] spread over the threads"},
		{"q_operand", prod(rowsPerWarp, headDim, bf16) / (32 * 4), "Q as the MMA A operand, kept in registers across the token loop"},
		{"k_operand", 32 + extra, "K^T operand fragments and the dequantized tile in flight (fitted)"},
		{"overhead", 28, "addresses, masks, softmax state (fitted)"},
	}
}

// compilerQuirks are the shapes where the register estimate sits within a
// few registers of 255 and ptxas, for its own scheduling reasons, spills
// while its neighbours do not. They were found by the calibration
// (calib/REPORT.md), which recompiles every default variant in CI, as the
// per-cache entry and as the whole call: a quirk that disappears turns into
// "refused but compiles clean" and fails it, so this table cannot go stale
// silently.
var compilerQuirks = []struct {
	target string
	match  func(Variant) bool
	spill  string
	why    string
}{
	{"sm_90", mmaTile(64, 64, 8, 1, 1), "8 B", "measured with Triton 3.6.0; the same tile with SPLIT_K 4, 16 or 32, or with 2 stages, compiles clean (calib/REPORT.md)"},
	{"sm_120", mmaTile(16, 16, 4, 1, 1), "4 B", "measured with Triton 3.6.0 (ptxas-blackwell); SPLIT_K > 1 and 2 stages compile clean"},
	{"sm_100", mmaTile(64, 16, 8, 1, 1), "8 B", "measured with Triton 3.6.0 (ptxas-blackwell), in the whole call; SPLIT_K > 1 compiles clean"},
	// The pipelined family, its raw tile carried as 32-bit words.
	{"sm_100", func(v Variant) bool { return ppTile(PPTile{64, 32, 8, 2})(v) && v.SplitK == 1 }, "24 B", "measured with Triton 3.6.0 (ptxas-blackwell for sm_100a), with Q's two column groups in registers; SPLIT_K > 1 and one buffer set compile clean"},
	{"sm_80", ppTile(PPTile{64, 64, 8, 1}), "88 B", "measured with Triton 3.6.0 (ptxas 12.8) on the bytes path; the 32-token tile in two halves compiles clean"},
	{"sm_100", ppTile(PPTile{64, 64, 8, 1}), "64 B", "measured with Triton 3.6.0 (ptxas-blackwell for sm_100a); the 32-token tile in two halves compiles clean"},
}

// mmaTile matches the Triton variants of one tile: SplitK (0: any) and
// NumStages (0: any).
func mmaTile(h, t, w, k, st int) func(Variant) bool {
	return func(v Variant) bool {
		return !v.WarpSpec && !v.Pipelined && v.BlockH == h && v.BlockT == t && v.NumWarps == w &&
			(k == 0 || v.SplitK == k) && (st == 0 || v.NumStages == st)
	}
}

// ppTile matches the pipelined variants of one tile, at any SPLIT_K.
func ppTile(p PPTile) func(Variant) bool {
	return func(v Variant) bool { return v.Pipelined && p.variant(v.SplitK) == v }
}

// quirks adds the refusals of compilerQuirks that match b's variant.
func quirks(t Target, b Budget) Budget {
	for _, q := range compilerQuirks {
		if q.target == t.Name && q.match(b.Variant) {
			b.Reasons = append(b.Reasons, fmt.Sprintf("ptxas spills %s at this shape although the estimate (%d) is under the limit: %s", q.spill, b.RegsEst, q.why))
		}
	}
	return b
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
// so the question is whether each partition's need fits its share. This is
// the cluster-merged kind (wsc_*), whose two consumer warp groups split the
// output columns around one softmax; checkWarpSpecSplit budgets the others.
func checkWarpSpec(t Target, b Budget) Budget {
	v := b.Variant
	if v.Narrow() {
		return checkWarpSpecNarrow(t, b)
	}
	if !v.ClusterMerge {
		return checkWarpSpecSplit(t, b)
	}
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
	// A cluster of two merges in shared memory it no longer uses (the K
	// buffers, dead after the tile loop: half the rows' bf16 partial, 32 KB
	// at BLOCK_H 64, their lse and an mbarrier); larger clusters read the
	// partials from global memory after a cluster barrier. Neither adds
	// shared memory, and the epilogue's registers are free by then.
	merge := "merge their partials from global memory after a cluster barrier"
	if v.MergesInSharedMemory() {
		merge = "merge in each other's shared memory (distributed shared memory), which the tile loop no longer uses"
	}
	b.Operands += "; the splits run as one thread-block cluster and " + merge
	b.SmemBytes = total(b.Smem)
	consumers := 32 * v.NumWarps
	consumerRegs := (prod(WSMaxRegs, v.Threads()) - WSProducerRegs*32*WSProducerWarps) / consumers / 8 * 8
	acc := prod(v.BlockH, headDim) / consumers
	pk := prod(2, v.BlockH, v.BlockT) / consumers
	consumerNeed := acc + pk + wsOverhead
	b.Regs = []Item{
		{"acc", acc, "consumers: fp32 accumulator [BLOCK_H, 512] over the consumer threads"},
		{"p_k", pk, "consumers: scores/probabilities [BLOCK_H, BLOCK_T] fp32 and their bf16 copy"},
		{"overhead", wsOverhead, "consumers: softmax state, indices, addresses (fitted)"},
		{"consumer_max", consumerRegs, fmt.Sprintf("what setmaxnreg leaves the %d consumer warps", v.NumWarps)},
	}
	b = wsProducer(t, b)
	if consumerNeed > consumerRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("consumers need about %d registers per thread > the %d setmaxnreg leaves them", consumerNeed, consumerRegs))
	}
	return judge(t, b)
}

// wsOverhead: addresses, masks and loop state of a warp-specialised
// partition (fitted).
const wsOverhead = 30

// wsProducer adds the producer's registers and the checks every
// warp-specialised variant shares to b.
func wsProducer(t Target, b Budget) Budget {
	v := b.Variant
	warps, regs := v.producer()
	raw := gatheredTileRegs(v.BlockT, 32*warps)
	b.Regs = append(b.Regs,
		Item{"raw_tile", raw, "producer: one gathered tile (fp8 nope, rope, scale words) in flight"},
		Item{"producer_max", regs, fmt.Sprintf("setmaxnreg for the %d producer warps", warps)},
	)
	b.RegsEst = WSMaxRegs
	if t.Path != PathWGMMA {
		b.Reasons = append(b.Reasons, fmt.Sprintf("the warp-specialised kernel needs wgmma (sm_90); %s has %s", t.Name, t.Path))
	}
	if raw+wsOverhead > regs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("producer needs about %d registers per thread > its %d", raw+wsOverhead, regs))
	}
	return b
}

// gatheredTileRegs is the registers a thread gives one gathered tile of
// blockT tokens held in flight by a producer of the given threads:
// tokenBytes a token over its threads, 4 bytes a register, rounded up.
func gatheredTileRegs(blockT, threads int) int {
	return (prod(blockT, tokenBytes) + threads*4 - 1) / (threads * 4)
}

// checkWarpSpecNarrow budgets the narrow warp-specialised variants: one
// consumer warp group computes S^T = K Q^T and O^T += V^T P^T with the
// heads as the wgmma's N, beside WSNarrowProducerWarps producer warps.
func checkWarpSpecNarrow(t Target, b Budget) Budget {
	v := b.Variant
	b.Operands = "wgmma, warp-specialised, heads on the MMAs' N side: 8 producer warps gather and dequantise K into shared memory and prefetch the next tile's rows into L2; one consumer warp group runs S^T = K Q^T and O^T += V^T P^T, K and V^T straight from the K buffer"
	b.Smem = []Item{
		{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, the score MMA's B operand"},
		{"k_ring", prod(v.NumStages, v.BlockT, headDim, bf16), fmt.Sprintf("%d K buffers [BLOCK_T, 512] bf16, both MMAs' A operand: the producer fills one while the consumers read another", v.NumStages)},
		{"p", prod(v.BlockT, v.BlockH, bf16), "the probabilities P^T [BLOCK_T, BLOCK_H] bf16, P.V's B operand"},
		// Measured: 4,144 B with 2 and 3 buffers, per cache and for the
		// whole call (calib/compiled/sm90.json).
		{"scratch", 4096, "Triton's scratch: the softmax's reductions down the tokens across the 4 warps, and the epilogue's transpose in rounds"},
		{"sync", 16*v.NumStages + 64, "ready/empty mbarrier per buffer, Q's TMA mbarrier and the partitions' captured arguments (a bound)"},
	}
	b.SmemBytes = total(b.Smem)
	consumers := 32 * v.NumWarps
	warps, regs := v.producer()
	consumerRegs := min((prod(WSMaxRegs, v.Threads())-regs*32*warps)/consumers/8*8, MaxRegsPerThread)
	acc := prod(headDim, v.BlockH) / consumers
	s := prod(v.BlockT, v.BlockH) / consumers
	need := acc + 3*s + wsOverhead
	b.Regs = []Item{
		{"acc", acc, "consumers: fp32 accumulator O^T [512, BLOCK_H]"},
		{"s_p", 2 * s, "consumers: scores S^T [BLOCK_T, BLOCK_H] fp32 and their probabilities"},
		{"l_part", s, "consumers: each thread's partial row sums [BLOCK_T, BLOCK_H] fp32, summed across the warp group once after the loop"},
		{"overhead", wsOverhead, "consumers: softmax state, indices, addresses (fitted)"},
		{"consumer_max", consumerRegs, fmt.Sprintf("what setmaxnreg leaves the %d consumer warps", v.NumWarps)},
	}
	b = wsProducer(t, b)
	if need > consumerRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("consumers need about %d registers per thread > the %d setmaxnreg leaves them", need, consumerRegs))
	}
	return judge(t, b)
}

// checkWarpSpecSplit budgets the warp-specialised variants without a
// cluster merge, whose consumers are split by role (WSValueRegs): a score
// group of NumWarps/2 warps holds the left half of the accumulator, each
// tile's whole score tile and its bf16 probabilities; a value group of as
// many holds the right half.
func checkWarpSpecSplit(t Target, b Budget) Budget {
	v := b.Variant
	b.Operands = "wgmma, warp-specialised: a producer warp group gathers and dequantises K into shared memory and prefetches the next tile's rows into L2; a score warp group runs each tile's scores, softmax and the left half of P.V, a value warp group the right half from P in shared memory"
	b.Smem = []Item{
		{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, the score MMA's A operand"},
		{"k_ring", prod(v.NumStages, v.BlockT, headDim, bf16), fmt.Sprintf("%d K buffers [BLOCK_T, 512] bf16: the producer fills one while the consumers read another (the last one also stages the epilogue's rows)", v.NumStages)},
		{"p", prod(v.BlockH, v.BlockT, bf16), "the probabilities [BLOCK_H, BLOCK_T] bf16, the value group's A operand"},
		{"softmax", prod(3, v.BlockH, 4), "the rescale factor a tile, and the final row max and sum, fp32 per head, for the value group"},
		// Measured: 304 B per cache and 336-352 B for the whole call with
		// 2 buffers (the mbarriers, the partitions' captured arguments,
		// alignment).
		{"sync", 512, "mbarriers (ready/empty per buffer, Q, P full/free, the final row state), the partitions' captured arguments and alignment (a bound)"},
	}
	b.SmemBytes = total(b.Smem)
	group := 32 * v.NumWarps / 2
	scoreRegs := (prod(WSMaxRegs, v.Threads()) - WSProducerRegs*32*WSProducerWarps - WSValueRegs*group) / group / 8 * 8
	half := prod(v.BlockH, headDim/2) / group
	s := prod(v.BlockH, v.BlockT) / group
	p := s / 2
	scoreNeed := half + s + p + wsOverhead
	valueNeed := half + wsOverhead
	b.Regs = []Item{
		{"acc_half", half, "each consumer group: its fp32 accumulator half [BLOCK_H, 256]"},
		{"s", s, "score group: the tile's scores [BLOCK_H, BLOCK_T] fp32"},
		{"p", p, "score group: the probabilities in bf16, its P.V's A operand"},
		{"overhead", wsOverhead, "each consumer group: softmax state, indices, addresses (fitted)"},
		{"score_max", scoreRegs, fmt.Sprintf("what setmaxnreg leaves the score group's %d warps", v.NumWarps/2)},
		{"value_max", WSValueRegs, fmt.Sprintf("setmaxnreg for the value group's %d warps", v.NumWarps/2)},
	}
	b = wsProducer(t, b)
	if scoreNeed > scoreRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("the score group needs about %d registers per thread > the %d setmaxnreg leaves it", scoreNeed, scoreRegs))
	}
	if valueNeed > WSValueRegs {
		b.Reasons = append(b.Reasons, fmt.Sprintf("the value group needs about %d registers per thread > its %d", valueNeed, WSValueRegs))
	}
	return judge(t, b)
}

// The pipelined family's register terms (lab/sm120/NOTES.md, fitted to
// ptxas over its compiled shapes): a fitting kernel often reads 255,
// because the compiler fills any headroom with operand prefetch, so the
// estimate is of what the kernel needs, and the calibration checks that
// what it accepts compiles without spills and what it refuses does not.
const (
	// ppChainsPlusOne: the scores of a tile in flight as two independent
	// accumulators (or two halves) beside their probabilities.
	ppChainsPlusOne = 3
	// ppOverhead: operands in flight, softmax state, addresses, the loop's
	// indices (fitted).
	ppOverhead = 40
	// ppScratchCap: Triton 3.6 converts the probabilities to the operand
	// layout through at most 4 KB of shared memory, in several rounds when
	// the tile is larger (measured: [64, 64] bf16 takes 4,096 B, [64, 16]
	// and [16, 64] their 2,048).
	ppScratchCap = 4096
)

// ppSmem is the pipelined family's shared memory, exact: Q, the K buffer
// sets, and the probabilities' round trip to the MMA operand layout (the
// row-max exchange and the epilogue reuse those).
func ppSmem(v Variant) []Item {
	halves := PPSubtiles(v)
	return []Item{
		{"q", prod(v.BlockH, headDim, bf16), "Q tile [BLOCK_H, 512] bf16, staged once, the score MMA's A operand"},
		{"k_sets", prod(v.NumStages, v.BlockT, headDim, bf16), fmt.Sprintf("%d K buffer set(s) of 8 column groups [BLOCK_T, 64] bf16, read by both MMAs", v.NumStages)},
		{"p_scratch", min(prod(v.BlockH, v.BlockT/halves, bf16), ppScratchCap), fmt.Sprintf("the probabilities' round trip to the MMA operand layout, [BLOCK_H, %d] bf16 (%d piece(s) a tile), at most %s B", v.BlockT/halves, halves, commas(ppScratchCap))},
	}
}

// checkPipelined budgets the pipelined mma.sync family: shared memory is
// exact (ppSmem), registers are the accumulator, the raw tile carried
// around the loop as 32-bit words (four fp8 values a register), the scores
// and the Q groups the tile keeps in registers.
func checkPipelined(t Target, b Budget) Budget {
	v := b.Variant
	if v.RoleSplit() {
		return checkRoleSplit(t, b)
	}
	b.Operands = "mma.sync (Gluon mma_v2): Q (but the groups kept in registers) and the K tile in shared memory, read as MMA operands every tile; the next tile's raw words in registers while the MMAs run"
	b.Smem = ppSmem(v)
	b.SmemBytes = total(b.Smem)
	threads := v.Threads()
	per := prod(v.BlockT, 64) / threads // bytes of one 64-value group a thread gathers
	b.Regs = []Item{
		{"acc", prod(v.BlockH, headDim) / threads, "fp32 accumulator [BLOCK_H, 512] spread over the threads"},
		{"raw_tile", 7*per/4 + per/2 + 3, "the next tile's raw bytes carried around the loop as 32-bit words: 7 fp8 groups, the bf16 rope, the scale word and the indices"},
		{"s_p", prod(v.BlockH, v.BlockT, ppChainsPlusOne) / threads, "scores of a tile as two accumulators (or halves) and their probabilities"},
		{"overhead", ppOverhead, "operands in flight, softmax state, addresses (fitted)"},
	}
	if n := ppQRegGroups(t, v); n > 0 {
		// Each warp holds its 16 heads' rows of a 64-column group: 16 x 64
		// bf16 over 32 lanes, 16 registers a group.
		b.Regs = append(b.Regs, Item{"q_regs", n * 16, fmt.Sprintf("Q's first %d column groups kept in registers as the score MMA's A operand", n)})
	}
	b.RegsEst = total(b.Regs)
	if t.Path == PathWGMMA {
		b.Operands += " (on sm_90 the warp-group families serve instead)"
	}
	return judge(t, quirks(t, b))
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
// doublings of its parameters, SPLIT_K kept; on ties v's own tile (another
// warp or stage count changes less of the kernel than another tile), then
// larger tiles. A refused pipelined variant is answered within its family,
// among the tiles the target's sweep holds: no flag makes another (the
// sweep flags set only their split counts), and only those are compiled.
func Nearest(t Target, v Variant) (Variant, bool) {
	var candidates []Variant
	if v.Pipelined {
		for _, tile := range DefaultSweep(t).PPTiles {
			candidates = append(candidates, tile.variant(v.SplitK))
		}
	} else {
		for _, h := range []int{16, 32, 64, 128} {
			for _, bt := range []int{16, 32, 64, 128} {
				for _, w := range []int{4, 8, 16} {
					for _, st := range []int{1, 2, 3} {
						candidates = append(candidates, Variant{BlockH: h, BlockT: bt, SplitK: v.SplitK, NumWarps: w, NumStages: st})
					}
				}
			}
		}
	}
	var best Variant
	bestDist := -1
	for _, c := range candidates {
		if !Check(t, c).Fits {
			continue
		}
		h, bt := c.BlockH, c.BlockT
		d := log2Dist(h, v.BlockH) + log2Dist(bt, v.BlockT) + log2Dist(c.NumWarps, v.NumWarps) + abs(c.NumStages-v.NumStages)
		same := h == v.BlockH && bt == v.BlockT
		bestSame := best.BlockH == v.BlockH && best.BlockT == v.BlockT
		better := bestDist < 0 || d < bestDist ||
			(d == bestDist && same && !bestSame) ||
			(d == bestDist && same == bestSame && h*bt > best.BlockH*best.BlockT)
		if better {
			best, bestDist = c, d
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

// rsOverhead: a role-split partition's addresses, loop state and barrier
// phases beside what it holds (fitted: the producer's 56 registers hold two
// raw tiles and this, and nothing more, without spilling).
const rsOverhead = 12

// checkRoleSplit budgets the pipelined family's role-split tile (RoleSplit):
// shared memory holds Q's column groups the score group does not keep in
// registers, the ring of K slots and the P hand-over; registers are set,
// not estimated, so each partition's need is held to what setmaxnreg gives
// it.
func checkRoleSplit(t Target, b Budget) Budget {
	v := b.Variant
	b.Operands = fmt.Sprintf("mma.sync (Gluon mma_v2), split by role: %d producer warps gather and dequantise K into a ring of slots; %d score warps hold Q's first %d column groups in registers (the rest in shared memory) and run the scores and softmax; %d value warps hold the accumulators and run P.V from P in shared memory",
		PPRoleSplitProducerWarps, PPRoleSplitScoreWarps, PPRoleSplitQRegGroups, PPRoleSplitValueWarps)
	kept := ppQRegGroups(t, v)
	b.Smem = []Item{
		{"q", prod(8-kept, v.BlockH, 64, bf16), fmt.Sprintf("Q's last %d column groups [BLOCK_H, 64] bf16, staged once, the score MMA's A operand", 8-kept)},
		{"k_ring", prod(v.NumStages, v.BlockT, headDim, bf16), fmt.Sprintf("%d K slots of 8 column groups [BLOCK_T, 64] bf16: the producer fills one while the score group reads another as K and the value group a third as V", v.NumStages)},
		{"p_ring", prod(2, v.BlockH, v.BlockT, bf16), "two slots of probabilities [BLOCK_H, BLOCK_T] bf16, the value group's A operand"},
		{"softmax", prod(4, v.BlockH, 4), "the rescale factor of the two P slots, and the final row max and sum, fp32 per head"},
		// Measured with 3 slots (calib/compiled/sm120.json): 544 B per
		// cache and 592 B for the whole call, its 88 B of mbarriers
		// included.
		{"sync", 640, "mbarriers (ready and empty per slot, P full and free per P slot, the final row state), the partitions' captured arguments and alignment (a bound)"},
	}
	b.SmemBytes = total(b.Smem)
	value, score, producer := 32*PPRoleSplitValueWarps, 32*PPRoleSplitScoreWarps, 32*PPRoleSplitProducerWarps
	valueRegs := PPRoleSplitValueRegs()
	acc := prod(v.BlockH, headDim) / value
	pv := prod(v.BlockH, v.BlockT, bf16) / 4 / value
	// The tile's scores over the score group, as two accumulators over
	// alternate column groups, and their probabilities.
	s := prod(v.BlockH, v.BlockT) / score
	raw := gatheredTileRegs(v.BlockT, producer)
	valueNeed := acc + pv + wsOverhead
	scoreNeed := kept*16 + 3*s + wsOverhead
	producerNeed := 2*raw + rsOverhead
	b.Regs = []Item{
		{"acc", acc, "value group: fp32 accumulator [BLOCK_H, 512] over its threads"},
		{"p", pv, "value group: a tile's probabilities in bf16, P.V's A operand"},
		{"q_regs", kept * 16, fmt.Sprintf("score group: Q's first %d column groups as the score MMA's A operand", kept)},
		{"s_p", 3 * s, "score group: a warp's scores as two accumulators, and their probabilities"},
		{"overhead", wsOverhead, "each MMA group: softmax state, indices, addresses (fitted)"},
		{"raw_tiles", 2 * raw, "producer: the gathered tile it stores and the next one in flight (fp8 nope, rope, scale words)"},
		{"producer_overhead", rsOverhead, "producer: addresses, loop state (fitted)"},
		{"value_max", valueRegs, fmt.Sprintf("what setmaxnreg leaves the value group's %d warps", PPRoleSplitValueWarps)},
		{"score_max", PPRoleSplitScoreRegs, fmt.Sprintf("setmaxnreg for the score group's %d warps", PPRoleSplitScoreWarps)},
		{"producer_max", PPRoleSplitProducerRegs, fmt.Sprintf("setmaxnreg for the producer's %d warps", PPRoleSplitProducerWarps)},
	}
	// The launch bound every thread starts with, which setmaxnreg divides.
	b.RegsEst = PPRoleSplitMaxRegs
	if t.Capability < 90 {
		b.Reasons = append(b.Reasons, fmt.Sprintf("the role split moves registers between its partitions with setmaxnreg, which ptxas takes from sm_90 on; %s has none, and at %d registers a thread the value group's accumulators would spill", t.Name, PPRoleSplitMaxRegs))
	}
	for _, need := range []struct {
		group     string
		need, has int
	}{{"value group", valueNeed, valueRegs}, {"score group", scoreNeed, PPRoleSplitScoreRegs}, {"producer", producerNeed, PPRoleSplitProducerRegs}} {
		if need.need > need.has {
			b.Reasons = append(b.Reasons, fmt.Sprintf("the %s needs about %d registers per thread > the %d setmaxnreg gives it", need.group, need.need, need.has))
		}
	}
	if t.Path == PathWGMMA {
		b.Operands += " (on sm_90 the warp-group families serve instead)"
	}
	return judge(t, b)
}
