package patches

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// SGLang's model backend calls the route's entries, and not on every GPU:
// its DeepSeek-V4 backend calls flash_mla_with_kvcache_sm120 only in the
// branch of `if get_platform().is_sm120:` (`if _is_sm120:` up to 0.5.18),
// and on any other GPU decode takes another branch. A kernel module
// rendered for sm_89 and wired below that entry would never run, and every
// other check would still pass. So the proof goes one hop further out: it
// finds every call of each entry in the tree and reads the ifs around it
// as far as the recipe's platform predicates go (Platform). Where every
// call it finds runs only on other GPUs than the target's, patch refuses
// and verify fails, unless told that the route is wanted anyway.

// reach says whether a call runs on the target's GPUs.
type reach int8

const (
	reachUnknown reach = iota // no platform test decides it
	reachYes
	reachNo
)

func (r reach) String() string {
	return [...]string{"unknown", "yes", "no"}[r]
}

// caller is one call of an entry.
type caller struct {
	path, fn string
	line     int
	test     string // the platform test that decides it, as written ("" when none does)
	testLine int
	reach    reach
	// rest: what the deciding branch needs of its if's tests once their
	// tests of the GPU are read for the target (readTest), joined by and:
	// "ready" of "is_sm120 and ready" on sm_120 and of "is_sm120 or ready"
	// on sm_89, an elif's test of something else, and the negation of what
	// each earlier test comes down to ("not ready" of "if ready: ... elif
	// is_sm120:"); the call runs on the target's GPUs only where they hold
	// too. Tests of ifs further out are not named.
	rest string
	// deadAfter: the line of a return or raise that comes before the call
	// in a block around it, so the call never runs (0: none).
	deadAfter int
	// inTest: the call is in a test file (testPath), which the server does
	// not run: listed, but no evidence either way.
	inTest bool
}

// testPath reports whether a file is a test's (under a test or tests
// folder, or named test_*.py, *_test.py or conftest.py): a checkout's
// tests call the entry directly, on whatever GPU they run.
func testPath(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		if d == "test" || d == "tests" {
			return true
		}
	}
	base := parts[len(parts)-1]
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py"
}

// callers finds the calls of entry fn (defined at the top level of path)
// in the tree, and whether each runs on GPUs of compute capability major
// (-1: the target is not known; every call is then reachUnknown).
func (s *session) callers(path, fn string, major int) ([]caller, error) {
	// The backend names the entry but none of the recipe's names, so the
	// session's parses do not follow it: a session of its own does, over
	// the files that spell it.
	cs, err := resolve.Load(s.co.Tree, &resolve.Config{Names: []string{fn}}, resolve.Options{})
	if err != nil {
		return nil, fmt.Errorf("reading the calls of %s: %w", fn, err)
	}
	defer cs.Close()
	var out []caller
	for _, site := range cs.References(resolve.Def(path, fn), false).Sites {
		if !site.Call || strings.HasPrefix(site.Kind, "import") {
			continue
		}
		st := cs.Info(site.Path).Syntax()
		c := caller{path: site.Path, line: site.Line, fn: qualifiedDef(st, site.Node), inTest: testPath(site.Path)}
		c.reach, c.test, c.testLine, c.rest = s.platformAt(st, site.Node, major)
		if end := endsBefore(st, site.Node); end >= 0 {
			c.deadAfter, _ = resolve.LineCol(st.Src(), st.Start(end))
			c.reach, c.rest = reachNo, ""
		}
		out = append(out, c)
	}
	return out, nil
}

