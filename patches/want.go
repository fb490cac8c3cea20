package patches

import (
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// want is one block as mlagen would write it now: where it goes when it is
// absent, its lines, and the block found there when present. Patch turns a
// want into an edit; Verify into a problem when the tree differs from it.
type want struct {
	path  string
	part  string
	at    int // where the block goes when absent (a line end for blocks with a lead, a line start for the others)
	lines []string
	eol   string
	have  *block
	where string // what it guards, for messages ("flash_mla_sparse_decode_triton (file:line)")
}

func (w *want) body() string { return strings.Join(w.lines, w.eol) }

// insertion is the text inserted at w.at: the block with its own line
// endings.
func (w *want) insertion() string {
	return strings.Repeat(w.eol, blockLead[w.part]) + w.body() + strings.Repeat(w.eol, blockTrail[w.part])
}

// state says how the tree differs from w: "" not at all, "missing",
// "stale" (there, with other content), "moved" (not where it belongs) or
// "unfinished" (no closing marker).
func (w *want) state(src []byte) string {
	switch {
	case w.have == nil:
		return "missing"
	case w.have.unfinished:
		return "unfinished"
	case blockTrail[w.part] > 0 && w.have.open != w.at && w.have.close+len(w.eol) != w.at:
		return "moved"
	case string(src[w.have.open:w.have.close]) != w.body():
		return "stale"
	}
	return ""
}

// edit is the change that makes the tree as w wants it; ok is false when
// nothing is to change. A block that was moved or left unfinished is not
// mlagen's to fix.
func (w *want) edit(src []byte) (resolve.Edit, bool, error) {
	switch w.state(src) {
	case "":
		return resolve.Edit{}, false, nil
	case "missing":
		return resolve.Edit{Start: w.at, End: w.at, Text: w.insertion()}, true, nil
	case "stale":
		return resolve.Edit{Start: w.have.open, End: w.have.close, Text: w.body()}, true, nil
	}
	return resolve.Edit{}, false, &Problem{Msg: fmt.Sprintf("%s:%d: the mlagen %s block of %s was moved or edited; take it out by hand (or with mlagen patch --revert) and patch again",
		w.path, w.have.openLine, w.part, w.where)}
}

// problem is Verify's sentence for a tree that differs from w, or "".
func (w *want) problem(src []byte) string {
	switch w.state(src) {
	case "missing":
		return fmt.Sprintf("%s: %s has no mlagen %s block (not patched, or patched by an earlier mlagen: run mlagen patch)", w.path, w.where, w.part)
	case "stale":
		return fmt.Sprintf("%s:%d: the mlagen %s block of %s is not what mlagen writes now (edited, or SGLang's code changed since patching): run mlagen patch again", w.path, w.have.openLine, w.part, w.where)
	case "moved", "unfinished":
		return fmt.Sprintf("%s:%d: the mlagen %s block of %s was moved or edited; take it out and patch again", w.path, w.have.openLine, w.part, w.where)
	}
	return ""
}

// stmtLine is where a block inserted before the statement starting at
// start goes: the start of its line, with the statement's indentation. It
// fails when something else precedes the statement on its line (a body on
// the def line, statements joined with ;).
func stmtLine(src []byte, start, def int) (int, string, bool) {
	at := lineStart(src, start)
	indent := string(src[at:start])
	if strings.Trim(indent, " \t") != "" || at <= def {
		return 0, "", false
	}
	return at, indent, true
}

// bodyStatements are the statements of a block, outside mlagen's blocks.
func bodyStatements(fi *resolve.Info, block int32) []int32 {
	st := fi.Syntax()
	var out []int32
	for c := st.First(block); c >= 0; c = st.Next(c) {
		if st.Named(c) && st.Kind(c) != "comment" && !fi.Ignored(st.Start(c)) {
			out = append(out, c)
		}
	}
	return out
}

// spellsIn is the first identifier in node n, outside mlagen's blocks, that
// is one of names, or "".
func spellsIn(fi *resolve.Info, n int32, names []string) string {
	st := fi.Syntax()
	found := ""
	st.Descendants(n, func(i int32) bool {
		if found == "" && st.Kind(i) == "identifier" && contains(names, st.Text(i)) && !fi.Ignored(st.Start(i)) {
			found = st.Text(i)
		}
		return found == ""
	})
	return found
}

// wholeCallWant is the guarded entry of the whole call in the defining
// module (nil when the module defines no whole call), or the problem that
// keeps it from being wired.
func (s *session) wholeCallWant(fi *resolve.Info, g gateRead) (*want, string) {
	rec := s.rec
	name := rec.WholeCall.Function
	def := fi.TopDef(name)
	if def < 0 {
		// SGLang defines the whole call beside the per-cache function; one
		// moved elsewhere would keep calling the old path with the gate set
		// (no whole-call guard, and no route guard, which forwards to it).
		if elsewhere := s.definers(name); len(elsewhere) > 0 {
			return nil, fmt.Sprintf("%s defines %s, but %s, which defines %s, does not: mlagen guards the whole call only beside the per-cache function, as SGLang has them, so the gate would not reach it; wire it by hand",
				strings.Join(elsewhere, ", "), name, fi.Path(), rec.Old)
		}
		return nil, ""
	}
	st := fi.Syntax()
	src := st.Src()
	line, _ := resolve.LineCol(src, st.Start(def))
	where := name
	sig, err := readSignature(st, def, name)
	if err != nil {
		return nil, fmt.Sprintf("%s:%d: %v", fi.Path(), line, err)
	}
	args, err := sig.wholeCallArgs(rec)
	if err != nil {
		return nil, fmt.Sprintf("%s:%d: %v", fi.Path(), line, err)
	}
	top, why := bodyTop(fi, def)
	if why != "" {
		return nil, fmt.Sprintf("%s:%d: %s %s", fi.Path(), line, name, why)
	}
	if n := spellsIn(fi, st.Child(def, "body"), g.locals(rec)); n != "" {
		return nil, fmt.Sprintf("%s:%d: %s uses the name %s, which the whole-call guard binds; wire it by hand", fi.Path(), line, name, n)
	}
	w := &want{path: fi.Path(), part: partWholeCall, at: top.at, eol: top.eol, where: where,
		lines: renderWholeCall(rec, top.indent, top.unit, args, g)}
	if bs := blocksIn(fi, rec, partWholeCall, st.Start(def), st.End(def)); len(bs) > 0 {
		w.have = &bs[0]
	}
	return w, ""
}

// top is where a guard that opens a function's body goes.
type top struct {
	at     int    // the start of the line after the def's colon, or after the docstring
	eol    string // the line ending there
	indent string // the body's indentation
	unit   string // one level: the body's indentation less the def's
}

// bodyTop is where a guard that opens def's body goes: on the line after
// the def's colon, or after the docstring, before any comment that starts
// the body; why says (after the function's name) why none can go there.
func bodyTop(fi *resolve.Info, def int32) (top, string) {
	st := fi.Syntax()
	src := st.Src()
	stmts := bodyStatements(fi, st.Child(def, "body"))
	if len(stmts) == 0 || (len(stmts) == 1 && isDocstring(st, stmts[0])) {
		return top{}, "has no statements to guard"
	}
	after := colonOf(st, def)
	if isDocstring(st, stmts[0]) {
		after = st.End(stmts[0])
	}
	at := lineEnd(src, after)
	at += len(eolAt(src, at))
	_, indent, ok := stmtLine(src, st.Start(stmts[0]), st.Start(def))
	defIndent := string(src[lineStart(src, st.Start(def)):st.Start(def)])
	if !ok || at > lineStart(src, st.Start(stmts[len(stmts)-1])) || !strings.HasPrefix(indent, defIndent) || len(indent) == len(defIndent) {
		return top{}, "does not start its body on a line of its own; wire it by hand"
	}
	return top{at: at, eol: eolAt(src, lineEnd(src, after)), indent: indent, unit: indent[len(defIndent):]}, ""
}

// colonOf is the end of the colon that closes a def's header.
func colonOf(st *resolve.Syntax, def int32) int {
	end := st.Start(def)
	for c := st.First(def); c >= 0; c = st.Next(c) {
		if st.Kind(c) == ":" {
			end = st.End(c)
		}
	}
	return end
}

// isDocstring reports whether statement n is a bare string (a docstring
// when it is a body's first statement).
func isDocstring(st *resolve.Syntax, n int32) bool {
	if st.Kind(n) != "expression_statement" {
		return false
	}
	c := st.First(n)
	return c >= 0 && st.Kind(c) == "string" && st.Next(c) < 0
}

// routeGuard is the guard before an entry's backend choice: the branch br
// that forwards to the whole call, copied one level deeper under the gate
// and the kernel module's Defers test (asked with the arguments of the
// branch's call to the whole call), right before the first statement of the
// function's body that makes the choice. It refuses what it cannot copy
// without changing what the code does.
func (s *session) routeGuard(fi *resolve.Info, def int32, br *branch, g gateRead) (*want, string) {
	st := fi.Syntax()
	src := st.Src()
	body := st.Child(def, "body")
	stmts := bodyStatements(fi, body)
	idx := -1
	for i, n := range stmts {
		if n == br.stmt {
			idx = i
		}
	}
	if idx < 0 {
		return nil, "the backend choice is inside an mlagen block; take the block out and patch again"
	}
	k := idx
	for k > 0 && s.choiceStatement(fi, stmts[k-1]) {
		k--
	}
	// The guard goes right before the choice: a return before it (another
	// backend tested some other way) would take the call where the gate
	// never looks.
	for _, n := range stmts[:k] {
		if r := returnBefore(st, n, st.End(n)); r >= 0 {
			line, _ := resolve.LineCol(src, st.Start(r))
			return nil, fmt.Sprintf("the function can return at line %d, before its backend choice, where the route guard would go: a decode call that returns there never reaches the gate; wire it by hand", line)
		}
	}
	at, indent, ok := stmtLine(src, st.Start(stmts[k]), st.Start(def))
	if !ok {
		return nil, "the backend choice does not start on a line of its own; wire it by hand"
	}
	if n := spellsIn(fi, body, g.locals(s.rec)); n != "" {
		return nil, fmt.Sprintf("the function uses the name %s, which the route guard binds; wire it by hand", n)
	}
	first, last := st.First(br.block), int32(-1)
	for c := first; c >= 0; c = st.Next(c) {
		last = c
	}
	if first < 0 || lineStart(src, st.Start(first)) <= st.Start(br.clause) {
		return nil, "the branch that calls the whole call is on the line of its if; wire it by hand"
	}
	inBranch := bodyStatements(fi, br.block)
	if len(inBranch) == 0 {
		return nil, "the branch that calls the whole call has no statements mlagen can copy; wire it by hand"
	}
	_, inner, ok := stmtLine(src, st.Start(inBranch[0]), st.Start(br.clause))
	if !ok || !strings.HasPrefix(inner, indent) || len(inner) == len(indent) {
		return nil, "the branch that calls the whole call is not indented below its if; wire it by hand"
	}
	if prob := multiLineString(fi, br.block); prob != "" {
		return nil, prob
	}
	args, prob := s.routeArgs(fi, br)
	if prob != "" {
		return nil, prob
	}
	branch := string(src[lineStart(src, st.Start(first)):lineEnd(src, st.End(last))])
	w := &want{path: fi.Path(), part: partRoute, at: at, eol: eolAt(src, lineEnd(src, at)),
		where: st.Text(st.Child(def, "name")),
		lines: renderRoute(s.rec, indent, inner[len(indent):], args, branch, g)}
	if bs := blocksIn(fi, s.rec, partRoute, st.Start(def), st.End(def)); len(bs) > 0 {
		w.have = &bs[0]
	}
	return w, ""
}

// multiLineString is why the branch at block cannot be indented one level
// deeper ("" when it can): a string that spans lines, whose value would
// change.
func multiLineString(fi *resolve.Info, block int32) string {
	st := fi.Syntax()
	prob := ""
	st.Descendants(block, func(i int32) bool {
		if prob == "" && st.Kind(i) == "string" && strings.ContainsAny(st.Text(i), "\r\n") {
			line, _ := resolve.LineCol(st.Src(), st.Start(i))
			prob = fmt.Sprintf("the branch that calls the whole call holds a string that spans lines (line %d), which the route guard would change by indenting it; wire it by hand", line)
		}
		return prob == ""
	})
	return prob
}

// plainArg are the kinds of syntax node an argument of the whole call may
// be made of for the route guard to pass it to Defers as well: names,
// attributes, subscripts, constants and operators on them, and a mapping's
// get (kwargs.get("topk_length"), as an entry point with FlashMLA's keyword
// names may read its arguments). Evaluating such an argument once more,
// before the branch, changes nothing; any other call, an assignment
// expression, a lambda or an await might.
var plainArg = map[string]bool{
	"identifier": true, "attribute": true, "subscript": true, "slice": true, "keyword_argument": true,
	"integer": true, "float": true, "true": true, "false": true, "none": true, "ellipsis": true,
	"string": true, "string_start": true, "string_content": true, "string_end": true, "escape_sequence": true, "concatenated_string": true,
	"unary_operator": true, "binary_operator": true, "boolean_operator": true, "comparison_operator": true, "not_operator": true,
	"parenthesized_expression": true, "conditional_expression": true, "tuple": true, "argument_list": true,
}

// routeArgs are the arguments of the branch's call to the whole call, as
// written there, which the route guard passes to Defers; or why they cannot
// be passed as they are.
func (s *session) routeArgs(fi *resolve.Info, br *branch) ([]string, string) {
	st := fi.Syntax()
	wc := s.rec.WholeCall
	list := int32(-1)
	if br.call >= 0 {
		list = st.Child(br.call, "arguments")
	}
	if list < 0 || st.Kind(list) != "argument_list" {
		return nil, fmt.Sprintf("the branch does not call %s with an argument list mlagen can pass to %s; wire it by hand", wc.Function, wc.Defers)
	}
	var args []string
	given := map[string]bool{}
	for _, c := range argNodes(st, list) {
		text := st.Text(c)
		switch st.Kind(c) {
		case "list_splat", "dictionary_splat":
			return nil, fmt.Sprintf("the branch calls %s with %s: mlagen cannot tell which arguments %s would get; wire it by hand", wc.Function, text, wc.Defers)
		case "keyword_argument":
			name := st.Text(st.Child(c, "name"))
			if !contains(wc.Params, name) || given[name] {
				return nil, fmt.Sprintf("the branch passes %s a keyword argument %s that %s does not take; wire it by hand", wc.Function, name, wc.Defers)
			}
			given[name] = true
		default:
			if len(given) >= len(wc.Params) {
				return nil, fmt.Sprintf("the branch passes %s more arguments than %s takes; wire it by hand", wc.Function, wc.Defers)
			}
			given[wc.Params[len(given)]] = true
		}
		if strings.ContainsAny(text, "\r\n") {
			first, _, _ := strings.Cut(strings.ReplaceAll(text, "\r", "\n"), "\n")
			return nil, fmt.Sprintf("the argument `%s ...` of the branch's call to %s spans lines (mlagen passes %s arguments of one line); wire it by hand", strings.TrimSpace(first), wc.Function, wc.Defers)
		}
		if prob := s.plainArgument(fi, br, c); prob != "" {
			return nil, fmt.Sprintf("the argument `%s` of the branch's call to %s %s; wire it by hand", text, wc.Function, prob)
		}
		args = append(args, text)
	}
	for _, p := range wc.Params[:wc.Required] {
		if !given[p] {
			return nil, fmt.Sprintf("the branch's call to %s does not pass %s, which %s takes; wire it by hand", wc.Function, p, wc.Defers)
		}
	}
	return args, ""
}

// isGet reports whether call node c is a get method call: x.get(...).
func isGet(st *resolve.Syntax, c int32) bool {
	f, args := st.Child(c, "function"), st.Child(c, "arguments")
	return f >= 0 && args >= 0 && st.Kind(f) == "attribute" && st.Kind(args) == "argument_list" && strings.HasSuffix(st.Text(f), ".get")
}

// plainArgument says why the route guard cannot evaluate argument node
// arg before the branch runs ("" when it can): it is not made of plainArg
// nodes, or it names something the branch binds.
func (s *session) plainArgument(fi *resolve.Info, br *branch, arg int32) string {
	st := fi.Syntax()
	prob := ""
	st.Descendants(arg, func(i int32) bool {
		switch {
		case prob != "":
		case st.Kind(i) == "call" && isGet(st, i):
		case st.Named(i) && !plainArg[st.Kind(i)]:
			prob = fmt.Sprintf("is not a plain name or value (it holds a %s), so the route guard would evaluate it a second time, before the branch", strings.ReplaceAll(st.Kind(i), "_", " "))
		case st.Kind(i) == "identifier":
			for _, b := range fi.Lookup(i) {
				if at := st.Start(b.Node); at >= st.Start(br.block) && at < st.End(br.block) {
					line, _ := resolve.LineCol(st.Src(), at)
					prob = fmt.Sprintf("names %s, which the branch binds (line %d): the route guard asks %s before the branch runs", st.Text(i), line, s.rec.WholeCall.Defers)
				}
			}
		}
		return prob == ""
	})
	return prob
}

// choiceStatement reports whether statement n is an if whose test (or an
// elif's) is a backend choice.
func (s *session) choiceStatement(fi *resolve.Info, n int32) bool {
	st := fi.Syntax()
	if st.Kind(n) != "if_statement" {
		return false
	}
	if s.readsEnv(fi, st.Child(n, "condition")) != nil {
		return true
	}
	for c := st.First(n); c >= 0; c = st.Next(c) {
		if st.Kind(c) == "elif_clause" && s.readsEnv(fi, st.Child(c, "condition")) != nil {
			return true
		}
	}
	return false
}
