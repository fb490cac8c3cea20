package gen

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
)

// KernelFamily is the family whose kernel runs v.
func KernelFamily(v Variant) string {
	if v.WarpSpec {
		return FamilyWS
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
// takes every setting from its Config at run time, so there is none yet.
type mmaFamily struct{}

// wsFamily is the data of templates/ws_kernel.tmpl: the settings the budget
// model and the kernel must agree on.
type wsFamily struct {
	ProducerWarps int // warps of the producer partition
	ProducerRegs  int // registers per producer thread (setmaxnreg)
	MaxRegs       int // launch bound per thread, divided between the partitions
	DSMEMSplitK   int // the cluster size that merges in distributed shared memory
	BlockT        int // tokens per tile (WSTile.BlockT), which the stores are built for
}

func newWSFamily() *wsFamily {
	return &wsFamily{
		ProducerWarps: WSProducerWarps, ProducerRegs: WSProducerRegs, MaxRegs: WSMaxRegs,
		DSMEMSplitK: DSMEMSplitK, BlockT: WSTile.BlockT,
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
}

// simtData is the data of templates/simt.py.tmpl.
type simtData struct {
	Command  string
	BlockT   int // tokens per tile
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
	Command    string
	Target     Target
	Heads      int
	Calibrated string
	Budgets    []Budget
	Selection  Selection
	Bundle     string
	SIMT       string
	WS         *wsFamily // nil when the sweep has no warp-specialised variant
}