// endsBefore is a return or raise statement that precedes node i in one
// of the blocks around it, so that i never runs; -1 when none does. The
// blocks go up to the module: a def (or a lambda) after such a statement
// is never made, so the calls in it never run either. One inside an if, a
// try or a with before it is not counted: the code after it may run.
func endsBefore(st *resolve.Syntax, i int32) int32 {
	for n, p := i, st.Parent(i); p >= 0; n, p = p, st.Parent(p) {
		if k := st.Kind(p); k != "block" && k != "module" {
			continue
		}
		for c := st.First(p); c >= 0 && c != n; c = st.Next(c) {
			if k := st.Kind(c); k == "return_statement" || k == "raise_statement" {
				return c
			}
		}
	}
	return -1
}

// qualifiedDef names the function around node i as Class.method (or the
// module, when the call is at its top level).
func qualifiedDef(st *resolve.Syntax, i int32) string {
	var names []string
	for n := st.Parent(i); n >= 0; n = st.Parent(n) {
		if k := st.Kind(n); k == "function_definition" || k == "class_definition" {
			names = append([]string{st.Text(st.Child(n, "name"))}, names...)
		}
	}
	if len(names) == 0 {
		return "(module level)"
	}
	return strings.Join(names, ".")
}

// tri is a test's value on the target's GPUs: true, false or unknown (0).
type tri int8

// platformAt reads the ifs around node up to the top of its file: a
// branch whose own test (or an earlier test of the same if, which must not
// hold) tests the GPU is taken on the target's GPUs or not, as far as that
// test goes. The call never runs there when some branch around it is not
// taken (reachNo); the tests of the GPU allow it where one is taken and
// none is not (reachYes; tests of anything else aside); otherwise no test
// of the GPU decides (reachUnknown). With the verdict come the test that
// decides it, as the branch needs it ("not x" for an earlier test), its
// line, and, where the call runs under it, what the deciding branch needs
// of its if's tests of something else (caller.rest).
func (s *session) platformAt(st *resolve.Syntax, node int32, major int) (reach, string, int, string) {
	verdict, test := reachUnknown, int32(-1)
	negated, rest := false, []string(nil)
	for n, p := node, st.Parent(node); p >= 0; n, p = p, st.Parent(p) {
		own, before := int32(-1), []int32(nil)
		switch {
		case (st.Kind(p) == "if_statement" || st.Kind(p) == "elif_clause") && st.Field(n) == "consequence":
			own = st.Child(p, "condition")
			if st.Kind(p) == "elif_clause" {
				before = earlierTests(st, st.Parent(p), p)
			}
		case st.Kind(n) == "else_clause" && st.Kind(p) == "if_statement":
			before = earlierTests(st, p, n)
		default:
			continue
		}
		// runs: own holds and no earlier test does, as far as the GPU goes
		// (tri-valued and). others: what the branch needs besides, which
		// then must hold too: what own says once its tests of the GPU are
		// read, and the negation of what each earlier test says.
		runs, decider, neg := tri(1), int32(-1), false
		var others []string
		if own >= 0 {
			c := s.readTest(st, own, major)
			if c.gpu {
				decider = own
			}
			switch c.kind {
			case readFalse:
				runs = -1
			case readUnknown:
				runs = 0
			case readWhere:
				others = c.parts
			}
		}
		for _, b := range before {
			c := s.readTest(st, b, major)
			switch c.kind {
			case readTrue:
				runs, decider, neg = -1, b, true
			case readUnknown:
				if runs == 1 {
					runs = 0
				}
			case readWhere:
				others = append(others, notParts(c.parts))
			}
			if c.gpu && decider < 0 {
				decider, neg = b, true
			}
		}
		if decider < 0 {
			continue
		}
		switch {
		case runs == -1:
			verdict, test, negated, rest = reachNo, decider, neg, nil
		case runs == 1 && verdict == reachUnknown:
			verdict, test, negated, rest = reachYes, decider, neg, others
		case test < 0:
			test, negated = decider, neg
		}
		if verdict == reachNo {
			break
		}
	}
	if test < 0 {
		return reachUnknown, "", 0, ""
	}
	line, _ := resolve.LineCol(st.Src(), st.Start(test))
	text := st.Text(test)
	if negated {
		text = negation(st, test)
	}
	return verdict, text, line, strings.Join(rest, " and ")
}

