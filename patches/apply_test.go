package patches

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A failure half way must leave the tree exactly as it was: the files
// already renamed into place are put back, the created ones removed.
func TestApplyRollsBackOnFailure(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.py": "A\n", "b.py": "B\n", "c.py": "C\n"})
	changes := []Change{
		{Path: "a.py", Before: []byte("A\n"), After: []byte("A2\n"), Mode: 0o644},
		{Path: "new.py", After: []byte("N\n"), Mode: 0o644},
		{Path: "b.py", Before: []byte("B\n"), After: []byte("B2\n"), Mode: 0o644},
		{Path: "c.py", Before: []byte("C\n"), After: []byte("C2\n"), Mode: 0o644},
	}
	calls := 0
	w := Writer{Root: root, Rename: func(from, to string) error {
		calls++
		if calls == 3 {
			return errors.New("disk full (injected)")
		}
		return os.Rename(from, to)
	}}
	err := w.Apply(changes)
	if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "restored") {
		t.Fatalf("want the injected failure reported with the restore, got %v", err)
	}
	for p, want := range map[string]string{"a.py": "A\n", "b.py": "B\n", "c.py": "C\n"} {
		if got := readFile(t, filepath.Join(root, p)); got != want {
			t.Errorf("%s = %q after rollback, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "new.py")); !os.IsNotExist(err) {
		t.Errorf("created file survived the rollback: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(root, ".*mlagen*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// Modes survive, and a file changed since the tree was read is not
// overwritten.
func TestApplyKeepsModesAndRefusesStaleTrees(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"run.py": "x = 1\n"})
	full := filepath.Join(root, "run.py")
	if err := os.Chmod(full, 0o755); err != nil {
		t.Fatal(err)
	}
	co, err := ScanCheckout(root, mustRecipe(t))
	if err != nil {
		t.Fatal(err)
	}
	f := co.Tree.Files["run.py"]
	if err := (Writer{Root: root}).Apply([]Change{{Path: "run.py", Before: f.Data, After: []byte("x = 2\n"), Mode: f.Mode}}); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(full)
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755", info.Mode().Perm())
	}
	err = (Writer{Root: root}).Apply([]Change{{Path: "run.py", Before: []byte("x = 1\n"), After: []byte("x = 3\n")}})
	if err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("want a stale-tree refusal, got %v", err)
	}
	if got := readFile(t, full); got != "x = 2\n" {
		t.Errorf("stale write went through: %q", got)
	}
}

// Nothing is written outside the root or through a symlink, and Scan does not
// follow a symlink that points out of the tree (it reports it).
func TestNeverWritesOutsideRoot(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"victim.py": "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):\n    return q\n"})
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"pkg/ok.py": "x = 1\n"})
	if err := os.Symlink(filepath.Join(outside, "victim.py"), filepath.Join(root, "pkg", "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "ext")); err != nil {
		t.Fatal(err)
	}
	co, err := ScanCheckout(root, mustRecipe(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := co.Tree.Files["pkg/link.py"]; ok {
		t.Error("Scan followed a symlink out of the tree")
	}
	if len(co.Tree.Outside) != 2 {
		t.Errorf("Outside = %v, want the two symlinks reported", co.Tree.Outside)
	}
	if _, err := Patch(co, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)}); err == nil || !strings.Contains(err.Error(), "no module") {
		t.Errorf("the module outside the root must not be found, got %v", err)
	}
	for _, p := range []string{"../escape.py", "ext/victim.py", "pkg/link.py"} {
		err := (Writer{Root: root}).Apply([]Change{{Path: p, After: []byte("x\n")}})
		if err == nil {
			t.Errorf("Apply wrote %s", p)
		}
	}
	if got := readFile(t, filepath.Join(outside, "victim.py")); !strings.HasPrefix(got, "def _run_triton") {
		t.Errorf("file outside the root was changed: %q", got)
	}
}
