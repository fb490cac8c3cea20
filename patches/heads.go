package patches

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// Under tensor parallelism SGLang's DeepSeek-V4 model pads a rank's query
// heads to 64 (FlashMLA's sparse decode takes 64 or 128) before the
// attention call, and that call is what the gate routes to mlagen's kernel:
// at TP 4 the kernel would run its 64-head configurations for 16 real heads.
// The heads guard (Recipe.Heads says where and how) makes the model pass a
// rank's own heads where the route reaches the kernel: with the gate set, on
// the recipe platform's GPUs. Everything else keeps SGLang's padding.
//
// The guard reads the gate through the model module's own envs and the GPU
// through its own torch, so it binds no name in the function it is put in
// (a local import of envs in a function that reads envs before it would
// raise UnboundLocalError there).

// headsSite is one place in a model that sets how many heads a rank's
// attention call gets.
type headsSite struct {
	path  string
	line  int
	where string // Class.method (qualifiedDef)
	shape string // headsMethod, headsPadding or headsOwnPadding
	want  *want  // nil when mlagen leaves this place padded
	why   string // why it does, when want is nil
}

// headsSites finds the places of the tree's models that set the heads of a
// rank's attention call, in file order, with the guard each wants.
func (s *session) headsSites() []headsSite {
	h := s.rec.Heads
	if h.Local == "" {
		return nil
	}
	var out []headsSite
	for _, fi := range s.Infos() {
		st := fi.Syntax()
		if st.Err() != nil || !s.rec.headsFile(st.Src()) {
			continue
		}
		st.Descendants(0, func(i int32) bool {
			if fi.Ignored(st.Start(i)) {
				return false
			}
			switch {
			case st.Kind(i) == "function_definition" && st.Text(st.Child(i, "name")) == h.Method && className(st, i) != "":
				out = append(out, s.headsMethodSite(fi, i))
			case st.Kind(i) == "assignment" && st.Text(st.Child(i, "left")) == h.Padded && holds(st, st.Child(i, "right"), "attribute", "self."+h.Local):
				if site, ok := s.headsPaddingSite(fi, i); ok {
					out = append(out, site)
				}
			case h.SinkHelper != "" && st.Kind(i) == "call" && st.Text(st.Child(i, "function")) == "self."+h.SinkHelper &&
				emptyArgs(st, st.Child(i, "arguments")):
				if site, ok := s.headsOwnPaddingSite(fi, i); ok {
					out = append(out, site)
				}
			}
			return true
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return out[i].line < out[j].line
	})
	return out
}

// headsMethodSite is the method def that returns the heads count: its guard
// opens the body.
func (s *session) headsMethodSite(fi *resolve.Info, def int32) headsSite {
	st := fi.Syntax()
	line, _ := resolve.LineCol(st.Src(), st.Start(def))
	site := headsSite{path: fi.Path(), line: line, where: qualifiedDef(st, st.Child(def, "name")), shape: headsMethod}
	if site.why = s.headsNames(fi, def); site.why != "" {
		return site
	}
	t, why := bodyTop(fi, def)
	if why != "" {
		site.why = s.rec.Heads.Method + " " + why
		return site
	}
	site.want = &want{path: fi.Path(), part: partHeads, at: t.at, eol: t.eol, where: site.where,
		lines: renderHeads(s.rec, headsMethod, t.indent, t.unit)}
	if bs := blocksIn(fi, s.rec, partHeads, st.Start(def), st.End(def)); len(bs) > 0 {
		site.want.have = &bs[0]
	}
	return site
}

// headsPaddingSite is the assignment of the padded count in a method: its
// guard goes right after it, when the same block then sizes the rank's
// sink from it under `if self.<sink> is None:` (the shape whose sink the
// guard keeps in step). ok is false for an assignment outside a method.
func (s *session) headsPaddingSite(fi *resolve.Info, asg int32) (headsSite, bool) {
	h := s.rec.Heads
	st := fi.Syntax()
	src := st.Src()
	stmt := st.Parent(asg)
	def := enclosingDef(st, asg)
	if def < 0 || className(st, def) == "" || st.Kind(stmt) != "expression_statement" {
		return headsSite{}, false
	}
	line, _ := resolve.LineCol(src, st.Start(stmt))
	site := headsSite{path: fi.Path(), line: line, where: qualifiedDef(st, asg), shape: headsPadding}
	block := st.Parent(stmt)
	sized := false
	for n := st.Next(stmt); n >= 0; n = st.Next(n) {
		if st.Kind(n) == "if_statement" && strings.Join(strings.Fields(st.Text(st.Child(n, "condition"))), " ") == "self."+h.Sink+" is None" &&
			holds(st, st.Child(n, "consequence"), "identifier", h.Padded) {
			sized = true
			break
		}
	}
	if !sized {
		site.why = fmt.Sprintf("%s is not followed by `if self.%s is None:` sizing the sink from it, a shape mlagen does not know", h.Padded, h.Sink)
		return site, true
	}
	if site.why = s.headsNames(fi, def); site.why != "" {
		return site, true
	}
	at := lineEnd(src, st.End(stmt))
	at += len(eolAt(src, at))
	_, indent, ok := stmtLine(src, st.Start(stmt), st.Start(def))
	if next := st.Next(stmt); ok && next >= 0 && st.Named(next) && st.Kind(next) != "comment" && st.Start(next) < at {
		ok = false // another statement on its line
	}
	outer := st.Parent(block) // the if (or def) the block belongs to
	outerIndent := string(src[lineStart(src, st.Start(outer)):st.Start(outer)])
	if !ok || !strings.HasPrefix(indent, outerIndent) || len(indent) == len(outerIndent) {
		site.why = fmt.Sprintf("%s is not assigned on a line of its own; wire it by hand", h.Padded)
		return site, true
	}
	site.want = &want{path: fi.Path(), part: partHeads, at: at, eol: eolAt(src, lineEnd(src, st.End(stmt))), where: site.where,
		lines: renderHeads(s.rec, headsPadding, indent, indent[len(outerIndent):])}
	if bs := blocksIn(fi, s.rec, partHeads, st.End(stmt), st.End(block)); len(bs) > 0 {
		site.want.have = &bs[0]
	}
	return site, true
}

// headsOwnPaddingSite is a call of the sink helper with no width in a
// method: the method takes the rank's sink at the padded width and pads its
// query to match on its own (SGLang's DSpark draft pads to a module
// constant). mlagen leaves it padded and lists it, so that the route shows
// every place whose calls reach the kernel with padded heads. ok is false
// for a call outside a method.
func (s *session) headsOwnPaddingSite(fi *resolve.Info, call int32) (headsSite, bool) {
	h := s.rec.Heads
	st := fi.Syntax()
	def := enclosingDef(st, call)
	if def < 0 || className(st, def) == "" {
		return headsSite{}, false
	}
	line, _ := resolve.LineCol(st.Src(), st.Start(call))
	return headsSite{path: fi.Path(), line: line, where: qualifiedDef(st, call), shape: headsOwnPadding,
		why: fmt.Sprintf("it takes the rank's sink at the padded width (self.%s() gives no width) and pads its query to match on its own, a shape mlagen does not change", h.SinkHelper)}, true
}

// emptyArgs reports whether an argument list passes nothing.
func emptyArgs(st *resolve.Syntax, args int32) bool {
	return args >= 0 && strings.Join(strings.Fields(st.Text(args)), "") == "()"
}

// headsNames says why the guard cannot read what it reads in the function
// def of fi ("" when it can): the gate through SGLang's envs, imported at
// module level, and the GPU through torch, neither bound in the function
// itself (a name the function binds anywhere is local to all of it, so the
// guard's read would raise UnboundLocalError where no binding ran first).
func (s *session) headsNames(fi *resolve.Info, def int32) string {
	env := s.environ()
	if env == nil {
		return fmt.Sprintf("the tree has no %s with class %s to read the gate through", s.rec.EnvironFile, s.rec.EnvironClass)
	}
	if !hasVal(s.Symbol(fi.Path(), s.rec.EnvironImport), resolve.Def(env.Path(), s.rec.EnvironImport)) {
		return fmt.Sprintf("the module does not import %s from %s at module level", s.rec.EnvironImport, env.Path())
	}
	if !fi.Binds("torch") {
		return "the module does not import torch at module level"
	}
	for _, name := range []string{s.rec.EnvironImport, "torch"} {
		if fi.BindsLocally(def, name) {
			return fmt.Sprintf("the function binds %s itself (a parameter, an assignment or an import in it), so the guard's read of the module's %s would raise UnboundLocalError; import it at module level only", name, name)
		}
	}
	return ""
}

// className is the name of the class whose body defines def directly, or "".
func className(st *resolve.Syntax, def int32) string {
	n := st.Parent(def)
	if n >= 0 && st.Kind(n) == "decorated_definition" {
		n = st.Parent(n)
	}
	if n < 0 || st.Kind(n) != "block" {
		return ""
	}
	if c := st.Parent(n); c >= 0 && st.Kind(c) == "class_definition" {
		return st.Text(st.Child(c, "name"))
	}
	return ""
}

// holds reports whether node n holds a node of kind whose text is text (an
// "attribute" "self.x", an "identifier").
func holds(st *resolve.Syntax, n int32, kind, text string) bool {
	found := false
	st.Descendants(n, func(i int32) bool {
		found = found || st.Kind(i) == kind && st.Text(i) == text
		return !found
	})
	return found
}

// describe says what the site does with the gate set, for the route.
func (h headsSite) describe(rec *Recipe) string {
	own := fmt.Sprintf("a rank's attention call gets its own query heads (self.%s), not the 64 SGLang pads them to, on %s", rec.Heads.Local, rec.Route.Platform.GPUs)
	if h.want == nil {
		return "left padded: " + h.why
	}
	if h.shape == headsPadding {
		return own + "; the width is the one a layer's first call took (its sink's), so set the gate before the server starts"
	}
	return own
}

// modelsWithoutHeads are the tree's files at the recipe's model path that
// count a rank's heads (spell Local) and in which no heads place was found
// (hops): a release that renamed the method or reshaped the padding, which
// mlagen then leaves padded without a guard.
func (s *session) modelsWithoutHeads(hops []RouteHop) []string {
	h := s.rec.Heads
	if h.Model == "" || h.Local == "" {
		return nil
	}
	var out []string
	for _, p := range s.co.Tree.Paths() {
		f := s.co.Tree.Files[p]
		if (p == h.Model || strings.HasSuffix(p, "/"+h.Model)) && f != nil && bytes.Contains(f.Data, []byte(h.Local)) &&
			!slices.ContainsFunc(hops, func(hop RouteHop) bool { return hop.Path == p }) {
			out = append(out, p)
		}
	}
	return out
}
