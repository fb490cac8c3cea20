package patches

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/patches/resolve"
)

// runFaults checks that a tree imports and runs as far as the wiring is
// concerned (what mlagen's own tests can tell without Python): every file
// that names the functions parses, every reference to the old function's
// or the dispatcher's name is bound where it is looked up, and the code
// mlagen inserts finds what it uses (the gate registered in environ.py, the
// kernel module beside the block, defining what the block calls). A fault
// through a module that re-exports the name (two callers, one importing
// from the other) is listed apart: no write order avoids it between the
// two writes.
func runFaults(t testing.TB, co *Checkout, rec *Recipe) (faults, reexport []string) {
	t.Helper()
	s, err := load(co, rec, resolve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, e := range s.Broken() {
		faults = append(faults, fmt.Sprintf("%s:%s: does not parse", p, e))
	}
	rep := &Report{}
	for _, r := range s.brokenRefs(rep) {
		if defines(s, r, rec) {
			faults = append(faults, r.String())
		} else {
			reexport = append(reexport, r.String())
		}
	}
	faults = append(faults, rep.Unjudged...)
	for _, fi := range s.Infos() {
		for _, b := range blocksOf(fi, rec) {
			faults = append(faults, s.blockFaults(fi, b)...)
		}
	}
	return faults, reexport
}

// defines reports whether a broken reference is looked up in a module that
// defines the old function (the dispatcher's home), rather than one that
// re-exports it.
func defines(s *session, r Ref, rec *Recipe) bool {
	m := regexp.MustCompile(`: (\S+) does not define`).FindStringSubmatch(r.Kind)
	if m == nil {
		return true
	}
	fi := s.Info(m[1])
	return fi == nil || fi.TopDef(rec.Old) >= 0
}

var kernelCallRE = regexp.MustCompile(`mma_kernel\.([A-Za-z_][A-Za-z0-9_]*)\(`)

// blockFaults lists what the code of block b would not find when it runs.
func (s *session) blockFaults(fi *resolve.Info, b block) []string {
	var out []string
	text := string(fi.Syntax().Src()[b.open:b.close])
	at := fmt.Sprintf("%s:%d (%s block)", fi.Path(), b.openLine, b.part)
	if strings.Contains(text, s.rec.EnvironImport+"."+s.rec.Gate) {
		env := s.environ()
		if env == nil {
			out = append(out, at+": reads the gate through envs, but there is no environ.py")
		} else if _, ok := env.TopClass(s.rec.EnvironClass, s.rec.Gate); !ok {
			out = append(out, at+": reads envs."+s.rec.Gate+", which "+env.Path()+" does not register")
		}
	}
	if kernelLineRE.MatchString(strings.Join(strings.Split(text, "\n"), "\n")) || strings.Contains(text, "as mma_kernel") {
		kp := kernelPath(s.rec, fi.Path())
		k, ok := s.co.Tree.Files[kp]
		if !ok {
			return append(out, at+": imports the kernel module, but "+kp+" does not exist")
		}
		ks, err := readKernel(k.Data)
		if err != nil || ks.syntax != "" {
			return append(out, at+": the kernel module "+kp+" does not parse")
		}
		for _, m := range kernelCallRE.FindAllStringSubmatch(text, -1) {
			if miss := ks.missing([]string{m[1]}); len(miss) > 0 {
				out = append(out, at+": calls mma_kernel."+m[1]+", which "+kp+" does not define")
			}
		}
	}
	return out
}

// interruptFiles is an upstream-shaped tree with callers in three modules
// (one through a module attribute), so that a run writes six files.
func interruptFiles() map[string]string {
	files := upstreamFiles()
	files["pkg/models/__init__.py"] = ""
	files["pkg/models/deepseek.py"] = "from pkg.flash_mla_sm120_triton import _run_triton_sparse_decode\n\n\ndef f(q):\n    return _run_triton_sparse_decode(q, None, None, None, 1.0)\n"
	files["pkg/models/other.py"] = "from pkg import flash_mla_sm120_triton as fm\n\n\ndef g(q):\n    return fm._run_triton_sparse_decode(q, None, None, None, 1.0)\n"
	return files
}

// copyTree copies every file under src (hidden ones, the journal and
// temporary files included) to dst, with its mode.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm())
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashAt is a hook that kills the run at its n-th disk operation.
func crashAt(n int) func(changeset.Step) error {
	steps := 0
	return func(changeset.Step) error {
		if steps++; steps == n {
			return changeset.ErrCrash
		}
		return nil
	}
}

// killedEach runs a patch from the tree at original and a revert from the
// one at patched, each killed at every one of its disk operations in turn
// (the writer's fault hook), each time on a fresh copy under dir, which it
// hands to killed. job makes the run for a root; a run that takes fewer
// than ten operations fails the test (the hook would prove little).
func killedEach(t *testing.T, dir, original, patched string, job func(root string, revert bool) Job, killed func(revert bool, n int, root string)) {
	t.Helper()
	for _, revert := range []bool{false, true} {
		start := original
		if revert {
			start = patched
		}
		for n := 1; ; n++ {
			root := filepath.Join(dir, fmt.Sprintf("run-%v-%d", revert, n))
			copyTree(t, start, root)
			j := job(root, revert)
			j.Hook = crashAt(n)
			if _, err := Run(j); err == nil {
				if n < 10 {
					t.Fatalf("revert %v: the run took only %d steps", revert, n-1)
				}
				t.Logf("revert %v: killed at each of its %d steps", revert, n-1)
				break
			} else if !errors.Is(err, changeset.ErrCrash) {
				t.Fatalf("revert %v, killed at step %d: %v", revert, n, err)
			}
			killed(revert, n, root)
		}
	}
}

// jobOf is patchJob or revertJob.
func jobOf(t *testing.T) func(string, bool) Job {
	return func(root string, revert bool) Job {
		if revert {
			return revertJob(t, root)
		}
		return patchJob(t, root)
	}
}

// Issue 30, bugs 3 and 4: a patch or a revert killed at any of its disk
// operations (the writer's fault hook, not timing) leaves whole files that
// still import and run, and the next run of either kind (which first undoes
// the killed one from its journal) reaches a whole state: the patched tree,
// or the original one, with no journal and no temporary file left.
func TestKilledAtEveryStep(t *testing.T) {
	rec := mustRecipe(t)
	dir := t.TempDir()
	original := filepath.Join(dir, "original")
	writeFiles(t, original, interruptFiles())
	patched := filepath.Join(dir, "patched")
	copyTree(t, original, patched)
	runOK(t, patchJob(t, patched))
	want := map[bool]map[string]string{false: snapshot(t, patched), true: snapshot(t, original)}
	killedEach(t, dir, original, patched, jobOf(t), func(revert bool, n int, root string) {
		co, err := ScanCheckout(root, rec)
		if err != nil {
			t.Fatal(err)
		}
		if faults, _ := runFaults(t, co, rec); len(faults) > 0 {
			t.Errorf("revert %v, killed at step %d: the tree does not run:\n  %s", revert, n, strings.Join(faults, "\n  "))
		}
		for _, next := range []bool{false, true} {
			again := root + fmt.Sprintf("-then-%v", next)
			copyTree(t, root, again)
			rep := runOK(t, jobOf(t)(again, next))
			if got := snapshot(t, again); !equalMaps(got, want[next]) {
				t.Errorf("revert %v killed at step %d, then revert %v: not a whole state: %v\n%s", revert, n, next, diffMaps(want[next], got), rep)
			}
		}
	})
}

// prefixesRecover checks every prefix of a run's writes (changes applied
// to from, in order) without any journal: the tree runs (but for a caller
// importing through another caller mid-way, and unless the original does
// not), and Patch then reaches patched, Revert the original.
func prefixesRecover(t *testing.T, rec *Recipe, kernel []byte, from *Checkout, changes []Change, patched, original *Checkout) {
	t.Helper()
	// A tree that does not run before patching (a broken import of its
	// own) is not expected to run in between.
	faults, _ := runFaults(t, original, rec)
	runs := len(faults) == 0
	for k := 0; k <= len(changes); k++ {
		tree := from.with(changes[:k])
		if faults, _ := runFaults(t, tree, rec); runs && len(faults) > 0 {
			t.Errorf("after %d of %d writes (%s) the tree does not run:\n  %s", k, len(changes), writtenPaths(changes[:k]), strings.Join(faults, "\n  "))
		}
		p, err := Patch(tree, Options{Recipe: rec, Kernel: kernel})
		if err != nil {
			t.Errorf("after %d of %d writes (%s), patch fails: %v", k, len(changes), writtenPaths(changes[:k]), err)
		} else if d := treeDiff(tree.with(p.Changes), patched); d != "" {
			t.Errorf("after %d of %d writes (%s), patch does not reach the patched tree:\n%s", k, len(changes), writtenPaths(changes[:k]), d)
		}
		r, err := Revert(tree, Options{Recipe: rec})
		if err != nil {
			t.Errorf("after %d of %d writes (%s), revert fails: %v", k, len(changes), writtenPaths(changes[:k]), err)
		} else if d := treeDiff(tree.with(r.Changes), original); d != "" {
			t.Errorf("after %d of %d writes (%s), revert does not reach the original tree:\n%s", k, len(changes), writtenPaths(changes[:k]), d)
		}
	}
}

func writtenPaths(changes []Change) string {
	var ps []string
	for _, c := range changes {
		ps = append(ps, c.Path)
	}
	return "[" + strings.Join(ps, " ") + "]"
}

// treeDiff is "" when two checkouts hold the same files, byte for byte.
func treeDiff(a, b *Checkout) string {
	var out []string
	for p, f := range a.Tree.Files {
		if g, ok := b.Tree.Files[p]; !ok {
			out = append(out, p+": only in the first")
		} else if string(g.Data) != string(f.Data) {
			out = append(out, unifiedDiff([]Change{{Path: p, Before: g.Data, After: f.Data}}))
		}
	}
	for p := range b.Tree.Files {
		if _, ok := a.Tree.Files[p]; !ok {
			out = append(out, p+": only in the second")
		}
	}
	return strings.Join(out, "\n")
}

// Issue 30, bugs 3 and 4, without the journal: whatever prefix of a
// patch's or a revert's writes a crash leaves (an older mlagen's, a journal
// deleted), the next patch and the next revert each reach a whole state.
func TestInterruptedWritesRecoverable(t *testing.T) {
	writesRecoverable(t, interruptFiles())
}

// writesRecoverable patches and reverts tree in memory, then checks that
// every prefix of either run's writes is brought to a whole state by the
// next patch or revert (prefixesRecover).
func writesRecoverable(t *testing.T, tree map[string]string) {
	rec := mustRecipe(t)
	files := map[string][]byte{}
	for p, d := range tree {
		files[p] = []byte(d)
	}
	original := NewCheckout(files)
	once, err := Patch(original, Options{Recipe: rec, Kernel: []byte(fakeKernel)})
	if err != nil {
		t.Fatal(err)
	}
	if !once.Report.OK() {
		t.Fatalf("patch:\n%s", once.Report)
	}
	patched := original.with(once.Changes)
	back, err := Revert(patched, Options{Recipe: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("patch", func(t *testing.T) {
		prefixesRecover(t, rec, []byte(fakeKernel), original, once.Changes, patched, original)
	})
	t.Run("revert", func(t *testing.T) {
		prefixesRecover(t, rec, []byte(fakeKernel), patched, back.Changes, patched, original)
	})
}

// owners maps every file and directory under root to its uid:gid.
func owners(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%d:%d", st.Uid, st.Gid)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 30, bug 8: patch run as root over a tree owned by someone else
// keeps every file's owner (a file it creates gets its directory's), after
// a run that failed half way and after a killed one too.
func TestOwnershipKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (to own files as another user)")
	}
	root := t.TempDir()
	writeFiles(t, root, interruptFiles())
	chownAll := func() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(p, 1000, 1000)
			}
			return err
		})
	}
	chownAll()
	check := func(when string) {
		t.Helper()
		for p, o := range owners(t, root) {
			// A killed run's temporary file is the next run's to remove.
			if o != "1000:1000" && !(strings.Contains(when, "killed") && strings.Contains(p, ".mlagen-")) {
				t.Errorf("%s: %s is owned by %s, want 1000:1000", when, p, o)
			}
		}
	}
	job := patchJob(t, root)
	renames := 0
	job.Hook = func(s changeset.Step) error {
		if s.Op == changeset.OpRename && !s.Undo {
			if renames++; renames == 3 {
				return errors.New("no space left on device (injected)")
			}
		}
		return nil
	}
	if _, err := Run(job); err == nil {
		t.Fatal("the injected failure did not fail the run")
	}
	check("after a failed patch")
	job = patchJob(t, root)
	job.Hook = crashAt(40)
	if _, err := Run(job); !errors.Is(err, changeset.ErrCrash) {
		t.Fatalf("want the run killed, got %v", err)
	}
	check("after a killed patch")
	runOK(t, patchJob(t, root))
	check("after patching")
	runOK(t, revertJob(t, root))
	check("after reverting")
}

