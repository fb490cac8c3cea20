package patches

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/changeset"
)

// Job is one `mlagen patch` run on a directory.
type Job struct {
	Root string
	Options
	// Revert takes mlagen's changes out instead of putting them in.
	Revert bool
	// DryRun plans and proves but writes nothing; the outcome carries the
	// diff.
	DryRun bool
	// Hook, when set, runs before every disk operation of the run's
	// writes (changeset.Options.Hook): tests interrupt a run with it at
	// each of its steps in turn.
	Hook func(changeset.Step) error
}

// Outcome is what a Job did: the report (proven from disk after writing,
// from the plan in a dry run) and, for a dry run, the unified diff.
type Outcome struct {
	Report *Report
	Diff   string
}

// Run is the patch workflow: finish what an interrupted run left (its
// journal says what to put back, and its temporary files go), read the
// checkout, plan (Patch or Revert), and unless it is a dry run write the
// changes all or nothing, in the order that keeps every prefix of them a
// working tree, then prove the result again from what is on disk, not from
// the plan. A Problem is the user's to fix (nothing was written); any other
// error is an I/O failure, after which the writer has restored the files it
// had written (or, killed, left a journal the next run undoes).
func Run(job Job) (*Outcome, error) {
	root, err := realRoot(job.Root)
	if err != nil {
		return nil, err
	}
	if err := checkRoot(job.Root, root, job.Recipe); err != nil {
		return nil, err
	}
	job.Root = root
	var recovered []string
	if job.DryRun {
		if err := noPending(root, job.Recipe); err != nil {
			return nil, err
		}
	} else if recovered, err = recoverRun(root, job.Recipe, job.Hook); err != nil {
		return nil, notWritable(err)
	}
	co, err := ScanCheckout(root, job.Recipe)
	if err != nil {
		return nil, unreadable(err)
	}
	if !job.DryRun {
		strays, err := removeStrays(co, job.Hook)
		if err != nil {
			return nil, notWritable(err)
		}
		recovered = append(recovered, strays...)
	}
	var res *Result
	if job.Revert {
		res, err = Revert(co, job.Options)
	} else {
		res, err = Patch(co, job.Options)
	}
	if err != nil {
		return nil, err
	}
	base, changes := rebase(co.Tree.Root, res.Changes)
	set := changeset.Set{Root: base, Changes: changes}
	if job.DryRun {
		// Shown by path, as diffs are read; written in the order above.
		byPath := append([]Change(nil), changes...)
		sort.SliceStable(byPath, func(i, j int) bool { return byPath[i].Path < byPath[j].Path })
		return &Outcome{Report: res.Report, Diff: changeset.Set{Root: base, Changes: byPath}.Diff()}, nil
	}
	// A patch whose planned tree fails its own proof is refused like any
	// other problem: writing it would leave a tree that exits 1 on verify
	// and routes some calls past the kernel. A revert writes what it can:
	// taking mlagen's code out is what the user asked, and its check after
	// writing says what is left.
	if !job.Revert && !res.Report.OK() {
		written, lines := "nothing was written", res.Report.failures()
		if len(recovered) > 0 {
			// An interrupted run's leftovers were cleared first: say so,
			// not that the tree is untouched.
			written = "nothing more was written"
			for _, r := range recovered {
				lines = append(lines, "recovered first: "+r)
			}
		}
		return nil, &Problem{Msg: "the tree after patching would fail the proof, so " + written + " (--dry-run shows the plan and its whole proof):", Lines: lines}
	}
	applied, err := set.Apply(changeset.Options{Journal: true, Hook: job.Hook})
	if err != nil {
		return nil, notWritable(err)
	}
	recovered = append(recovered, cleanedUp(applied)...)
	// The planned bytes are on disk now; the proof reads them from there
	// (a large file is not held twice while it does).
	res.Changes = nil
	out, err := proveWritten(job, res.Report)
	if out != nil {
		out.Report.Recovered = append(recovered, out.Report.Recovered...)
	}
	return out, err
}

// proveWritten proves the tree as it is on disk after the run's writes: a
// patch by the proof, a revert by a second revert that finds nothing.
func proveWritten(job Job, rep *Report) (*Outcome, error) {
	after, err := ScanCheckout(job.Root, job.Recipe)
	if err != nil {
		return nil, err
	}
	if job.Revert {
		again, err := Revert(after, job.Options)
		if err != nil {
			return nil, err
		}
		if !again.Report.NothingToDo {
			rep.Problems = append(rep.Problems, "mlagen changes are still present after reverting")
		}
		return &Outcome{Report: rep}, nil
	}
	proof, err := Verify(after, Options{Recipe: job.Recipe, Module: rep.Module, Emitted: job.Emitted, AllowUnreached: job.AllowUnreached, AcceptUnjudged: job.AcceptUnjudged})
	if err != nil {
		return nil, fmt.Errorf("proof from disk after writing: %w", err)
	}
	proof.Command, proof.Changes, proof.NothingToDo = "patch", rep.Changes, rep.NothingToDo
	return &Outcome{Report: proof}, nil
}

