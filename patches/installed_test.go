package patches

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// In an installed SGLang, a module an earlier mlagen installed without a
// digest shows an edit through RECORD, which lists the hash patch wrote.
func TestKernelEditSeenByRecord(t *testing.T) {
	rec := mustRecipe(t)
	root := t.TempDir()
	files := map[string]string{"sglang/__init__.py": ""}
	var record []string
	for p, body := range upstreamFiles() {
		files["sglang/"+p] = body
		record = append(record, "sglang/"+p+",,")
	}
	files["sglang-0.5.23.dist-info/RECORD"] = strings.Join(record, "\n") + "\n"
	writeFiles(t, root, files)
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
