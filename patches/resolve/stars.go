package resolve

import "strings"

// Answer is a yes, a no, or "cannot tell from this tree".
type Answer int

const (
	No Answer = iota
	Yes
	Unknown
)

func (a Answer) String() string { return [...]string{"no", "yes", "unknown"}[a] }

// starVals is what name means in file fi when no binding of the file has
// it: the values its module-level star imports bring in (each marked as
// reached through a star import), and whether some star import cannot be
// judged (its module is not in the tree or computes what it exports).
func (r *resolver) starVals(fi *Info, name string, depth int) ([]Val, Answer) {
	ans := No
	var out []Val
	for _, s := range fi.stars {
		if inRanges(fi.ignore, fi.st.nodes[s.node].start) {
			continue
		}
		mods := r.modules(fi.path, s.mod)
		if len(mods) == 0 {
			ans = Unknown // a module outside the tree: its exports are unknown
		}
		for _, m := range mods {
			vals, a := r.exports(m, name, depth+1)
			for _, v := range vals {
				v.star = true
				out = append(out, v)
			}
			if a == Yes && ans != Unknown {
				ans = Yes
			} else if a == Unknown {
				ans = Unknown
			}
		}
	}
	return out, ans
}

// exports says whether module m (a .py file or a package directory) gives
// name to "from m import *", and what it is then.
func (r *resolver) exports(m, name string, depth int) ([]Val, Answer) {
	if depth > 8 {
		return nil, Unknown
	}
	file := m
	if !strings.HasSuffix(m, ".py") {
		file = JoinPath(m, "__init__.py")
		if !r.idx.files[file] {
			return nil, No // a namespace package exports nothing
		}
	}
	fi := r.info(file)
	if fi == nil || fi.st.err != nil {
		return nil, Unknown
	}
	switch {
	case fi.all.set && fi.all.dynamic:
		return nil, Unknown
	case fi.all.set && !fi.all.names[name]:
		return nil, No
	case fi.all.set:
		return r.attrOf(m, name), Yes
	case strings.HasPrefix(name, "_"):
		return nil, No // without __all__, a star import skips private names
	case len(fi.scopes[0].binds[name]) > 0:
		return r.attrOf(m, name), Yes
	}
	return r.starVals(fi, name, depth)
}

// bound says whether the module a value is looked up in really binds its
// name: a value the resolver reached without finding a binding (an import
// of a name its module does not define) would raise ImportError or
// AttributeError when run.
func (r *resolver) bound(v Val) Answer {
	if v.mod || v.star {
		return Yes
	}
	fi := r.info(v.path)
	switch {
	case fi == nil || fi.st.err != nil:
		return Unknown
	case len(fi.scopes[0].binds[v.name]) > 0:
		return Yes
	case len(fi.scopes[0].binds["__getattr__"]) > 0:
		return Unknown // a module __getattr__ (PEP 562) may provide any name
	}
	_, a := r.starVals(fi, v.name, 0)
	return a
}

// Bound says whether v's module binds v's name at module level (Yes, No,
// or Unknown when the tree cannot tell: a file that cannot be read, a
// module __getattr__, a star import from outside the tree). A reference to
// a value whose name is not bound fails when it runs.
func (s *Session) Bound(v Val) Answer { return s.r.bound(v) }

// Symbol is what the module-level name of the file at path denotes,
// followed through imports.
func (s *Session) Symbol(path, name string) []Val { return s.r.symbol(path, name) }
