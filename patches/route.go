package patches

import (
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// SGLang decides above the whole call which sparse-decode backend runs: its
// sm_120 entry point forwards to the whole call only in one branch of a
// backend choice made from an environment variable (at import since 0.5.15,
// where the default is FlashInfer). The route analysis finds such entries by
// what they do: every function that calls the whole call (through any import
// or alias the resolver follows) is an entry; the if statements around the
// call that test the environment are its backend choice. A choice mlagen
// understands (an if or elif at the top of the function's body whose test
// reads one of the recipe's variables, and whose branch returns) gets a
// guard right before the choice that runs that branch, copied verbatim, when
// the gate is set and the kernel module does not defer the call to a peer
// (a shape the selection gives to one goes on to SGLang's choice); any other
// choice would make the gate inert there, and is reported as a problem.

// entry is one function that forwards to the whole call.
type entry struct {
	path, fn string
	line     int
	choice   *choice // nil: it forwards whatever the environment says
	guard    *want   // the route guard, when choice != nil
}

// choice is a backend choice the route guard overrides.
type choice struct {
	test     string // the if's test, as written
	variable string // the environment variable behind it
	releases string // which SGLang releases choose by it (the recipe's words)
	via      string // the name tested, when the test does not read the variable itself
	setAt    string // file:line where via is set
	atImport bool   // via is set at module level: read once, at import
}

func (c *choice) describe() string {
	if c.via == "" {
		return fmt.Sprintf("`%s`, read at call time from %s", c.test, c.variable)
	}
	when := "at call time"
	if c.atImport {
		when = "at import"
	}
	return fmt.Sprintf("`%s`, with %s set %s from %s (%s)", c.test, c.via, when, c.variable, c.setAt)
}

// routeScan is what the route analysis finds.
type routeScan struct {
	entries  []entry
	notes    []string // references to the whole call that are not calls: not traced
	problems []string // choices not understood, or that would make the gate inert
}

// branch is where a call sits in an understood choice.
type branch struct {
	stmt   int32 // the if statement at the top of the function's body
	clause int32 // that if statement, or the elif clause whose consequence holds the call
	block  int32 // the consequence that holds the call
	call   int32 // the call of the whole call
	choice *choice
}

// routes finds the entries of the whole call defined in mod.
func (s *session) routes(mod string, g gateRead) routeScan {
	var rs routeScan
	refs := s.References(resolve.Def(mod, s.rec.WholeCall.Function), false)
	rs.problems = append(rs.problems, refs.Conflicts...)
	type key struct {
		path string
		def  int32
	}
	seen := map[key]int{}
	for _, site := range refs.Sites {
		if strings.HasPrefix(site.Kind, "import") {
			continue
		}
		fi := s.Info(site.Path)
		st := fi.Syntax()
		def := enclosingDef(st, site.Node)
		if !site.Call || def < 0 {
			rs.notes = append(rs.notes, fmt.Sprintf("%s:%d: %s is used as a value there (%s); a call through it reaches the guarded whole call, but the route above it is not traced",
				site.Path, site.Line, s.rec.WholeCall.Function, site.Code))
			continue
		}
		br, prob := s.branchOf(fi, def, site.Node)
		if prob != "" {
			rs.problems = append(rs.problems, fmt.Sprintf("%s:%d: %s", site.Path, site.Line, prob))
			continue
		}
		k := key{site.Path, def}
		if i, ok := seen[k]; ok {
			if (rs.entries[i].choice == nil) != (br == nil) {
				rs.problems = append(rs.problems, fmt.Sprintf("%s:%d: %s calls %s both inside and outside a backend choice; wire it by hand",
					site.Path, site.Line, rs.entries[i].fn, s.rec.WholeCall.Function))
			}
			continue
		}
		line, _ := resolve.LineCol(st.Src(), st.Start(def))
		e := entry{path: site.Path, fn: st.Text(st.Child(def, "name")), line: line}
		if br != nil {
			e.choice = br.choice
			ge := g
			ge.kernelImp = s.kernelImport(site.Path, mod)
			w, prob := s.routeGuard(fi, def, br, ge)
			if prob != "" {
				rs.problems = append(rs.problems, fmt.Sprintf("%s:%d: %s", site.Path, line, prob))
				continue
			}
			e.guard = w
		}
		seen[k] = len(rs.entries)
		rs.entries = append(rs.entries, e)
	}
	return rs
}

// enclosingDef is the nearest function definition around node i, or -1.
func enclosingDef(st *resolve.Syntax, i int32) int32 {
	for n := st.Parent(i); n >= 0; n = st.Parent(n) {
		switch st.Kind(n) {
		case "function_definition":
			return n
		case "lambda", "class_definition":
			return -1
		}
	}
	return -1
}

// cond is one conditional around a call.
type cond struct {
	clause int32   // the if_statement or elif_clause whose consequence holds it; -1 otherwise
	block  int32   // that consequence
	tests  []int32 // the tests that decide it
	what   string  // "else branch", "conditional expression": shapes not understood
}

// branchOf classifies the call at node inside def: nil and no problem when
// no backend choice decides whether it runs.
func (s *session) branchOf(fi *resolve.Info, def int32, node int32) (*branch, string) {
	st := fi.Syntax()
	body := st.Child(def, "body")
	var choices []cond
	var found []*envRead
	for n := node; n >= 0 && n != body; n = st.Parent(n) {
		c, ok := condAt(st, n)
		if !ok {
			continue
		}
		var er *envRead
		for _, t := range c.tests {
			if r := s.readsEnv(fi, t); r != nil && (er == nil || er.variable == "") {
				er = r
			}
		}
		if er != nil {
			choices = append(choices, c)
			found = append(found, er)
		}
	}
	switch {
	case len(choices) == 0:
		return nil, ""
	case len(choices) > 1:
		return nil, fmt.Sprintf("the call to %s sits under %d nested backend choices; mlagen understands one (%s); wire it by hand",
			s.rec.WholeCall.Function, len(choices), s.knownChoices())
	}
	c, er := choices[0], found[0]
	if c.what != "" {
		return nil, fmt.Sprintf("%s is reached only in the %s of a backend choice (%s); mlagen understands an if or elif branch; wire it by hand",
			s.rec.WholeCall.Function, c.what, er.text)
	}
	stmt := c.clause
	if st.Kind(stmt) == "elif_clause" {
		stmt = st.Parent(stmt)
	}
	if er.variable == "" {
		return nil, fmt.Sprintf("%s is reached only when `%s`, a backend choice mlagen does not know (it reads the environment, but none of %s); with the gate set the MMA kernel would not run there; wire it by hand or use a newer mlagen",
			s.rec.WholeCall.Function, st.Text(c.tests[0]), s.knownChoices())
	}
	if st.Parent(stmt) != body {
		return nil, fmt.Sprintf("the backend choice `%s` before %s is not at the top level of the function's body; wire it by hand", st.Text(c.tests[0]), s.rec.WholeCall.Function)
	}
	if !endsInReturn(st, c.block) {
		return nil, fmt.Sprintf("the branch `%s` that calls %s does not end in return, so the code after the choice would run too; wire it by hand", st.Text(c.tests[0]), s.rec.WholeCall.Function)
	}
	return &branch{stmt: stmt, clause: c.clause, block: c.block, call: callOf(st, node), choice: er.choice(st.Text(c.tests[0]), s.rec)}, ""
}

// callOf is the call whose function the reference at node is (the name, or
// the attribute that ends a dotted name), or -1.
func callOf(st *resolve.Syntax, node int32) int32 {
	expr := node
	if p := st.Parent(node); p >= 0 && st.Kind(p) == "attribute" && st.Field(node) == "attribute" {
		expr = p
	}
	if p := st.Parent(expr); p >= 0 && st.Kind(p) == "call" && st.Field(expr) == "function" {
		return p
	}
	return -1
}

// condAt reports whether node n is the part of a conditional that runs only
// under a test: an if's or elif's consequence, an else branch, or a branch
// of a conditional expression.
func condAt(st *resolve.Syntax, n int32) (cond, bool) {
	p := st.Parent(n)
	if p < 0 {
		return cond{}, false
	}
	switch {
	case (st.Kind(p) == "if_statement" || st.Kind(p) == "elif_clause") && st.Field(n) == "consequence":
		return cond{clause: p, block: n, tests: []int32{st.Child(p, "condition")}}, true
	case st.Kind(n) == "else_clause" && st.Kind(p) == "if_statement":
		var tests []int32
		for c := st.First(p); c >= 0; c = st.Next(c) {
			if st.Field(c) == "condition" {
				tests = append(tests, c)
			}
			if st.Kind(c) == "elif_clause" {
				tests = append(tests, st.Child(c, "condition"))
			}
		}
		return cond{clause: -1, tests: tests, what: "else branch"}, true
	case st.Kind(p) == "conditional_expression":
		var tests []int32
		for c := st.First(p); c >= 0; c = st.Next(c) {
			if c != n && st.Named(c) {
				tests = append(tests, c)
			}
		}
		return cond{clause: -1, tests: tests, what: "conditional expression"}, true
	}
	return cond{}, false
}

// endsInReturn reports whether a block's last statement leaves the function.
func endsInReturn(st *resolve.Syntax, block int32) bool {
	last := int32(-1)
	for c := st.First(block); c >= 0; c = st.Next(c) {
		if st.Named(c) && st.Kind(c) != "comment" {
			last = c
		}
	}
	return last >= 0 && (st.Kind(last) == "return_statement" || st.Kind(last) == "raise_statement")
}

func (s *session) knownChoices() string {
	var out []string
	for _, c := range s.rec.Route.Choices {
		out = append(out, c.Variable+" ("+c.Releases+")")
	}
	return strings.Join(out, ", ")
}