// Check is `mlagen verify` (and `patch --check`, whose caller names its
// command in Report.Command): the proof alone, on the checkout under root
// as it is. A tree an interrupted run left half written
// is not proven: the proof says to run patch or --revert first.
func Check(root string, opt Options) (*Report, error) {
	real, err := realRoot(root)
	if err != nil {
		return nil, err
	}
	if err := checkRoot(root, real, opt.Recipe); err != nil {
		return nil, err
	}
	co, err := ScanCheckout(real, opt.Recipe)
	if err != nil {
		return nil, unreadable(err)
	}
	dirs, err := pendingRoots(real, opt.Recipe)
	if err != nil {
		return nil, err
	}
	opt.halfWritten = len(dirs) > 0
	rep, err := Verify(co, opt)
	if err != nil {
		return nil, err
	}
	rep.proofOnly = true
	if len(dirs) > 0 {
		rep.Problems = append([]string{pendingMsg(dirs)}, rep.Problems...)
	}
	return rep, nil
}

// unreadable turns a scan that was refused a file or folder into the
// input error it is (exit 2): the proof needs every file, so the run
// cannot go on without it; it names the path and the way round.
func unreadable(err error) error {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &pe) {
		return err
	}
	return &RootError{Msg: fmt.Sprintf("cannot read %s (permission denied), and mlagen reads every Python file of the tree to prove the wiring: run it as a user who can (the tree's owner, or with sudo), or make the file readable", pe.Path)}
}

// notWritable adds, to a write refused for permission, the folder that is
// not writable and what to do: the error alone names a temporary file.
func notWritable(err error) error {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrPermission) || !errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%w\n  the folder %s is not writable by this user: run mlagen patch as the tree's owner (for an installed SGLang, with sudo if root installed it), or patch a copy of the tree", err, filepath.Dir(pe.Path))
}

// realRoot is root with its symlinks resolved: a root given through a
// symlink is the tree it points to.
func realRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", root, err)
	}
	return abs, nil
}

// journalRoots are the directories a run may have written under: the root,
// and the directory above it when it holds the installed distribution's
// metadata (a run that changes RECORD writes from there).
func journalRoots(root string, rec *Recipe) []string {
	dirs := []string{root}
	up := filepath.Dir(root)
	if m, _ := filepath.Glob(filepath.Join(up, rec.DistInfo)); len(m) > 0 && up != root {
		dirs = append(dirs, up)
	}
	return dirs
}

func pendingRoots(root string, rec *Recipe) ([]string, error) {
	var out []string
	for _, d := range journalRoots(root, rec) {
		ok, err := changeset.Pending(d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

func pendingMsg(dirs []string) string {
	var stale *changeset.StaleJournalError
	if errors.As(changeset.CheckJournal(dirs[0]), &stale) {
		// Something else (pip) replaced files since: patch would refuse
		// to undo the run, so do not send the user there.
		return "an interrupted mlagen run left its journal, which no longer describes the tree: " + stale.Error()
	}
	return fmt.Sprintf("an interrupted mlagen run left its journal (%s): the tree is half written; run mlagen patch (or mlagen patch --revert), which first puts back what that run changed",
		filepath.Join(dirs[0], changeset.JournalName))
}

// noPending refuses a dry run over a half-written tree: its plan would be
// made from files the real run puts back first.
func noPending(root string, rec *Recipe) error {
	dirs, err := pendingRoots(root, rec)
	if err != nil || len(dirs) == 0 {
		return err
	}
	return &Problem{Msg: pendingMsg(dirs) + " (nothing was written)"}
}

// recoverRun undoes the run a journal records (in the root or the
// directory above it) and removes the temporary files interrupted runs
// left anywhere in the tree; it says what it did.
func recoverRun(root string, rec *Recipe, hook func(changeset.Step) error) ([]string, error) {
	var out []string
	opt := changeset.Options{Hook: hook}
	for _, d := range journalRoots(root, rec) {
		res, err := changeset.Recover(d, opt)
		if err != nil {
			return nil, fmt.Errorf("finish the interrupted mlagen run under %s: %w", d, err)
		}
		if res.Recovered {
			out = append(out, fmt.Sprintf("undid an interrupted mlagen run (its journal, %s): the files it had changed are as they were before it", filepath.Join(d, changeset.JournalName)))
		}
		out = append(out, cleanedUp(res)...)
	}
	return out, nil
}

// removeStrays deletes the temporary files interrupted runs left beside the
// tree's files (the scan lists hidden files; changeset tells which are
// strays), so that even a run with nothing to write leaves none behind.
func removeStrays(co *Checkout, hook func(changeset.Step) error) ([]string, error) {
	seen := map[string]bool{}
	var dirs []string
	for _, h := range co.Tree.Hidden {
		base := path.Base(h)
		if !strings.Contains(base, ".mlagen-") && !strings.Contains(base, ".py.tmp") {
			continue
		}
		if d := path.Dir(h); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	res, err := changeset.Clean(co.Tree.Root, dirs, changeset.Options{Hook: hook})
	if err != nil {
		return nil, fmt.Errorf("remove the temporary files of an interrupted run: %w", err)
	}
	return cleanedUp(res), nil
}

func cleanedUp(res changeset.Result) []string {
	var out []string
	for _, s := range res.Strays {
		out = append(out, "removed "+s+", a temporary file an interrupted run left")
	}
	return out
}
