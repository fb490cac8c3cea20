package patches

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mlagen/mlagen/changeset"
)

const kernelRel = "pkg/flash_mla_sm120_mma.py"

// builtinJob is a plain patch: this mlagen's built-in module (the fake
// kernel, which fakeEmitted says is what it emits for sm_120).
func builtinJob(t *testing.T, root string) Job {
	job := patchJob(t, root)
	job.Emitted = fakeEmitted
	return job
}

// kernelsJob is patch --kernels DIR with src as DIR/sparse_mla_mma.py.
func kernelsJob(t *testing.T, root, src string) Job {
	job := builtinJob(t, root)
	job.Kernel, job.KernelFrom = []byte(src), "--kernels"
	return job
}

// refused runs job, which must fail with a Problem saying want and write
// nothing.
func refused(t *testing.T, name string, job Job, want string) {
	t.Helper()
	before := snapshot(t, job.Root)
	_, err := Run(job)
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: want a problem saying %q, got %v", name, want, err)
	}
	if after := snapshot(t, job.Root); !equalMaps(before, after) {
		t.Errorf("%s: a refused patch wrote: %v", name, diffMaps(before, after))
	}
}

// A second patch does not silently replace a kernel module edited by hand
// after patch installed it: refused, whatever module the run gives, except
// the edited one itself (the way to keep the edit).
func TestKernelEditedByHandKept(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	runOK(t, builtinJob(t, root))
	if rep := runOK(t, builtinJob(t, root)); !rep.NothingToDo {
		t.Fatalf("the same plain patch again changes something:\n%s", rep)
	}
	kp := filepath.Join(root, kernelRel)
	edited := readFile(t, kp) + "# my tuning\n"
	writeFiles(t, root, map[string]string{kernelRel: edited})
	refused(t, "plain patch", builtinJob(t, root), kernelRel+" was edited by hand after mlagen patch installed it")
	refused(t, "patch --kernels with another module", kernelsJob(t, root, fakeKernel+"\nEXTRA = 1\n"), "was edited by hand")
	// Given back as its own module, the edit is installed (the header's
	// digest then covers it).
	body, _, _ := installedBody(mustRecipe(t), []byte(edited))
	runOK(t, kernelsJob(t, root, string(body)))
	if got, _, _ := installedBody(mustRecipe(t), []byte(readFile(t, kp))); string(got) != string(body) {
		t.Errorf("patch --kernels with the edited module installed:\n%s", got)
	}
}

// A module installed from --kernels (or --selection) is the user's: the
// same run again changes nothing, a plain run is refused (the built-in
// tables would take its place), another --kernels run replaces it.
func TestKernelOfTheUsersKept(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	mine := fakeKernel + "\n# tuned\n"
	runOK(t, kernelsJob(t, root, mine))
	if rep := runOK(t, kernelsJob(t, root, mine)); !rep.NothingToDo {
		t.Fatalf("the same --kernels patch again changes something:\n%s", rep)
	}
	refused(t, "plain patch over --kernels", builtinJob(t, root), kernelRel+" was installed from --kernels or --selection; this run gives neither")
	runOK(t, kernelsJob(t, root, fakeKernel))
	runOK(t, builtinJob(t, root)) // the same bytes: only the header says whose
}

// A module an earlier mlagen installed (no digest under the install
// header) is told by its generated header: one emitted with a selection of
// the user's is refused by a plain run; this mlagen's own, differing (an
// earlier mlagen's), is upgraded in place, as before.
func TestKernelWithoutDigest(t *testing.T) {
	rec := mustRecipe(t)
	for _, c := range []struct {
		name, command, want string
	}{
		{"user's selection", "mlagen emit --target sm_120 --selection my-card/sm120.json", "was emitted by `mlagen emit --target sm_120 --selection my-card/sm120.json`, not from this mlagen's built-in tables"},
		{"earlier mlagen's own", "mlagen emit --target sm_120 (a stand-in for golden tests)", ""},
	} {
		root := t.TempDir()
		writeFiles(t, root, upstreamFiles())
		runOK(t, builtinJob(t, root))
		body := strings.Replace(fakeKernel, "# Command: mlagen emit --target sm_120 (a stand-in for golden tests)", "# Command: "+c.command, 1) + "\nOLDER = 1\n"
		writeFiles(t, root, map[string]string{kernelRel: kernelHeader(rec) + body})
		if c.want != "" {
			refused(t, c.name, builtinJob(t, root), c.want)
			continue
		}
		if rep := runOK(t, builtinJob(t, root)); !strings.Contains(rep.String(), "kernel module updated: the installed one is an earlier mlagen's") {
			t.Errorf("%s: not upgraded:\n%s", c.name, rep)
		}
	}
}

