package gen

import (
	"fmt"
	"strings"
)

// The data each template is executed with: one struct per template (or per
// kernel family), whose fields are everything the template may use.

// Kernel families: what Config.family says in an emitted module, and so
// which launcher runs a configuration. A family is one template file
// (templates/<family>_kernel.tmpl) defining "<family>_kernels" (the @jit
// code) and "<family>_launch" (the host function _run_<family> and its
// helpers), executed with its own data type below, plus a pointer field in
// bundleData and one entry in the bundle's _FAMILIES table.
const (
	FamilyMMA = "mma" // Triton tl.dot, every target
	FamilyWS  = "ws"  // warp-specialised Gluon, sm_90 (with or without a cluster merge)
	FamilyPP  = "pp"  // pipelined Gluon mma_v2, the targets without wgmma
)

// KernelFamily is the family whose kernel runs v.
func KernelFamily(v Variant) string {
	switch {
	case v.WarpSpec:
		return FamilyWS
	case v.Pipelined:
		return FamilyPP
	}
	return FamilyMMA
}

// WSTile is the one tile the warp-specialised template is written for: two
// consumer warp groups splitting the 512 output columns of 64 heads, a
// producer covering 64 token rows in 4 warps, and 2 K buffers. Its layouts
// and its dequantising stores assume it; the sweep varies SplitK (and the
// cluster merge) only.
var WSTile = Variant{BlockH: 64, BlockT: 64, NumWarps: 8, NumStages: 2, WarpSpec: true}

// mmaFamily is the data of templates/mma_kernel.tmpl: the Triton MMA kernel
// takes every tile setting from its Config at run time; what it takes from
// the target is how it reads fp8.
type mmaFamily struct {
	FP8 bool // Triton has fp8 e4m3 on the target (else the cache is read as bytes)
}

// ppFamily is the data of templates/pp_kernel.tmpl: the settings the budget
// model and the kernel must agree on, and how the target reads fp8.
type ppFamily struct {
	FP8          bool
	HalvesBlockT int // PPHalvesBlockT
	QRegGroups   int // PPQRegGroups
	// QRegGroupsOnePiece is ppQRegGroupsOnePiece(target): Q's column
	// groups one-piece 16-head tiles keep in registers.
	QRegGroupsOnePiece int
	// OnePerSM says no two of the family's programs fit one multiprocessor's
	// shared memory on the target (onePerSM), so the kernel is launched with
	// every register ptxas may give a thread.
	OnePerSM bool
	// RoleSplit is the role-split tile's settings (Variant.RoleSplit); nil
	// where no configuration of the module is that tile.
	RoleSplit *roleSplit
	// Prefetch is ppPrefetch(target): the 16-head tile starts the rows of
	// the tile after next into L2.
	Prefetch bool
	// PrefetchNarrowExtra is ppPrefetchNarrowExtra(target): that prefetch
	// is one line a thread, not two, in the build with the extra cache.
	PrefetchNarrowExtra bool
}

// roleSplit is what the role-split kernel (templates/pp_kernel.tmpl's
// _rs_*) and the budget model agree on: its partitions' warps and
// registers, and Q's column groups its score group keeps in registers.
type roleSplit struct {
	Warps, ValueWarps, ScoreWarps, ProducerWarps int
	MaxRegs, ScoreRegs, ProducerRegs             int
	QRegGroups                                   int
}

func newRoleSplit() *roleSplit {
	return &roleSplit{
		Warps: PPRoleSplitWarps, ValueWarps: PPRoleSplitValueWarps,
		ScoreWarps: PPRoleSplitScoreWarps, ProducerWarps: PPRoleSplitProducerWarps,
		MaxRegs: PPRoleSplitMaxRegs, ScoreRegs: PPRoleSplitScoreRegs, ProducerRegs: PPRoleSplitProducerRegs,
		QRegGroups: PPRoleSplitQRegGroups,
	}
}

// dequantData is the data of the dequantisation fragments in common.tmpl:
// the language module ("tl" or "gl") and whether the target has fp8 e4m3.
type dequantData struct {
	Lang string
	FP8  bool
}

// wsFamily is the data of templates/ws_kernel.tmpl: the settings the budget
// model and the kernel must agree on.
type wsFamily struct {
	ProducerWarps int // warps of the producer partition
	ProducerRegs  int // registers per producer thread (setmaxnreg)
	MaxRegs       int // launch bound per thread, divided between the partitions
	ValueRegs     int // registers per value-group thread of the split consumers (setmaxnreg)
	DSMEMSplitK   int // the cluster size that merges in distributed shared memory
	BlockT        int // tokens per tile (WSTile.BlockT), which the stores are built for

	NarrowProducerWarps int // warps of the narrow kernel's producer (BLOCK_H below 64)
	NarrowProducerRegs  int // registers per narrow producer thread (setmaxnreg)
}

