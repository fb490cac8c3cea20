package resolve

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
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
	// Files holds every .py file Python can read by path: UTF-8, or
	// declaring a single-byte encoding (PEP 263) whose first 128 code points
	// are ASCII, so that every name is its own bytes.
	Files map[string]*File
	// NonUTF8 lists .py files that were skipped because they are neither.
	NonUTF8 []string
	// Outside lists symlinks that point out of the root: never followed.
	Outside []string
	// Links are the symlinks that point inside the root, to a directory or
	// a .py file: never followed for reading or writing (the files are read
	// under their real paths), but an import through one reaches them.
	Links []Link
	// Hidden lists the hidden files (names starting with a dot) found
	// beside the tree's files: a killed writer's temporary files are among
	// them.
	Hidden []string
	// paths is every .py path (UTF-8 or not), sorted; the module index and
	// the proof walk it in this order so output is deterministic.
	paths []string
	// skipped holds the bytes of the NonUTF8 files.
	skipped map[string][]byte
	// outside holds the bytes of the .py files that Outside links point
	// to: read to say whether they name what is wired, never written.
	outside map[string][]byte
}

// Link is an in-tree symlink: Path (the link) resolves to Target, both
// relative to the root.
type Link struct{ Path, Target string }

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
	if !utf8.Valid(f.Data) && !singleByteEncoding(f.Data) {
		t.NonUTF8 = append(t.NonUTF8, f.Path)
		if t.skipped == nil {
			t.skipped = map[string][]byte{}
		}
		t.skipped[f.Path] = f.Data
		return
	}
	t.Files[f.Path] = f
}

func (t *Tree) finish() {
	sort.Strings(t.paths)
	sort.Strings(t.NonUTF8)
	sort.Strings(t.Outside)
	sort.Strings(t.Hidden)
	sort.Slice(t.Links, func(i, j int) bool { return t.Links[i].Path < t.Links[j].Path })
}

// NonUTF8Spelling lists the skipped files (NonUTF8) whose bytes hold one
// of words: files mlagen cannot read that may refer to what it wires.
func (t *Tree) NonUTF8Spelling(words ...string) []string {
	return spelling(t.NonUTF8, t.skipped, words)
}

// OutsideSpelling lists the symlinked .py files that point out of the tree
// (Outside) whose bytes hold one of words: code Python imports as part of
// the package but mlagen neither reads as the tree's nor writes.
func (t *Tree) OutsideSpelling(words ...string) []string {
	return spelling(t.Outside, t.outside, words)
}

// spelling lists the paths whose data holds one of words.
func spelling(paths []string, data map[string][]byte, words []string) []string {
	var out []string
	for _, p := range paths {
		for _, w := range words {
			if w != "" && bytes.Contains(data[p], []byte(w)) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// codingRE is PEP 263's encoding declaration.
var (
	codingRE     = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-_.a-zA-Z0-9]+)`)
	singleByteRE = regexp.MustCompile(`^(latin-?1|l1|iso-?8859-[0-9]+|iso-latin-1|cp819|cp12[0-9][0-9]|windows-12[0-9][0-9])$`)
)

// singleByteEncoding reports whether the file declares, on its first or
// second line, an encoding Python reads one byte per character with ASCII
// below 128 (latin-1 and its kin): its names are then its bytes, and byte
// offsets are character offsets for every edit mlagen makes.
func singleByteEncoding(data []byte) bool {
	for i, line := 0, data; i < 2 && len(line) > 0; i++ {
		end, next := lineAt(line, 0)
		if m := codingRE.FindSubmatch(line[:end]); m != nil {
			name := strings.ReplaceAll(strings.ToLower(string(m[1])), "_", "-")
			return singleByteRE.MatchString(name)
		}
		line = line[next:]
	}
	return false
}

// Scan reads every .py file under root. Symlinks are never followed: one that
// points inside the tree names a file that is scanned under its real path
// anyway, one that points outside is recorded in Outside.
func Scan(root string) (*Tree, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	// A root given through a symlink is the tree it points to; walking the
	// link itself would find no file.
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
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
			if target, ok := insideRoot(abs, p); !ok {
				t.Outside = append(t.Outside, rel)
				if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && strings.HasSuffix(d.Name(), ".py") {
					if data, err := os.ReadFile(p); err == nil {
						if t.outside == nil {
							t.outside = map[string][]byte{}
						}
						t.outside[rel] = data
					}
				}
			} else if l, ok := link(abs, rel, target); ok {
				t.Links = append(t.Links, l)
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".py") {
			rels = append(rels, rel)
		} else if d.Type().IsRegular() && strings.HasPrefix(d.Name(), ".") {
			t.Hidden = append(t.Hidden, rel)
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

// insideRoot reports whether the symlink at p resolves to a place under
// root (which must be a real path), and where.
func insideRoot(root, p string) (string, bool) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// link describes the in-tree symlink rel when imports can go through it: to
// a directory, or to a .py file from a .py name.
func link(root, rel, target string) (Link, bool) {
	info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
	switch {
	case err != nil || target == ".":
		return Link{}, false
	case info.IsDir():
		return Link{Path: rel, Target: target}, true
	case info.Mode().IsRegular() && strings.HasSuffix(rel, ".py") && strings.HasSuffix(target, ".py"):
		return Link{Path: rel, Target: target}, true
	}
	return Link{}, false
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
	n := &Tree{Root: t.Root, Package: t.Package, Files: make(map[string]*File, len(t.Files)), NonUTF8: t.NonUTF8, Outside: t.Outside,
		Links: t.Links, skipped: t.skipped, outside: t.outside}
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