// installedFiles is upstreamFiles installed as pip leaves a release in
// site-packages: under sglang/, with the dist-info's RECORD listing each
// file with its hash and size.
func installedFiles(version string) map[string]string {
	files := map[string]string{"sglang/__init__.py": ""}
	for p, body := range upstreamFiles() {
		files["sglang/"+p] = body
	}
	files["sglang-"+version+".dist-info/RECORD"] = recordOf(version, files)
	return files
}

// recordOf is the RECORD of the release version made of files.
func recordOf(version string, files map[string]string) string {
	var record []string
	for p, body := range files {
		record = append(record, recordEntry(p, []byte(body)))
	}
	sort.Strings(record)
	record = append(record, "sglang-"+version+".dist-info/RECORD,,")
	return strings.Join(record, "\n") + "\n"
}

// In an installed SGLang, a module an earlier mlagen installed without a
// digest shows an edit through RECORD, which lists the hash patch wrote.
func TestKernelEditSeenByRecord(t *testing.T) {
	rec := mustRecipe(t)
	root := t.TempDir()
	writeFiles(t, root, installedFiles("0.5.23"))
	runOK(t, builtinJob(t, root))
	// As an earlier mlagen left it: no digest line, RECORD's hash of that.
	kp := "sglang/" + kernelRel
	body, _, _ := installedBody(rec, []byte(readFile(t, filepath.Join(root, kp))))
	legacy := kernelHeader(rec) + string(body)
	recPath := filepath.Join(root, "sglang-0.5.23.dist-info/RECORD")
	data := readFile(t, recPath)
	s, e, ok := recordLine([]byte(data), kp)
	if !ok {
		t.Fatalf("RECORD does not list %s:\n%s", kp, data)
	}
	writeFiles(t, root, map[string]string{
		kp:                               legacy + "# my tuning\n",
		"sglang-0.5.23.dist-info/RECORD": data[:s] + recordEntry(kp, []byte(legacy)) + data[e:],
	})
	refused(t, "plain patch", builtinJob(t, root), "its hash is not the one sglang-0.5.23.dist-info/RECORD lists for it")
}

// Revert does not delete a kernel module edited by hand since patch
// installed it: refused, nothing written, until the file is moved aside;
// then it reverts the rest to the original bytes.
func TestRevertKeepsEditedKernel(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	orig := snapshot(t, root)
	runOK(t, builtinJob(t, root))
	kp := filepath.Join(root, kernelRel)
	writeFiles(t, root, map[string]string{kernelRel: readFile(t, kp) + "# my tuning\n"})
	refused(t, "revert", revertJob(t, root), kernelRel+" was edited by hand after mlagen patch installed it")
	if err := os.Remove(kp); err != nil {
		t.Fatal(err)
	}
	runOK(t, revertJob(t, root))
	if after := snapshot(t, root); !equalMaps(orig, after) {
		t.Errorf("revert after the edited module was moved aside: %v", diffMaps(orig, after))
	}
}

