package changeset

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// JournalName is the file, in the root, that records a run made with
// Options.Journal while it is under way.
const JournalName = ".mlagen-journal"

// journal is what a run records before its first change: every path's
// content and mode before the run, and the directories it will create, so
// that a later run can put the tree back as it was.
type journal struct {
	Version int            `json:"version"`
	Pid     int            `json:"pid"`
	Files   []journalEntry `json:"files"`
	Dirs    []string       `json:"dirs,omitempty"` // relative to the root, outermost first
}

type journalEntry struct {
	Path   string      `json:"path"`
	Exists bool        `json:"exists"`
	Before []byte      `json:"before,omitempty"`
	Mode   fs.FileMode `json:"mode"`
	UID    int         `json:"uid"`
	GID    int         `json:"gid"`
	// After are the SHA-256 (hex) of each content the run writes at the
	// path, deleted for a deletion: with Before, every state a killed run
	// can leave the file in. A file in none of them was changed by
	// something else since (a package manager that reinstalled it), and
	// the journal no longer describes it. Journals of earlier mlagen
	// releases have none, and are undone unchecked.
	After []string `json:"after,omitempty"`
}

// deleted stands in journalEntry.After for a change that deletes the file.
const deleted = "deleted"

// afterHash is the journal's name for the content c writes.
func afterHash(c Change) string {
	if c.After == nil {
		return deleted
	}
	return contentHash(c.After)
}

// contentHash is the SHA-256 (hex) of a file's content, as After lists it.
func contentHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// leftBy says whether st is a state the run e records can have left its
// file in: as before the run, or holding one of the contents it writes.
func (e journalEntry) leftBy(st state) bool {
	switch {
	case len(e.After) == 0:
		return true // an earlier release's journal: nothing to check by
	case !st.exists:
		return !e.Exists || slices.Contains(e.After, deleted)
	case e.Exists && string(st.data) == string(e.Before):
		return true
	}
	return slices.Contains(e.After, contentHash(st.data))
}

// StaleJournalError is Recover's (and Apply's) refusal of a journal that no
// longer describes the tree: files it names hold neither what they held
// before the killed run nor what that run wrote, so something else (pip
// reinstalling, upgrading or removing a package) changed them since.
// Nothing was written; the journal stays for the user to look at and
// delete.
type StaleJournalError struct {
	Journal string   // the journal's path
	Changed []string // the files changed since, relative to the root
}

func (e *StaleJournalError) Error() string {
	files := strings.Join(e.Changed[:min(3, len(e.Changed))], ", ")
	if len(e.Changed) > 3 {
		files += fmt.Sprintf(" and %d more", len(e.Changed)-3)
	}
	return fmt.Sprintf("%s records an interrupted run, but %s changed since: they hold neither what they held before that run nor what it wrote (was the package reinstalled, upgraded or removed?), so undoing the run would write its old files over the new ones. Nothing was changed. If the tree is as it should be, delete %s and run again", e.Journal, files, e.Journal)
}

