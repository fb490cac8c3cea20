package patches

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// A block mlagen wrote is a pure function of the recipe and a few
// parameters it took from the tree when it wrote it: the old function's
// signature (dispatcher), the indentation, how the gate is read and the
// kernel module imported, the branch a route guard copies. Those
// parameters can be read back from the block itself, so re-rendering the
// block from them gives exactly its text when nobody edited it. A block that
// differs was edited by hand: patch must not overwrite it and revert must
// not delete it, since either would silently drop the user's change.

var (
	envsLineRE   = regexp.MustCompile(`^[ \t]*from ([A-Za-z_][A-Za-z0-9_.]*) import ([A-Za-z_][A-Za-z0-9_]*)$`)
	kernelLineRE = regexp.MustCompile(`^[ \t]*((?:from (?:\.|[A-Za-z_][A-Za-z0-9_.]*) )?import [A-Za-z_][A-Za-z0-9_]* as mma_kernel)$`)
)

// edited reports where the block b of fi differs from what mlagen renders
// from the block's own parameters: "" when it is exactly mlagen's, else the
// first line that differs (the block is the user's now).
func (s *session) edited(fi *resolve.Info, b block) string {
	if b.unfinished {
		return "it has no closing marker"
	}
	src := fi.Syntax().Src()
	eol := eolAt(src, lineEnd(src, b.open))
	have := strings.Split(string(src[b.open:b.close]), eol)
	want, err := s.rerender(fi, b, have, eol)
	if err != nil {
		return err.Error()
	}
	// A route guard's branch is one rendered item holding several lines.
	want = strings.Split(strings.Join(want, eol), eol)
	for i := range have {
		if i >= len(want) || have[i] != want[i] {
			return fmt.Sprintf("line %d differs from what mlagen writes", b.openLine+i)
		}
	}
	if len(want) > len(have) {
		return fmt.Sprintf("line %d differs from what mlagen writes", b.openLine+len(have))
	}
	return ""
}

// rerender renders block b again from the parameters its lines show.
func (s *session) rerender(fi *resolve.Info, b block, have []string, eol string) ([]string, error) {
	rec := s.rec
	indent := leadingSpace(have[0])
	g := readGate(have, rec)
	switch b.part {
	case partGate:
		return renderGate(rec, indent), nil
	case partDispatcher:
		def := defIn(fi.Syntax(), b)
		if def < 0 {
			return nil, fmt.Errorf("it holds no def %s", rec.Dispatcher)
		}
		sig, err := readSignature(fi.Syntax(), def, rec.Dispatcher)
		if err != nil {
			return nil, err
		}
		args, err := sig.dispatcherArgs(rec)
		if err != nil {
			return nil, err
		}
		// The dispatcher forwards to the old function, whose signature it
		// copies: its own parameters give the same rendering.
		return renderDispatcher(rec, sig, args, g), nil
	case partWholeCall:
		unit := ""
		for _, l := range have {
			if kernelLineRE.MatchString(l) {
				unit = strings.TrimPrefix(leadingSpace(l), indent)
				break
			}
		}
		if unit == "" {
			return nil, fmt.Errorf("it does not import the kernel module as mlagen writes it")
		}
		return renderWholeCall(rec, indent, unit, rec.WholeCall.Params, g), nil
	case partRoute:
		return s.rerenderRoute(fi, b, have, eol, indent, g)
	case partHeads:
		// Its last line before the marker sets or returns the count, one
		// level deeper; a return makes it the method shape.
		if len(have) < 3 {
			return nil, fmt.Errorf("it is shorter than any heads guard mlagen writes")
		}
		last := have[len(have)-2]
		shape := headsPadding
		if strings.TrimSpace(last) == "return self."+rec.Heads.Local {
			shape = headsMethod
		}
		return renderHeads(rec, shape, indent, strings.TrimPrefix(leadingSpace(last), indent)), nil
	}
	return nil, fmt.Errorf("unknown block %q", b.part)
}