// Revert --module takes a module that defines the old function, by its
// path under the root; any other path is refused with nothing written (it
// used to take the blocks out everywhere and rename nothing back, leaving
// calls of a dispatcher that no longer existed).
func TestRevertModuleGiven(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, upstreamFiles())
	orig := snapshot(t, root)
	runOK(t, builtinJob(t, root))
	for _, c := range []struct{ module, want string }{
		{filepath.Join(root, "pkg/flash_mla_sm120_triton.py"), "no such file under the root (the path is relative to it"},
		{"nope.py", "--module nope.py: no such file under the root"},
		{"pkg/flash_mla_sm120.py", "--module pkg/flash_mla_sm120.py does not define _run_triton_sparse_decode at module level"},
	} {
		job := revertJob(t, root)
		job.Module = c.module
		refused(t, "revert --module "+c.module, job, c.want)
	}
	job := revertJob(t, root)
	job.Module = "./pkg/flash_mla_sm120_triton.py"
	runOK(t, job)
	if after := snapshot(t, root); !equalMaps(orig, after) {
		t.Errorf("revert --module with the module's path: %v", diffMaps(orig, after))
	}
}

// pip install --ignore-installed puts a release over another and leaves
// the old dist-info beside the new: two RECORDs list SGLang's files, and
// pip uninstall takes whichever its lookup finds first. Patch lists the
// kernel module in both; the report names the installed release's RECORD
// (the one whose hashes agree with the files, though the old one sorts
// first) and the old one as an earlier release's; revert gives back every
// byte.
func TestTwoDistInfos(t *testing.T) {
	root := t.TempDir()
	files := installedFiles("0.5.23")
	old := map[string]string{}
	for p, body := range files {
		if strings.HasSuffix(p, ".py") {
			old[p] = body
		}
	}
	old["sglang/__init__.py"] = "# 0.5.16\n"
	old["sglang/pkg/__init__.py"] = "# 0.5.16\n"
	files["sglang-0.5.16.dist-info/RECORD"] = recordOf("0.5.16", old)
	writeFiles(t, root, files)
	original := snapshot(t, root)

	rep := runOK(t, builtinJob(t, root))
	kp := "sglang/" + kernelRel
	for _, v := range []string{"0.5.16", "0.5.23"} {
		rp := "sglang-" + v + ".dist-info/RECORD"
		if _, _, ok := recordLine([]byte(readFile(t, filepath.Join(root, rp))), kp); !ok {
			t.Errorf("%s does not list the kernel module after patch:\n%s", rp, rep)
		}
	}
	check := checkOK(t, root)
	want := []OtherRecord{{Path: "sglang-0.5.16.dist-info/RECORD", Listed: 6, Mismatched: 5, InstalledMismatched: 3, Stale: true}}
	if check.Record != "sglang-0.5.23.dist-info/RECORD" || !slices.Equal(check.OtherRecords, want) || len(check.Problems) > 0 {
		t.Errorf("verify: record %q, others %+v (want %+v), problems %q", check.Record, check.OtherRecords, want, check.Problems)
	}
	if text := rep.String(); !strings.Contains(text, "record: sglang-0.5.16.dist-info/RECORD too, an earlier release's") {
		t.Errorf("the patch report does not name the old dist-info:\n%s", text)
	}

	// A stale RECORD that does not list the module: pip uninstall could
	// take it and leave the module behind.
	writeFiles(t, root, map[string]string{"sglang-0.5.16.dist-info/RECORD": files["sglang-0.5.16.dist-info/RECORD"]})
	if rep := checkOK(t, root); !slices.Contains(rep.Problems, "sglang-0.5.16.dist-info/RECORD does not list "+kp+", so pip uninstall would leave it behind: run mlagen patch again") {
		t.Errorf("verify with the old RECORD unlisting the module: %q", rep.Problems)
	}
	runOK(t, builtinJob(t, root))
	runOK(t, revertJob(t, root))
	if got := snapshot(t, root); !equalMaps(got, original) {
		t.Errorf("revert did not give back the original bytes: %v", diffMaps(original, got))
	}

	// Two dist-infos the files cannot tell apart: neither is called stale.
	same := map[string]string{}
	for p, body := range files {
		if strings.HasSuffix(p, ".py") {
			same[p] = body
		}
	}
	writeFiles(t, root, map[string]string{"sglang-0.5.16.dist-info/RECORD": recordOf("0.5.16", same)})
	runOK(t, builtinJob(t, root))
	if rep := checkOK(t, root); len(rep.OtherRecords) != 1 || rep.OtherRecords[0].Stale || !strings.Contains(rep.String(), "mlagen cannot tell which release pip installed last") {
		t.Errorf("two RECORDs alike: %+v\n%s", rep.OtherRecords, rep)
	}
}

