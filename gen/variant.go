package gen

import (
	"errors"
	"fmt"
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
}

// Name is the variant's module name, stable so that file names and golden
// files do not churn: mma_h64_t32_k4_w8_s2.
func (v Variant) Name() string {
	return fmt.Sprintf("mma_h%d_t%d_k%d_w%d_s%d", v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages)
}

func (v Variant) String() string {
	return fmt.Sprintf("BLOCK_H=%d BLOCK_T=%d SPLIT_K=%d num_warps=%d num_stages=%d",
		v.BlockH, v.BlockT, v.SplitK, v.NumWarps, v.NumStages)
}

// Threads is the number of threads per program.
func (v Variant) Threads() int { return 32 * v.NumWarps }

// Validate reports what makes a variant impossible to compile at all (as
// opposed to not fitting a target, which Check decides).
func (v Variant) Validate() error {
	var errs []error
	if v.BlockH < 16 || !isPow2(v.BlockH) {
		errs = append(errs, fmt.Errorf("BLOCK_H=%d: must be a power of two of at least 16 (tl.dot's smallest M)", v.BlockH))
	}
	if v.BlockT < 16 || !isPow2(v.BlockT) {
		errs = append(errs, fmt.Errorf("BLOCK_T=%d: must be a power of two of at least 16 (tl.dot's smallest N and K)", v.BlockT))
	}
	if v.SplitK < 1 {
		errs = append(errs, fmt.Errorf("SPLIT_K=%d: must be at least 1", v.SplitK))
	}
	switch v.NumWarps {
	case 1, 2, 4, 8, 16:
	default:
		errs = append(errs, fmt.Errorf("num_warps=%d: must be one of 1, 2, 4, 8, 16", v.NumWarps))
	}
	if v.NumStages < 1 {
		errs = append(errs, fmt.Errorf("num_stages=%d: must be at least 1", v.NumStages))
	}
	return errors.Join(errs...)
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// ParseVariantName is the inverse of Name, for reading measured results back.
func ParseVariantName(name string) (Variant, error) {
	var v Variant
	fields := strings.Split(name, "_")
	if len(fields) != 6 || fields[0] != "mma" {
		return v, fmt.Errorf("variant name %q: want mma_h<H>_t<T>_k<K>_w<W>_s<S>", name)
	}
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
