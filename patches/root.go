package patches

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Every module name mlagen writes (the envs import in a guard, the kernel
// module's import from an entry point of another package) is computed from
// the root: outside packages with __init__.py, as SGLang's namespace
// packages are, a file's name is its path below the root. That is only
// Python's name when the root is the folder that holds the top-level
// package (site-packages), a checkout that keeps it under SourceRoot, or
// the package folder itself. From any other folder the names come out
// wrong ("sglang.python.sglang.srt.environ", or not Python at all from a
// venv's lib/python3.11/...), and the resolver, which reads the tree the
// same way, would pass them: such a root is refused before anything is
// read or written.

// RootError is an SGLANG_ROOT mlagen cannot work from: a usage mistake,
// with the folder to give instead.
type RootError struct{ Msg string }

func (e *RootError) Error() string { return e.Msg }

// checkRoot refuses a root (real is its resolved path, shown the path as
// the user gave it) where rec.Package is not the root itself, ROOT/pkg or
// ROOT/SourceRoot/pkg, naming where the package is: inside it, or deeper
// in the tree. A tree without the package anywhere is left to the run,
// which says what it does not find.
func checkRoot(shown, real string, rec *Recipe) error {
	pkg := rec.Package
	if pkg == "" {
		return nil
	}
	// A package holding SGLang's environ.py is the package itself, or the
	// package under another folder name, unless it sits inside the package
	// (sglang/srt with an __init__.py), which is said below.
	if isFile(filepath.Join(real, "__init__.py")) && looksLikeProject(real, rec) && (filepath.Base(real) == pkg || enclosingPackageDir(real, pkg) == "") {
		if filepath.Base(real) == pkg {
			return nil // the package folder itself (site-packages/sglang)
		}
		// The package under another folder name (a link named sglang to
		// it): module names come from the folder's real name.
		return &RootError{Msg: fmt.Sprintf("%s is the %s package in a folder named %s (%s), and module names come from that name: patch it in a folder that holds it as %s/ itself",
			shown, pkg, filepath.Base(real), real, pkg)}
	}
	if link := filepath.Join(real, pkg); isLink(link) {
		// The scan does not follow links (a loop, or a tree outside the
		// root, would be read as the project's); the package is where the
		// link points.
		target, err := filepath.EvalSymlinks(link)
		if err == nil && filepath.Base(target) == pkg {
			return &RootError{Msg: fmt.Sprintf("%s is a link to %s, which the scan does not follow: give %s as SGLANG_ROOT", filepath.Join(shown, pkg), target, filepath.Dir(target))}
		}
		return &RootError{Msg: fmt.Sprintf("%s is a link (to %s), which the scan does not follow, and module names come from the package folder's own name: patch the package in a folder that holds it as %s/ itself", filepath.Join(shown, pkg), target, pkg)}
	}
	if rec.SourceRoot != "" && isDir(filepath.Join(real, rec.SourceRoot, pkg)) {
		return nil // a checkout (python/sglang)
	}
	if in := filepath.Join(real, pkg); isDir(in) && !isCheckout(in, rec) {
		return nil // the folder that holds it (site-packages)
	}
	if up := enclosingPackageDir(real, pkg); up != "" {
		return &RootError{Msg: fmt.Sprintf("%s is inside the %s package at %s, and module names are only right from the folder that holds it: give %s as SGLANG_ROOT (or %s itself)",
			shown, pkg, up, filepath.Dir(up), up)}
	}
	found, err := findPackages(real, rec)
	if err != nil || len(found) == 0 {
		return err
	}
	where := fmt.Sprintf("%s, %s or %s itself", filepath.Join(shown, pkg), filepath.Join(shown, rec.SourceRoot, pkg), shown)
	if len(found) == 1 {
		return &RootError{Msg: fmt.Sprintf("%s holds the %s package at %s, not at %s, and the module names mlagen writes are only right from the folder that holds it: give %s as SGLANG_ROOT",
			shown, pkg, filepath.Join(shown, found[0]), where, filepath.Join(shown, home(found[0], rec)))}
	}
	var roots []string
	for _, f := range found {
		roots = append(roots, filepath.Join(shown, home(f, rec))+" (for "+filepath.Join(shown, f)+")")
	}
	return &RootError{Msg: fmt.Sprintf("%s holds %d copies of the %s package, none at %s: give the folder that holds one as SGLANG_ROOT, one of %s",
		shown, len(found), pkg, where, strings.Join(roots, ", "))}
}

// home is the folder to give for the package found at rel: the checkout
// when the package sits in its SourceRoot, else the folder that holds it.
func home(rel string, rec *Recipe) string {
	up := filepath.Dir(rel)
	if rec.SourceRoot != "" && filepath.Base(up) == rec.SourceRoot {
		return filepath.Dir(up)
	}
	return up
}

// isCheckout says whether dir is a checkout of the project (it keeps the
// package under SourceRoot) rather than the package: SGLang's repository is
// itself named sglang.
func isCheckout(dir string, rec *Recipe) bool {
	return rec.SourceRoot != "" && isDir(filepath.Join(dir, rec.SourceRoot, rec.Package))
}

// enclosingPackageDir is the nearest folder above dir named pkg that is a
// package (holds __init__.py), or "".
func enclosingPackageDir(dir, pkg string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if filepath.Base(d) == pkg && isFile(filepath.Join(d, "__init__.py")) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// findPackages lists, relative to root, the folders named pkg that hold
// __init__.py, without going into one found, nor into the folders a scan
// skips (hidden, caches), nor through symlinks. An unreadable folder is
// skipped: this only looks for a better root to name.
func findPackages(root string, rec *Recipe) ([]string, error) {
	pkg := rec.Package
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() || p == root {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || name == "__pycache__" || name == "node_modules" {
			return filepath.SkipDir
		}
		if name == pkg && isFile(filepath.Join(p, "__init__.py")) && looksLikeProject(p, rec) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, fmt.Errorf("look for the %s package under %s: %w", pkg, root, err)
	}
	return out, nil
}

// looksLikeProject says whether the package folder dir is the project's
// (holds the recipe's environment module within two levels, as
// sglang/srt/environ.py), not another project's package of the same name
// (lmcache/integration/sglang).
func looksLikeProject(dir string, rec *Recipe) bool {
	if rec.EnvironFile == "" {
		return true
	}
	if isFile(filepath.Join(dir, rec.EnvironFile)) {
		return true
	}
	subs, _ := os.ReadDir(dir)
	for _, d := range subs {
		if d.IsDir() && isFile(filepath.Join(dir, d.Name(), rec.EnvironFile)) {
			return true
		}
	}
	return false
}

func isLink(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
