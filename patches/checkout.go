package patches

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/patches/resolve"
)

// Checkout is what Patch, Verify and Revert read: the Python tree and, when
// SGLang is installed (site-packages), the RECORD files of its
// distribution.
type Checkout struct {
	Tree *resolve.Tree
	// Records are the RECORD files of dist-info directories matching the
	// recipe's DistInfo, in the root or beside it.
	Records []*Record
	// Triton is the version of the Triton installed in the same place
	// (triton-*.dist-info beside SGLang's), which the kernel module will be
	// compiled with; empty for a checkout, or where none is installed.
	Triton string
	// Bytecode is what Python compiled of the kernel module, by path
	// (__pycache__/<module>.*.pyc beside any of the tree's packages):
	// revert deletes it with the module (kernelBytecode).
	Bytecode map[string]*resolve.File
}

// Record is one distribution's RECORD: the files pip uninstall removes, one
// CSV line each (path,sha256=...,size), paths relative to site-packages.
type Record struct {
	// Path is the file's path relative to the tree's root; it starts with
	// "../" when the root is the package directory inside site-packages.
	Path string
	Data []byte
	Mode fs.FileMode
	// Prefix is what RECORD puts before a tree path: "sglang/" for a root
	// .../site-packages/sglang, "" for a root .../site-packages.
	Prefix string
}

// Change is what a run does to one file: Before == nil creates it, After ==
// nil deletes it. Path is relative to the tree's root (a RECORD beside it
// starts with "../"). Patch and Revert list their changes in the order they
// must be written (see order.go).
type Change = changeset.Change

// NewCheckout is a checkout of an in-memory tree without RECORD (tests).
func NewCheckout(files map[string][]byte) *Checkout {
	return &Checkout{Tree: resolve.NewTree(files)}
}

// ScanCheckout reads the Python files under root and the RECORD of an
// installed distribution in root or in the directory above it.
func ScanCheckout(root string, rec *Recipe) (*Checkout, error) {
	t, err := resolve.Scan(root)
	if err != nil {
		return nil, err
	}
	co := &Checkout{Tree: t}
	for _, where := range []struct{ dir, rel, prefix string }{
		{t.Root, "", ""},
		{filepath.Dir(t.Root), "../", filepath.Base(t.Root) + "/"},
	} {
		matches, err := filepath.Glob(filepath.Join(where.dir, rec.DistInfo, "RECORD"))
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", root, err)
		}
		sort.Strings(matches)
		for _, m := range matches {
			info, err := os.Lstat(m)
			if err != nil || !info.Mode().IsRegular() {
				continue // a symlinked RECORD is never written through
			}
			data, err := os.ReadFile(m)
			if err != nil {
				return nil, fmt.Errorf("scan: %w", err)
			}
			rel := where.rel + path.Join(filepath.Base(filepath.Dir(m)), "RECORD")
			co.Records = append(co.Records, &Record{Path: rel, Data: data, Mode: info.Mode().Perm(), Prefix: where.prefix})
		}
		if co.Triton == "" && len(matches) > 0 {
			co.Triton = distVersion(where.dir, "triton")
		}
	}
	if co.Bytecode, err = scanBytecode(t, rec.KernelModule); err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	return co, nil
}

// scanBytecode reads the compiled kernel module (kernelModule, a file
// name) in the __pycache__ of each folder that holds the tree's Python
// files.
func scanBytecode(t *resolve.Tree, kernelModule string) (map[string]*resolve.File, error) {
	out := map[string]*resolve.File{}
	seen := map[string]bool{}
	for _, p := range t.Paths() {
		dir := path.Dir(p)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		matches, err := filepath.Glob(filepath.Join(t.Root, filepath.FromSlash(dir), "__pycache__", bytecodeGlob(kernelModule)))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			info, err := os.Lstat(m)
			if err != nil || !info.Mode().IsRegular() {
				continue // gone since, or a link: never written through
			}
			data, err := os.ReadFile(m)
			if err != nil {
				return nil, err
			}
			rel := path.Join(dir, "__pycache__", filepath.Base(m))
			out[rel] = &resolve.File{Path: rel, Data: data, Mode: info.Mode().Perm()}
		}
	}
	return out, nil
}

// bytecodeGlob matches the files Python compiles module (a file name) to,
// one per interpreter and optimisation level
// (flash_mla_sm120_mma.cpython-312.pyc, ...cpython-312.opt-1.pyc).
func bytecodeGlob(module string) string {
	return strings.TrimSuffix(module, ".py") + ".*.pyc"
}

// distVersion is the Version of the distribution name installed in dir (its
// dist-info's METADATA), or "" where there is none or it cannot be read.
func distVersion(dir, name string) string {
	metas, _ := filepath.Glob(filepath.Join(dir, name+"-*.dist-info", "METADATA"))
	sort.Strings(metas)
	for _, m := range metas {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Version:"); ok {
				return strings.TrimSpace(v)
			}
			if strings.TrimSpace(line) == "" {
				break // the headers end at the first empty line
			}
		}
	}
	return ""
}

// with returns the checkout as it is after changes.
func (co *Checkout) with(changes []Change) *Checkout {
	var ups []resolve.Update
	recs := append([]*Record(nil), co.Records...)
	bytecode := maps.Clone(co.Bytecode)
	for _, c := range changes {
		if _, ok := bytecode[c.Path]; ok && c.After == nil {
			delete(bytecode, c.Path) // revert deletes it; nothing writes one
			continue
		}
		if i := co.recordIndex(c.Path); i >= 0 {
			r := *recs[i]
			r.Data = c.After
			recs[i] = &r
			continue
		}
		ups = append(ups, resolve.Update{Path: c.Path, Data: c.After, Mode: c.Mode})
	}
	return &Checkout{Tree: co.Tree.With(ups), Records: recs, Triton: co.Triton, Bytecode: bytecode}
}

func (co *Checkout) recordIndex(p string) int {
	for i, r := range co.Records {
		if r.Path == p {
			return i
		}
	}
	return -1
}

// rebase turns changes relative to the tree's root into changes relative to
// the directory they can all be written under: the root, or the directory
// above it when a RECORD beside the root is among them.
func rebase(root string, changes []Change) (string, []Change) {
	up := false
	for _, c := range changes {
		if strings.HasPrefix(c.Path, "../") {
			up = true
		}
	}
	if !up {
		return root, changes
	}
	base := filepath.Base(root)
	out := make([]Change, len(changes))
	for i, c := range changes {
		out[i] = c
		if p, ok := strings.CutPrefix(c.Path, "../"); ok {
			out[i].Path = p
		} else {
			out[i].Path = base + "/" + c.Path
		}
	}
	return filepath.Dir(root), out
}
