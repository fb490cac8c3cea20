package patches

import (
	"errors"
	"maps"
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

// runOK patches (or reverts) and fails the test unless the run succeeds.
func runOK(t *testing.T, job Job) *Report {
	t.Helper()
	out, err := Run(job)
	if err != nil {
		t.Fatalf("run (revert %v): %v", job.Revert, err)
	}
	return out.Report
}

func checkOK(t *testing.T, root string) *Report {
	t.Helper()
	rep, err := Check(root, Options{Recipe: mustRecipe(t)})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// Issue 30, bug 1: after patching, a new file that imports the old name
// through the module that re-exported it (which now re-exports only the
// dispatcher) would raise ImportError: verify reports it, and patch wires
// it.
func TestImportThroughRewiredReexport(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	files["pkg/api.py"] = "from .flash_mla_sm120_triton import _run_triton_sparse_decode\n"
	files["pkg/user.py"] = "from pkg.api import _run_triton_sparse_decode\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)\n"
	writeFiles(t, root, files)
	if rep := runOK(t, patchJob(t, root)); !rep.OK() {
		t.Fatalf("patch:\n%s", rep)
	}
	writeFiles(t, root, map[string]string{"pkg/late.py": "from pkg.api import _run_triton_sparse_decode as rt\n\n\ndef g(q):\n    return rt(q, None, None, None, 1.0)\n"})
	rep := checkOK(t, root)
	if rep.OK() || !strings.Contains(rep.String(), "pkg/late.py:1:") {
		t.Fatalf("verify passes a tree whose pkg/late.py imports a name pkg/api.py no longer has:\n%s", rep)
	}
	if rep := runOK(t, patchJob(t, root)); !rep.OK() || rep.NothingToDo {
		t.Fatalf("patch did not wire pkg/late.py:\n%s", rep)
	}
	if got := readFile(t, filepath.Join(root, "pkg/late.py")); !strings.HasPrefix(got, "from pkg.api import _run_sparse_decode as rt\n") {
		t.Errorf("pkg/late.py not rewired:\n%s", got)
	}
	if rep := checkOK(t, root); !rep.OK() {
		t.Errorf("verify after the second patch:\n%s", rep)
	}
}

// Issue 30, bug 2: a file that declares latin-1 (valid Python, not UTF-8)
// is read and wired like any other; one that is neither UTF-8 nor declares
// a single-byte encoding fails the proof, since it cannot be judged.
func TestLatin1Files(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	latin := "# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 of the caller\nfrom pkg.flash_mla_sm120_triton import _run_triton_sparse_decode\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)  # caf\xe9\n"
	files["pkg/latin.py"] = latin
	writeFiles(t, root, files)
	before := snapshot(t, root)
	rep := runOK(t, patchJob(t, root))
	if !rep.OK() || len(rep.Wired) != 3 {
		t.Fatalf("patch did not wire the latin-1 file:\n%s", rep)
	}
	if got := readFile(t, filepath.Join(root, "pkg/latin.py")); got != strings.ReplaceAll(latin, "_run_triton_sparse_decode", "_run_sparse_decode") {
		t.Errorf("latin-1 file not rewired byte for byte:\n%q", got)
	}
	runOK(t, revertJob(t, root))
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("revert: %v", diffMaps(before, after))
	}
	writeFiles(t, root, map[string]string{"pkg/undeclared.py": "# caf\xe9\nfrom pkg.flash_mla_sm120_triton import _run_triton_sparse_decode\n"})
	before = snapshot(t, root)
	out, err := Run(Job{Root: root, Options: patchJob(t, root).Options, DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if rep := out.Report; rep.OK() || !strings.Contains(rep.String(), "cannot judge: pkg/undeclared.py") {
		t.Fatalf("the proof passes a tree with a file it cannot read that names the function:\n%s", rep)
	}
	// The plan fails its own proof, so patch refuses it and writes nothing.
	_, err = Run(patchJob(t, root))
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), "cannot judge: pkg/undeclared.py") {
		t.Fatalf("want patch to refuse a plan whose proof fails, naming the file it cannot judge; got %v", err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("patch wrote a tree whose proof fails: %v", diffMaps(before, after))
	}
}

// Issue 30, bug 2: a name that reaches the old function through a star
// import (the module's __all__ names it) cannot be rewired by renaming:
// patch refuses, and verify fails on a patched tree that gains one.
func TestStarImportOfOldFunction(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	files["pkg/flash_mla_sm120_triton.py"] = "__all__ = [\"_run_triton_sparse_decode\", \"flash_mla_sparse_decode_triton\"]\n\n\n" + fuzzModule
	writeFiles(t, root, files)
	runOK(t, patchJob(t, root))
	writeFiles(t, root, map[string]string{"pkg/star.py": "from pkg.flash_mla_sm120_triton import *\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)\n"})
	if rep := checkOK(t, root); rep.OK() || !strings.Contains(rep.String(), "pkg/star.py:5") {
		t.Fatalf("verify passes a call that reaches the old function through a star import:\n%s", rep)
	}
	_, err := Run(patchJob(t, root))
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "star import") {
		t.Fatalf("want patch to refuse the star import, got %v", err)
	}
}

// Issue 30, bug 2: a package directory reached through an in-tree symlink
// (layers -> layers_real) resolves: its importers are wired.
func TestSymlinkedPackageDirectory(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"sglang/__init__.py":                                         "",
		"sglang/srt/__init__.py":                                     "",
		"sglang/srt/environ.py":                                      fuzzEnviron,
		"sglang/srt/layers_real/__init__.py":                         "",
		"sglang/srt/layers_real/attention/__init__.py":               "",
		"sglang/srt/layers_real/attention/flash_mla_sm120_triton.py": fuzzModule,
		"sglang/srt/models/__init__.py":                              "",
		"sglang/srt/models/deepseek.py":                              "from sglang.srt.layers.attention.flash_mla_sm120_triton import _run_triton_sparse_decode\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)\n",
		"sglang/srt/models/other.py":                                 "import sglang.srt.layers.attention.flash_mla_sm120_triton as fm\n\n\ndef g(q):\n    return fm._run_triton_sparse_decode(q, None, None, None, 1.0)\n",
	}
	writeFiles(t, root, files)
	if err := os.Symlink("layers_real", filepath.Join(root, "sglang/srt/layers")); err != nil {
		t.Fatal(err)
	}
	rep := runOK(t, patchJob(t, root))
	if !rep.OK() || len(rep.Wired) != 4 {
		t.Fatalf("references through the symlinked directory not wired:\n%s", rep)
	}
	for _, p := range []string{"sglang/srt/models/deepseek.py", "sglang/srt/models/other.py"} {
		if got := readFile(t, filepath.Join(root, p)); strings.Contains(got, "_run_triton_sparse_decode") {
			t.Errorf("%s still calls the old function:\n%s", p, got)
		}
	}
}

