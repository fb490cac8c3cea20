package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mlagen/mlagen/gen"
)

// kernelModule returns the one Python file that `mlagen patch` adds beside the
// SIMT kernel: sparse_mla_mma.py, read from kernelsDir (as `mlagen emit
// --kernels` wrote it there) or else rendered for target by gen.Bundle, byte for
// byte what `mlagen emit --target` writes, with the measured selection this
// binary embeds.
func kernelModule(target, kernelsDir string) ([]byte, error) {
	if kernelsDir != "" {
		if fi, err := os.Stat(kernelsDir); err == nil && !fi.IsDir() {
			// The module itself given for its folder: the emit advice
			// below would fail the same way.
			return nil, fmt.Errorf("--kernels %s is a file, not a directory: give the folder that holds %s (--kernels %s)", kernelsDir, gen.BundleFile, filepath.Dir(kernelsDir))
		}
		data, err := os.ReadFile(filepath.Join(kernelsDir, gen.BundleFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--kernels: %w (run 'mlagen emit --kernels %s' first)", err, kernelsDir)
		}
		if err != nil {
			// The module is there: emitting again would meet the same
			// file, so the advice is about the file itself.
			return nil, fmt.Errorf("--kernels: %w (%s must be a file this user can read: the module emit wrote there)", err, gen.BundleFile)
		}
		// emit checked every configuration of the module against the
		// GPU's budgets; an edit since (a configuration added by hand)
		// would go in unchecked, under emit's name.
		if _, err := gen.CheckEmitted(kernelsDir, gen.BundleFile, data); err != nil {
			return nil, fmt.Errorf("--kernels %s: %w: patch installs only a module as emit wrote it, checked against the GPU's budgets; make the change in a template or with emit's sweep flags and emit again", kernelsDir, err)
		}
		return data, nil
	}
	t, err := gen.LookupTarget(target)
	if err != nil {
		return nil, err
	}
	return gen.Bundle(t)
}

// emittedBundle is what this mlagen emits for a target name (the installed
// module's TARGET line): patch and verify compare the installed kernel module
// with it and say "identical" or "differs".
func emittedBundle(target string) ([]byte, error) {
	t, err := gen.LookupTarget(target)
	if err != nil {
		return nil, err
	}
	return gen.Bundle(t)
}
