package gen

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Variant is one point of a sweep: the tile parameters of the head-batched
// MMA kernel. Every field is a compile-time constant of the emitted kernel.
type Variant struct {
	BlockH    int // heads per program (rows of every tl.dot)
	BlockT    int // tokens gathered per tile
	SplitK    int // programs per (batch, head block), merged by a log-sum-exp combine
	NumWarps  int
	NumStages int
	// WarpSpec selects the warp-specialised family (Gluon, sm_90): a
	// producer warp group gathers and dequantises K tiles into a ring of
	// NumStages shared-memory buffers while NumWarps consumer warps run the
	// wgmma, so the gather latency hides behind the tensor cores.
	WarpSpec bool
	// ClusterMerge (warp-specialised only, 2 <= SplitK <= 8): the SplitK
	// programs of a (head block, batch row) run as one thread-block cluster
	// and, after a cluster barrier, merge their partials themselves, so no
	// combine kernel follows (explore 14 in NOTES.md).
	ClusterMerge bool
	// Pipelined selects the pipelined mma.sync family (Gluon mma_v2, for
	// the targets without wgmma): Q stays in shared memory, and the raw
	// bytes of the next tile are loaded into registers while the MMAs of
	// this one run. NumStages counts its K buffer sets (1 or 2), or the
	// role-split tile's K slots (RoleSplit).
	Pipelined bool
}

// MaxCluster is the largest portable thread-block cluster (CUDA): the most
// programs a cluster merge can join.
const MaxCluster = 8

// DSMEMSplitK is the cluster size that merges through distributed shared
// memory instead of global memory (DSMEM_SPLIT_K in the template; explore
// 25 in NOTES.md: faster for clusters of two, slower for 4 and 8).
const DSMEMSplitK = 2

// MergesInSharedMemory reports whether v's cluster merges through
// distributed shared memory (a cluster of DSMEMSplitK programs).
func (v Variant) MergesInSharedMemory() bool {
	return v.ClusterMerge && v.SplitK == DSMEMSplitK
}

// Warp-specialised family constants, shared by the budget model and the
// template: 4 producer warps at 120 registers each (setmaxnreg), and the
// whole program launched at 168 registers per thread, which is what 12 warps
// may hold (65,536 / 384, rounded down to a multiple of 8). 120 is the most
// the producer can take while the consumers keep 192; with the same code
// and no spills at either, it measured up to 3% faster than 112 (run 14
// against run 13 in NOTES.md).
const (
	WSProducerWarps = 4
	WSProducerRegs  = 120
	WSMaxRegs       = 168
)

// The split consumers (every warp-specialised variant without a cluster
// merge; lab/wsa/NOTES.md): the consumer warps are two partitions of
// NumWarps/2, a score group (each tile's whole score tile, its softmax and
// the left half of P.V) and a value group (the right half, from P in shared
// memory). The value group runs at WSValueRegs; the score group, the
// kernel's default partition, gets what the launch's WSMaxRegs a thread
// leaves: 3 * 168 - 160 - 120 = 224 with 4 warps in each partition. At 152
// ptxas ignored every setmaxnreg (the value group needs more), which left
// the score group at 168 with spills and serialised wgmma.
const WSValueRegs = 160

// The narrow warp-specialised variants (BLOCK_H below a wgmma's 64 rows;
// lab/wst/NOTES.md) put the heads on the MMAs' N side: one consumer warp
// group of WSNarrowConsumerWarps, and WSNarrowProducerWarps producer warps
// at WSNarrowProducerRegs, each holding one row of a 64-token tile (more
// warps gather faster an SM: lab/gatherrate). 4 + 8 warps at WSMaxRegs is
// the same 64,512 registers as the other kernels' 12 warps.
const (
	WSNarrowConsumerWarps = 4
	WSNarrowProducerWarps = 8
	WSNarrowProducerRegs  = 96
)

// Narrow reports whether v is a narrow warp-specialised variant.
func (v Variant) Narrow() bool {
	return v.WarpSpec && v.BlockH < 64
}

// producer is the warp count and setmaxnreg registers of v's producer
// partition (warp-specialised variants).
func (v Variant) producer() (warps, regs int) {
	if v.Narrow() {
		return WSNarrowProducerWarps, WSNarrowProducerRegs
	}
	return WSProducerWarps, WSProducerRegs
}