// Issue 30, bug 7: a symlink given as the root is the tree it points to.
func TestRootThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "sglang-real")
	writeFiles(t, real, upstreamFiles())
	before := snapshot(t, real)
	link := filepath.Join(dir, "sglang")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if rep := runOK(t, patchJob(t, link+"/")); !rep.OK() || len(rep.Wired) != 1 {
		t.Fatalf("patch through the root's symlink:\n%s", rep)
	}
	if rep := checkOK(t, link); !rep.OK() {
		t.Fatalf("verify through the root's symlink:\n%s", rep)
	}
	if rep := runOK(t, revertJob(t, link)); rep.NothingToDo {
		t.Fatalf("revert through the root's symlink found nothing:\n%s", rep)
	}
	if after := snapshot(t, real); !equalMaps(before, after) {
		t.Errorf("revert: %v", diffMaps(before, after))
	}
}

// Issue 30, bug 5: a change made inside one of mlagen's blocks is the
// user's: a second patch and --revert refuse (naming the block and the
// line) instead of dropping it, and verify reports it. (The statements a
// route guard copies from SGLang's branch are the one part that cannot be
// told apart from an upstream change of that branch: they are copied again
// when they differ; but a branch whose call no longer passes what the
// guard's defers_full test does was edited, as was the test.) A block that is only out of date (the old function's
// signature changed outside it) is still brought up to date.
func TestEditedBlocksRefused(t *testing.T) {
	for _, c := range []struct{ file, from, to string }{
		{"pkg/flash_mla_sm120_triton.py", "        if mma_kernel.supports(", "        if q.shape[2] >= 16 and mma_kernel.supports("},
		{"pkg/flash_mla_sm120_triton.py", "            return mma_kernel.sparse_decode_full(", "            print('mma')\n            return mma_kernel.sparse_decode_full("},
		{"pkg/flash_mla_sm120.py", "    if envs.SGLANG_SM120_MMA_FLASHMLA.get():\n        from . import", "    if envs.SGLANG_SM120_MMA_FLASHMLA.get() or True:\n        from . import"},
		// The route guard's defers_full test, taken out or asked with other
		// arguments than the branch's call passes.
		{"pkg/flash_mla_sm120.py", "        if not mma_kernel.defers_full(q, None, None, None, None, 512, None):\n", "        if True:\n"},
		{"pkg/flash_mla_sm120.py", "mma_kernel.defers_full(q, None, None, None, None, 512, None)", "mma_kernel.defers_full(q, None, None, None, None, 512, 1.0)"},
		{"pkg/flash_mla_sm120.py", "            return flash_mla_sparse_decode_triton(q, None", "            return flash_mla_sparse_decode_triton(q * 2, None"},
		{"sglang/srt/environ.py", "SGLANG_SM120_MMA_FLASHMLA = EnvBool(False)", "SGLANG_SM120_MMA_FLASHMLA = EnvBool(True)"},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, upstreamFiles())
			runOK(t, patchJob(t, root))
			full := filepath.Join(root, c.file)
			patched := readFile(t, full)
			if !strings.Contains(patched, c.from) {
				t.Fatalf("%s lacks %q:\n%s", c.file, c.from, patched)
			}
			writeFiles(t, root, map[string]string{c.file: strings.Replace(patched, c.from, c.to, 1)})
			before := snapshot(t, root)
			for _, job := range []Job{patchJob(t, root), revertJob(t, root)} {
				_, err := Run(job)
				var p *Problem
				if !errors.As(err, &p) || !strings.Contains(err.Error(), "edited by hand") || !strings.Contains(err.Error(), c.file+":") {
					t.Errorf("revert %v: want a refusal naming the edited block in %s, got %v", job.Revert, c.file, err)
				}
				if after := snapshot(t, root); !equalMaps(before, after) {
					t.Fatalf("revert %v wrote over the edited block: %v", job.Revert, diffMaps(before, after))
				}
			}
			if rep := checkOK(t, root); rep.OK() || !strings.Contains(rep.String(), "edited by hand") {
				t.Errorf("verify does not report the edited block:\n%s", rep)
			}
		})
	}
}

