package gen

import (
	"fmt"
	"iter"
	"strings"
)

// Sweep is the cross product of tile parameter lists for one target.
type Sweep struct {
	Target    Target
	Heads     int // query heads per rank; selection and efficiency only, not the budget
	BlockH    []int
	BlockT    []int
	SplitK    []int
	NumWarps  []int
	NumStages []int
	// WSSplitK lists the SPLIT_K values of the warp-specialised family
	// (BLOCK_H 64, BLOCK_T 64, 8 consumer warps, 2 K buffers), added after
	// the cross product; empty leaves the family out.
	WSSplitK []int
	// WSClusterSplitK lists the SPLIT_K values of the warp-specialised
	// variants that merge their splits in a thread-block cluster (wsc_*).
	WSClusterSplitK []int
	// WSNarrowSplitK lists the SPLIT_K values of the narrow warp-specialised
	// variants (BLOCK_H 16, the heads on the MMAs' N side, 4 consumer warps),
	// each with every K buffer count of WSNarrowStages.
	WSNarrowSplitK []int
	// PPTiles are the tiles of the pipelined mma.sync family (pp_*), each
	// swept over PPSplitK, after the warp-specialised variants; either list
	// empty leaves the family out.
	PPTiles  []PPTile
	PPSplitK []int
}

// WSNarrowStages are the K buffer counts of each narrow warp-specialised
// split: 3 won at some large-batch shapes of lab/wst's sweep, 2 at others.
var WSNarrowStages = []int{2, 3}

// narrowVariant is the narrow warp-specialised variant at split k with st
// K buffers.
func narrowVariant(k, st int) Variant {
	return Variant{BlockH: 16, BlockT: 64, SplitK: k, NumWarps: WSNarrowConsumerWarps, NumStages: st, WarpSpec: true}
}

// PPTile is one tile of the pipelined family: everything but SPLIT_K.
type PPTile struct {
	BlockH, BlockT, NumWarps int
	Bufs                     int // K buffer sets (the variant's NumStages)
}

// variant is the tile at split k.
func (p PPTile) variant(k int) Variant {
	return Variant{BlockH: p.BlockH, BlockT: p.BlockT, SplitK: k, NumWarps: p.NumWarps, NumStages: p.Bufs, Pipelined: true}
}

// The pipelined family's default tiles (lab/sm120/NOTES.md, run 3): 16
// heads over 64-token tiles for small head counts, 64 heads over 32-token
// tiles in two halves for the rest; both 8 warps and one K buffer set.
var (
	PPTileH16 = PPTile{BlockH: 16, BlockT: 64, NumWarps: 8, Bufs: 1}
	PPTileH64 = PPTile{BlockH: 64, BlockT: 32, NumWarps: 8, Bufs: 1}
	// PPTileRoleSplit is the 64-head tile split by role (Variant.RoleSplit)
	// with 3 K slots: 4 did not fit 99 KB, 2 leave the producer a slot
	// behind whenever both groups hold one.
	PPTileRoleSplit = PPTile{BlockH: 64, BlockT: PPRoleSplitBlockT, NumWarps: PPRoleSplitWarps, Bufs: 3}
)