// Name is the variant's module name, stable so that file names and golden
// files do not churn: mma_h64_t32_k4_w8_s2, ws_h64_t64_k2_w8_s2 for the
// warp-specialised family (wsc_... when it merges in a cluster), or
// pp_h64_t32_k2_w8_s1 for the pipelined one.
func (v Variant) Name() string {
	return fmt.Sprintf("%s_h%d_t%d_k%d_w%d_s%d", v.family(), v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages)
}

func (v Variant) family() string {
	switch {
	case v.WarpSpec && v.ClusterMerge:
		return "wsc"
	case v.WarpSpec:
		return "ws"
	case v.Pipelined:
		return "pp"
	}
	return "mma"
}

func (v Variant) String() string {
	if v.WarpSpec {
		merge := ""
		if v.ClusterMerge {
			merge = ", merged in a cluster"
		}
		if v.Narrow() {
			merge = ", heads on the MMAs' N side"
		}
		return fmt.Sprintf("BLOCK_H=%d BLOCK_T=%d SPLIT_K=%d consumer warps=%d K buffers=%d (warp-specialised%s)",
			v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages, merge)
	}
	if v.RoleSplit() {
		return fmt.Sprintf("BLOCK_H=%d BLOCK_T=%d SPLIT_K=%d warps=%d K slots=%d (pipelined mma.sync, split by role: %d value, %d score and %d producer warps)",
			v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages, PPRoleSplitValueWarps, PPRoleSplitScoreWarps, PPRoleSplitProducerWarps)
	}
	if v.Pipelined {
		return fmt.Sprintf("BLOCK_H=%d BLOCK_T=%d SPLIT_K=%d num_warps=%d K buffer sets=%d (pipelined mma.sync, %d token halves)",
			v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages, PPSubtiles(v))
	}
	return fmt.Sprintf("BLOCK_H=%d BLOCK_T=%d SPLIT_K=%d num_warps=%d num_stages=%d",
		v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages)
}

// Threads is the number of threads per program, producer warps included.
func (v Variant) Threads() int {
	if v.WarpSpec {
		warps, _ := v.producer()
		return 32 * (v.NumWarps + warps)
	}
	return 32 * v.NumWarps
}

// Bounds of the tile parameters. A value outside them is refused before
// anything is computed, so the budget's products stay small (the largest,
// an fp32 [256, 512] epilogue, is 512 KiB) and can never wrap around.
// Each bound is past what a target could run: the budget model, not the
// bound, is what refuses the largest accepted tiles.
const (
	// MaxBlockH: a 256-row Q tile alone (256 KiB of bf16) exceeds the
	// shared memory of every target; DeepSeek-V4-Flash has 64 heads a rank.
	MaxBlockH = 256
	// MaxBlockT: a 256-token K tile alone (256 KiB) exceeds every target.
	MaxBlockT = 256
	// MaxSplitK: topk 2048 in 16-token tiles is 128 tiles; more splits than
	// tiles leave programs with nothing to do.
	MaxSplitK = 256
	// MaxNumStages: Triton's software pipeline gains nothing past a few
	// stages, and each one costs a K tile of shared memory.
	MaxNumStages = 8
)