func TestOutOfDateBlockUpdated(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	runOK(t, patchJob(t, root))
	mod := filepath.Join(root, "pkg/flash_mla_sm120_triton.py")
	// Upstream annotates a parameter of the old function (outside the block).
	old := "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):"
	writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_triton.py": strings.Replace(readFile(t, mod), old, strings.TrimSuffix(old, "):")+": float):", 1)})
	rep := runOK(t, patchJob(t, root))
	if !rep.OK() || !strings.Contains(rep.String(), "dispatcher _run_sparse_decode updated") {
		t.Fatalf("an out-of-date dispatcher was not brought up to date:\n%s", rep)
	}
	if got := readFile(t, mod); !strings.Contains(got, "def _run_sparse_decode(q, k_cache, indices, topk_length, softmax_scale: float):") {
		t.Errorf("dispatcher signature not updated:\n%s", got)
	}
}

// A parameter the kernel's sparse_decode does not take (an out= buffer, a
// flag), or the kernel's parameters in another order or under other names,
// is refused before and after a patch: the dispatcher passes the kernel
// its parameters by position, and would drop the others on the MMA path.
func TestDispatcherSignatureChanged(t *testing.T) {
	old := "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):"
	for _, c := range []struct{ name, def string }{
		{"added", "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale, out=None):"},
		{"keyword only", "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale, *, return_lse=False):"},
		{"kwargs", "def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale, **kw):"},
		{"reordered", "def _run_triton_sparse_decode(q, k_cache, indices, softmax_scale, topk_length=None):"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, patched := range []bool{false, true} {
				root := t.TempDir()
				writeFiles(t, root, upstreamFiles())
				if patched {
					runOK(t, patchJob(t, root))
				}
				mod := filepath.Join(root, "pkg/flash_mla_sm120_triton.py")
				writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_triton.py": strings.Replace(readFile(t, mod), old, c.def, 1)})
				before := snapshot(t, root)
				_, err := Run(patchJob(t, root))
				if err == nil || !strings.Contains(err.Error(), "its parameters changed") {
					t.Errorf("patched %v: want a refusal naming the changed parameters, got %v", patched, err)
				}
				if after := snapshot(t, root); !maps.Equal(before, after) {
					t.Errorf("patched %v: a refused patch changed the tree", patched)
				}
			}
		})
	}
}

