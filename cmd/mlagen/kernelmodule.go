package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mlagen/mlagen/gen"
	"github.com/mlagen/mlagen/kernels"
)

// kernelModule returns the one Python file that `mlagen patch` adds beside the
// SIMT kernel: sparse_mla_mma.py, either read from kernelsDir (as `mlagen
// emit` wrote it there) or rendered for target exactly as `mlagen emit
// --target` renders it into kernels/<target>, with the measured selection
// this binary was built with. The module exposes
//
//	supports(q, k_cache, indices) -> bool
//	sparse_decode(q, k_cache, indices, topk_length, softmax_scale) -> (out, lse)
func kernelModule(target, kernelsDir string) ([]byte, error) {
	if kernelsDir != "" {
		data, err := os.ReadFile(filepath.Join(kernelsDir, gen.BundleFile))
		if err != nil {
			return nil, fmt.Errorf("--kernels: %w (run 'mlagen emit --out %s' first)", err, kernelsDir)
		}
		return data, nil
	}
	t, err := gen.LookupTarget(target)
	if err != nil {
		return nil, err
	}
	s := gen.DefaultSweep(t)
	var sel *gen.Selection
	if data, ok, err := kernels.Selection(t.Dir()); err != nil {
		return nil, err
	} else if ok {
		sel = new(gen.Selection)
		if err := json.Unmarshal(data, sel); err != nil {
			return nil, fmt.Errorf("embedded selection for %s: %w", t.Name, err)
		}
	}
	em, err := gen.Emit(s, sweepCommand("emit", s), sel)
	if err != nil {
		return nil, err
	}
	for _, f := range em.Files {
		if f.Name == gen.BundleFile {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("render %s: no %s", t.Name, gen.BundleFile)
}