// Validate reports what makes a variant impossible to compile at all (as
// opposed to not fitting a target, which Check decides).
func (v Variant) Validate() error {
	var errs []error
	if v.BlockH < 16 || v.BlockH > MaxBlockH || !isPow2(v.BlockH) {
		errs = append(errs, fmt.Errorf("BLOCK_H=%d: must be a power of two of at least 16 (tl.dot's smallest M) and at most %d (a Q tile that large exceeds every target's shared memory)", v.BlockH, MaxBlockH))
	}
	if v.BlockT < 16 || v.BlockT > MaxBlockT || !isPow2(v.BlockT) {
		errs = append(errs, fmt.Errorf("BLOCK_T=%d: must be a power of two of at least 16 (tl.dot's smallest N and K) and at most %d (a K tile that large exceeds every target's shared memory)", v.BlockT, MaxBlockT))
	}
	if v.SplitK < 1 || v.SplitK > MaxSplitK {
		errs = append(errs, fmt.Errorf("SPLIT_K=%d: must be at least 1 and at most %d (topk 2048 is 128 tiles of 16 tokens; more splits than tiles leave programs idle)", v.SplitK, MaxSplitK))
	}
	switch v.NumWarps {
	case 1, 2, 4, 8, 16:
	default:
		errs = append(errs, fmt.Errorf("num_warps=%d: must be one of 1, 2, 4, 8, 16", v.NumWarps))
	}
	if v.NumStages < 1 || v.NumStages > MaxNumStages {
		errs = append(errs, fmt.Errorf("num_stages=%d: must be at least 1 and at most %d", v.NumStages, MaxNumStages))
	}
	if v.ClusterMerge && !v.WarpSpec {
		errs = append(errs, fmt.Errorf("%s: the cluster merge is written for the warp-specialised kernel only", v.Name()))
	}
	if v.ClusterMerge && (v.SplitK < 2 || v.SplitK > MaxCluster) {
		errs = append(errs, fmt.Errorf("%s: a cluster merge needs 2 to %d splits (one program each in a portable cluster), not SPLIT_K=%d", v.Name(), MaxCluster, v.SplitK))
	}
	if v.Pipelined && (v.WarpSpec || v.ClusterMerge) {
		errs = append(errs, fmt.Errorf("%s: the pipelined family has no warp specialisation or cluster merge", v.Name()))
	}
	if v.Pipelined && len(errs) == 0 {
		errs = append(errs, validatePipelined(v)...)
	}
	if v.WarpSpec && len(errs) == 0 {
		// The template's layouts are written for two shapes: two consumer
		// warp groups of 64 heads (splitting the 512 output columns, or by
		// role without a cluster merge: WSValueRegs) and a producer covering
		// 64 token rows in 4 warps; or, narrow, one consumer warp group of
		// 16 heads (the wgmma's N; its accumulator is [512, BLOCK_H]) beside
		// 8 producer warps, its splits merged by the combine.
		switch {
		case v.BlockH == 16 && v.BlockT == 64 && v.NumWarps == WSNarrowConsumerWarps && !v.ClusterMerge:
		case v.BlockH != 64 || v.BlockT != 64 || v.NumWarps != 8:
			errs = append(errs, fmt.Errorf("%s: the warp-specialised kernel is written for BLOCK_H=64, BLOCK_T=64 and 8 consumer warps, or BLOCK_H=16, BLOCK_T=64 and 4 consumer warps without a cluster merge", v.Name()))
		}
	}
	return errors.Join(errs...)
}

// validatePipelined checks the shapes the pipelined template's layouts are
// written for: 16 heads a warp down the heads (WARPS_M = BLOCK_H / 16
// warps), the other warps across the token columns in whole 8-column MMA
// tiles, one 64-value gather row of every token spread over all threads,
// and one or two K buffer sets. Variants of PPRoleSplitWarps warps are the
// role-split tile, which validateRoleSplit checks.
func validatePipelined(v Variant) []error {
	if v.NumWarps == PPRoleSplitWarps {
		return validateRoleSplit(v)
	}
	var errs []error
	warpsM := v.BlockH / 16
	if v.BlockH > 64 || v.NumWarps%warpsM != 0 {
		return []error{fmt.Errorf("%s: the pipelined kernel takes BLOCK_H 16, 32 or 64 with num_warps a multiple of BLOCK_H / 16", v.Name())}
	}
	warpsN := v.NumWarps / warpsM
	if cols := v.BlockT / PPSubtiles(v); cols < 8*warpsN || warpsN > 8 {
		errs = append(errs, fmt.Errorf("%s: %d warps across %d token columns leave less than one 8-column MMA tile a warp", v.Name(), warpsN, cols))
	}
	if per := v.BlockT * 64 / (32 * v.NumWarps); per < 4 || per > 16 || per%4 != 0 {
		errs = append(errs, fmt.Errorf("%s: the gather gives each thread %d bytes of a 64-value group; the layout takes whole 32-bit words, 4 to 16 bytes", v.Name(), per))
	}
	if v.NumStages > 2 {
		errs = append(errs, fmt.Errorf("%s: the pipelined kernel has one or two K buffer sets, not %d", v.Name(), v.NumStages))
	}
	return errs
}

