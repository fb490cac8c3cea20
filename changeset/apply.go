package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Op names one step of Apply that touches the disk.
type Op string

const (
	OpMkdir       Op = "mkdir"        // create a missing directory
	OpCreateTemp  Op = "create-temp"  // open a new temporary file beside its target
	OpWrite       Op = "write"        // write the temporary file's content
	OpChown       Op = "chown"        // give it the owner of the file it replaces (as root)
	OpChmod       Op = "chmod"        // give it its mode
	OpSync        Op = "fsync"        // flush it to the disk
	OpRename      Op = "rename"       // rename it over its target
	OpRemove      Op = "remove"       // delete a file
	OpRmdir       Op = "rmdir"        // remove a directory Apply created (undo only)
	OpSyncDir     Op = "fsync-dir"    // flush a directory's entries
	OpRemoveStray Op = "remove-stray" // delete a temporary file an earlier run left
)

// Step is one disk operation, as the Options.Hook sees it.
type Step struct {
	N    int    // 1 for the first step of this Apply, counting undo steps too
	Op   Op     // what the step does
	Path string // the file or directory it touches, absolute
	Undo bool   // the step puts back an earlier change after a failure
}

// ErrCrash, returned by a Hook, makes Apply stop dead at that step as a
// kill -9 would: no undo, no clean-up, the temporary file left behind. Tests
// use it to check that the next run recovers from every point of a run.
var ErrCrash = errors.New("simulated crash")

// Options tune Apply. The zero value is what a command uses.
type Options struct {
	// Hook, when set, runs before every step; an error fails that step as
	// if the system call had failed (ErrCrash: as if the process died).
	// Tests use it to interrupt a run at each of its steps in turn.
	Hook func(Step) error
	// Journal records the changes' old contents in the root before the
	// first one is made and removes the record after the last, so that
	// Recover (which the next Apply calls first) can undo a killed run.
	Journal bool

	// euid stands in for the process's effective user ID when not 0
	// (tests: the owner rule for a caller who is not root).
	euid int
}

// Result says what Apply did; paths are relative to the root.
type Result struct {
	Created, Replaced, Deleted []string
	// Strays are the temporary files of earlier, killed runs it removed.
	Strays []string
	// Recovered is true when it first undid a killed run (Options.Journal).
	Recovered bool
}

// Error is a failed Apply: the step that failed and whether the changes
// already made were put back.
type Error struct {
	Step Step
	Err  error
	// Undone is how many changes were put back.
	Undone int
	// UndoErr is nil when the tree is exactly as it was before Apply.
	UndoErr error
}