// readKind is what a test says on the target's GPUs once its tests of the
// GPU are read.
type readKind int8

const (
	readUnknown readKind = iota // it tests the GPU, and no target says how
	readTrue                    // it holds there, whatever else it tests
	readFalse                   // it never holds there
	readWhere                   // it holds there where its parts do
)

// reading is a test as read on the target's GPUs: its kind, for readWhere
// the conditions it comes down to (each an operand of and, as written or
// negated), and whether it tests the GPU at all.
type reading struct {
	kind  readKind
	parts []string
	gpu   bool
}

// readTest reads test t on GPUs of compute capability major (-1: not
// known): each of the recipe's predicates (under not, and, or and
// parentheses) is true or false there, and what stays is the rest of the
// test, as written where it tests no GPU: `is_sm120 and ready` comes down
// to `ready` on sm_120 and to never on sm_89, `is_sm120 or ready` to
// always and to `ready`.
func (s *session) readTest(st *resolve.Syntax, t int32, major int) reading {
	t = inner(st, t)
	switch op := boolOp(st, t); {
	case st.Kind(t) == "not_operator":
		if c := s.readTest(st, st.Child(t, "argument"), major); c.gpu {
			return c.not()
		}
	case op == "and":
		return s.readTest(st, st.Child(t, "left"), major).and(s.readTest(st, st.Child(t, "right"), major))
	case op == "or":
		l, r := s.readTest(st, st.Child(t, "left"), major), s.readTest(st, st.Child(t, "right"), major)
		if l.gpu || r.gpu {
			return l.or(r)
		}
	default:
		if k := st.Kind(t); (k == "identifier" || k == "attribute" || k == "call") &&
			slices.Contains(s.rec.Route.Platform.Predicates, predicateName(st, t)) {
			switch {
			case major < 0:
				return reading{kind: readUnknown, gpu: true}
			case slices.Contains(s.rec.Route.Platform.Majors, major):
				return reading{kind: readTrue, gpu: true}
			}
			return reading{kind: readFalse, gpu: true}
		}
	}
	return reading{kind: readWhere, parts: []string{operand(st, t)}}
}

func (c reading) not() reading {
	switch c.kind {
	case readTrue:
		c.kind = readFalse
	case readFalse:
		c.kind = readTrue
	case readWhere:
		c.parts = []string{notParts(c.parts)}
	}
	return c
}

func (c reading) and(d reading) reading {
	gpu := c.gpu || d.gpu
	switch {
	case c.kind == readFalse || d.kind == readFalse:
		return reading{kind: readFalse, gpu: gpu}
	case c.kind == readUnknown || d.kind == readUnknown:
		return reading{kind: readUnknown, gpu: gpu}
	case c.kind == readTrue:
		d.gpu = gpu
		return d
	case d.kind == readTrue:
		c.gpu = gpu
		return c
	}
	return reading{kind: readWhere, parts: append(slices.Clone(c.parts), d.parts...), gpu: gpu}
}

func (c reading) or(d reading) reading {
	gpu := c.gpu || d.gpu
	switch {
	case c.kind == readTrue || d.kind == readTrue:
		return reading{kind: readTrue, gpu: gpu}
	case c.kind == readUnknown || d.kind == readUnknown:
		return reading{kind: readUnknown, gpu: gpu}
	case c.kind == readFalse:
		d.gpu = gpu
		return d
	case d.kind == readFalse:
		c.gpu = gpu
		return c
	}
	both := strings.Join(c.parts, " and ") + " or " + strings.Join(d.parts, " and ")
	return reading{kind: readWhere, parts: []string{"(" + both + ")"}, gpu: gpu}
}

