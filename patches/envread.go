package patches

import (
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// envRead is what a test (an if's condition) reads of the environment.
type envRead struct {
	text     string // the test, as written
	variable string // the recipe's choice variable it reads; "" when none
	via      string // the name it tests, when the read is in that name's value
	setAt    string // file:line of that name's assignment
	atImport bool   // that assignment is at module level
}

func (er *envRead) choice(test string, rec *Recipe) *choice {
	c := &choice{test: test, variable: er.variable, via: er.via, setAt: er.setAt, atImport: er.atImport}
	for _, ch := range rec.Route.Choices {
		if ch.Variable == er.variable {
			c.releases = ch.Releases
		}
	}
	return c
}

// readsEnv reports whether the expression at node t reads the environment,
// itself or through a name it uses whose assigned value does (one level:
// the backend variable SGLang sets at import from envs or os.environ); nil
// when it does not.
func (s *session) readsEnv(fi *resolve.Info, t int32) *envRead {
	st := fi.Syntax()
	if t < 0 {
		return nil
	}
	if r := s.scanEnv(st, t); r != nil {
		r.text = st.Text(t)
		return r
	}
	var out *envRead
	st.Descendants(t, func(i int32) bool {
		if st.Kind(i) != "identifier" {
			return true
		}
		for _, b := range fi.Lookup(i) {
			rhs := assignedValue(st, b.Node)
			if rhs < 0 {
				continue
			}
			if r := s.scanEnv(st, rhs); r != nil && (out == nil || out.variable == "") {
				line, _ := resolve.LineCol(st.Src(), st.Start(b.Node))
				r.via, r.setAt, r.atImport = st.Text(i), fmt.Sprintf("%s:%d", fi.Path(), line), b.TopLevel
				out = r
			}
		}
		return true
	})
	if out != nil {
		out.text = st.Text(t)
	}
	return out
}

// scanEnv looks in the expression at node e for a read of the environment:
// an identifier of the recipe's environment_reads (environ, getenv, envs)
// or the name of a choice variable (as an attribute, envs.X, or a string,
// os.environ.get("X")).
func (s *session) scanEnv(st *resolve.Syntax, e int32) *envRead {
	var r *envRead
	st.Descendants(e, func(i int32) bool {
		text := ""
		switch st.Kind(i) {
		case "identifier":
			text = st.Text(i)
		case "string":
			text = strings.Trim(st.Text(i), `"'`)
		default:
			return true
		}
		if contains(s.rec.Route.EnvironmentReads, text) && r == nil {
			r = &envRead{}
		}
		for _, c := range s.rec.Route.Choices {
			if text == c.Variable {
				if r == nil {
					r = &envRead{}
				}
				r.variable = c.Variable
			}
		}
		return st.Kind(i) != "string"
	})
	return r
}

// assignedValue is the right-hand side of the assignment that binds the
// identifier at node b, or -1 when b is bound otherwise.
func assignedValue(st *resolve.Syntax, b int32) int32 {
	for n := b; n >= 0; n = st.Parent(n) {
		p := st.Parent(n)
		if p < 0 {
			return -1
		}
		switch st.Kind(p) {
		case "assignment":
			if st.Field(n) != "left" {
				return -1
			}
			return st.Child(p, "right")
		case "pattern_list", "tuple_pattern", "list_pattern", "parenthesized_expression":
			continue
		default:
			return -1
		}
	}
	return -1
}