// Issue 30, bug 3: with the dispatcher block deleted by hand, revert still
// finds the wiring (the kernel module beside the defining module, the
// references to the dispatcher) and takes all of it out.
func TestRevertAfterDispatcherDeleted(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, interruptFiles())
	original := snapshot(t, root)
	runOK(t, patchJob(t, root))
	mod := filepath.Join(root, "pkg/flash_mla_sm120_triton.py")
	src := []byte(readFile(t, mod))
	var cut []byte
	for _, b := range findBlocks(src, mustRecipe(t)) {
		if b.part == partDispatcher {
			start, end, err := b.removal(src, "mod")
			if err != nil {
				t.Fatal(err)
			}
			cut = append(append(cut, src[:start]...), src[end:]...)
		}
	}
	writeFiles(t, root, map[string]string{"pkg/flash_mla_sm120_triton.py": string(cut)})
	rep := runOK(t, revertJob(t, root))
	if after := snapshot(t, root); !equalMaps(original, after) {
		t.Errorf("revert left mlagen's wiring: %v\n%s", diffMaps(original, after), rep)
	}
}

// Issue 30, bug 4: the temporary file a killed writer left (this one's, or
// the previous patch writer's .<name>.mlagen-<digits>) is removed by the
// next run, even one with nothing to write.
func TestStrayTemporaryFilesRemoved(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, interruptFiles())
	runOK(t, patchJob(t, root))
	strays := []string{"pkg/.flash_mla_sm120_triton.py.mlagen-123456", "pkg/models/.deepseek.py.mlagen-99999999-3"}
	for _, s := range strays {
		writeFiles(t, root, map[string]string{s: "half a file"})
	}
	rep := runOK(t, patchJob(t, root))
	if !rep.NothingToDo {
		t.Fatalf("patch changed a patched tree:\n%s", rep)
	}
	for _, s := range strays {
		if _, err := os.Stat(filepath.Join(root, s)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there after a run (%v):\n%s", s, err, rep)
		}
	}
}