// Pending reports whether a killed run left a journal under root, which the
// next Apply or Recover will undo.
func Pending(root string) (bool, error) {
	abs, err := resolveRoot(root)
	if err != nil {
		return false, err
	}
	_, err = os.Lstat(filepath.Join(abs, JournalName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Recover undoes the run a journal under root records, if any: every file
// it names gets its content and mode from before that run, the directories
// it created are removed when empty, and its temporary files are deleted.
// It is safe to call any number of times; call it before planning, so that
// the plan reads a whole tree.
func Recover(root string, opt Options) (Result, error) {
	abs, err := resolveRoot(root)
	if err != nil {
		return Result{}, err
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return Result{}, nil
	}
	unlock, err := lockDir(abs)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	a := &applier{root: abs, opt: opt, modes: map[string]fs.FileMode{}, made: map[string]bool{}, dirs: map[string]bool{}}
	if err := a.recoverFirst(); err != nil {
		return a.res, err
	}
	// A run killed while writing its journal left only that temporary file.
	if err := a.removeStrays([]string{abs}); err != nil {
		return a.res, err
	}
	return a.res, nil
}

// readJournal reads the journal under root (an absolute root); ok is false
// where there is none.
func readJournal(root string) (j journal, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(root, JournalName))
	if errors.Is(err, fs.ErrNotExist) {
		return j, false, nil
	}
	if err != nil {
		return j, false, fmt.Errorf("read the journal of an interrupted run: %w", err)
	}
	if err := json.Unmarshal(data, &j); err != nil || j.Version != 1 {
		return j, false, &unreadableJournal{filepath.Join(root, JournalName), err}
	}
	return j, true, nil
}

// unreadableJournal is a journal that is not one mlagen wrote, or not
// whole: what it names is for the user to look at.
type unreadableJournal struct {
	path string
	err  error
}

func (e *unreadableJournal) Error() string {
	return fmt.Sprintf("%s: the journal of an interrupted run is unreadable (%v); look at the files it names, then delete it", e.path, e.err)
}

// recoverFirst undoes a killed run's journal before this run starts.
func (a *applier) recoverFirst() error {
	j, ok, err := readJournal(a.root)
	if err != nil || !ok {
		return err
	}
	// Check every file before writing any: undoing a run over files that
	// something else replaced since would write that run's old files over
	// theirs.
	if err := j.stale(a.root); err != nil {
		return err
	}
	for i := len(j.Files) - 1; i >= 0; i-- {
		if err := a.restore(j.Files[i]); err != nil {
			return fmt.Errorf("undo the interrupted run: %w", err)
		}
	}
	var paths []string
	for _, e := range j.Files {
		paths = append(paths, e.Path)
	}
	if err := a.removeStrays(a.strayDirs(paths)); err != nil {
		return fmt.Errorf("undo the interrupted run: %w", err)
	}
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		d := a.full(j.Dirs[i])
		err := a.step(OpRmdir, d, true, func() error { return os.Remove(d) })
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
			return fmt.Errorf("undo the interrupted run: %w", err)
		}
		a.dirs[filepath.Dir(d)] = true
	}
	err = a.syncDirs(true)
	if err == nil {
		err = a.removeJournal(true)
	}
	a.res.Recovered = err == nil
	return err
}

// stale is a *StaleJournalError where a file j names (under root) is in
// no state the run j records can have left it in.
func (j journal) stale(root string) error {
	var changed []string
	for _, e := range j.Files {
		p, err := cleanPath(e.Path)
		if err != nil {
			return err
		}
		st, err := inspect(root, p)
		if err != nil {
			return fmt.Errorf("undo the interrupted run: %w", err)
		}
		if !e.leftBy(st) {
			changed = append(changed, p)
		}
	}
	if len(changed) > 0 {
		return &StaleJournalError{Journal: filepath.Join(root, JournalName), Changed: changed}
	}
	return nil
}

// CheckJournal reads, and changes nothing: a *StaleJournalError where a
// journal under root no longer describes the tree (Recover would refuse
// it), nil where there is none or Recover can undo it.
func CheckJournal(root string) error {
	abs, err := resolveRoot(root)
	if err != nil {
		return err
	}
	j, ok, err := readJournal(abs)
	var unreadable *unreadableJournal
	switch {
	case errors.As(err, &unreadable):
		return nil // Recover names an unreadable journal itself
	case err != nil || !ok:
		return err
	}
	return j.stale(abs)
}

// restore puts one journalled path back as it was before the killed run.
func (a *applier) restore(e journalEntry) error {
	p, err := cleanPath(e.Path)
	if err != nil {
		return err
	}
	st, err := inspect(a.root, p)
	if err != nil {
		return err
	}
	full := a.full(p)
	a.dirs[filepath.Dir(full)] = true
	switch {
	case !e.Exists && !st.exists:
		return nil
	case !e.Exists:
		return a.step(OpRemove, full, true, func() error { return os.Remove(full) })
	case st.exists && string(st.data) == string(e.Before) && st.mode == e.Mode:
		return nil
	}
	return a.writeFile(full, nonNil(e.Before), e.Mode, e.UID, e.GID, true)
}

