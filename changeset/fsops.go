package changeset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"
)

// tempName is the temporary file beside base: .<base>.mlagen-<pid>-<n>, so
// that the next run can tell it apart from the user's files and, by the
// pid, from a live run's. Long names are cut so the result stays a legal
// file name.
func tempName(base string, pid, n int) string {
	if len(base) > 200 {
		base = base[:200]
	}
	return fmt.Sprintf(".%s.mlagen-%d-%d", base, pid, n)
}

// strayName matches the temporary files mlagen writers leave when killed:
// this package's (.<name>.mlagen-<pid>-<n>) and, for .py and .md files
// only, those of the writers it replaced (.<name>.mlagen-<digits> from
// patch, .<name>.tmp<digits> from emit).
var (
	strayName  = regexp.MustCompile(`^\..+\.mlagen-([0-9]+)-[0-9]+$`)
	legacyName = regexp.MustCompile(`^\..+\.(py|md)\.(mlagen-|tmp)[0-9]+$`)
)

// isStray reports whether name is a temporary file no live run is writing.
// A pid of a live process other than this one is left alone: that run may
// be writing it now (two runs under one root never overlap: Apply locks
// the root).
func isStray(name string) bool {
	if m := strayName.FindStringSubmatch(name); m != nil {
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			return true
		}
		return errors.Is(unix.Kill(pid, 0), unix.ESRCH)
	}
	return legacyName.MatchString(name)
}

// strayDirs are the directories to clean before writing paths: the root
// and the directory of every path.
func (a *applier) strayDirs(paths []string) []string {
	dirs := map[string]bool{a.root: true}
	for _, p := range paths {
		if clean, err := cleanPath(p); err == nil {
			dirs[filepath.Dir(a.full(clean))] = true
		}
	}
	var list []string
	for d := range dirs {
		list = append(list, d)
	}
	sort.Strings(list)
	return list
}

// removeStrays deletes the stray temporary files in the directories list.
func (a *applier) removeStrays(list []string) error {
	for _, d := range list {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("look for temporary files of an earlier run in %s: %w", d, err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !isStray(e.Name()) {
				continue
			}
			full := filepath.Join(d, e.Name())
			if err := a.step(OpRemoveStray, full, false, func() error { return os.Remove(full) }); err != nil {
				return fmt.Errorf("remove the temporary file an earlier run left: %w", err)
			}
			a.res.Strays = append(a.res.Strays, a.rel(full))
			a.dirs[d] = true
		}
	}
	return nil
}

// mkdir creates d, owned by uid:gid when running as root, and remembers it
// for undo.
func (a *applier) mkdir(d string, uid, gid int) error {
	err := a.step(OpMkdir, d, false, func() error {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		a.created = append(a.created, d)
		a.made[d] = true
		if os.Geteuid() == 0 && uid >= 0 {
			return os.Lchown(d, uid, gid)
		}
		return nil
	})
	if err == nil {
		a.dirs[filepath.Dir(d)] = true
		a.dirs[d] = true
	}
	return err
}

// writeFile puts data at full through a temporary file in the same
// directory: created exclusively, written, given its owner and mode,
// fsynced, then renamed over full. A failure removes the temporary file
// (unless the process is taken to have died).
func (a *applier) writeFile(full string, data []byte, mode fs.FileMode, uid, gid int, undo bool) error {
	return a.writeFileWith(full, func(w io.Writer) error { _, err := w.Write(data); return err }, mode, uid, gid, undo)
}

// writeFileWith is writeFile for content that fill writes (streamed, never
// held whole in memory: the journal of a large file).
func (a *applier) writeFileWith(full string, fill func(io.Writer) error, mode fs.FileMode, uid, gid int, undo bool) error {
	dir, base := filepath.Split(full)
	var f *os.File
	var tmp string
	err := a.step(OpCreateTemp, full, undo, func() error {
		var err error
		f, tmp, err = a.createTemp(dir, base)
		return err
	})
	if err != nil {
		return err
	}
	steps := []struct {
		op Op
		fn func() error
	}{
		{OpWrite, func() error { return fill(f) }},
		{OpChown, func() error {
			if os.Geteuid() != 0 || uid < 0 {
				return nil
			}
			return f.Chown(uid, gid)
		}},
		// After chown, which clears the setuid and setgid bits.
		{OpChmod, func() error { return f.Chmod(mode) }},
		{OpSync, f.Sync},
	}
	for _, s := range steps {
		if err = a.step(s.op, full, undo, s.fn); err != nil {
			break
		}
	}
	cerr := f.Close()
	if err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", a.rel(tmp), cerr)
	}
	if err == nil {
		err = a.step(OpRename, full, undo, func() error { return os.Rename(tmp, full) })
	}
	if err != nil && !a.crashed {
		os.Remove(tmp)
	}
	return err
}

// createTemp opens a new temporary file for base in dir, never reusing a
// name: O_EXCL, and the counter moves on past names that exist.
func (a *applier) createTemp(dir, base string) (*os.File, string, error) {
	for range 1000 {
		a.seq++
		name := filepath.Join(dir, tempName(base, os.Getpid(), a.seq))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("no free temporary file name for %s in %s", base, dir)
}

// syncDirs flushes every directory whose entries changed, so that the
// renames survive a power cut.
func (a *applier) syncDirs(undo bool) error {
	var list []string
	for d := range a.dirs {
		list = append(list, d)
	}
	sort.Strings(list)
	for _, d := range list {
		if err := a.syncDir(d, undo); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) syncDir(d string, undo bool) error {
	return a.step(OpSyncDir, d, undo, func() error {
		f, err := os.Open(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}

// lockDir takes an exclusive lock on dir for the length of a run, so that
// two runs under one root never interleave their writes.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another mlagen run is writing under %s; wait for it to finish and run again", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