// The same for the whole call: a parameter SGLang adds (an out= buffer)
// would be dropped by the guard, which hands the kernel the contract's.
func TestWholeCallSignatureChanged(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	old := "    extra_topk_length=None,\n"
	if !strings.Contains(files["pkg/flash_mla_sm120_triton.py"], old) {
		t.Fatal("the fixture's whole call is not as this test expects")
	}
	files["pkg/flash_mla_sm120_triton.py"] = strings.Replace(files["pkg/flash_mla_sm120_triton.py"], old, old+"    out=None,\n", 1)
	writeFiles(t, root, files)
	before := snapshot(t, root)
	_, err := Run(patchJob(t, root))
	if err == nil || !strings.Contains(err.Error(), "SGLang changed the whole call") {
		t.Errorf("want a refusal naming the whole call's changed parameters, got %v", err)
	}
	if !maps.Equal(before, snapshot(t, root)) {
		t.Error("a refused patch changed the tree")
	}
}

// Issue 30, bug 10: the kernel module is parsed, not grepped: one that is
// not Python is never installed, a truncated installed one fails verify,
// and verify says whether the installed one is what this mlagen emits.
func TestKernelModuleChecked(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	before := snapshot(t, root)
	notPython := strings.Replace(fakeKernel, "    return True\n", "    return (True\n", 1)
	job := patchJob(t, root)
	job.Kernel = []byte(notPython)
	_, err := Run(job)
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "not Python") {
		t.Fatalf("want patch to refuse a kernel module that is not Python, got %v", err)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Fatalf("a refused patch wrote: %v", diffMaps(before, after))
	}
	job = patchJob(t, root)
	job.Emitted = fakeEmitted
	rep := runOK(t, job)
	if !rep.OK() || !strings.Contains(rep.String(), "byte for byte what this mlagen emits for sm_120") {
		t.Fatalf("patch:\n%s", rep)
	}
	kp := filepath.Join(root, "pkg/flash_mla_sm120_mma.py")
	installed := readFile(t, kp)
	check := func() *Report {
		rep, err := Check(root, Options{Recipe: mustRecipe(t), Emitted: fakeEmitted})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	// Cut in the middle of a function, the header intact.
	cut := strings.Index(installed, "def sparse_decode_full")
	writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_mma.py": installed[:cut+30]})
	if rep := check(); rep.OK() || !strings.Contains(rep.String(), "not Python") {
		t.Errorf("verify passes a truncated kernel module:\n%s", rep)
	}
	// A module that parses and has every name, but is not what mlagen emits.
	writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_mma.py": installed + "\n\nEXTRA = 1\n"})
	if rep := check(); !strings.Contains(rep.String(), "differs from what this mlagen emits for sm_120") {
		t.Errorf("verify does not say the kernel module differs from what mlagen emits:\n%s", rep)
	}
	// One emitted with flags of its own (a selection of the user's, then
	// patch --kernels): verify names the command instead.
	const custom = "# Command: mlagen emit --target sm_120 --selection my-card/sm120.json\n"
	at := strings.Index(installed, "# Command: ")
	if at < 0 {
		t.Fatalf("the installed stand-in has no Command line:\n%s", installed[:200])
	}
	end := at + strings.Index(installed[at:], "\n") + 1
	writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_mma.py": installed[:at] + custom + installed[end:]})
	rep = check()
	if want := "emitted by `mlagen emit --target sm_120 --selection my-card/sm120.json` (this mlagen's own for sm_120 differs"; !strings.Contains(rep.String(), want) {
		t.Errorf("verify does not name the command a module of the user's own was emitted by (want %q):\n%s", want, rep)
	}
	if rep.Kernel == nil || rep.Kernel.Command != "mlagen emit --target sm_120 --selection my-card/sm120.json" {
		t.Errorf("kernel_check.command = %+v", rep.Kernel)
	}
}

// A revert reports each restored reference where it stands once written:
// its line and column in the reverted file hold the old name, and the
// line is the one the report quotes (the patched file's lines would point
// past the blocks the revert takes out).
func TestRevertReportsRestoredPlaces(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	runOK(t, patchJob(t, root))
	rep := runOK(t, revertJob(t, root))
	if len(rep.Wired) == 0 {
		t.Fatal("the revert restored no reference")
	}
	old := mustRecipe(t).Old
	for _, r := range rep.Wired {
		lines := strings.Split(readFile(t, filepath.Join(root, r.Path)), "\n")
		if r.Line < 1 || r.Line > len(lines) {
			t.Errorf("%s: line %d is not in the file", r, r.Line)
			continue
		}
		line := lines[r.Line-1]
		if strings.TrimSpace(line) != r.Code || r.Col < 1 || !strings.HasPrefix(line[r.Col-1:], old) {
			t.Errorf("%s: the reverted file's line %d is %q; want the quoted code with %s at column %d", r, r.Line, line, old, r.Col)
		}
	}
}