// DefaultSweep is the curated sweep for a target: tens of variants that span
// the useful range (small head blocks with deep splits for batch 1, full head
// blocks with few splits for large batches), so that kernels/ stays reviewable.
func DefaultSweep(t Target) Sweep {
	s := Sweep{
		Target:    t,
		Heads:     64,
		BlockH:    []int{16, 64},
		BlockT:    []int{16, 64},
		SplitK:    []int{1, 4, 16, 32},
		NumWarps:  []int{8},
		NumStages: []int{1, 2},
	}
	// BLOCK_T 32 is left out: with BLOCK_H 64 and SPLIT_K 1, ptxas 12.8
	// spilled 16-36 bytes there while 16 and 64 compiled clean (found by
	// calib/calibrate.py when this sweep was chosen), a quirk the budget
	// model does not try to fit.
	if t.Path == PathMMASync {
		// mma.sync keeps Q's operand in registers (128 per thread whatever
		// BLOCK_H), so only 16-row head blocks fit; the sweep shows 32 being
		// refused, and trades warps against the accumulator's registers.
		s.BlockH = []int{16, 32}
		s.BlockT = []int{16, 32}
		s.NumWarps = []int{4, 8}
	}
	if t.Path != PathWGMMA {
		// The pipelined mma.sync family where Triton has no warp-group MMA.
		// The measured splits: 1, 2 and 8 at batch 128, 64 and 16, 16 and 32
		// at batch 1 (lab/sm120/NOTES.md); 3, 4 and 6 for the batches
		// between, where the entry points fit the split count to the GPU
		// (fit_splits: at 64 heads, topk 2048, B 17 runs 102 programs of a
		// sixth of a row, not 34 of a half; B 39 one wave of thirds, not
		// three of eighths; lab/splits36). The tiles after the two that
		// ship show the budget at work: two buffer sets of 32 tokens
		// (131 KB) beside a 64-head Q, and a 64-token tile at 64 heads.
		s.PPTiles = []PPTile{PPTileH16, PPTileH64,
			{BlockH: 64, BlockT: 32, NumWarps: 8, Bufs: 2}, {BlockH: 64, BlockT: 64, NumWarps: 8, Bufs: 1}}
		s.PPSplitK = []int{1, 2, 3, 4, 6, 8, 16, 32}
		if t.Name == "sm_120" {
			// The role split needs setmaxnreg (sm_90 on), which rules out
			// sm_80 to sm_89; sm_100's module keeps the tiles its table
			// was measured with. Timed level with the one-partition tile
			// (lab/rs120/NOTES.md, "First run"), it is in no table; it stays
			// for a card owner's own sweep on the sm_120 card it is for.
			s.PPTiles = append(s.PPTiles, PPTileRoleSplit)
		}
	}
	if t.Path == PathWGMMA {
		// Measured on the H200 (NOTES.md): 1 and 2 serve large
		// batches, 4 and 8 batch 16, 32 batch 1; 3 and 6 for the batches
		// between, where fit_splits chooses the count (lab/splits36).
		s.WSSplitK = []int{1, 2, 3, 4, 6, 8, 16, 32}
		// The cluster merge saves the combine kernel: 1.2-1.5 µs at B64
		// topk 512 with 2 splits. Clusters of 4 and 8 lose wherever the
		// grid has 128 or more programs, which must find whole groups of
		// free SMs in one GPC, and win below that (NOTES.md: explore 14, run 19).
		s.WSClusterSplitK = []int{2, 4, 8}
		// 16 heads (tensor parallelism 4): 1 to 8 splits served B 16 to
		// 128 in lab/wst's sweep; 16 and 32 for the small batches; 3 and 6
		// for fit_splits between the measured batches (lab/splits36).
		s.WSNarrowSplitK = []int{1, 2, 3, 4, 6, 8, 16, 32}
	}
	return s
}

// MaxVariants caps a sweep: emit renders one module a variant, and a
// sweep of tens of thousands (issue 30: 20,000 --split-k values) ran out of
// memory. The curated sweeps hold a few tens.
const MaxVariants = 4096

// MaxHeads bounds --heads: query heads per rank, 64 for DeepSeek-V4-Flash.
const MaxHeads = 1024

// Variants expands the sweep in a fixed order (the order of the flags'
// values), with duplicates removed. Call Validate first: it refuses a
// sweep larger than MaxVariants before anything is expanded.
func (s Sweep) Variants() []Variant {
	var out []Variant
	for v := range s.All() {
		out = append(out, v)
	}
	return out
}

// All yields the sweep's variants one at a time, in the order of Variants.
func (s Sweep) All() iter.Seq[Variant] {
	return func(yield func(Variant) bool) {
		seen := map[Variant]bool{}
		emit := func(v Variant) bool {
			if seen[v] {
				return true
			}
			seen[v] = true
			return yield(v)
		}
		for _, h := range s.BlockH {
			for _, t := range s.BlockT {
				for _, k := range s.SplitK {
					for _, w := range s.NumWarps {
						for _, st := range s.NumStages {
							if !emit(Variant{BlockH: h, BlockT: t, SplitK: k, NumWarps: w, NumStages: st}) {
								return
							}
						}
					}
				}
			}
		}
		for _, k := range s.WSSplitK {
			if !emit(Variant{BlockH: 64, BlockT: 64, SplitK: k, NumWarps: 8, NumStages: 2, WarpSpec: true}) {
				return
			}
		}
		for _, k := range s.WSClusterSplitK {
			if !emit(Variant{BlockH: 64, BlockT: 64, SplitK: k, NumWarps: 8, NumStages: 2, WarpSpec: true, ClusterMerge: true}) {
				return
			}
		}
		for _, k := range s.WSNarrowSplitK {
			for _, st := range WSNarrowStages {
				if !emit(narrowVariant(k, st)) {
					return
				}
			}
		}
		for _, tile := range s.PPTiles {
			for _, k := range s.PPSplitK {
				if !emit(tile.variant(k)) {
					return
				}
			}
		}
	}
}

