package resolve

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// File is one Python source file of a tree, as bytes. Path is slash-separated
// and relative to the tree's root.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode

	// cand caches the prefilter's verdict for candFor, hasStem whether the
	// file spells stemFor (a module name).
	candFor *Config
	cand    bool
	stemFor string
	hasStem bool
}

// Tree is a snapshot of the Python files under a root. Everything in this
// package works on a Tree in memory; only Scan reads the disk, so a caller's
// dry run and real run compute exactly the same thing.
type Tree struct {
	// Root is the directory the tree was read from ("" for a tree built in
	// memory).
	Root string
	// Package is the dotted package the root itself belongs to, when the
	// root is inside a package (a root .../site-packages/sglang holding
	// __init__.py gives "sglang"); module names start with it.
	Package string
	// Files holds every UTF-8 .py file by path.
	Files map[string]*File
	// NonUTF8 lists .py files that were skipped because they are not UTF-8.
	NonUTF8 []string
	// Outside lists symlinks that point out of the root: never followed.
	Outside []string
	// paths is every .py path (UTF-8 or not), sorted; the module index and
	// the proof walk it in this order so output is deterministic.
	paths []string
}

// skipDir says which directories are never part of the source tree: VCS and
// tool state, caches and virtual environments (a .venv may hold a second copy
// of sglang whose references are not ours to rewire).
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "__pycache__" || name == "node_modules"
}

// NewTree builds an in-memory tree (tests, fuzzing). Files that are not UTF-8
// are classified exactly as Scan would.
func NewTree(files map[string][]byte) *Tree {
	t := &Tree{Files: map[string]*File{}}
	for p, data := range files {
		t.add(&File{Path: p, Data: data, Mode: 0o644})
	}
	t.finish()
	return t
}

func (t *Tree) add(f *File) {
	t.paths = append(t.paths, f.Path)
	if !utf8.Valid(f.Data) {
		t.NonUTF8 = append(t.NonUTF8, f.Path)
		return
	}
	t.Files[f.Path] = f
}

func (t *Tree) finish() {
	sort.Strings(t.paths)
	sort.Strings(t.NonUTF8)
	sort.Strings(t.Outside)
}

// Scan reads every .py file under root. Symlinks are never followed: one that
// points inside the tree names a file that is scanned under its real path
// anyway, one that points outside is recorded in Outside.
func Scan(root string) (*Tree, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("scan: %s is not a directory", root)
	}
	t := &Tree{Root: abs, Files: map[string]*File{}, Package: enclosingPackage(abs)}
	var rels []string
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("scan %s: %w", p, err)
		}
		if d.IsDir() {
			if p != abs && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(abs, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			if !insideRoot(abs, p) {
				t.Outside = append(t.Outside, rel)
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".py") {
			rels = append(rels, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	files := make([]*File, len(rels))
	errs := make([]error, len(rels))
	// Reading is I/O plus a copy; a few workers hide the syscall latency.
	Parallel(len(rels), 2*runtime.GOMAXPROCS(0), func(i int) {
		full := filepath.Join(abs, filepath.FromSlash(rels[i]))
		info, err := os.Lstat(full)
		if err != nil {
			errs[i] = fmt.Errorf("scan: %w", err)
			return
		}
		data, err := os.ReadFile(full)
		if err != nil {
			errs[i] = fmt.Errorf("scan: %w", err)
			return
		}
		files[i] = &File{Path: rels[i], Data: data, Mode: info.Mode().Perm()}
	})
	for i := range files {
		if errs[i] != nil {
			return nil, errs[i]
		}
		t.add(files[i])
	}
	t.finish()
	return t, nil
}

// insideRoot reports whether the symlink at p resolves to a place under root.
func insideRoot(root, p string) bool {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Parallel runs f(0..n-1) on up to workers goroutines.
func Parallel(n, workers int, f func(i int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// Update replaces one file of a tree: Data nil deletes it.
type Update struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// With returns the tree as it is after updates, sharing unchanged files (and
// their cached prefilter verdicts) with t.
func (t *Tree) With(updates []Update) *Tree {
	n := &Tree{Root: t.Root, Package: t.Package, Files: make(map[string]*File, len(t.Files)), NonUTF8: t.NonUTF8, Outside: t.Outside}
	for k, v := range t.Files {
		n.Files[k] = v
	}
	seen := map[string]bool{}
	for _, p := range t.paths {
		seen[p] = true
	}
	n.paths = append([]string(nil), t.paths...)
	for _, u := range updates {
		if u.Data == nil {
			delete(n.Files, u.Path)
			for i, p := range n.paths {
				if p == u.Path {
					n.paths = append(n.paths[:i], n.paths[i+1:]...)
					break
				}
			}
			continue
		}
		n.Files[u.Path] = &File{Path: u.Path, Data: u.Data, Mode: u.Mode}
		if !seen[u.Path] {
			n.paths = append(n.paths, u.Path)
		}
	}
	sort.Strings(n.paths)
	return n
}

// Paths lists every .py path of the tree (UTF-8 or not), sorted.
func (t *Tree) Paths() []string { return t.paths }

// enclosingPackage names the packages the directory dir sits in: each
// ancestor, from dir up, that holds an __init__.py.
func enclosingPackage(dir string) string {
	var parts []string
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "__init__.py")); err != nil {
			break
		}
		parts = append([]string{filepath.Base(d)}, parts...)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return strings.Join(parts, ".")
}

// DirOf is path.Dir without the "." for top-level files.
func DirOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

// JoinPath joins a slash-separated directory (maybe "") and a name.
func JoinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
