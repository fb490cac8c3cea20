package patches

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// Options configure Patch, Revert and Verify.
type Options struct {
	Recipe *Recipe
	// Module, when set, picks the defining module (a path relative to the
	// root) among several.
	Module string
	// Kernel is the generated kernel module's source (Patch only). The
	// rewriter never renders kernels itself.
	Kernel []byte
	// KernelFrom is the flag that gave Kernel ("--selection",
	// "--kernels"), "" when it is this mlagen's built-in module: the
	// installed module's header records it, and a module of the user's is
	// only replaced by a run that gives such a flag again.
	KernelFrom string
	// Emitted returns what this mlagen emits as the kernel module for a
	// target (gen.Bundle): the proof says whether the installed module is
	// byte for byte that. nil: not compared.
	Emitted func(target string) ([]byte, error)
	// AllowUnreached wires (Patch) and passes (Verify) a tree whose model
	// backend calls the route's entries only on other GPUs than the kernel
	// module's target: the route is then reported as not reached, in a
	// note. Without it Patch refuses (nothing written) and Verify fails.
	AllowUnreached bool
	// AcceptUnjudged are the places (PATH:LINE, or PATH for a whole file,
	// as the proof printed them) of references the proof cannot judge
	// that the user has read and accepts: they pass, listed as accepted.
	// One that names no such place is a problem, since the tree changed
	// under it.
	AcceptUnjudged []string
	// Tritons are the Triton releases the kernel modules are compiled and
	// checked under (gen.CheckedTritons): the report says whether the one
	// installed beside SGLang is among them. nil: not said.
	Tritons []string
	// reuse lets Patch's proof build on its own parses.
	reuse *resolve.Reuse
	// halfWritten: an interrupted run's journal is pending (Check found
	// it), so RECORD may be that run's half, not pip's doing.
	halfWritten bool
	// whole disables the partial (chunked) parse; tests use it to check
	// that both see the same references.
	whole bool
}

// Result is a planned run: the changes it makes and the report, whose proof
// was computed on the checkout as it is after the changes.
type Result struct {
	Changes []Change
	Report  *Report
}

// Problem is a failure the user has to act on (as opposed to a bug or an I/O
// error): no defining module, several, a syntax error in a referencing
// file, an ambiguous binding, a backend choice mlagen does not know. Lines
// carry the details.
type Problem struct {
	Msg   string
	Lines []string
}

func (p *Problem) Error() string {
	if len(p.Lines) == 0 {
		return p.Msg
	}
	return p.Msg + "\n  " + strings.Join(p.Lines, "\n  ")
}

// session is one parse of a checkout under a recipe.
type session struct {
	*resolve.Session
	co  *Checkout
	rec *Recipe
}

func load(co *Checkout, rec *Recipe, opt resolve.Options) (*session, error) {
	s, err := resolve.Load(co.Tree, rec.config(), opt)
	if err != nil {
		return nil, err
	}
	return &session{Session: s, co: co, rec: rec}, nil
}

// names are the three functions the wiring is about, for syntax checks.
func (s *session) names() []string {
	return []string{s.rec.Old, s.rec.Dispatcher, s.rec.WholeCall.Function}
}

// syntaxCheck stops the run on a file that does not parse and spells one of
// names (it may hold a reference that cannot be seen reliably); other broken
// files are returned to be reported as ignored.
func (s *session) syntaxCheck(names ...string) ([]string, error) {
	var bad, ignored []string
	broken := s.Broken()
	var paths []string
	for p := range broken {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := broken[p]
		fi := s.Info(p)
		refers := false
		for _, n := range names {
			if fi != nil && fi.Spells(n) {
				refers = true
			}
		}
		if refers {
			bad = append(bad, fmt.Sprintf("%s:%s (tree-sitter)", p, e))
		} else {
			ignored = append(ignored, fmt.Sprintf("%s:%s", p, e))
		}
	}
	if len(bad) > 0 {
		return nil, &Problem{Msg: fmt.Sprintf("syntax error in a file that references %s; fix it and run again (nothing was written):", names[0]), Lines: bad}
	}
	return ignored, nil
}