func (e *Error) Error() string {
	if e.UndoErr != nil {
		return fmt.Sprintf("%v; putting back the changes already made failed too, so the tree is half written: %v", e.Err, e.UndoErr)
	}
	if errors.Is(e.Err, ErrCrash) {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (nothing was changed: the %d changes already made were put back)", e.Err, e.Undone)
}

func (e *Error) Unwrap() error { return e.Err }

// applier is one run of Apply.
type applier struct {
	root    string
	changes []Change
	opt     Options
	n       int  // steps so far
	crashed bool // a Hook returned ErrCrash: do nothing more
	seq     int  // temporary file counter
	states  []state
	modes   map[string]fs.FileMode // current mode of each path written
	before  []fs.FileMode          // mode of each change's file before it
	created []string               // directories made, in order
	made    map[string]bool
	done    int // changes made
	dirs    map[string]bool
	res     Result
	failed  Step
	// journaled is set once this run's journal is on disk.
	journaled bool
}

// Apply makes every change of s, or none: see the package comment.
func (s Set) Apply(opt Options) (Result, error) {
	if len(s.Changes) == 0 {
		return Result{}, nil
	}
	root, err := resolveRoot(s.Root)
	if err != nil {
		return Result{}, err
	}
	a := &applier{root: root, changes: s.Changes, opt: opt, modes: map[string]fs.FileMode{},
		made: map[string]bool{}, dirs: map[string]bool{}}
	for i := range a.changes {
		if _, err := cleanPath(a.changes[i].Path); err != nil {
			return Result{}, err
		}
	}
	if err := a.ensureRoot(); err != nil {
		return a.res, a.fail(err)
	}
	unlock, err := lockDir(root)
	if err != nil {
		return a.res, a.fail(err)
	}
	defer unlock()
	if err := a.recoverFirst(); err != nil {
		return a.res, a.fail(err)
	}
	if err := a.check(); err != nil {
		return a.res, a.fail(err)
	}
	if err := a.removeStrays(a.strayDirs(Set{Changes: a.changes}.Paths())); err != nil {
		return a.res, a.fail(err)
	}
	if err := a.run(); err != nil {
		return a.res, a.fail(err)
	}
	return a.res, nil
}

// run makes the changes (between the journal's writing and removal when
// asked for) and flushes the directories they touched.
func (a *applier) run() error {
	if a.opt.Journal {
		if err := a.writeJournal(); err != nil {
			return err
		}
	}
	for i := range a.changes {
		if err := a.applyChange(i); err != nil {
			return err
		}
		a.done++
	}
	if err := a.syncDirs(false); err != nil {
		return err
	}
	if a.opt.Journal {
		return a.removeJournal(false)
	}
	return nil
}

// ensureRoot creates the root (and its missing parents) when it does not
// exist yet, owned like the directory above it.
func (a *applier) ensureRoot() error {
	if _, err := os.Lstat(a.root); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	o, err := nearestDirOwner(a.root)
	if err != nil {
		return err
	}
	for _, d := range missingDirs(a.root, "x") {
		if err := a.mkdir(d, o.uid, o.gid); err != nil {
			return err
		}
	}
	return nil
}

// check inspects every path under the lock and refuses when a file no
// longer holds what the plan read (or a creation's file now exists).
func (a *applier) check() error {
	last := map[string]int{}
	a.states = make([]state, len(a.changes))
	for i, c := range a.changes {
		p, _ := cleanPath(c.Path)
		if j, ok := last[p]; ok {
			prev := a.changes[j]
			if (prev.After == nil) != (c.Before == nil) || string(prev.After) != string(c.Before) {
				return fmt.Errorf("%s: change %d does not start from what change %d leaves; plan the set again", c.Path, i+1, j+1)
			}
			a.states[i] = a.states[j]
			last[p] = i
			continue
		}
		last[p] = i
		st, err := inspect(a.root, p)
		if err != nil {
			return err
		}
		switch {
		case c.Before == nil && c.After == nil:
			return fmt.Errorf("%s: a change with neither content before nor after", c.Path)
		case c.Before == nil && st.exists:
			return fmt.Errorf("%s exists now but did not when the change was planned; run again", c.Path)
		case c.Before != nil && !st.exists:
			return fmt.Errorf("%s no longer exists (it did when the change was planned); run again", c.Path)
		case c.Before != nil && string(st.data) != string(c.Before):
			return fmt.Errorf("%s changed since the change was planned; run again", c.Path)
		}
		if err := a.ownerKept(c, st); err != nil {
			return err
		}
		a.states[i] = st
		a.modes[p] = st.mode
	}
	return nil
}

// ownerKept refuses to replace a file of another user: a caller who may
// write the folder may rename over the file, but only root can give the
// new file the old one's owner, so the file would silently become the
// caller's (a root-installed package's file, patched by a user who was
// given the folder). Removing one changes no owner.
func (a *applier) ownerKept(c Change, st state) error {
	euid := a.opt.euid
	if euid == 0 {
		euid = os.Geteuid()
	}
	if !st.exists || c.After == nil || euid == 0 || st.uid == euid {
		return nil
	}
	return fmt.Errorf("%s belongs to user %d, and this run is user %d: replacing it would make it this user's, so nothing was written; run as its owner (or root, which keeps owners)", c.Path, st.uid, euid)
}

// applyChange makes change i: its missing directories, then the file
// written through a temporary file and renamed, or removed.
func (a *applier) applyChange(i int) error {
	c := a.changes[i]
	p, _ := cleanPath(c.Path)
	full := a.full(p)
	st := a.states[i]
	for _, d := range st.missing {
		if !a.made[d] {
			if err := a.mkdir(d, st.uid, st.gid); err != nil {
				return err
			}
		}
	}
	a.before = append(a.before, a.modes[p])
	a.dirs[filepath.Dir(full)] = true
	if c.After == nil {
		if err := a.step(OpRemove, full, false, func() error { return os.Remove(full) }); err != nil {
			return err
		}
		a.res.Deleted = append(a.res.Deleted, p)
		return nil
	}
	mode := c.Mode.Perm() | c.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	if mode == 0 {
		mode = a.modes[p]
	}
	if err := a.writeFile(full, c.After, mode, st.uid, st.gid, false); err != nil {
		return err
	}
	a.modes[p] = mode
	if c.Before == nil {
		a.res.Created = append(a.res.Created, p)
	} else {
		a.res.Replaced = append(a.res.Replaced, p)
	}
	return nil
}

// fail puts back what was done and wraps err with the outcome. After a
// simulated crash it does nothing, as a killed process would.
func (a *applier) fail(err error) error {
	e := &Error{Step: a.failed, Err: err}
	if a.crashed {
		return e
	}
	e.Undone, e.UndoErr = a.undo()
	if a.done == 0 && len(a.created) == 0 && e.UndoErr == nil {
		// Nothing had been written: the refusal needs no epilogue.
		return err
	}
	return e
}

// undo puts back the changes made so far, newest first, then removes the
// directories Apply created and flushes what it touched.
func (a *applier) undo() (int, error) {
	var errs []string
	undone := 0
	for i := a.done - 1; i >= 0; i-- {
		c := a.changes[i]
		p, _ := cleanPath(c.Path)
		full := a.full(p)
		st := a.states[i]
		var err error
		if c.Before == nil {
			err = a.step(OpRemove, full, true, func() error { return os.Remove(full) })
		} else {
			err = a.writeFile(full, c.Before, a.before[i], st.uid, st.gid, true)
		}
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		undone++
	}
	for i := len(a.created) - 1; i >= 0; i-- {
		d := a.created[i]
		if err := a.step(OpRmdir, d, true, func() error { return os.Remove(d) }); err != nil {
			errs = append(errs, err.Error())
		}
		delete(a.dirs, d)
	}
	// Nothing written and no folder made: no directory entry changed, so
	// there is nothing to flush (and a folder that cannot be synced, such
	// as /proc, must not turn a plain refusal into "half written").
	if a.done > 0 || len(a.created) > 0 {
		if err := a.syncDirs(true); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if a.journaled && len(errs) == 0 {
		if err := a.removeJournal(true); err != nil {
			errs = append(errs, err.Error())
		}
	}
	a.res = Result{Strays: a.res.Strays, Recovered: a.res.Recovered}
	if len(errs) > 0 {
		return undone, errors.New(strings.Join(errs, "; "))
	}
	return undone, nil
}

// step runs one disk operation through the Hook.
func (a *applier) step(op Op, p string, undo bool, fn func() error) error {
	if a.crashed {
		return fmt.Errorf("%s %s: %w", op, a.rel(p), ErrCrash)
	}
	a.n++
	s := Step{N: a.n, Op: op, Path: p, Undo: undo}
	if a.opt.Hook != nil {
		if err := a.opt.Hook(s); err != nil {
			if errors.Is(err, ErrCrash) {
				a.crashed = true
			}
			if !undo {
				a.failed = s
			}
			return fmt.Errorf("%s %s: %w", op, a.rel(p), err)
		}
	}
	if err := fn(); err != nil {
		if !undo {
			a.failed = s
		}
		return fmt.Errorf("%s %s: %w", op, a.rel(p), err)
	}
	return nil
}

func (a *applier) full(clean string) string { return filepath.Join(a.root, filepath.FromSlash(clean)) }

// rel names p for messages: relative to the root when inside it.
func (a *applier) rel(p string) string {
	if r, err := filepath.Rel(a.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}