// A patch killed half way, then the package reinstalled or upgraded under
// it (pip knows nothing of the journal): undoing the killed run would write
// the old release's files over the new ones. The next patch and revert
// refuse, write nothing and say to delete the journal; a dry run and
// verify's proof say the journal no longer describes the tree; with the
// journal deleted, patch wires the new files.
func TestJournalOfReplacedTree(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, interruptFiles())
	job := patchJob(t, root)
	renames := 0
	job.Hook = func(s changeset.Step) error {
		if s.Op == changeset.OpRename && !s.Undo {
			if renames++; renames == 4 {
				return changeset.ErrCrash
			}
		}
		return nil
	}
	if _, err := Run(job); !errors.Is(err, changeset.ErrCrash) {
		t.Fatalf("the killed run: %v", err)
	}
	// The "next release": every Python file the tree had, rewritten.
	next := map[string]string{}
	for p, d := range interruptFiles() {
		if strings.HasSuffix(p, ".py") {
			next[p] = d + "\n# the next release\n"
		}
	}
	writeFiles(t, root, next)
	replaced := snapshot(t, root)
	for _, revert := range []bool{false, true} {
		job := patchJob(t, root)
		if revert {
			job = revertJob(t, root)
		}
		_, err := Run(job)
		var stale *changeset.StaleJournalError
		if !errors.As(err, &stale) || !strings.Contains(err.Error(), "Nothing was changed") {
			t.Fatalf("revert %v over a replaced tree: %v; want the stale journal refused", revert, err)
		}
		if got := snapshot(t, root); !equalMaps(got, replaced) {
			t.Fatalf("revert %v: a refused run changed the tree: %v", revert, diffMaps(replaced, got))
		}
	}
	dry := patchJob(t, root)
	dry.DryRun = true
	if _, err := Run(dry); err == nil || !strings.Contains(err.Error(), "no longer describes the tree") {
		t.Errorf("a dry run over a replaced tree: %v", err)
	}
	if err := os.Remove(filepath.Join(root, changeset.JournalName)); err != nil {
		t.Fatal(err)
	}
	rep := runOK(t, patchJob(t, root))
	if !strings.Contains(readFile(t, filepath.Join(root, "pkg/models/deepseek.py")), "# the next release") {
		t.Errorf("patch after the journal was deleted lost the new files:\n%s", rep)
	}
}

