package gen

import "fmt"

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
}

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
	// spills 16-36 bytes there while 16 and 64 compile clean
	// (calib/REPORT.md), a quirk the budget model does not try to fit.
	if t.Path == PathMMASync {
		// mma.sync keeps Q's operand in registers (128 per thread whatever
		// BLOCK_H), so only 16-row head blocks fit; the sweep shows 32 being
		// refused, and trades warps against the accumulator's registers.
		s.BlockH = []int{16, 32}
		s.BlockT = []int{16, 32}
		s.NumWarps = []int{4, 8}
	}
	if t.Path == PathWGMMA {
		// Measured on the H200 (gpu/NOTES.md): 1 and 2 serve large
		// batches, 4 and 8 batch 16, 32 batch 1.
		s.WSSplitK = []int{1, 2, 4, 8, 16, 32}
		// The cluster merge saves the combine kernel: 1.2-1.5 µs at B64
		// topk 512 with 2 splits. Clusters of 4 and 8 lose wherever the
		// grid has 128 or more programs, which must find whole groups of
		// free SMs in one GPC, and win below that (explore 14, run 19).
		s.WSClusterSplitK = []int{2, 4, 8}
	}
	return s
}

// Variants expands the sweep in a fixed order (the order of the flags'
// values), with duplicates removed.
func (s Sweep) Variants() []Variant {
	var out []Variant
	seen := map[Variant]bool{}
	for _, h := range s.BlockH {
		for _, t := range s.BlockT {
			for _, k := range s.SplitK {
				for _, w := range s.NumWarps {
					for _, st := range s.NumStages {
						v := Variant{BlockH: h, BlockT: t, SplitK: k, NumWarps: w, NumStages: st}
						if !seen[v] {
							seen[v] = true
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	for _, k := range s.WSSplitK {
		v := Variant{BlockH: 64, BlockT: 64, SplitK: k, NumWarps: 8, NumStages: 2, WarpSpec: true}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, k := range s.WSClusterSplitK {
		v := Variant{BlockH: 64, BlockT: 64, SplitK: k, NumWarps: 8, NumStages: 2, WarpSpec: true, ClusterMerge: true}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Validate checks every list is non-empty and every variant is well formed.
func (s Sweep) Validate() error {
	for _, l := range []struct {
		flag string
		vals []int
	}{{"--block-h", s.BlockH}, {"--block-t", s.BlockT}, {"--split-k", s.SplitK}, {"--num-warps", s.NumWarps}, {"--num-stages", s.NumStages}} {
		if len(l.vals) == 0 {
			return fmt.Errorf("%s: empty list", l.flag)
		}
	}
	if s.Heads < 1 {
		return fmt.Errorf("--heads=%d: must be at least 1", s.Heads)
	}
	for _, v := range s.Variants() {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}