// writeJournal records the run before its first change.
func (a *applier) writeJournal() error {
	j := journal{Version: 1, Pid: os.Getpid()}
	seen := map[string]bool{}
	dirs := map[string]bool{}
	for i, c := range a.changes {
		p, _ := cleanPath(c.Path)
		st := a.states[i]
		for _, d := range st.missing {
			if r, err := filepath.Rel(a.root, d); err == nil && !dirs[r] && r != "." {
				dirs[r] = true
				j.Dirs = append(j.Dirs, filepath.ToSlash(r))
			}
		}
		if seen[p] {
			for k := range j.Files {
				if j.Files[k].Path == p && !slices.Contains(j.Files[k].After, afterHash(c)) {
					j.Files[k].After = append(j.Files[k].After, afterHash(c))
				}
			}
			continue
		}
		seen[p] = true
		j.Files = append(j.Files, journalEntry{Path: p, Exists: st.exists, Before: st.data, Mode: st.mode, UID: st.uid, GID: st.gid, After: []string{afterHash(c)}})
	}
	sort.SliceStable(j.Dirs, func(x, y int) bool { return len(j.Dirs[x]) < len(j.Dirs[y]) })
	full := filepath.Join(a.root, JournalName)
	o, err := nearestDirOwner(a.root)
	if err != nil {
		return err
	}
	if err := a.writeFileWith(full, j.writeTo, 0o600, o.uid, o.gid, false); err != nil {
		return fmt.Errorf("write the journal: %w", err)
	}
	a.journaled = true
	return a.syncDir(a.root, false)
}

// writeTo writes the journal as JSON (what json.Unmarshal reads back into
// a journal), each file's old bytes base64-encoded as they stream out:
// marshalling it whole would hold a large file's content three times over.
func (j journal) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, `{"version":%d,"pid":%d,"files":[`, j.Version, j.Pid)
	for i, e := range j.Files {
		if i > 0 {
			bw.WriteByte(',')
		}
		head, err := json.Marshal(journalEntry{Path: e.Path, Exists: e.Exists, Mode: e.Mode, UID: e.UID, GID: e.GID, After: e.After})
		if err != nil {
			return err
		}
		bw.Write(head[:len(head)-1]) // open: the old bytes follow
		if len(e.Before) > 0 {
			bw.WriteString(`,"before":"`)
			enc := base64.NewEncoder(base64.StdEncoding, bw)
			enc.Write(e.Before)
			enc.Close()
			bw.WriteByte('"')
		}
		bw.WriteByte('}')
	}
	bw.WriteByte(']')
	if len(j.Dirs) > 0 {
		dirs, err := json.Marshal(j.Dirs)
		if err != nil {
			return err
		}
		bw.WriteString(`,"dirs":`)
		bw.Write(dirs)
	}
	bw.WriteByte('}')
	return bw.Flush()
}

// removeJournal ends a run: once the journal is gone, the run is final.
func (a *applier) removeJournal(undo bool) error {
	full := filepath.Join(a.root, JournalName)
	err := a.step(OpRemove, full, undo, func() error { return os.Remove(full) })
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return a.syncDir(a.root, undo)
}

func isNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// Clean removes the temporary files that killed runs left in dirs
// (relative to root; "." is the root), under the root's lock: mlagen's
// writers' own, recognised by name, never those of a run still alive. A
// caller that found such names while reading a tree calls it so that a run
// with nothing to write still leaves no stray behind.
func Clean(root string, dirs []string, opt Options) (Result, error) {
	abs, err := resolveRoot(root)
	if err != nil {
		return Result{}, err
	}
	unlock, err := lockDir(abs)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	a := &applier{root: abs, opt: opt, modes: map[string]fs.FileMode{}, made: map[string]bool{}, dirs: map[string]bool{}}
	var list []string
	for _, d := range dirs {
		if d == "." || d == "" {
			list = append(list, abs)
			continue
		}
		clean, err := cleanPath(d + "/x")
		if err != nil {
			return Result{}, err
		}
		list = append(list, filepath.Dir(a.full(clean)))
	}
	if err := a.removeStrays(list); err != nil {
		return a.res, err
	}
	return a.res, a.syncDirs(false)
}
