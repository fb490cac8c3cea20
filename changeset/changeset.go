// Package changeset is mlagen's one writer: a set of file creations,
// replacements and deletions under one root, planned first (each change
// can be shown as a unified diff) and then applied all or nothing.
//
// Planning reads the tree (Read, Set.Write, Set.Remove) and records what
// every file held, so that Apply can refuse to write over a file that
// changed in between. Apply writes each file to a temporary file beside
// its target, fsyncs it, gives it the replaced file's mode and owner and
// renames it into place, in the order of Set.Changes; any failure puts back
// every file already changed, in reverse order. It never follows or
// replaces a symlink and never writes outside the root. A run killed half
// way leaves only whole files and recognisable temporary files
// (.<name>.mlagen-<pid>-<n>), which the next Apply removes; with
// Options.Journal, the next run also undoes the killed run's changes
// (Recover).
package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Change is one file's change. Before and After distinguish nil (no file)
// from empty (an empty file): Before nil creates, After nil deletes.
type Change struct {
	// Path is slash-separated and relative to the root.
	Path string
	// Before is the file's content when the change was planned; Apply
	// refuses to run when the file holds anything else by then.
	Before []byte
	// After is the content to write.
	After []byte
	// Mode holds the permission bits of the written file; 0 keeps those of
	// the file replaced, or 0o644 for a new file.
	Mode fs.FileMode
}

// Kind says what a change does to its file.
type Kind int

const (
	Create Kind = iota + 1
	Replace
	Delete
)

func (k Kind) String() string {
	switch k {
	case Create:
		return "create"
	case Replace:
		return "replace"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Kind is Create, Replace or Delete.
func (c Change) Kind() Kind {
	switch {
	case c.After == nil:
		return Delete
	case c.Before == nil:
		return Create
	}
	return Replace
}

// Set is a planned set of changes under Root, applied in the order of
// Changes (and undone in reverse). A path may appear more than once: the
// later change starts from the earlier one's After (a file written early
// and rewritten at the end, as emit does with its manifest).
type Set struct {
	Root    string
	Changes []Change
}

// New returns an empty set under root.
func New(root string) *Set { return &Set{Root: root} }

// Write plans rel to hold data: a creation, a replacement, or nothing when
// the file already holds data (and, after an earlier change of the set,
// nothing new). The file's current content is read now and becomes Before.
func (s *Set) Write(rel string, data []byte) error {
	before, exists, err := s.current(rel)
	if err != nil {
		return err
	}
	after := nonNil(data)
	if exists && string(before) == string(after) {
		return nil
	}
	c := Change{Path: rel, After: after}
	if exists {
		c.Before = nonNil(before)
	}
	s.Changes = append(s.Changes, c)
	return nil
}

// Remove plans rel's deletion; a file that does not exist is no change.
func (s *Set) Remove(rel string) error {
	before, exists, err := s.current(rel)
	if err != nil || !exists {
		return err
	}
	s.Changes = append(s.Changes, Change{Path: rel, Before: nonNil(before)})
	return nil
}

// current is what rel holds after the changes planned so far.
func (s *Set) current(rel string) ([]byte, bool, error) {
	clean, err := cleanPath(rel)
	if err != nil {
		return nil, false, err
	}
	for i := len(s.Changes) - 1; i >= 0; i-- {
		if p, _ := cleanPath(s.Changes[i].Path); p == clean {
			return s.Changes[i].After, s.Changes[i].After != nil, nil
		}
	}
	return Read(s.Root, clean)
}

// Paths lists the changed paths in the order they are applied, each once.
func (s Set) Paths() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range s.Changes {
		if !seen[c.Path] {
			seen[c.Path] = true
			out = append(out, c.Path)
		}
	}
	return out
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// cleanPath checks that rel names a file strictly inside the root and
// returns its clean form.
func cleanPath(rel string) (string, error) {
	switch {
	case rel == "":
		return "", errors.New("changeset: empty path")
	case strings.ContainsRune(rel, 0):
		return "", fmt.Errorf("%q: path holds a NUL byte", rel)
	case strings.Contains(rel, `\`):
		return "", fmt.Errorf("%s: use slashes in paths, not backslashes", rel)
	case path.IsAbs(rel):
		return "", fmt.Errorf("%s: an absolute path; changes name files relative to the root", rel)
	}
	clean := path.Clean(rel)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%s: outside the root; refusing to write", rel)
	}
	return clean, nil
}