func newWSFamily() *wsFamily {
	return &wsFamily{
		ProducerWarps: WSProducerWarps, ProducerRegs: WSProducerRegs, MaxRegs: WSMaxRegs,
		NarrowProducerWarps: WSNarrowProducerWarps, NarrowProducerRegs: WSNarrowProducerRegs,
		ValueRegs: WSValueRegs, DSMEMSplitK: DSMEMSplitK, BlockT: WSTile.BlockT,
	}
}

// configEntry is one row of a module's CONFIGS table.
type configEntry struct {
	Name                                        string
	Family                                      string
	BlockH, BlockT, SplitK, NumWarps, NumStages int
	ClusterMerge                                bool
}

func newConfigEntry(v Variant) configEntry {
	return configEntry{
		Name: v.Name(), Family: KernelFamily(v),
		BlockH: v.BlockH, BlockT: v.BlockT, SplitK: v.SplitK, NumWarps: v.NumWarps, NumStages: v.NumStages,
		ClusterMerge: v.ClusterMerge,
	}
}

// bundleData is the data of templates/bundle.py.tmpl: one module holding
// every configuration it lists and the kernels of their families.
type bundleData struct {
	Command string // recorded in the header
	Target  Target
	// Alone names the configuration when the module holds only that one
	// (mlagen emit --per-variant); empty for the bundle `patch` installs.
	Alone     string
	Configs   []configEntry
	Selection Selection
	SIMT      string     // what select() names when no configuration serves a shape
	MMA       *mmaFamily // nil when no configuration is of the family
	WS        *wsFamily
	PP        *ppFamily
	// FP8 says whether Triton has fp8 e4m3 on the target: where it does
	// not (sm_80, sm_86) every family reads the cache as bytes and builds
	// the values from their bits.
	FP8 bool
	// Tables are the selections as the module's Python tables.
	PerCache, WholeCall pyTables
	// Tritons are the Triton releases, as major.minor, whose launcher the
	// module calls directly (TritonLines of CheckedTritons).
	Tritons []string
}

// pyTables is a selection as the module's Python tables: the heads, batch
// and topk (or, for the whole call, tokens) bounds, 0 for None, and one
// [batch][topk] table per heads bucket.
type pyTables struct {
	Prefix, Label                       string // "" and "topk", or "FULL_" and "tokens"
	Source                              string
	HeadBounds, BatchBounds, TopkBounds []int
	Tables                              [][][]string
	Verdicts                            []verdictRow // VARIANTS.md: where peers were timed
}

// verdictRow is a Verdict as VARIANTS.md shows it.
type verdictRow struct {
	Verdict
	PeerName string // Peer without PeerPrefix
	Ratio    string // mlagen's time over the peer's, "1.23"
	Winner   string // "mlagen" or the peer's name
}

func newPyTables(prefix, label string, s Selection) pyTables {
	t := pyTables{Prefix: prefix, Label: label, Source: s.Source, HeadBounds: s.HeadBounds(), BatchBounds: s.BatchBounds, TopkBounds: s.TopkBounds, Tables: s.Tables()}
	for _, v := range s.Verdicts {
		row := verdictRow{Verdict: v, PeerName: strings.TrimPrefix(v.Peer, PeerPrefix), Ratio: fmt.Sprintf("%.2f", v.Ratio()), Winner: "mlagen"}
		switch {
		case IsPeer(v.Winner):
			row.Winner = strings.TrimPrefix(v.Winner, PeerPrefix) + " (bucket declined)"
		case v.PeerUS < v.MlagenUS:
			row.Winner = "mlagen (" + row.PeerName + " is faster, but SGLang's path does not reach it)"
		}
		t.Verdicts = append(t.Verdicts, row)
	}
	return t
}

// simtData is the data of templates/simt.py.tmpl.
type simtData struct {
	Command  string
	FP8      bool // Triton has fp8 e4m3 on the target (else the cache is read as bytes)
	BlockT   int  // tokens per tile
	NumWarps int
}

// harnessData is the data of templates/harness.py.tmpl.
type harnessData struct {
	Command string
	Target  Target
	Bundle  string // the module it runs the configurations of
	SIMT    string // the baseline module's name
}

// variantsData is the data of templates/variants.md.tmpl.
type variantsData struct {
	Command string
	Target  Target
	// Heads is the sweep's --heads where the static rule made the tables
	// (it keys them by it), 0 where a measured selection did.
	Heads      int
	Calibrated string
	Budgets    []Budget
	Selection  Selection
	Bundle     string
	SIMT       string
	WS         *wsFamily // nil when the sweep has no warp-specialised variant
	PP         *ppFamily // nil when it has no pipelined one
	FP8        bool
	// The selections as tables per heads bucket.
	PerCache, WholeCall pyTables
}
