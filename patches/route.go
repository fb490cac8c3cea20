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
		if br == nil && s.serverFile(site.Path, mod) {
			// No backend choice mlagen reads decides the call: it must then
			// run on every call of the function, or the gate may never reach
			// it (a choice made another way, one level up, or earlier).
			// Tests and scripts outside the package (benchmarks) call the
			// whole call directly, through its own guard.
			if prob := s.unconditional(fi, def, site.Node); prob != "" {
				rs.problems = append(rs.problems, fmt.Sprintf("%s:%d: %s", site.Path, site.Line, prob))
				continue
			}
		}
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
	if len(rs.entries) == 0 && len(rs.problems) == 0 {
		if prob := s.bypassed(mod); prob != "" {
			rs.problems = append(rs.problems, prob)
		}
	}
	return rs
}

// bypassed says why a whole call that no function in the tree calls does
// not carry the route ("" when it may): the tree makes a backend choice (it
// names one of the recipe's variables), and the per-cache function is
// called from another function than the whole call (a fork's new whole
// call, say): a decode path below a choice that gets no route guard, so
// that with SGLang's default backend the gate would do nothing there.
func (s *session) bypassed(mod string) string {
	fi := s.Info(mod)
	if fi == nil || s.choiceFile() == "" {
		return ""
	}
	st := fi.Syntax()
	whole := fi.TopDef(s.rec.WholeCall.Function)
	if whole < 0 {
		return ""
	}
	inside := func(n, def int32) bool {
		return def >= 0 && st.Start(n) >= st.Start(def) && st.End(n) <= st.End(def)
	}
	disp := fi.TopDef(s.rec.Dispatcher)
	for _, name := range []string{s.rec.Old, s.rec.Dispatcher} {
		for _, site := range s.References(resolve.Def(mod, name), false).Sites {
			if strings.HasPrefix(site.Kind, "import") || !s.serverFile(site.Path, mod) {
				continue
			}
			if site.Path == mod && (inside(site.Node, whole) || inside(site.Node, disp)) {
				continue
			}
			return fmt.Sprintf("%s:%d: no function in this tree calls %s, but %s reaches the per-cache function %s, and %s chooses the backend: that choice gets no route guard, so with SGLang's default backend the gate would do nothing there; wire it by hand",
				site.Path, site.Line, s.rec.WholeCall.Function, qualifiedDef(s.Info(site.Path).Syntax(), site.Node), s.rec.Old, s.choiceFile())
		}
	}
	return ""
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

// unconditional says why the call at node, which no backend choice mlagen
// reads decides, may still not run on every call of def ("" when it runs
// on each): a conditional around it within def (an if, a match, a
// conditional expression or boolean operator, an except clause), a return
// before it, or def itself named elsewhere in its module (a helper called
// by the function that makes the choice, or kept in a table of backends),
// where mlagen cannot see the choice that picks it.
func (s *session) unconditional(fi *resolve.Info, def, node int32) string {
	st := fi.Syntax()
	body := st.Child(def, "body")
	fn := st.Text(st.Child(def, "name"))
	call := s.rec.WholeCall.Function
	for p := st.Parent(node); p >= 0 && p != body; p = st.Parent(p) {
		switch st.Kind(p) {
		case "if_statement", "elif_clause", "else_clause", "match_statement", "case_clause",
			"conditional_expression", "boolean_operator", "except_clause":
			line, _ := resolve.LineCol(st.Src(), st.Start(p))
			what := strings.ReplaceAll(st.Kind(p), "_", " ")
			article := "a"
			if strings.ContainsRune("aeiou", rune(what[0])) {
				article = "an"
			}
			return fmt.Sprintf("%s calls %s inside %s %s (line %d) that mlagen does not read as a backend choice, so with the gate set the MMA kernel may not run; wire it by hand", fn, call, article, what, line)
		}
	}
	if r := returnBefore(st, body, st.Start(node)); r >= 0 {
		line, _ := resolve.LineCol(st.Src(), st.Start(r))
		return fmt.Sprintf("%s can return at line %d, before it calls %s, so a decode call may never reach the gate there; wire it by hand", fn, line, call)
	}
	outer := def
	if up := st.Parent(def); up >= 0 && st.Kind(up) == "decorated_definition" {
		outer = up
	}
	if st.Parent(outer) == 0 {
		src := st.Src()
		for _, at := range wordsAt(src, fn) {
			if at < st.Start(outer) || at >= st.End(outer) {
				line, _ := resolve.LineCol(src, at)
				return fmt.Sprintf("%s calls %s and is itself used at line %d of its module: the choice that picks %s is made there, where mlagen puts no guard; wire it by hand", fn, call, line, fn)
			}
		}
	}
	return ""
}

// returnBefore is the first return (or yield) under node n that ends by
// byte end (a return that holds a later call does not), at any depth
// (inside a with, a try or an if), or -1; nested functions, lambdas and
// classes are their own.
func returnBefore(st *resolve.Syntax, n int32, end int) int32 {
	found := int32(-1)
	st.Descendants(n, func(i int32) bool {
		if found >= 0 || st.Start(i) >= end {
			return false
		}
		switch st.Kind(i) {
		case "function_definition", "lambda", "class_definition":
			return false
		case "return_statement", "yield":
			if st.End(i) <= end {
				found = i
				return false
			}
		}
		return true
	})
	return found
}

// serverFile reports whether the file at p is part of the server's code:
// in the top-level package of the defining module mod (a checkout's tests,
// benchmarks and scripts are not), and not a test.
func (s *session) serverFile(p, mod string) bool {
	top := func(q string) string {
		name, _, _ := strings.Cut(s.ModuleName(q, s.rec.SourceRoot), ".")
		return name
	}
	return !testPath(p) && top(p) == top(mod)
}

// choiceFile is the first file of the tree (tests aside) that names one of
// the recipe's backend-choice variables, or "".
func (s *session) choiceFile() string {
	for _, p := range s.co.Tree.Paths() {
		f, ok := s.co.Tree.Files[p]
		if !ok || testPath(p) {
			continue
		}
		for _, c := range s.rec.Route.Choices {
			if len(resolve.WordAt(f.Data, c.Variable)) > 0 {
				return p
			}
		}
	}
	return ""
}