// rerenderRoute renders route guard b again from its own lines: the branch
// it copies (one level deeper) and the arguments its Defers test passes,
// which must be those of a call in that branch; a guard without the test
// (no kernel import after the gate) as the previous mlagen wrote it.
func (s *session) rerenderRoute(fi *resolve.Info, b block, have []string, eol, indent string, g gateRead) ([]string, error) {
	rec := s.rec
	head := len(g.gateTest(rec, indent)) + 1
	if len(have) < head+2 {
		return nil, fmt.Errorf("it is shorter than any route guard mlagen writes")
	}
	if !kernelLineRE.MatchString(have[head]) {
		return renderPreviousRoute(rec, indent, strings.Join(have[head:len(have)-1], eol), g), nil
	}
	unit := strings.TrimPrefix(leadingSpace(have[head]), indent)
	st := fi.Syntax()
	var calls []int32
	st.Descendants(0, func(i int32) bool {
		if st.End(i) <= b.open || st.Start(i) >= b.close {
			return false
		}
		if st.Kind(i) == "call" && st.Child(i, "arguments") >= 0 {
			calls = append(calls, i)
		}
		return true
	})
	test := "mma_kernel." + rec.WholeCall.Defers
	for len(calls) > 0 && st.Text(st.Child(calls[0], "function")) != test {
		calls = calls[1:] // the gate's test
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("it does not ask %s", test)
	}
	args := argTexts(st, calls[0])
	start := head + 2 + len(blackCall(indent+unit, "if not "+test, args, ":"))
	if start >= len(have) {
		return nil, fmt.Errorf("it is shorter than any route guard mlagen writes")
	}
	branch, ok := dedentLines(strings.Join(have[start:len(have)-1], eol), unit)
	if !ok {
		return nil, fmt.Errorf("its branch is not indented as mlagen indents it")
	}
	same := slices.ContainsFunc(calls[1:], func(c int32) bool { return slices.Equal(argTexts(st, c), args) })
	if !same {
		return nil, fmt.Errorf("its %s test does not pass the arguments of a call in its branch", rec.WholeCall.Defers)
	}
	return renderRoute(rec, indent, unit, args, branch, g), nil
}

// argTexts are the arguments of call node c, as written.
func argTexts(st *resolve.Syntax, c int32) []string {
	var out []string
	for _, a := range argNodes(st, st.Child(c, "arguments")) {
		out = append(out, st.Text(a))
	}
	return out
}

// argNodes are the arguments in argument list node list (no comments).
func argNodes(st *resolve.Syntax, list int32) []int32 {
	var out []int32
	for a := st.First(list); a >= 0; a = st.Next(a) {
		if st.Named(a) && st.Kind(a) != "comment" {
			out = append(out, a)
		}
	}
	return out
}

// previousRoute reports whether route guard b of src is the previous
// mlagen's: one that does not ask the kernel module's Defers first.
func previousRoute(src []byte, b block, rec *Recipe) bool {
	return b.part == partRoute && !b.unfinished && !strings.Contains(string(src[b.open:b.close]), "mma_kernel."+rec.WholeCall.Defers+"(")
}

// readGate is how the lines of a block read the gate and import the
// kernel module.
func readGate(lines []string, rec *Recipe) gateRead {
	var g gateRead
	for _, l := range lines {
		if m := envsLineRE.FindStringSubmatch(l); m != nil && m[2] == rec.EnvironImport && g.envsModule == "" {
			g.envsModule = m[1]
		}
		if m := kernelLineRE.FindStringSubmatch(l); m != nil && g.kernelImp == "" {
			g.kernelImp = m[1]
		}
	}
	return g
}

// defIn is the first def that starts inside block b, or -1.
func defIn(st *resolve.Syntax, b block) int32 {
	for c := st.First(0); c >= 0; c = st.Next(c) {
		if st.Kind(c) == "function_definition" && st.Start(c) >= b.open && st.Start(c) < b.close {
			return c
		}
	}
	return -1
}

func leadingSpace(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " \t"))] }

// checkEdited refuses, with a message saying where, when a block of the
// tree was edited by hand.
func (s *session) checkEdited(what string) error {
	var lines []string
	for _, fi := range s.Infos() {
		for _, b := range blocksOf(fi, s.rec) {
			if why := s.edited(fi, b); why != "" {
				lines = append(lines, fmt.Sprintf("%s:%d: the mlagen %s block was edited by hand (%s)", fi.Path(), b.openLine, partNames[b.part], why))
			}
		}
	}
	if len(lines) > 0 {
		return &Problem{Msg: fmt.Sprintf("%s would discard changes made inside mlagen's blocks (nothing was written); move them out of the block, or delete the block by hand if they are not wanted, and run again:", what), Lines: lines}
	}
	return nil
}
