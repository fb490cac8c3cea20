package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The module patch installs must be byte-identical to the checked-in one,
// so that what a reviewer read in kernels/ is what lands in SGLang, and to
// what `mlagen emit --out DIR` writes into any directory.
func TestKernelModuleMatchesEmit(t *testing.T) {
	for _, tc := range []struct{ target, dir string }{{"sm_90", "sm90"}, {"sm_120", "sm120"}} {
		installed, err := kernelModule(tc.target, "")
		if err != nil {
			t.Fatal(err)
		}
		checkedIn, err := os.ReadFile(filepath.Join("..", "..", "kernels", tc.dir, "sparse_mla_mma.py"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(installed, checkedIn) {
			t.Errorf("%s: the module patch installs differs from kernels/%s/sparse_mla_mma.py; run 'make kernels'", tc.target, tc.dir)
		}
		for _, out := range []string{t.TempDir(), filepath.Join(t.TempDir(), "a", "k")} {
			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			if code := mainEnv(e, []string{"emit", "--target", tc.target, "--out", out}); code != exitOK {
				t.Fatalf("emit --target %s --out %s: exit %d: %s", tc.target, out, code, stderr.String())
			}
			emitted, err := os.ReadFile(filepath.Join(out, "sparse_mla_mma.py"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(emitted, installed) {
				t.Errorf("%s: emit --out %s wrote a sparse_mla_mma.py that differs from the one patch installs", tc.target, out)
			}
		}
	}
	if _, err := kernelModule("sm_120", t.TempDir()); err == nil {
		t.Error("--kernels pointing at a directory without sparse_mla_mma.py should fail")
	}
}