// notParts spells not (parts joined by and); each part is an operand of
// and, so one that starts with not is a not over all of it.
func notParts(parts []string) string {
	if len(parts) > 1 {
		return "not (" + strings.Join(parts, " and ") + ")"
	}
	if p, ok := strings.CutPrefix(parts[0], "not "); ok {
		return p
	}
	return "not " + parts[0]
}

// operand spells test t as one operand of an and: an or or a conditional
// expression in parentheses.
func operand(st *resolve.Syntax, t int32) string {
	if boolOp(st, t) == "or" || st.Kind(t) == "conditional_expression" || st.Kind(t) == "lambda" {
		return "(" + st.Text(t) + ")"
	}
	return st.Text(t)
}

// inner is test t without the parentheses around it.
func inner(st *resolve.Syntax, t int32) int32 {
	for t >= 0 && st.Kind(t) == "parenthesized_expression" {
		c := st.First(t)
		for c >= 0 && (!st.Named(c) || st.Kind(c) == "comment") {
			c = st.Next(c)
		}
		if c < 0 {
			break
		}
		t = c
	}
	return t
}

// boolOp is "and" or "or" for a boolean operator t, "" for anything else.
func boolOp(st *resolve.Syntax, t int32) string {
	if t < 0 || st.Kind(t) != "boolean_operator" {
		return ""
	}
	return strings.TrimSpace(st.Text(st.Child(t, "operator")))
}

// negation spells not t: t's operand when t is itself a not.
func negation(st *resolve.Syntax, t int32) string {
	switch st.Kind(t) {
	case "not_operator":
		return st.Text(st.Child(t, "argument"))
	case "boolean_operator", "conditional_expression":
		return "not (" + st.Text(t) + ")"
	}
	return "not " + st.Text(t)
}

// earlierTests are the tests of if statement stmt before its clause c (an
// elif or else clause): the if's own and those of the elifs before c.
func earlierTests(st *resolve.Syntax, stmt, c int32) []int32 {
	tests := []int32{st.Child(stmt, "condition")}
	for e := st.First(stmt); e >= 0 && e != c; e = st.Next(e) {
		if st.Kind(e) == "elif_clause" {
			tests = append(tests, st.Child(e, "condition"))
		}
	}
	return tests
}

// predicateName is the name a test spells last: x for x, a.b.x and x(...)
// or a.x(...).
func predicateName(st *resolve.Syntax, t int32) string {
	switch st.Kind(t) {
	case "identifier":
		return st.Text(t)
	case "attribute":
		return st.Text(st.Child(t, "attribute"))
	case "call":
		return predicateName(st, st.Child(t, "function"))
	}
	return ""
}

// targetMajor is the compute capability major of a target ("sm_89": 8,
// "sm_120": 12, "sm_90a": 9), or -1.
func targetMajor(target string) int {
	digits := strings.TrimRight(strings.TrimPrefix(target, "sm_"), "abcdefghijklmnopqrstuvwxyz")
	n, err := strconv.Atoi(digits)
	if err != nil || n < 10 || !strings.HasPrefix(target, "sm_") {
		return -1
	}
	return n / 10
}

// unreached reports whether every call found runs only on other GPUs.
func unreached(cs []caller) bool {
	server := slices.DeleteFunc(slices.Clone(cs), func(c caller) bool { return c.inTest })
	return len(server) > 0 && !slices.ContainsFunc(server, func(c caller) bool { return c.reach != reachNo })
}

