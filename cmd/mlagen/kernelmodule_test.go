package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The bundle patch installs must be byte-identical to the checked-in one, so
// that what a reviewer read in kernels/ is what lands in SGLang.
func TestKernelModuleMatchesCheckedIn(t *testing.T) {
	for _, tc := range []struct{ target, dir string }{{"sm_90", "sm90"}, {"sm_120", "sm120"}} {
		got, err := kernelModule(tc.target, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "kernels", tc.dir, "sparse_mla_mma.py"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: rendered bundle differs from kernels/%s/sparse_mla_mma.py; run 'make kernels'", tc.target, tc.dir)
		}
	}
	if _, err := kernelModule("sm_120", t.TempDir()); err == nil {
		t.Error("--kernels pointing at a directory without sparse_mla_mma.py should fail")
	}
}