// definers lists the modules that define name at module level with def,
// outside mlagen's blocks.
func (s *session) definers(name string) []string {
	var out []string
	for _, fi := range s.Infos() {
		if fi.Syntax().Err() == nil && fi.TopDef(name) >= 0 {
			out = append(out, fi.Path())
		}
	}
	return out
}

// blockFiles lists parsed files that hold an mlagen block of part.
func (s *session) blockFiles(part string) []string {
	var out []string
	for _, fi := range s.Infos() {
		if hasBlock(fi, s.rec, part) {
			out = append(out, fi.Path())
		}
	}
	return out
}

// module finds the defining module: the one given, else the one holding
// the dispatcher (a tree patched before), else the one that defines Old.
func (s *session) module(opt Options) (string, error) {
	var mod string
	var err error
	switch withBlock := s.blockFiles(partDispatcher); {
	case opt.Module != "":
		mod, err = s.givenModule(opt.Module)
	case len(withBlock) == 1:
		return withBlock[0], nil
	case len(withBlock) > 1:
		return "", &Problem{Msg: fmt.Sprintf("%d modules hold an mlagen dispatcher; pick one with --module PATH:", len(withBlock)), Lines: withBlock}
	default:
		cands := s.definers(s.rec.Old)
		mod, err = pickModule(cands, s.rec, len(cands) > 0 || s.holdsPackage())
	}
	if err != nil {
		return "", s.explain(err)
	}
	return mod, nil
}

// givenModule is the defining module --module names: a path relative to
// the root, of a module that defines Old at module level. Patch and
// revert refuse anything else rather than wire or unwire around a module
// that is not SGLang's.
func (s *session) givenModule(given string) (string, error) {
	m := path.Clean(strings.TrimPrefix(given, "./"))
	cands := s.definers(s.rec.Old)
	if slices.Contains(cands, m) {
		return m, nil
	}
	var msg string
	if _, ok := s.co.Tree.Files[m]; !ok {
		msg = fmt.Sprintf("--module %s: no such file under the root (the path is relative to it; nothing was written)", given)
	} else {
		msg = fmt.Sprintf("--module %s does not define %s at module level (nothing was written)", given, s.rec.Old)
	}
	if len(cands) == 0 {
		return "", &Problem{Msg: fmt.Sprintf("%s, and no module there defines %s", msg, s.rec.Old)}
	}
	return "", &Problem{Msg: fmt.Sprintf("%s. Modules that define %s:", msg, s.rec.Old), Lines: cands}
}

// holdsPackage reports whether the tree has a Python file of the
// recipe's package where a root may keep it (ROOT/sglang, a checkout's
// ROOT/python/sglang, or ROOT itself where it is the package); true for a
// recipe that names none.
func (s *session) holdsPackage() bool {
	pkg := s.rec.Package
	if pkg == "" {
		return true
	}
	for p := range s.co.Tree.Files {
		// qualified: the root may be the package itself (site-packages/sglang).
		if q := s.qualified(p); strings.HasPrefix(q, pkg+"/") || s.rec.SourceRoot != "" && strings.HasPrefix(q, s.rec.SourceRoot+"/"+pkg+"/") {
			return true
		}
	}
	return false
}

