package patches

import (
	"path/filepath"
	"strings"
	"testing"
)

// reexportFiles is interruptFiles plus a module that re-exports the old
// function and a caller that imports it through that module (bug 1's
// shape): patching rewires the re-export, so a caller left on the old name
// would raise ImportError.
func reexportFiles() map[string]string {
	files := interruptFiles()
	files["pkg/api.py"] = "from .flash_mla_sm120_triton import _run_triton_sparse_decode\n"
	files["pkg/user.py"] = "from pkg.api import _run_triton_sparse_decode as rt\n\n\ndef h(q):\n    return rt(q, None, None, None, 1.0)\n"
	return files
}

// Issue 30, bugs 1 and 3, under a kill -9: a patch or a revert killed at
// any of its disk operations on a tree with a re-exporting module, then the
// recovery run of the same kind, reaches the whole state: patched, with the
// caller that imports through the re-export wired and the proof passing
// (never "0 missed" with that caller importing a name the re-export no
// longer has), or the original bytes.
func TestKilledWithReexport(t *testing.T) {
	dir := t.TempDir()
	original := filepath.Join(dir, "original")
	writeFiles(t, original, reexportFiles())
	patched := filepath.Join(dir, "patched")
	copyTree(t, original, patched)
	if rep := runOK(t, patchJob(t, patched)); !rep.OK() {
		t.Fatalf("patch:\n%s", rep)
	}
	want := map[bool]map[string]string{false: snapshot(t, patched), true: snapshot(t, original)}
	if got := want[false]["pkg/user.py"]; !strings.HasPrefix(got, "from pkg.api import _run_sparse_decode as rt\n") {
		t.Fatalf("patch did not wire the caller importing through the re-export:\n%s", got)
	}
	killedEach(t, dir, original, patched, jobOf(t), func(revert bool, n int, root string) {
		rep := runOK(t, jobOf(t)(root, revert))
		if got := snapshot(t, root); !equalMaps(got, want[revert]) {
			t.Errorf("revert %v killed at step %d, then run again: not a whole state: %v\n%s", revert, n, diffMaps(want[revert], got), rep)
		}
		if rep := checkOK(t, root); !revert && !rep.OK() {
			t.Errorf("patch killed at step %d, then patch: verify fails:\n%s", n, rep)
		}
	})
}

// Issue 30, bugs 1 and 3, without the journal, on the re-export tree:
// every prefix of a patch's or a revert's writes is brought to a whole
// state by the next patch or revert.
func TestInterruptedWritesRecoverableWithReexport(t *testing.T) {
	writesRecoverable(t, reexportFiles())
}