// The role-split tile of the pipelined family (lab/rs120/NOTES.md): 64
// heads whose program is three partitions of warps, launched at
// PPRoleSplitMaxRegs a thread and re-divided by setmaxnreg. A value group
// of PPRoleSplitValueWarps (the default partition: 4 down the heads, 2
// across the 512 output columns) holds the accumulators; a score group of
// PPRoleSplitScoreWarps holds Q's first PPRoleSplitQRegGroups column groups
// in registers and runs each tile's scores and softmax; a producer of
// PPRoleSplitProducerWarps gathers and dequantises tiles of 16 tokens into
// a ring of K slots (the variant's NumStages). Q (64 KB) fits neither
// beside the accumulators in registers nor beside two 32-token K sets in
// 99 KB of shared memory, which is what bounds the one-partition 64-head
// tile; split by role, each partition holds only its own part.
const (
	PPRoleSplitWarps         = 16 // all three partitions: the variant's NumWarps
	PPRoleSplitValueWarps    = 8
	PPRoleSplitScoreWarps    = 4
	PPRoleSplitProducerWarps = 4
	// 65,536 registers over 512 threads. setmaxnreg gives the score group
	// PPRoleSplitScoreRegs and the producer PPRoleSplitProducerRegs, and
	// the value group what they leave: 128 + (8 + 72) * 4 / 8 = 168.
	PPRoleSplitMaxRegs      = 128
	PPRoleSplitScoreRegs    = 120
	PPRoleSplitProducerRegs = 56
	// Q's column groups held in registers by the score group: 4 x 16
	// registers. 5 spilled 4-8 B (the value group, left 160) and 6
	// spilled 116-156 B (lab/rs120/compile.txt).
	PPRoleSplitQRegGroups = 4
	// PPRoleSplitBlockT is the slot: 32-token slots spilled or did not fit.
	PPRoleSplitBlockT = 16
)

// PPRoleSplitValueRegs is what the launch's registers leave the value group
// once setmaxnreg has given the others theirs, rounded down to 8.
func PPRoleSplitValueRegs() int {
	free := (PPRoleSplitMaxRegs-PPRoleSplitScoreRegs)*PPRoleSplitScoreWarps +
		(PPRoleSplitMaxRegs-PPRoleSplitProducerRegs)*PPRoleSplitProducerWarps
	return (PPRoleSplitMaxRegs + free/PPRoleSplitValueWarps) / 8 * 8
}

// RoleSplit reports whether v is the pipelined family's role-split tile.
func (v Variant) RoleSplit() bool {
	return v.Pipelined && v.NumWarps == PPRoleSplitWarps
}

// validateRoleSplit checks the one shape the role-split kernel's layouts
// are written for; its K slots are the variant's NumStages.
func validateRoleSplit(v Variant) []error {
	var errs []error
	if v.BlockH != 64 || v.BlockT != PPRoleSplitBlockT {
		errs = append(errs, fmt.Errorf("%s: the role-split pipelined kernel (%d warps) is written for BLOCK_H 64 and %d-token K slots", v.Name(), PPRoleSplitWarps, PPRoleSplitBlockT))
	}
	if v.NumStages < 2 || v.NumStages > 4 {
		errs = append(errs, fmt.Errorf("%s: the role-split pipelined kernel takes a ring of 2 to 4 K slots, not %d", v.Name(), v.NumStages))
	}
	return errs
}

// PPHalvesBlockT is the BLOCK_T at which the pipelined kernel computes a
// tile's scores as two halves of 16 tokens that share each Q fragment:
// each half's probabilities reach the MMA operand layout through a 2 KB
// scratch of their own, which is what lets BLOCK_H 64 take 32-token tiles
// within 99 KB (lab/sm120/NOTES.md). Other tiles are one piece.
const PPHalvesBlockT = 32

// PPQRegGroups is how many of Q's 8 column groups the pipelined kernel keeps
// in registers, as the score MMA's A operand, across its loop over
// two-half tiles (one-piece tiles: PPQRegGroupsOnePiece): each group kept
// saves every warp 2 KB of ldmatrix a tile, on the shared-memory operand
// path that bounds the 64-head kernel. Two groups took 4-6% off it on the
// H200 (lab/qreg/NOTES.md); the 64-head tile has registers for no more.
const PPQRegGroups = 2

