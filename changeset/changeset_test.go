package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry is one path of a snapshot: everything Apply must keep or restore.
type entry struct {
	Mode     fs.FileMode
	UID, GID int
	Data     string
}

// snapshot records every file and directory under root, hidden ones too.
func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		uid, gid := ownerOf(info)
		e := entry{Mode: info.Mode(), UID: uid, GID: gid}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			e.Data = "-> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Data = string(data)
		}
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is a tree and a plan that touches it in every way a set can:
// a creation in a new nested directory, a replacement of an executable
// (its mode must stay), a deletion, and a file written twice.
func fixture(t *testing.T) (root string, plan func() *Set, want map[string]string) {
	t.Helper()
	root = t.TempDir()
	writeTree(t, root, map[string]string{
		"keep.txt":      "untouched\n",
		"pkg/a.py":      "a = 1\n",
		"pkg/run.sh":    "#!/bin/sh\necho old\n",
		"pkg/old.py":    "old = True\n",
		"pkg/manifest":  "v1\n",
		"pkg/.hidden":   "the user's\n",
		"other/user.md": "mine\n",
	})
	if err := os.Chmod(filepath.Join(root, "pkg/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan = func() *Set {
		s := New(root)
		for _, w := range []struct{ p, d string }{
			{"pkg/manifest", "v1\nv2\n"},
			{"pkg/new/deep/b.py", "b = 2\n"},
			{"pkg/a.py", "a = 10\n"},
			{"pkg/run.sh", "#!/bin/sh\necho new\n"},
			{"pkg/manifest", "v2\n"},
		} {
			if err := s.Write(w.p, []byte(w.d)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Remove("pkg/old.py"); err != nil {
			t.Fatal(err)
		}
		return s
	}
	want = map[string]string{
		"keep.txt": "untouched\n", "pkg/a.py": "a = 10\n", "pkg/run.sh": "#!/bin/sh\necho new\n",
		"pkg/new/deep/b.py": "b = 2\n", "pkg/manifest": "v2\n", "pkg/.hidden": "the user's\n", "other/user.md": "mine\n",
	}
	return root, plan, want
}

func files(snap map[string]entry) map[string]string {
	out := map[string]string{}
	for p, e := range snap {
		if e.Mode.IsRegular() {
			out[p] = e.Data
		}
	}
	return out
}

func TestApply(t *testing.T) {
	root, plan, want := fixture(t)
	s := plan()
	if n := len(s.Changes); n != 6 {
		t.Fatalf("planned %d changes, want 6: %+v", n, s.Paths())
	}
	res, err := s.Apply(Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, root)
	if d := cmp.Diff(want, files(snap)); d != "" {
		t.Errorf("tree after Apply (-want +got):\n%s", d)
	}
	if m := snap["pkg/run.sh"].Mode; m != 0o755 {
		t.Errorf("pkg/run.sh mode %v after replacement, want -rwxr-xr-x", m)
	}
	if m := snap["pkg/new/deep/b.py"].Mode; m != 0o644 {
		t.Errorf("new file mode %v, want -rw-r--r--", m)
	}
	wantRes := Result{Created: []string{"pkg/new/deep/b.py"}, Replaced: []string{"pkg/manifest", "pkg/a.py", "pkg/run.sh", "pkg/manifest"}, Deleted: []string{"pkg/old.py"}}
	if d := cmp.Diff(wantRes, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	// Planning again from the new tree finds nothing to do.
	if again := plan(); !cmp.Equal(again.Paths(), []string{"pkg/manifest"}) || again.Diff() != "" {
		t.Errorf("second plan: %v %q, want only the manifest's intermediate step, no net change", again.Paths(), again.Diff())
	}
}

// countSteps runs the plan on a copy of the fixture to learn how many
// steps a whole run takes.
func countSteps(t *testing.T, opt Options) int {
	t.Helper()
	_, plan, _ := fixture(t)
	n := 0
	opt.Hook = func(s Step) error { n++; return nil }
	if _, err := plan().Apply(opt); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every step of a run, failed as a full disk would fail it, leaves the tree
// exactly as it was: contents, modes, owners, no temporary file, no new
// directory.
func TestFailAtEveryStep(t *testing.T) {
	for _, journal := range []bool{false, true} {
		total := countSteps(t, Options{Journal: journal})
		if total < 30 {
			t.Fatalf("only %d steps counted", total)
		}
		for n := 1; n <= total; n++ {
			root, plan, _ := fixture(t)
			before := snapshot(t, root)
			var failed Step
			_, err := plan().Apply(Options{Journal: journal, Hook: func(s Step) error {
				if s.N == n {
					failed = s
					return syscall.ENOSPC
				}
				return nil
			}})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("journal=%v step %d: err = %v, want ENOSPC", journal, n, err)
			}
			if strings.Contains(err.Error(), "half written") {
				t.Errorf("step %d (%s %s): %v", n, failed.Op, failed.Path, err)
			}
			if d := cmp.Diff(before, snapshot(t, root)); d != "" {
				t.Errorf("journal=%v fault at step %d (%s %s) changed the tree (-before +after):\n%s", journal, n, failed.Op, failed.Path, d)
			}
		}
	}
}

// A run killed at any step leaves whole files and temporary files; the
// next run removes the temporary files and reaches the planned tree (with
// the journal: first puts the old tree back whole).
func TestCrashAtEveryStep(t *testing.T) {
	for _, journal := range []bool{false, true} {
		total := countSteps(t, Options{Journal: journal})
		for n := 1; n <= total; n++ {
			root, plan, want := fixture(t)
			before := snapshot(t, root)
			_, err := plan().Apply(Options{Journal: journal, Hook: func(s Step) error {
				if s.N == n {
					return ErrCrash
				}
				return nil
			}})
			if !errors.Is(err, ErrCrash) {
				t.Fatalf("step %d: err = %v, want the crash", n, err)
			}
			if journal {
				// A journal on disk means the run is undone; none means it
				// had not started writing or had finished.
				pending, err := Pending(root)
				must(t, err)
				res, err := Recover(root, Options{})
				if err != nil {
					t.Fatalf("journal, crash at step %d: Recover: %v", n, err)
				}
				got := snapshot(t, root)
				if res.Recovered != pending {
					t.Errorf("crash at step %d: journal pending %v, Recover says recovered=%v", n, pending, res.Recovered)
				}
				if d := cmp.Diff(before, got); d != "" && (pending || !cmp.Equal(want, files(got))) {
					t.Errorf("journal, crash at step %d (pending=%v): Recover left (-before +after):\n%s", n, pending, d)
				}
			}
			if _, err := plan().Apply(Options{Journal: journal}); err != nil {
				t.Fatalf("journal=%v crash at step %d: the next run failed: %v", journal, n, err)
			}
			if d := cmp.Diff(want, files(snapshot(t, root))); d != "" {
				t.Errorf("journal=%v crash at step %d: the next run left (-want +got):\n%s", journal, n, d)
			}
		}
	}
}

// killedAtRunSh applies plan with the journal and kills it as it renames
// pkg/run.sh into place, half way through its changes: the journal is left.
func killedAtRunSh(t *testing.T, plan func() *Set) {
	t.Helper()
	_, err := plan().Apply(Options{Journal: true, Hook: func(s Step) error {
		if s.Op == OpRename && strings.HasSuffix(s.Path, "run.sh") {
			return ErrCrash
		}
		return nil
	}})
	if !errors.Is(err, ErrCrash) {
		t.Fatal(err)
	}
}

// The next Apply recovers by itself too: a journal left behind is undone
// before the new run checks its plan.
func TestApplyRecoversFirst(t *testing.T) {
	root, plan, _ := fixture(t)
	before := snapshot(t, root)
	killedAtRunSh(t, plan)
	if p, err := Pending(root); !p || err != nil {
		t.Fatalf("Pending = %v, %v after a crash with the journal", p, err)
	}
	// Planned from the half-written tree: pkg/a.py holds the killed run's
	// content, which recovery takes away.
	s := New(root)
	if err := s.Write("pkg/a.py", []byte("a = 20\n")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Apply(Options{})
	if err == nil || !strings.Contains(err.Error(), "changed since the change was planned") || !res.Recovered {
		t.Fatalf("Apply over a pending journal: recovered=%v err=%v; want it to undo the old run and then refuse its stale plan", res.Recovered, err)
	}
	if d := cmp.Diff(before, snapshot(t, root)); d != "" {
		t.Errorf("after recovery (-before +after):\n%s", d)
	}
}

// A journal whose files something else replaced since (pip upgrading the
// package under a killed run) no longer describes the tree: undoing it
// would write the killed run's old files over the new ones. Recover and
// Apply refuse, name the files, write nothing and leave the journal; with
// it deleted, the next run goes on.
func TestStaleJournal(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(root string) error
		want   string
	}{
		{"a file the run changed, replaced", func(root string) error {
			return os.WriteFile(filepath.Join(root, "pkg/a.py"), []byte("a = 99 # the next release\n"), 0o644)
		}, "pkg/a.py changed since"},
		{"a file the run had not reached yet, replaced", func(root string) error {
			return os.WriteFile(filepath.Join(root, "pkg/run.sh"), []byte("#!/bin/sh\necho next\n"), 0o755)
		}, "pkg/run.sh changed since"},
		{"the folder of a file the run changed, removed", func(root string) error {
			return os.RemoveAll(filepath.Join(root, "pkg"))
		}, "changed since"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, plan, want := fixture(t)
			killedAtRunSh(t, plan)
			if err := c.change(root); err != nil {
				t.Fatal(err)
			}
			changed := snapshot(t, root)
			var stale *StaleJournalError
			for _, run := range []func() error{
				func() error { _, err := Recover(root, Options{}); return err },
				func() error { _, err := plan().Apply(Options{Journal: true}); return err },
			} {
				err := run()
				if !errors.As(err, &stale) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Nothing was changed") {
					t.Fatalf("over a stale journal: %v; want a StaleJournalError naming %q", err, c.want)
				}
				if d := cmp.Diff(changed, snapshot(t, root)); d != "" {
					t.Errorf("a refused recovery changed the tree (-before +after):\n%s", d)
				}
			}
			if c.name != "a file the run changed, replaced" {
				return
			}
			if err := os.Remove(stale.Journal); err != nil {
				t.Fatal(err)
			}
			s := New(root)
			if err := s.Write("pkg/a.py", []byte(want["pkg/a.py"])); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Apply(Options{Journal: true}); err != nil {
				t.Errorf("with the stale journal deleted: %v", err)
			}
		})
	}
}

// When putting back fails too, the error says the tree is half written.
func TestUndoFailure(t *testing.T) {
	root, plan, _ := fixture(t)
	_, err := plan().Apply(Options{Hook: func(s Step) error {
		if s.Op == OpRename && strings.HasSuffix(s.Path, "run.sh") && !s.Undo {
			return syscall.EIO
		}
		if s.Undo && s.Op == OpRename && strings.HasSuffix(s.Path, "a.py") {
			return syscall.EROFS
		}
		return nil
	}})
	var e *Error
	if !errors.As(err, &e) || e.UndoErr == nil || !strings.Contains(err.Error(), "half written") || !strings.Contains(err.Error(), "pkg/a.py") {
		t.Fatalf("err = %v; want an Error whose undo failed on pkg/a.py", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "pkg/a.py")); string(got) != "a = 10\n" {
		t.Errorf("pkg/a.py = %q", got)
	}
}

// A first write that fails before anything is written (its temporary file
// cannot be made: a folder such as /proc) is the plain error: putting back
// nothing flushes no folder, whose sync could fail there too.
func TestFirstWriteFails(t *testing.T) {
	root, plan, _ := fixture(t)
	before := snapshot(t, root)
	synced := 0
	_, err := plan().Apply(Options{Hook: func(s Step) error {
		switch {
		case s.N == 1:
			return syscall.ENOENT
		case s.Op == OpSyncDir:
			synced++
			return syscall.EINVAL
		}
		return nil
	}})
	var e *Error
	if err == nil || errors.As(err, &e) || strings.Contains(err.Error(), "half written") || synced > 0 {
		t.Fatalf("err = %v (%d folders synced); want the first step's error alone", err, synced)
	}
	if got := snapshot(t, root); !maps.Equal(got, before) {
		t.Errorf("the tree changed: %v", got)
	}
}

func TestRefusals(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeTree(t, root, map[string]string{"real/f.py": "x\n", "g.py": "g\n"})
	writeTree(t, outside, map[string]string{"secret.py": "s\n"})
	must(t, os.Symlink(filepath.Join(outside, "secret.py"), filepath.Join(root, "link.py")))
	must(t, os.Symlink("real", filepath.Join(root, "dirlink")))
	must(t, os.Symlink(outside, filepath.Join(root, "out")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo.py"), 0o644))
	before, beforeOut := snapshot(t, root), snapshot(t, outside)
	for _, tc := range []struct {
		c    Change
		want string
	}{
		{Change{Path: "link.py", After: []byte("y")}, "link.py is a symlink"},
		{Change{Path: "dirlink/f.py", Before: []byte("x\n"), After: []byte("y")}, "dirlink is a symlink"},
		{Change{Path: "out/new.py", After: []byte("y")}, "out is a symlink"},
		{Change{Path: "../escape.py", After: []byte("y")}, "outside the root"},
		{Change{Path: "a/../../escape.py", After: []byte("y")}, "outside the root"},
		{Change{Path: "/etc/passwd", After: []byte("y")}, "absolute path"},
		{Change{Path: "fifo.py", After: []byte("y")}, "not a regular file"},
		{Change{Path: "g.py/h.py", After: []byte("y")}, "g.py is not a directory"},
		{Change{Path: "g.py", Before: []byte("other\n"), After: []byte("y")}, "changed since the change was planned"},
		{Change{Path: "g.py", After: []byte("y")}, "exists now but did not"},
		{Change{Path: "nope.py", Before: []byte("x"), After: []byte("y")}, "no longer exists"},
	} {
		s := Set{Root: root, Changes: []Change{{Path: "fine.py", After: []byte("ok\n")}, tc.c}}
		_, err := s.Apply(Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.c.Path, err, tc.want)
		}
		if _, _, err := Read(root, tc.c.Path); tc.c.Before == nil && tc.c.Path != "g.py" && err == nil && !strings.HasPrefix(tc.c.Path, "nope") {
			t.Errorf("Read(%s) accepted it", tc.c.Path)
		}
	}
	if d := cmp.Diff(before, snapshot(t, root)); d != "" {
		t.Errorf("a refused set changed the tree:\n%s", d)
	}
	if d := cmp.Diff(beforeOut, snapshot(t, outside)); d != "" {
		t.Errorf("a refused set changed the files outside the root:\n%s", d)
	}
}

// A root given through a symlink is the tree it points to; a root that
// does not exist is created, and removed again when the run fails.
func TestRoots(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "tree"), 0o755))
	must(t, os.Symlink("tree", filepath.Join(dir, "link")))
	s := Set{Root: filepath.Join(dir, "link"), Changes: []Change{{Path: "f.py", After: []byte("f\n")}}}
	if _, err := s.Apply(Options{}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "tree", "f.py")); err != nil || string(got) != "f\n" {
		t.Errorf("through the root's symlink: %q, %v", got, err)
	}
	fresh := Set{Root: filepath.Join(dir, "new", "out"), Changes: []Change{{Path: "a/f.py", After: []byte("f\n")}, {Path: "g.py", After: []byte("g\n")}}}
	_, err := fresh.Apply(Options{Hook: func(s Step) error {
		if s.Op == OpRename && strings.HasSuffix(s.Path, "g.py") {
			return syscall.ENOSPC
		}
		return nil
	}})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directories a failed run created are still there (%v)", err)
	}
	if _, err := fresh.Apply(Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "new", "out", "a", "f.py")); string(got) != "f\n" {
		t.Errorf("new root: a/f.py = %q", got)
	}
}

