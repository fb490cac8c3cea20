package patches

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upstreamFiles is a small upstream-shaped tree: the defining module with
// the whole call, SGLang's entry point and its environ.py.
func upstreamFiles() map[string]string {
	return map[string]string{
		"pkg/__init__.py":               "",
		"pkg/flash_mla_sm120_triton.py": fuzzModule,
		"pkg/flash_mla_sm120.py":        fuzzEntry,
		"sglang/srt/environ.py":         fuzzEnviron,
	}
}

// snapshot reads every file under root (paths relative to it).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func patchJob(t *testing.T, root string) Job {
	return Job{Root: root, Options: Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)}}
}

func revertJob(t *testing.T, root string) Job {
	return Job{Root: root, Options: Options{Recipe: mustRecipe(t)}, Revert: true}
}

// Issue 30, bug 11: a syntax error on the old function's def line is
// reported on that line, not at 1:1 (tree-sitter wraps the file from its
// first line in one error node).
func TestSyntaxErrorOnDefLine(t *testing.T) {
	mod := strings.Repeat("import os\n", 17) +
		"def _run_triton_sparse_decode q, k_cache, indices, topk_length, softmax_scale):\n    return q, None\n"
	co := NewCheckout(map[string][]byte{"pkg/__init__.py": nil, "pkg/flash_mla_sm120_triton.py": []byte(mod)})
	_, err := Patch(co, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "pkg/flash_mla_sm120_triton.py:18:") {
		t.Fatalf("want the syntax error reported at pkg/flash_mla_sm120_triton.py:18, got %v", err)
	}
}

// Issue 30, bug 11: CR-only line endings are valid Python: the tree is
// patched (inserted lines end in CR too), proven, and reverted to its
// bytes.
func TestCROnlyLineEndings(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	for _, p := range []string{"pkg/flash_mla_sm120_triton.py", "pkg/flash_mla_sm120.py"} {
		files[p] = strings.ReplaceAll(files[p], "\n", "\r")
	}
	writeFiles(t, root, files)
	before := snapshot(t, root)
	out, err := Run(patchJob(t, root))
	if err != nil {
		t.Fatalf("patch: %v", err)
	}
	if !out.Report.OK() || len(out.Report.Wired) != 1 {
		t.Fatalf("not wired:\n%s", out.Report)
	}
	for _, p := range []string{"pkg/flash_mla_sm120_triton.py", "pkg/flash_mla_sm120.py"} {
		if got := readFile(t, filepath.Join(root, p)); strings.Contains(got, "\n") {
			t.Errorf("%s: patch inserted LF line endings into a CR-only file:\n%q", p, got)
		}
	}
	if _, err := Run(revertJob(t, root)); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("revert did not restore the CR-only tree:\n%v", diffMaps(before, after))
	}
}

// Issue 30, bug 6: a file that holds mlagen's marker lines inside a string
// (a test's expected output) has no mlagen block: --revert --module leaves
// it alone, and patch does not count it.
func TestMarkerInStringIsNotABlock(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	files["tests/test_patch_output.py"] = `EXPECTED = """
def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    return q, None


# >>> mlagen:sm120_mma dispatcher: added by ` + "`mlagen patch`, removed by `mlagen patch --revert`" + `
def _run_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    return q, None
    # <<< mlagen:sm120_mma dispatcher
"""


def test_expected():
    assert "_run_sparse_decode" in EXPECTED
`
	writeFiles(t, root, files)
	test := files["tests/test_patch_output.py"]
	if _, err := Run(patchJob(t, root)); err != nil {
		t.Fatalf("patch: %v", err)
	}
	job := revertJob(t, root)
	job.Module = "pkg/flash_mla_sm120_triton.py"
	if _, err := Run(job); err != nil {
		t.Fatalf("revert: %v", err)
	}
	if got := readFile(t, filepath.Join(root, "tests/test_patch_output.py")); got != test {
		t.Errorf("revert changed a file that only holds the marker text in a string:\n%s", got)
	}
	if got := readFile(t, filepath.Join(root, "pkg/flash_mla_sm120_triton.py")); got != files["pkg/flash_mla_sm120_triton.py"] {
		t.Errorf("revert did not restore the defining module:\n%s", got)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// diffMaps lists the paths whose content differs between a and b.
func diffMaps(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, k+": gone")
		} else if w != v {
			out = append(out, k+": changed")
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+": new")
		}
	}
	return out
}