// PPQRegGroupsOnePiece is how many of Q's column groups the one-piece
// 16-head tile keeps in registers where its program has a multiprocessor to
// itself: with all 8 warps across the tokens, every warp reads all of Q
// from shared memory every tile otherwise. Six took 4-8% off it at splits
// 1 and 2 on the H200, one program an SM (lab/qreg16/NOTES.md); four gained
// half as much, eight spilled.
const PPQRegGroupsOnePiece = 6

// ppQRegGroupsOnePiece is PPQRegGroupsOnePiece where the 16-head tile of 64
// tokens (the family's one-piece tile) cannot share a multiprocessor of t
// with a second one, and 0 where it can: there its 96 registers would cost
// that second program.
func ppQRegGroupsOnePiece(t Target) int {
	v := Variant{BlockH: 16, BlockT: 64, SplitK: 1, NumWarps: 8, NumStages: 1, Pipelined: true}
	if onePerSM(t, []int{total(ppSmem(v))}) {
		return PPQRegGroupsOnePiece
	}
	return 0
}

// ppPrefetch says whether the pipelined 16-head tile starts the rows of the
// tile after next into L2 on t (the kernel's PREFETCH): where Triton reads
// fp8 (sm_89 on). On the bytes path (sm_80, sm_86) the tile has no
// registers to spare for it: ptxas spills 20-48 B at 255 (lab/l2pp).
func ppPrefetch(t Target) bool { return t.FP8 }

// ppPrefetchNarrowExtra says whether that prefetch is one line a thread
// (each row's first four) instead of two (every line and the scale word) in
// the tile built with the extra cache, the whole call's, when the module
// runs under Triton 3.6: on sm_120, where that release's ptxas drops the
// two from that build (255 registers, six of Q's groups in registers)
// though the PTX asks for them, and keeps the one; 3.7.1-3.9.0 keep the
// two. On the H100 the whole call with the one line took 0.92x the time of
// no prefetch at 16 heads, B 64 and 128, 2,048 extra tokens (0.93x as
// layers), and 1.01-1.05x the time with the two (lab/wpf).
// calib/calibrate.py fails a build whose machine code lost a prefetch.
func ppPrefetchNarrowExtra(t Target) bool { return ppPrefetch(t) && t.Capability == 120 }

// ppQRegGroups is how many of Q's column groups v's tile keeps in registers
// on t (the kernel's _pp_q_reg_groups).
func ppQRegGroups(t Target, v Variant) int {
	switch {
	case v.RoleSplit():
		return PPRoleSplitQRegGroups
	case PPSubtiles(v) == 2:
		return PPQRegGroups
	case v.BlockH == 16:
		return ppQRegGroupsOnePiece(t)
	}
	return 0
}

// PPSubtiles is how many pieces the pipelined kernel splits v's tile into.
func PPSubtiles(v Variant) int {
	if v.BlockT == PPHalvesBlockT {
		return 2
	}
	return 1
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// ParseVariantName is the inverse of Name, for reading measured results back.
func ParseVariantName(name string) (Variant, error) {
	var v Variant
	fields := strings.Split(name, "_")
	if len(fields) != 6 || !slices.Contains([]string{"mma", "ws", "wsc", "pp"}, fields[0]) {
		return v, fmt.Errorf("variant name %q: want mma_h<H>_t<T>_k<K>_w<W>_s<S> (or ws_... / wsc_... for the warp-specialised family, pp_... for the pipelined one)", name)
	}
	v.WarpSpec = fields[0] == "ws" || fields[0] == "wsc"
	v.ClusterMerge = fields[0] == "wsc"
	v.Pipelined = fields[0] == "pp"
	dst := []*int{&v.BlockH, &v.BlockT, &v.SplitK, &v.NumWarps, &v.NumStages}
	for i, prefix := range []string{"h", "t", "k", "w", "s"} {
		f := fields[i+1]
		n, err := strconv.Atoi(strings.TrimPrefix(f, prefix))
		if !strings.HasPrefix(f, prefix) || err != nil {
			return v, fmt.Errorf("variant name %q: bad field %q", name, f)
		}
		*dst[i] = n
	}
	return v, v.Validate()
}