// Size is the number of distinct variants the sweep expands to, computed
// from the lists without expanding them (saturating: it never wraps).
func (s Sweep) Size() int {
	n := 1
	for _, l := range [][]int{s.BlockH, s.BlockT, s.SplitK, s.NumWarps, s.NumStages} {
		n = satMul(n, distinct(l))
	}
	pp := satMul(distinctTiles(s.PPTiles), distinct(s.PPSplitK))
	narrow := satMul(distinct(s.WSNarrowSplitK), len(WSNarrowStages))
	return satAdd(n, satAdd(satAdd(satAdd(distinct(s.WSSplitK), distinct(s.WSClusterSplitK)), narrow), pp))
}

func distinctTiles(l []PPTile) int {
	seen := map[PPTile]bool{}
	for _, x := range l {
		seen[x] = true
	}
	return len(seen)
}

func distinct(l []int) int {
	seen := map[int]bool{}
	for _, x := range l {
		seen[x] = true
	}
	return len(seen)
}

// sweepParam is one list of the sweep with the rule for its values.
type sweepParam struct {
	flag  string
	vals  []int
	check func(int) error
}

func (s Sweep) params() []sweepParam {
	probe := func(set func(*Variant, int)) func(int) error {
		return func(x int) error {
			v := Variant{BlockH: 16, BlockT: 16, SplitK: 1, NumWarps: 4, NumStages: 1}
			set(&v, x)
			return v.Validate()
		}
	}
	return []sweepParam{
		{"--block-h", s.BlockH, probe(func(v *Variant, x int) { v.BlockH = x })},
		{"--block-t", s.BlockT, probe(func(v *Variant, x int) { v.BlockT = x })},
		{"--split-k", s.SplitK, probe(func(v *Variant, x int) { v.SplitK = x })},
		{"--num-warps", s.NumWarps, probe(func(v *Variant, x int) { v.NumWarps = x })},
		{"--num-stages", s.NumStages, probe(func(v *Variant, x int) { v.NumStages = x })},
		{"--ws-split-k", s.WSSplitK, probe(func(v *Variant, x int) { v.SplitK = x })},
		{"--ws-cluster-split-k", s.WSClusterSplitK, func(x int) error {
			if x < 2 || x > MaxCluster {
				return fmt.Errorf("SPLIT_K=%d: a cluster merge needs 2 to %d splits (one program each in a portable cluster)", x, MaxCluster)
			}
			return nil
		}},
		{"--ws-narrow-split-k", s.WSNarrowSplitK, probe(func(v *Variant, x int) { v.SplitK = x })},
		{"--pp-split-k", s.PPSplitK, probe(func(v *Variant, x int) { v.SplitK = x })},
	}
}

// Validate checks, in this order and before expanding anything, that every
// list is non-empty and each of its values within its bounds, and that the
// sweep is at most MaxVariants; then that every variant is well formed.
func (s Sweep) Validate() error {
	if s.Heads < 1 || s.Heads > MaxHeads {
		return fmt.Errorf("--heads=%d: must be at least 1 and at most %d", s.Heads, MaxHeads)
	}
	for i, p := range s.params() {
		if i < 5 && len(p.vals) == 0 {
			return fmt.Errorf("%s: empty list", p.flag)
		}
		for _, x := range p.vals {
			if err := p.check(x); err != nil {
				return fmt.Errorf("%s %d: %w", p.flag, x, err)
			}
		}
	}
	for _, tile := range s.PPTiles {
		if err := tile.variant(1).Validate(); err != nil {
			return fmt.Errorf("pipelined tile %+v: %w", tile, err)
		}
	}
	if n := s.Size(); n > MaxVariants {
		return fmt.Errorf("the sweep asks for %s variants (%s), more than the %s mlagen budgets and emits at once: narrow a list, or split the sweep into several runs",
			commas(n), s.sizeTerms(), commas(MaxVariants))
	}
	for v := range s.All() {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// sizeTerms explains Size: "3 --block-h x 2 --block-t x ... + 6 --ws-split-k".
func (s Sweep) sizeTerms() string {
	var prod, sum []string
	for i, p := range s.params() {
		term := fmt.Sprintf("%d %s", distinct(p.vals), p.flag)
		switch {
		case i < 5:
			prod = append(prod, term)
		case p.flag == "--pp-split-k" && len(p.vals) > 0 && len(s.PPTiles) > 0:
			sum = append(sum, fmt.Sprintf("%d pipelined tiles x %s", distinctTiles(s.PPTiles), term))
		case p.flag == "--ws-narrow-split-k" && len(p.vals) > 0:
			sum = append(sum, fmt.Sprintf("%s x %d K buffer counts", term, len(WSNarrowStages)))
		case p.flag != "--pp-split-k" && len(p.vals) > 0:
			sum = append(sum, term)
		}
	}
	return strings.Join(append([]string{strings.Join(prod, " x ")}, sum...), " + ")
}