// Files replaced keep their owner and new files take their directory's,
// when mlagen runs as root (issue 30's tree of uid 1000 patched by root).
func TestOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create files of another owner")
	}
	root, plan, _ := fixture(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 1000, 1001)
	})
	must(t, err)
	// A failed run leaves every owner as it was.
	before := snapshot(t, root)
	_, err = plan().Apply(Options{Hook: func(s Step) error {
		if s.Op == OpRemove && !s.Undo {
			return syscall.EIO
		}
		return nil
	}})
	if !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, snapshot(t, root)); d != "" {
		t.Errorf("failed run (-before +after):\n%s", d)
	}
	if _, err := plan().Apply(Options{}); err != nil {
		t.Fatal(err)
	}
	for p, e := range snapshot(t, root) {
		if e.UID != 1000 || e.GID != 1001 {
			t.Errorf("%s owned by %d:%d, want 1000:1001", p, e.UID, e.GID)
		}
	}
}

func TestStrays(t *testing.T) {
	root := t.TempDir()
	dead := deadPid(t)
	stray := []string{
		fmt.Sprintf(".a.py.mlagen-%d-3", dead),
		fmt.Sprintf(".b.md.mlagen-%d-1", os.Getpid()),
		".index.py.tmp123456", // emit's old writer
		".x.py.mlagen-98765",  // patch's old writer
	}
	kept := []string{
		".a.py.mlagen-1-2", // pid 1 is alive: its run may be writing it
		".notes.txt.tmp1",  // not a .py or .md name of the old writers
		".a.py.mlagen-x-1",
		"a.py.mlagen-12-1",
	}
	for _, n := range append(append([]string{}, stray...), kept...) {
		writeTree(t, root, map[string]string{"pkg/" + n: "partial"})
	}
	s := New(root)
	must(t, s.Write("pkg/a.py", []byte("a\n")))
	res, err := s.Apply(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strays) != len(stray) {
		t.Errorf("removed %v, want the %d strays %v", res.Strays, len(stray), stray)
	}
	for _, n := range stray {
		if _, err := os.Lstat(filepath.Join(root, "pkg", n)); err == nil {
			t.Errorf("stray %s still there", n)
		}
	}
	for _, n := range kept {
		if _, err := os.Lstat(filepath.Join(root, "pkg", n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
}

// deadPid is a process id that no process has now: a child that exited.
func deadPid(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("cannot start /bin/true:", err)
	}
	st, _ := p.Wait()
	return st.Pid()
}

func TestConcurrentRunRefused(t *testing.T) {
	root := t.TempDir()
	unlock, err := lockDir(root)
	must(t, err)
	defer unlock()
	s := Set{Root: root, Changes: []Change{{Path: "f.py", After: []byte("f")}}}
	if _, err := s.Apply(Options{}); err == nil || !strings.Contains(err.Error(), "another mlagen run is writing") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "f.py")); err == nil {
		t.Error("written while another run held the lock")
	}
}

