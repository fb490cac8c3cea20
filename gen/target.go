// Package gen turns tile parameters into budget-checked Triton kernel
// variants: spec (Variant, Sweep) -> budget (Budget) -> render (Render).
package gen

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MMAPath is the tensor-core instruction family Triton 3.6 lowers tl.dot to
// on a target. It decides where the dot operands live, which is what the
// budget model has to get right.
type MMAPath string

const (
	PathMMASync MMAPath = "mma.sync" // sm_80..sm_89, sm_120: both operands in registers
	PathWGMMA   MMAPath = "wgmma"    // sm_90: operand B (and Q) in shared memory
	PathTCGen05 MMAPath = "tcgen05"  // sm_100: accumulators in tensor memory
)

// Target is one GPU compute capability with the limits the budget checks.
type Target struct {
	Name       string // "sm_120"
	Capability int    // 120
	GPUs       string // for humans
	// SmemLimit is the opt-in maximum dynamic shared memory per block, bytes.
	SmemLimit int
	Path      MMAPath
	// FP8 says whether Triton 3.6 has the fp8 e4m3 type (fp8e4nv) on the
	// target: from sm_89 on. On sm_80 and sm_86 it refuses the type
	// outright, so the kernels read the cache there as bytes and build each
	// value from its bits (common.tmpl's e4m3 fragments).
	FP8 bool
}

// Dir is the directory name under kernels/ ("sm120").
func (t Target) Dir() string { return strings.ReplaceAll(t.Name, "_", "") }

// Per-thread and per-multiprocessor register limits, the same on every
// target mlagen knows.
const (
	MaxRegsPerThread = 255
	RegsPerSM        = 65536
)

var targets = []Target{
	{"sm_80", 80, "A100", 166912, PathMMASync, false},
	{"sm_86", 86, "A10, RTX 30xx", 101376, PathMMASync, false},
	{"sm_89", 89, "L40S, RTX 40xx", 101376, PathMMASync, true},
	{"sm_90", 90, "H100, H200", 232448, PathWGMMA, true},
	{"sm_100", 100, "B200", 232448, PathTCGen05, true},
	{"sm_120", 120, "RTX PRO 6000, RTX 50xx", 101376, PathMMASync, true},
}

// Targets lists every known target, oldest first.
func Targets() []Target { return append([]Target(nil), targets...) }

// servedBy says, for GPUs with no target of their own that a user may name,
// which target's module runs there and why, so that the error points at it.
var servedBy = map[string]string{
	"121": "sm_121 (GB10, DGX Spark) has no target of its own: SGLang's DeepSeek-V4 backend calls the sm_120 entry on every 12.x GPU, so the module it runs there is --target sm_120's (sm_120's budgets; not measured on a GB10)",
}

// LookupTarget accepts "sm_120", "sm120", "sm-120" or "120", the
// architecture-specific names Triton and ptxas use ("sm_120a", "sm_100f"),
// and the capability as torch and nvidia-smi print it ("12.0").
func LookupTarget(name string) (Target, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range []string{"sm_", "sm-", "sm"} {
		if strings.HasPrefix(n, p) {
			n = n[len(p):]
			break
		}
	}
	if c := strings.TrimRight(n, "af"); c != n && c != "" && strings.Trim(c, "0123456789") == "" {
		n = c
	}
	// The capability as torch and nvidia-smi print it: 12.0, 9.0.
	if major, minor, ok := strings.Cut(n, "."); ok && len(minor) == 1 {
		if mj, err := strconv.Atoi(major); err == nil && mj > 0 && minor[0] >= '0' && minor[0] <= '9' {
			n = fmt.Sprint(mj*10 + int(minor[0]-'0'))
		}
	}
	for _, t := range targets {
		if fmt.Sprint(t.Capability) == n {
			return t, nil
		}
	}
	// In capability order (sm_80 ... sm_120), as the help lists them.
	byCap := slices.Clone(targets)
	slices.SortFunc(byCap, func(a, b Target) int { return cmp.Compare(a.Capability, b.Capability) })
	names := make([]string, len(byCap))
	for i, t := range byCap {
		names[i] = t.Name
	}
	known := strings.Join(names, ", ")
	if why, ok := servedBy[n]; ok {
		return Target{}, fmt.Errorf("unknown target %q: %s (known: %s)", name, why, known)
	}
	if c, err := strconv.Atoi(n); err == nil && c > 0 && c < targets[0].Capability {
		// sm_12 for sm_120, sm_9 for sm_90: a digit short, not an old GPU.
		for _, t := range targets {
			if t.Capability == 10*c {
				return Target{}, fmt.Errorf("unknown target %q: did you mean %s? (known: %s)", name, t.Name, known)
			}
		}
		return Target{}, fmt.Errorf("unknown target %q: the kernels need bf16 tensor cores, sm_80 and later (known: %s)", name, known)
	}
	return Target{}, fmt.Errorf("unknown target %q (known: %s)", name, known)
}

// smemReservedPerBlock is the shared memory the driver keeps beside each
// resident program's own (1 KB on every target here). SmemLimit already
// leaves out one program's reserve, so a multiprocessor holds SmemLimit +
// smemReservedPerBlock bytes in all.
const smemReservedPerBlock = 1024

// onePerSM reports whether none of the programs of the given shared-memory
// sizes can share a multiprocessor of t with a second one like it (false for
// none at all). Such a kernel gains nothing from ptxas holding registers
// back for a second program, and loses where holding back makes it spill.
func onePerSM(t Target, smem []int) bool {
	perSM := t.SmemLimit + smemReservedPerBlock
	for _, s := range smem {
		if 2*(s+smemReservedPerBlock) <= perSM {
			return false
		}
	}
	return len(smem) > 0
}
