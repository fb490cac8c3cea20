package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlagen/mlagen/changeset"
)

// Two sweeps whose emissions differ in every way a write can: files
// created, replaced and removed (the per-variant modules), and the manifest.
// Triton variants only (--pp-split-k none): the pipelined family's 24
// modules would add nothing but steps, each one re-run by the fault tests.
var (
	sweepOld = []string{"emit", "--target", "sm_120", "--block-h", "16", "--block-t", "16", "--split-k", "1", "--num-warps", "8", "--num-stages", "1", "--pp-split-k", "none", "--per-variant"}
	sweepNew = []string{"emit", "--target", "sm_120", "--block-h", "16", "--block-t", "16,32", "--split-k", "4", "--num-warps", "8", "--num-stages", "1", "--pp-split-k", "none", "--per-variant"}
)

func emitInto(t *testing.T, dir string, hook func(changeset.Step) error, args []string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, write: changeset.Options{Hook: hook}}
	code := mainEnv(e, append(append([]string{}, args...), "--kernels", dir))
	return code, errb.String()
}

// snapshot is every file under dir, by name, with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir+"/")] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A write that fails at any of its steps leaves the folder exactly as it
// was, and says so; a run killed at any step leaves only files that the
// next run, which also removes the killed run's temporary files, turns
// into the full new emission.
func TestEmitWriteFaults(t *testing.T) {
	want := t.TempDir()
	if code, stderr := emitInto(t, want, nil, sweepNew); code != exitOK {
		t.Fatalf("emit: exit %d: %s", code, stderr)
	}
	wantFiles := snapshot(t, want)
	steps := 0
	base := t.TempDir()
	emitInto(t, base, nil, sweepOld)
	before := snapshot(t, base)
	ops := map[changeset.Op]bool{}
	count := func(s changeset.Step) error { steps++; ops[s.Op] = true; return nil }
	if code, stderr := emitInto(t, base, count, sweepNew); code != exitOK {
		t.Fatalf("emit: exit %d: %s", code, stderr)
	}
	for _, op := range []changeset.Op{changeset.OpCreateTemp, changeset.OpWrite, changeset.OpChmod, changeset.OpSync, changeset.OpRename, changeset.OpRemove, changeset.OpSyncDir} {
		if !ops[op] {
			t.Errorf("the write from one sweep to the other has no %s step: the sweeps should differ in every way a write can", op)
		}
	}
	if steps < 10 {
		t.Fatalf("only %d steps: the two sweeps should differ in many files", steps)
	}
	t.Logf("%d steps", steps)
	for n := 1; n <= steps; n++ {
		dir := t.TempDir()
		emitInto(t, dir, nil, sweepOld)
		failAt := func(s changeset.Step) error {
			if s.N == n {
				return errors.New("injected failure")
			}
			return nil
		}
		code, stderr := emitInto(t, dir, failAt, sweepNew)
		if code != exitFail || !strings.Contains(stderr, "injected failure") || !(strings.Contains(stderr, "nothing was changed") || strings.Contains(stderr, "is as it was")) {
			t.Errorf("failure at step %d: exit %d, stderr %q; want exit 1 saying nothing was changed", n, code, stderr)
		}
		if d := cmp.Diff(before, snapshot(t, dir)); d != "" {
			t.Errorf("failure at step %d changed the folder (-before +after):\n%s", n, d)
		}

		dir = t.TempDir()
		emitInto(t, dir, nil, sweepOld)
		crashAt := func(s changeset.Step) error {
			if s.N == n {
				return changeset.ErrCrash
			}
			return nil
		}
		emitInto(t, dir, crashAt, sweepNew)
		if code, stderr := emitInto(t, dir, nil, sweepNew); code != exitOK {
			t.Errorf("the run after a crash at step %d: exit %d: %s", n, code, stderr)
		}
		if d := cmp.Diff(wantFiles, snapshot(t, dir)); d != "" {
			t.Errorf("after a crash at step %d and a new run, the folder is not the emission (-want +got):\n%s", n, d)
		}
	}
}
