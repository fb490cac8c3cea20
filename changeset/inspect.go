package changeset

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Read returns what the file rel under root holds, as a planner must see
// it: exists is false when there is no file (and no error). It refuses a
// path through or to a symlink, a path whose directory is a file, and
// anything but a regular file, naming it.
func Read(root, rel string) (data []byte, exists bool, err error) {
	absRoot, err := resolveRoot(root)
	if err != nil {
		return nil, false, err
	}
	clean, err := cleanPath(rel)
	if err != nil {
		return nil, false, err
	}
	st, err := inspect(absRoot, clean)
	if err != nil || !st.exists {
		return nil, false, err
	}
	return st.data, true, nil
}

// state is a path as Apply found it.
type state struct {
	exists   bool
	data     []byte
	mode     fs.FileMode // permission bits of the file, or 0o644 for a new one
	uid, gid int         // of the file, or of its nearest existing directory
	// missing are the directories to create before the file, outermost first.
	missing []string
}

// inspect walks rel one component at a time with Lstat, so that no symlink
// is ever followed, and reads the file through O_NOFOLLOW.
func inspect(root, rel string) (state, error) {
	st := state{mode: 0o644}
	info, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		owner, oerr := nearestDirOwner(root)
		if oerr != nil {
			return st, oerr
		}
		st.uid, st.gid = owner.uid, owner.gid
		st.missing = missingDirs(root, rel)
		return st, nil
	case err != nil:
		return st, fmt.Errorf("%s: %w", root, err)
	}
	st.uid, st.gid = ownerOf(info)
	parts := strings.Split(rel, "/")
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			st.missing = fixMissing(root, parts, i)
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", rel, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return st, fmt.Errorf("%s: %s is a symlink; mlagen never writes through or over a symlink (replace it with the real file or directory, or leave it out)", rel, cur)
		}
		if i < len(parts)-1 {
			if !info.IsDir() {
				return st, fmt.Errorf("%s: %s is not a directory", rel, cur)
			}
			st.uid, st.gid = ownerOf(info)
			continue
		}
		if !info.Mode().IsRegular() {
			return st, fmt.Errorf("%s: not a regular file (%s); refusing to replace it", rel, info.Mode().Type())
		}
		data, err := readNoFollow(cur)
		if err != nil {
			return st, fmt.Errorf("%s: %w", rel, err)
		}
		st.exists, st.data, st.mode = true, data, info.Mode().Perm()|info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		st.uid, st.gid = ownerOf(info)
	}
	return st, nil
}

// fixMissing lists the directories of rel from its i-th component on that
// must be created (the file itself, the last component, is not one).
func fixMissing(root string, parts []string, i int) []string {
	var out []string
	for j := i; j < len(parts)-1; j++ {
		out = append(out, filepath.Join(append([]string{root}, parts[:j+1]...)...))
	}
	return out
}

// missingDirs lists, when the root does not exist yet, the root's missing
// ancestors, the root and every directory of rel.
func missingDirs(root, rel string) []string {
	var up []string
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		up = append([]string{d}, up...)
	}
	parts := strings.Split(rel, "/")
	return append(up, fixMissing(root, parts, 0)...)
}

type owner struct{ uid, gid int }

// nearestDirOwner is the owner of the closest existing ancestor of p, which
// a directory created inside it inherits when mlagen runs as root.
func nearestDirOwner(p string) (owner, error) {
	for d := p; ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err == nil {
			if !info.IsDir() {
				return owner{}, fmt.Errorf("%s is not a directory", d)
			}
			uid, gid := ownerOf(info)
			return owner{uid, gid}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return owner{}, fmt.Errorf("%s: %w", d, err)
		}
	}
}

func ownerOf(info fs.FileInfo) (uid, gid int) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

func readNoFollow(full string) ([]byte, error) {
	f, err := os.OpenFile(full, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (plus one byte, to see the end):
	// io.ReadAll's doubling would hold about twice a large file.
	size := 0
	if info, err := f.Stat(); err == nil && info.Size() < 1<<40 {
		size = int(info.Size())
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	_, err = buf.ReadFrom(f)
	return nonNil(buf.Bytes()), err
}

// resolveRoot makes root absolute and resolves the symlinks of the part
// that exists (a root given through a symlink is the tree it points to);
// the part that does not exist yet is created by Apply.
func resolveRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("changeset: no root directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	var rest []string
	for d := abs; ; d = filepath.Dir(d) {
		real, err := filepath.EvalSymlinks(d)
		if err == nil {
			full := filepath.Join(append([]string{real}, rest...)...)
			if info, err := os.Stat(real); err == nil && !info.IsDir() {
				return "", fmt.Errorf("root %s: %s is not a directory", root, d)
			}
			return full, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return "", fmt.Errorf("root %s: %w", root, err)
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}
