package patches

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Writer writes a run's changes under a root, all or nothing. Its fields let
// tests inject a failure half way; the zero value of each uses the os
// package.
type Writer struct {
	Root string
	// Rename is os.Rename unless a test replaces it.
	Rename func(oldpath, newpath string) error
}

// Apply writes every change: each file goes to a temporary file in its own
// directory and is renamed over the original, so a reader never sees half a
// file. If any step fails, the files already written are put back as they
// were (created files removed, deleted ones restored) and the error says so.
// Nothing is written outside the root, and never through a symlink.
func (w Writer) Apply(changes []Change) error {
	rename := w.Rename
	if rename == nil {
		rename = os.Rename
	}
	root, err := filepath.Abs(w.Root)
	if err != nil {
		return err
	}
	// Check everything before writing anything.
	for _, c := range changes {
		if err := safePath(root, c.Path); err != nil {
			return err
		}
		full := filepath.Join(root, filepath.FromSlash(c.Path))
		cur, err := os.ReadFile(full)
		switch {
		case c.Before == nil && err == nil:
			return fmt.Errorf("%s: exists now but did not when the tree was read; run again", c.Path)
		case c.Before != nil && err != nil:
			return fmt.Errorf("%s: %w", c.Path, err)
		case c.Before != nil && !bytes.Equal(cur, c.Before):
			return fmt.Errorf("%s changed since the tree was read; run again", c.Path)
		}
	}
	var done []Change
	for _, c := range changes {
		if err := w.write(root, c, rename); err != nil {
			if rerr := w.rollback(root, done); rerr != nil {
				return fmt.Errorf("%w; and restoring the files already written failed: %v", err, rerr)
			}
			return fmt.Errorf("%w (the %d files already written were restored; the tree is as it was)", err, len(done))
		}
		done = append(done, c)
	}
	return nil
}

func (w Writer) write(root string, c Change, rename func(string, string) error) error {
	full := filepath.Join(root, filepath.FromSlash(c.Path))
	if c.After == nil {
		if err := os.Remove(full); err != nil {
			return fmt.Errorf("delete %s: %w", c.Path, err)
		}
		return nil
	}
	return writeAtomic(full, c.After, c.Mode, rename)
}

// rollback undoes done in reverse order; it uses os.Rename directly since
// the failure being recovered from may be the injected rename.
func (w Writer) rollback(root string, done []Change) error {
	var errs []string
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		full := filepath.Join(root, filepath.FromSlash(c.Path))
		var err error
		if c.Before == nil {
			err = os.Remove(full)
		} else {
			err = writeAtomic(full, c.Before, c.Mode, os.Rename)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func writeAtomic(full string, data []byte, mode fs.FileMode, rename func(string, string) error) error {
	if mode == 0 {
		mode = 0o644
	}
	tmp, err := os.CreateTemp(filepath.Dir(full), "."+filepath.Base(full)+".mlagen-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", full, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, mode)
	}
	if werr == nil {
		werr = rename(name, full)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", full, werr)
	}
	return nil
}

// safePath refuses a path that leaves the root or passes through a symlink:
// a checkout's symlink pointing elsewhere must never become a way to write
// there.
func safePath(root, rel string) error {
	if filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(filepath.FromSlash(rel)), "..") {
		return fmt.Errorf("%s: outside the root; refusing to write", rel)
	}
	cur := root
	parts := strings.Split(filepath.Clean(filepath.FromSlash(rel)), string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		if err != nil {
			if os.IsNotExist(err) && i == len(parts)-1 {
				return nil // a file to create
			}
			return fmt.Errorf("%s: %w", rel, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: goes through the symlink %s; refusing to write", rel, cur)
		}
	}
	return nil
}