// callerHop is caller c of entry fn as the route reports it.
func (s *session) callerHop(c caller, fn, target string) RouteCaller {
	gpus := s.rec.Route.Platform.GPUs
	among := slices.Contains(s.rec.Route.Platform.Majors, targetMajor(target))
	rc := RouteCaller{Path: c.path, Line: c.line, Function: c.fn, Test: c.test, AlsoRequires: c.rest, Reach: c.reach.String(), InTest: c.inTest}
	switch {
	case c.inTest:
		rc.How = fmt.Sprintf("a test calls %s: not the server's path, so it does not count", fn)
	case c.deadAfter > 0:
		rc.How = fmt.Sprintf("calls %s after the return or raise at line %d, so the call never runs", fn, c.deadAfter)
	case c.test == "":
		rc.How = fmt.Sprintf("calls %s; no test of the GPU around the call", fn)
	case c.reach == reachYes && among && c.rest != "":
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d); on %s, %s among them, its branch runs where `%s` holds (mlagen does not judge it)", fn, c.test, c.testLine, gpus, target, c.rest)
	case c.reach == reachYes && among:
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d), which holds on %s: %s is one", fn, c.test, c.testLine, gpus, target)
	case c.reach == reachYes && c.rest != "":
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d); on %s, not one of %s, its branch runs where `%s` holds (mlagen does not judge it)", fn, c.test, c.testLine, target, gpus, c.rest)
	case c.reach == reachYes:
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d), which holds on %s, not one of %s", fn, c.test, c.testLine, target, gpus)
	case c.reach == reachNo && among:
		rc.How = fmt.Sprintf("calls %s only under `%s` (line %d), which does not hold on %s, so not on %s", fn, c.test, c.testLine, gpus, target)
	case c.reach == reachNo:
		rc.How = fmt.Sprintf("calls %s only under `%s` (line %d), which holds on %s, not on %s", fn, c.test, c.testLine, gpus, target)
	case target == "":
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d), which holds on %s (the kernel module names no TARGET to compare)", fn, c.test, c.testLine, gpus)
	default:
		rc.How = fmt.Sprintf("calls %s under `%s` (line %d), which mlagen cannot decide for %s", fn, c.test, c.testLine, target)
	}
	return rc
}

// unreachedWhy says, for an entry whose every caller runs only on other
// GPUs, that the kernel would never run on target; unreachedFix what to do.
func (s *session) unreachedWhy(path string, line int, fn, target string, cs []caller) string {
	var at []string
	gpus := ""
	for _, c := range cs {
		switch {
		case c.inTest:
		case c.deadAfter > 0:
			at = append(at, fmt.Sprintf("%s:%d (%s, after the return or raise at line %d, so never)", c.path, c.line, c.fn, c.deadAfter))
		default:
			at = append(at, fmt.Sprintf("%s:%d (%s, under `%s`, line %d)", c.path, c.line, c.fn, c.test, c.testLine))
			// The calls run where their tests hold: on the platform's GPUs
			// for a target outside them, elsewhere for one of them.
			gpus = ", and only on " + s.rec.Route.Platform.GPUs
			if slices.Contains(s.rec.Route.Platform.Majors, targetMajor(target)) {
				gpus = ", and only on GPUs other than " + s.rec.Route.Platform.GPUs
			}
		}
	}
	return fmt.Sprintf("%s:%d: on %s the server never calls %s, so the kernel would never run: the tree calls it only at %s%s",
		path, line, target, fn, strings.Join(at, "; "), gpus)
}

func unreachedFix(fn, target string) string {
	return fmt.Sprintf("patch for a target of those GPUs, use an SGLang whose model backend calls %s on %s, or pass --allow-unreached to wire it anyway (for a harness that calls the entry itself)", fn, target)
}

// entryReach is what the route says of entry e's callers on target ("":
// not known): each caller's hop, and, when every caller found runs only on
// other GPUs, why the kernel would never run there ("" otherwise).
func (s *session) entryReach(e entry, target string) ([]RouteCaller, string, error) {
	cs, err := s.callers(e.path, e.fn, targetMajor(target))
	if err != nil {
		return nil, "", err
	}
	var hops []RouteCaller
	for _, c := range cs {
		hops = append(hops, s.callerHop(c, e.fn, target))
	}
	why := ""
	if unreached(cs) {
		why = s.unreachedWhy(e.path, e.line, e.fn, target, cs)
	}
	return hops, why, nil
}
