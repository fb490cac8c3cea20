package patches

import (
	"fmt"
	"strings"
)

// The dispatcher, the gate and the guards are rendered the way black would
// format them (4-space indentation, 88 columns, black's bracket splitting),
// so that a formatter run over the patched checkout changes nothing.

const blackWidth = 88

// gateRead says how inserted code reads the gate and reaches the kernel.
type gateRead struct {
	envsModule string // "sglang.srt.environ"; "" reads os.environ
	kernelImp  string // the import statement that brings the kernel module in as mma_kernel
}

// locals are the names a guard binds inside the function it is inserted
// into: its body must not use them for anything else.
func (g gateRead) locals(rec *Recipe) []string {
	if g.envsModule != "" {
		return []string{rec.EnvironImport, "mma_kernel"}
	}
	return []string{"os", "mma_kernel"}
}

// gateTest returns the lines, at indent, that read the gate at call time and
// open the if that runs when it is true.
func (g gateRead) gateTest(rec *Recipe, indent string) []string {
	if g.envsModule != "" {
		return []string{indent + "from " + g.envsModule + " import " + rec.EnvironImport, "",
			indent + "if " + rec.EnvironImport + "." + rec.Gate + ".get():"}
	}
	return append([]string{indent + "import os", ""},
		blackTuple(indent, fmt.Sprintf("if os.environ.get(%q, \"\").strip().lower() in", rec.Gate), quoted(rec.Truthy), ":")...)
}

func quoted(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = fmt.Sprintf("%q", w)
	}
	return out
}

// renderDispatcher returns the dispatcher block's lines, markers included.
func renderDispatcher(rec *Recipe, sig signature, kernel []string, g gateRead) []string {
	var l []string
	add := func(s ...string) { l = append(l, s...) }
	add(openLine(rec, partDispatcher),
		"def "+rec.Dispatcher+sig.text+":",
		`    """Sparse-MLA decode through the MMA kernel, or `+rec.Old+`.`,
		"",
		"    The MMA kernel runs when "+rec.Gate+" is true at call time (read on",
		"    every call, never at import) and supports() accepts the inputs; otherwise,",
		"    and whenever the gate is unset or false, the old kernel runs unchanged.",
		`    """`)
	if g.envsModule != "" {
		add("    from "+g.envsModule+" import "+rec.EnvironImport, "",
			"    if "+rec.EnvironImport+"."+rec.Gate+".get():")
	} else {
		add("    import os", "",
			fmt.Sprintf("    gate = os.environ.get(%q, %q)", rec.Gate, ""),
			"    if gate.strip().lower() in ("+strings.Join(quoted(rec.Truthy), ", ")+"):")
	}
	add("        "+g.kernelImp, "")
	add(blackCall("        ", "if mma_kernel.supports", kernel[:rec.SupportsParams], ":")...)
	add(blackCall("            ", "return mma_kernel.sparse_decode", kernel, "")...)
	add(blackCall("    ", "return "+rec.Old, sig.forward, "")...)
	add("    " + closeMarker(rec, partDispatcher))
	return l
}

// renderGate returns the gate registration lines for the environ class.
func renderGate(rec *Recipe, indent string) []string {
	return []string{
		indent + openLine(rec, partGate),
		indent + rec.Gate + " = " + rec.EnvironField + "(False)",
		indent + closeMarker(rec, partGate),
	}
}

// renderWholeCall returns the guarded entry put at the top of the whole
// call's body (at indent; unit is one more level): with the gate set and the
// inputs supported, the kernel's whole-call entry returns; otherwise the
// body goes on as before.
func renderWholeCall(rec *Recipe, indent, unit string, args []string, g gateRead) []string {
	wc := rec.WholeCall
	l := []string{indent + openLine(rec, partWholeCall)}
	l = append(l, g.gateTest(rec, indent)...)
	l = append(l, indent+unit+g.kernelImp, "")
	l = append(l, blackCall(indent+unit, "if mma_kernel."+wc.Supports, args, ":")...)
	l = append(l, blackCall(indent+unit+unit, "return mma_kernel."+wc.Decode, args, "")...)
	return append(l, indent+closeMarker(rec, partWholeCall))
}

// renderRoute returns the guard put right before an entry's backend choice
// (at indent; unit is one more level): with the gate set, unless the kernel
// module's Defers says the selection gives the call to a peer (asked with
// args, the arguments of the branch's call to the whole call, as written
// there), the branch that forwards to the whole call runs (its statements
// copied verbatim, one level deeper, so the route is exactly SGLang's own)
// whatever the choice says; a deferred call goes on to SGLang's choice.
func renderRoute(rec *Recipe, indent, unit string, args []string, branch string, g gateRead) []string {
	l := []string{indent + openLine(rec, partRoute)}
	l = append(l, g.gateTest(rec, indent)...)
	l = append(l, indent+unit+g.kernelImp, "")
	l = append(l, blackCall(indent+unit, "if not mma_kernel."+rec.WholeCall.Defers, args, ":")...)
	l = append(l, indentLines(branch, unit))
	return append(l, indent+closeMarker(rec, partRoute))
}

