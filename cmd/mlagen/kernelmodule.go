package main

import "fmt"

// kernelModule returns the one Python file that `mlagen patch` adds beside the
// SIMT kernel: the bundle that `mlagen emit` writes as sparse_mla_mma.py, either
// rendered for target or, when kernelsDir is set, read from
// kernelsDir/sparse_mla_mma.py. The module exposes
//
//	supports(q, k_cache, indices) -> bool
//	sparse_decode(q, k_cache, indices, topk_length, softmax_scale) -> (out, lse)
//
// (Filled in by the emit work; patch code must only call it.)
func kernelModule(target, kernelsDir string) ([]byte, error) {
	return nil, fmt.Errorf("kernel bundle for %s: not implemented yet", target)
}