// A run over an installed SGLang killed at any of its disk operations:
// until the next run finishes or undoes it, verify says the journal is
// there and what to run, and never blames pip. (A patch killed after it
// listed the kernel module in RECORD but before it wrote the dispatcher
// leaves a RECORD that lists the module over an unwired tree, which is
// also what a pip reinstall over a patched tree leaves.)
func TestKilledInstalledRunBlamesNoPip(t *testing.T) {
	dir := t.TempDir()
	original := filepath.Join(dir, "original")
	writeFiles(t, original, installedFiles("0.5.23"))
	patched := filepath.Join(dir, "patched")
	copyTree(t, original, patched)
	runOK(t, builtinJob(t, patched))
	// The server has imported the module: revert deletes its bytecode too.
	writeFiles(t, patched, map[string]string{"sglang/pkg/__pycache__/flash_mla_sm120_mma.cpython-312.pyc": "\xcb\r\r\n\x00\x00\x00\x00"})
	job := func(root string, revert bool) Job {
		if revert {
			return revertJob(t, root)
		}
		return builtinJob(t, root)
	}
	killedEach(t, dir, original, patched, job, func(revert bool, n int, root string) {
		pending, err := changeset.Pending(root)
		if err != nil {
			t.Fatal(err)
		}
		rep := checkOK(t, root)
		if pending && (len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "an interrupted mlagen run left its journal")) {
			t.Errorf("revert %v, killed at step %d: verify does not lead with the journal: %q", revert, n, rep.Problems)
		}
		for _, p := range rep.Problems {
			if strings.Contains(p, "pip") {
				t.Errorf("revert %v, killed at step %d: verify blames pip: %s", revert, n, p)
			}
		}
	})
}