// renderPreviousRoute is the route guard earlier mlagen releases wrote: the
// branch under the gate alone, so every call went into the whole call, a
// shape the selection gives to a peer included. Patch upgrades it; verify
// reports it; pristine.go recognises it as mlagen's, so that patch may
// upgrade it and --revert take it out.
func renderPreviousRoute(rec *Recipe, indent, branch string, g gateRead) []string {
	l := []string{indent + openLine(rec, partRoute)}
	l = append(l, g.gateTest(rec, indent)...)
	l = append(l, branch)
	return append(l, indent+closeMarker(rec, partRoute))
}

// indentLines puts unit at the start of every line of text that is not
// empty; text keeps its line endings (LF, CRLF or CR, as the file has them).
func indentLines(text, unit string) string {
	var b strings.Builder
	start := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		if start && c != '\n' && c != '\r' {
			b.WriteString(unit)
		}
		b.WriteByte(c)
		start = c == '\n' || (c == '\r' && (i+1 == len(text) || text[i+1] != '\n'))
	}
	return b.String()
}

// dedentLines undoes indentLines: ok is false when a line that is not
// empty does not start with unit.
func dedentLines(text, unit string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '\n' && text[i] != '\r' {
			if !strings.HasPrefix(text[i:], unit) {
				return "", false
			}
			i += len(unit)
		}
		e := i
		for e < len(text) && text[e] != '\n' && text[e] != '\r' {
			e++
		}
		if e < len(text) {
			e++
			if text[e-1] == '\r' && e < len(text) && text[e] == '\n' {
				e++
			}
		}
		b.WriteString(text[i:e])
		i = e
	}
	return b.String(), true
}

// blackCall formats head(args)tail as black does: on one line if it fits,
// else the arguments on one indented line, else one per line with a trailing
// comma.
func blackCall(indent, head string, args []string, tail string) []string {
	one := indent + head + "(" + strings.Join(args, ", ") + ")" + tail
	if len(one) <= blackWidth || len(args) == 0 {
		return []string{one}
	}
	mid := indent + "    " + strings.Join(args, ", ")
	if len(mid) <= blackWidth {
		return []string{indent + head + "(", mid, indent + ")" + tail}
	}
	return explode(indent, head+"(", args, ")"+tail)
}

// blackTuple formats "head (items)tail" with a tuple literal as black does:
// on one line if it fits, else one item per line with a trailing comma.
func blackTuple(indent, head string, its []string, tail string) []string {
	one := indent + head + " (" + strings.Join(its, ", ") + ")" + tail
	if len(one) <= blackWidth {
		return []string{one}
	}
	return explode(indent, head+" (", its, ")"+tail)
}

func explode(indent, open string, its []string, close string) []string {
	out := []string{indent + open}
	for _, a := range its {
		out = append(out, indent+"    "+a+",")
	}
	return append(out, indent+close)
}

// Heads guard shapes (Recipe.Heads).
const (
	headsMethod  = "method"
	headsPadding = "padding"
	// headsOwnPadding is only listed: no guard is rendered for it.
	headsOwnPadding = "own padding"
)

// renderHeads returns the heads guard (at indent; unit is one more level).
// The method shape returns the rank's own count with the gate set on the
// platform's GPUs; the padding shape sets the padded count to it then, on
// a layer's first call, and afterwards keeps the width the layer's sink was
// sized to on that call (SGLang sizes it once; query and sink must match).
// It reads the gate through the model module's own envs and tests the GPU
// through its own torch, binding no name in the function.
func renderHeads(rec *Recipe, shape, indent, unit string) []string {
	h := rec.Heads
	gate := rec.EnvironImport + "." + rec.Gate + ".get()"
	l := []string{indent + openLine(rec, partHeads)}
	kw := "if"
	if shape == headsPadding {
		l = append(l, indent+"if self."+h.Sink+" is not None:",
			indent+unit+"# the width this layer's sink was sized to, on its first call",
			indent+unit+h.Padded+" = self."+h.Sink+".shape[0]")
		kw = "elif"
	}
	l = append(l, blackCond(indent, kw, []string{gate, capabilityTest(rec)})...)
	if shape == headsPadding {
		l = append(l, indent+unit+h.Padded+" = self."+h.Local)
	} else {
		l = append(l, indent+unit+"return self."+h.Local)
	}
	return append(l, indent+closeMarker(rec, partHeads))
}

// capabilityTest is true on the GPUs of the recipe's platform, by torch's
// reading of the current device.
func capabilityTest(rec *Recipe) string {
	const major = "torch.cuda.get_device_capability()[0]"
	ms := rec.Route.Platform.Majors
	if len(ms) == 1 {
		return fmt.Sprintf("%s == %d", major, ms[0])
	}
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprint(m))
	}
	return major + " in (" + strings.Join(s, ", ") + ")"
}

// blackCond formats "kw a and b:" as black does: on one line if it fits,
// else in parentheses on one indented line, else one operand per line.
func blackCond(indent, kw string, terms []string) []string {
	one := indent + kw + " " + strings.Join(terms, " and ") + ":"
	if len(one) <= blackWidth {
		return []string{one}
	}
	mid := indent + "    " + strings.Join(terms, " and ")
	if len(mid) <= blackWidth {
		return []string{indent + kw + " (", mid, indent + "):"}
	}
	out := []string{indent + kw + " (", indent + "    " + terms[0]}
	for _, t := range terms[1:] {
		out = append(out, indent+"    and "+t)
	}
	return append(out, indent+"):")
}