func TestExplicitMode(t *testing.T) {
	root := t.TempDir()
	s := Set{Root: root, Changes: []Change{{Path: "run.sh", After: []byte("#!/bin/sh\n"), Mode: 0o750}}}
	if _, err := s.Apply(Options{}); err != nil {
		t.Fatal(err)
	}
	if e := snapshot(t, root)["run.sh"]; e.Mode != 0o750 {
		t.Errorf("mode %v, want 0750", e.Mode)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Recovery is itself interruptible: killed at any of its steps, the next
// Recover still puts the tree back whole.
func TestCrashDuringRecovery(t *testing.T) {
	crash := func(n int) func(Step) error {
		return func(s Step) error {
			if s.N == n {
				return ErrCrash
			}
			return nil
		}
	}
	// Killed just before the last rename: every file but one is new.
	killAt := countSteps(t, Options{Journal: true}) - 10
	for m := 1; ; m++ {
		root, plan, _ := fixture(t)
		before := snapshot(t, root)
		if _, err := plan().Apply(Options{Journal: true, Hook: crash(killAt)}); !errors.Is(err, ErrCrash) {
			t.Fatal(err)
		}
		_, err := Recover(root, Options{Hook: crash(m)})
		if err == nil {
			if m < 3 {
				t.Fatalf("recovery took only %d steps", m)
			}
			return // m is past the last step of recovery
		}
		if !errors.Is(err, ErrCrash) {
			t.Fatalf("recovery step %d: %v", m, err)
		}
		if _, err := Recover(root, Options{}); err != nil {
			t.Fatalf("recovery killed at step %d, then: %v", m, err)
		}
		if d := cmp.Diff(before, snapshot(t, root)); d != "" {
			t.Errorf("recovery killed at step %d, then recovered (-before +after):\n%s", m, d)
		}
	}
}

func TestDiff(t *testing.T) {
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	changed := strings.Replace(strings.Replace(old, "3\n", "three\n", 1), "18\n", "", 1)
	s := Set{Changes: []Change{
		{Path: "m.py", Before: []byte(old), After: []byte(changed)},
		{Path: "new.py", After: []byte("a\nb")},
		{Path: "gone.py", Before: []byte("x\n")},
		{Path: "__pycache__/m.cpython-312.pyc", Before: []byte("\xcb\r\r\n\x00\x00\x00\x00")},
		{Path: "same.py", Before: []byte("s\n"), After: []byte("t\n")},
		{Path: "same.py", Before: []byte("t\n"), After: []byte("s\n")},
	}}
	want := `--- a/m.py
+++ b/m.py
@@ -1,6 +1,6 @@
 1
 2
-3
+three
 4
 5
 6
@@ -15,6 +15,5 @@
 15
 16
 17
-18
 19
 20
--- /dev/null
+++ b/new.py
@@ -0,0 +1,2 @@
+a
+b
\ No newline at end of file
--- a/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-x
Binary files a/__pycache__/m.cpython-312.pyc and /dev/null differ
`
	if d := cmp.Diff(want, s.Diff()); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}
	// Two changes closer than twice the context share one hunk.
	near := strings.Replace(strings.Replace(old, "3\n", "three\n", 1), "10\n", "ten\n", 1)
	if got := (Change{Path: "n.py", Before: []byte(old), After: []byte(near)}).Diff(); strings.Count(got, "@@ -") != 1 {
		t.Errorf("changes 6 lines apart in %d hunks:\n%s", strings.Count(got, "@@ -"), got)
	}
}

// Clean removes the strays of the directories it is given, and only those
// (a live run's temporary file stays); a directory outside the root is
// refused.
func TestClean(t *testing.T) {
	root := t.TempDir()
	dead := deadPid(t)
	writeTree(t, root, map[string]string{
		fmt.Sprintf(".journal.mlagen-%d-1", dead):  "partial",
		fmt.Sprintf("pkg/.a.py.mlagen-%d-2", dead): "partial",
		".x.py.mlagen-98765":                       "partial",
		"other/.b.py.mlagen-98765":                 "partial, not in a listed directory",
		"pkg/.a.py.mlagen-1-2":                     "pid 1 is alive",
	})
	res, err := Clean(root, []string{".", "pkg"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strays) != 3 {
		t.Errorf("removed %v, want the 3 strays of the root and pkg", res.Strays)
	}
	for _, p := range []string{"other/.b.py.mlagen-98765", "pkg/.a.py.mlagen-1-2"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if _, err := Clean(root, []string{"../elsewhere"}, Options{}); err == nil {
		t.Error("Clean accepted a directory outside the root")
	}
}

// The journal is streamed out, not marshalled whole; what it writes must
// read back as exactly the journal (files that exist, with and without
// content, files that do not, the directories to remove).
func TestJournalStreamsAsJSON(t *testing.T) {
	j := journal{Version: 1, Pid: 42, Files: []journalEntry{
		{Path: "a/x.py", Exists: true, Before: []byte("def f():\n    return 'é'\n\x00\xff"), Mode: 0o755, UID: 1000, GID: 100},
		{Path: "a/empty.py", Exists: true, Before: []byte{}, Mode: 0o644},
		{Path: "a/new.py", Mode: 0o644, UID: -1, GID: -1},
	}, Dirs: []string{"a", "a/b"}}
	var b strings.Builder
	if err := j.writeTo(&b); err != nil {
		t.Fatal(err)
	}
	var back journal
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatalf("the journal is not JSON: %v\n%s", err, b.String())
	}
	// An empty file's old content reads back as nil: restore writes it empty.
	j.Files[1].Before = nil
	if diff := cmp.Diff(j, back); diff != "" {
		t.Errorf("journal read back differs (-written +read):\n%s", diff)
	}
}

// A caller who is not root and not the file's owner could replace it
// through a folder it may write, but the new file would be the caller's:
// refused, nothing written. (Run as another user through euid: the file
// belongs to whoever runs the test.)
func TestOtherUsersFileIsNotReplaced(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "a.py")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(root)
	if err := s.Write("a.py", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Apply(Options{euid: os.Geteuid() + 4242})
	if err == nil || !strings.Contains(err.Error(), "a.py belongs to user") {
		t.Fatalf("Apply = %v; want the owner refusal", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Errorf("a.py = %q after a refused run", got)
	}
	// Its owner replaces it.
	if _, err := s.Apply(Options{}); err != nil {
		t.Fatalf("as the owner: %v", err)
	}
}

// Removing another user's file changes no owner: allowed.
func TestOtherUsersFileMayBeRemoved(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.py"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(root)
	if err := s.Remove("a.py"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(Options{euid: os.Geteuid() + 4242}); err != nil {
		t.Fatalf("Apply = %v; want the removal made", err)
	}
	if _, err := os.Stat(filepath.Join(root, "a.py")); !os.IsNotExist(err) {
		t.Errorf("a.py still there: %v", err)
	}
}