// pickModule chooses the defining module among candidates. hasPackage is
// whether the tree holds the project's package at all: where nothing
// defines the function and it does not, the root is likely not SGLang's
// (a mistyped path), which the message asks rather than leave the user
// to suspect the release.
func pickModule(cands []string, rec *Recipe, hasPackage bool) (string, error) {
	name := rec.Old
	switch len(cands) {
	case 0:
		msg := fmt.Sprintf("no module in this tree defines %s (upstream keeps it in %s; looked for a module-level def in every file that names it)", name, rec.SIMTModule)
		if !hasPackage {
			checkout := "SGLang's checkout"
			if rec.SourceRoot != "" {
				checkout += fmt.Sprintf(" (with %s/%s/ in it)", rec.SourceRoot, rec.Package)
			}
			msg += fmt.Sprintf(", and it holds no %s package: is it %s, or the folder that holds the installed %s package (site-packages)?", rec.Package, checkout, rec.Package)
		}
		return "", &Problem{Msg: msg}
	case 1:
		return cands[0], nil
	}
	// Two copies of SGLang under one root bind every other name twice as
	// well, which --module cannot settle: the root of one copy does.
	return "", &Problem{Msg: fmt.Sprintf("%d modules define %s; pick one with --module PATH (for separate copies of SGLang, give the root of one as SGLANG_ROOT instead):", len(cands), name), Lines: cands}
}

// explain adds the syntax errors of name-bearing files to a "no module"
// problem: the definition may be in a file that does not parse.
func (s *session) explain(err error) error {
	if _, serr := s.syntaxCheck(s.rec.Old); serr != nil {
		return serr
	}
	return err
}

// environ finds SGLang's environ.py (a module-level class Envs), preferring
// sglang/srt/environ.py when a tree has several.
func (s *session) environ() *resolve.Info {
	var found []*resolve.Info
	for _, fi := range s.Infos() {
		if path.Base(fi.Path()) != s.rec.EnvironFile || fi.Syntax().Err() != nil {
			continue
		}
		if body, _ := fi.TopClass(s.rec.EnvironClass, s.rec.Gate); body >= 0 {
			found = append(found, fi)
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		ai := strings.HasSuffix(s.qualified(found[i].Path()), s.rec.EnvironPrefer)
		aj := strings.HasSuffix(s.qualified(found[j].Path()), s.rec.EnvironPrefer)
		return ai && !aj
	})
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// qualified is a tree path with the packages above the root in front
// ("srt/environ.py" in a tree rooted at .../sglang is "sglang/srt/environ.py").
func (s *session) qualified(p string) string {
	if pkg := s.Tree().Package; pkg != "" {
		return strings.ReplaceAll(pkg, ".", "/") + "/" + p
	}
	return p
}

// gateRead works out how inserted code in module mod reads the gate and
// imports the kernel module: through SGLang's envs when the checkout has its
// environ.py, and relatively from a module inside a package (regular, or a
// namespace package without __init__.py, as some SGLang directories are);
// only a module at the top of the import path uses a plain import, which
// would fail inside a package.
func (s *session) gateRead(mod string) gateRead {
	var g gateRead
	if env := s.environ(); env != nil {
		g.envsModule = s.ModuleName(env.Path(), s.rec.SourceRoot)
	}
	g.kernelImp = s.kernelImport(mod, mod)
	return g
}

// kernelImport is the import statement that brings the kernel module,
// installed beside the defining module mod, in as mma_kernel from the file
// at from: relatively from a module of the same package (as gateRead
// says), by the package's dotted name from a module elsewhere (an entry
// point of another package), plainly where the kernel module is at the top
// of the import path.
func (s *session) kernelImport(from, mod string) string {
	kstem := strings.TrimSuffix(s.rec.KernelModule, ".py")
	name := s.ModuleName(mod, s.rec.SourceRoot)
	dot := strings.LastIndex(name, ".")
	switch {
	case dot < 0:
		return "import " + kstem + " as mma_kernel"
	case resolve.DirOf(from) == resolve.DirOf(mod):
		return "from . import " + kstem + " as mma_kernel"
	}
	return "from " + name[:dot] + " import " + kstem + " as mma_kernel"
}

func kernelHeader(rec *Recipe) string {
	return "# " + rec.Marker + " kernel module: written by `mlagen patch`, deleted by `mlagen patch --revert`.\n"
}

func kernelPath(rec *Recipe, module string) string {
	return resolve.JoinPath(resolve.DirOf(module), rec.KernelModule)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