// What Python compiled of the kernel module (the server imported it) goes
// with the module on revert: left behind, it would keep sglang/ after pip
// uninstall. The bytecode of SGLang's own modules stays; a revert killed
// mid-way puts the bytecode back from the journal like any file; bytecode
// an earlier revert left behind is deleted by the next.
func TestRevertDeletesKernelBytecode(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, installedFiles("0.5.23"))
	runOK(t, builtinJob(t, root))
	pyc := "\xcb\r\r\n\x00\x00\x00\x00compiled"
	kernelPyc := map[string]string{
		"sglang/pkg/__pycache__/flash_mla_sm120_mma.cpython-312.pyc":       pyc,
		"sglang/pkg/__pycache__/flash_mla_sm120_mma.cpython-312.opt-1.pyc": pyc,
	}
	own := map[string]string{
		"sglang/pkg/__pycache__/flash_mla_sm120_triton.cpython-312.pyc":     pyc,
		"sglang/pkg/__pycache__/flash_mla_sm120_mma_old.cpython-312.pyc":    pyc,
		"sglang/sglang/srt/__pycache__/flash_mla_sm120_mma.cpython-312.pyc": pyc, // beside no defining module
	}
	writeFiles(t, root, kernelPyc)
	writeFiles(t, root, own)
	dry := revertJob(t, root)
	dry.DryRun = true
	out, err := Run(dry)
	if err != nil {
		t.Fatal(err)
	}
	for p := range kernelPyc {
		if !strings.Contains(out.Diff, "Binary files a/"+p+" and /dev/null differ\n") {
			t.Errorf("the dry run's diff does not show %s deleted:\n%s", p, out.Diff)
		}
	}
	before := snapshot(t, root)
	// Killed at the first step after which the bytecode is gone.
	for n := 1; ; n++ {
		job := revertJob(t, root)
		job.Hook = crashAt(n)
		if _, err := Run(job); !errors.Is(err, changeset.ErrCrash) {
			t.Fatalf("a revert killed at step %d: %v", n, err)
		}
		killed := snapshot(t, root)
		gone := 0
		for p := range kernelPyc {
			if _, ok := killed[p]; !ok {
				gone++
			}
		}
		if gone == len(kernelPyc) {
			break
		}
		runOK(t, builtinJob(t, root)) // finishes the killed run (undoes it) first
	}
	runOK(t, builtinJob(t, root)) // finishes the killed run (undoes it) first
	job := builtinJob(t, root)
	job.DryRun = true
	if out, err := Run(job); err != nil || !out.Report.NothingToDo {
		t.Fatalf("after the killed revert was undone, patch has something to do: %v", err)
	}
	if got := snapshot(t, root); !equalMaps(got, before) {
		t.Fatalf("the killed revert was not undone: %v", diffMaps(before, got))
	}
	rep := runOK(t, revertJob(t, root))
	after := snapshot(t, root)
	for p := range kernelPyc {
		if _, ok := after[p]; ok {
			t.Errorf("revert left %s:\n%s", p, rep)
		}
	}
	for p, body := range own {
		if after[p] != body {
			t.Errorf("revert deleted or changed %s, not the kernel module's", p)
		}
	}
	// Left by an earlier revert: the next one deletes it.
	writeFiles(t, root, kernelPyc)
	rep = runOK(t, revertJob(t, root))
	if rep.NothingToDo || len(rep.Changes) != len(kernelPyc) {
		t.Errorf("revert over the kernel module's orphan bytecode:\n%s", rep)
	}
	if rep = runOK(t, revertJob(t, root)); !rep.NothingToDo {
		t.Errorf("a third revert still has something to do:\n%s", rep)
	}
}
