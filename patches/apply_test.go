package patches

import (
	"errors"
	"github.com/rogpeppe/go-internal/txtar"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlagen/mlagen/changeset"
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

// A failure half way (a disk that fills up at the third rename) leaves the
// tree exactly as it was: the files already renamed into place are put
// back, the created ones removed, no temporary file left.
func TestRunRollsBackOnFailure(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	if err := os.Chmod(filepath.Join(root, "pkg/flash_mla_sm120_triton.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	before, modes := snapshot(t, root), snapshotModes(t, root)
	renames := 0
	job := patchJob(t, root)
	job.Hook = func(s changeset.Step) error {
		if s.Op == changeset.OpRename && !s.Undo {
			if renames++; renames == 3 {
				return errors.New("no space left on device (injected)")
			}
		}
		return nil
	}
	_, err := Run(job)
	if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("want the injected failure reported with the undo, got %v", err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("tree changed by a failed run: %v", diffMaps(before, after))
	}
	if diff := cmp.Diff(modes, snapshotModes(t, root)); diff != "" {
		t.Errorf("modes changed by a failed run (-before +after):\n%s", diff)
	}
	// A patch that succeeds keeps the modes of the files it edits.
	runOK(t, patchJob(t, root))
	if info, _ := os.Stat(filepath.Join(root, "pkg/flash_mla_sm120_triton.py")); info.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v after patching, want 0755", info.Mode().Perm())
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
	if got := readFile(t, filepath.Join(outside, "victim.py")); !strings.HasPrefix(got, "def _run_triton") {
		t.Errorf("file outside the root was changed: %q", got)
	}
}

// A symlinked .py file that points out of the tree is part of the package
// Python imports but not of what mlagen reads or writes: where it names the
// old function the proof cannot pass (it may call the old kernel), and the
// patch writes nothing; a linked file that does not name it is no obstacle.
func TestOutsideLinkNamingTheFunction(t *testing.T) {
	for _, c := range []struct {
		name, body string
		refused    bool
	}{
		{"names it", "from pkg.flash_mla_sm120_triton import _run_triton_sparse_decode\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)\n", true},
		{"does not", "def f(q):\n    return q\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			outside := t.TempDir()
			writeFiles(t, outside, map[string]string{"plugin.py": c.body})
			root := t.TempDir()
			writeFiles(t, root, upstreamFiles())
			if err := os.Symlink(filepath.Join(outside, "plugin.py"), filepath.Join(root, "pkg", "plugin.py")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, root)
			_, err := Run(patchJob(t, root))
			if !c.refused {
				if err != nil {
					t.Fatalf("patch refused a tree whose outside link does not name the function: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "pkg/plugin.py is a symlink to a file outside the tree") {
				t.Errorf("want a refusal naming the link, got %v", err)
			}
			if !maps.Equal(before, snapshot(t, root)) {
				t.Error("a refused patch changed the tree")
			}
		})
	}
}

// unifiedDiff is the diff of changes as a dry run prints it.
func unifiedDiff(changes []Change) string { return changeset.Set{Changes: changes}.Diff() }

// wordsAt finds a name as a whole word outside comments and outside a
// string that is only the name; each row's offsets are where it is kept.
func TestWordsAt(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []int
	}{
		{"k[g](x)\n", []int{0}},
		{"from m import k as f\n", []int{14}},
		{"kk = k2 + _k\n", nil},
		{"  # k[g](x)\n", nil},
		{"x = 1  # k\n", []int{9}},
		{"names = ('k', \"k\")\n", nil},
		{"doc = 'k runs here'\n", []int{7}},
		{"m.k[g](x)\n", []int{2}},
	} {
		if got := wordsAt([]byte(c.src), "k"); !slices.Equal(got, c.want) {
			t.Errorf("wordsAt(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// The launch check reads lines the way Python does: a fork's file, or the
// defining module, with CR-only line endings is read like any other.
func TestKernelLaunchLineEndings(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/golden/kernel_launch.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range []string{"sgl/fast_path.py", "sgl/flash_mla_sm120_triton.py"} {
		t.Run(cr, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range ar.Files {
				if p, ok := strings.CutPrefix(f.Name, "in/"); ok {
					files[p] = string(f.Data)
				}
			}
			files[cr] = strings.ReplaceAll(files[cr], "\n", "\r")
			root := t.TempDir()
			writeFiles(t, root, files)
			_, err := Run(patchJob(t, root))
			if err == nil || !strings.Contains(err.Error(), "sgl/fast_path.py:6: names _tiled_sparse_decode_kernel") {
				t.Errorf("want the launch in sgl/fast_path.py refused, got %v", err)
			} else if strings.Contains(err.Error(), "sgl/fast_path.py:5:") {
				t.Errorf("the comment on line 5 was taken for a launch: %v", err)
			}
		})
	}
}
