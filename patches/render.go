package patches

import (
	"fmt"
	"strings"
)

// The dispatcher and the gate are rendered the way black would format them
// (4-space indentation, 88 columns, black's bracket splitting for calls), so
// that a formatter run over the patched checkout changes nothing.

const blackWidth = 88

// signature is what the dispatcher copies from the old definition.
type signature struct {
	text    string   // "(q, k_cache, ...) -> Tuple[...]": parameters to the colon, verbatim
	forward []string // arguments that pass every parameter on unchanged
	kernel  []string // the first positional parameters, mapped onto the kernel's
}

// readSignature reads the old def's parameter list. The parameter text is
// copied byte for byte (defaults and annotations included); the call
// arguments are derived from it.
func readSignature(st *syntaxTree, def int32, rec *Recipe) (signature, error) {
	var sig signature
	params := st.child(def, "parameters")
	colon := int32(-1)
	for c := st.nodes[def].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].kind == ":" {
			colon = c
		}
		if st.nodes[c].kind == "async" {
			return sig, fmt.Errorf("%s is async; the dispatcher template is for a plain def", rec.Old)
		}
	}
	if params < 0 || colon < 0 {
		return sig, fmt.Errorf("cannot read the parameter list of %s", rec.Old)
	}
	sig.text = string(st.src[st.nodes[params].start:st.nodes[colon].start])
	sig.text = strings.TrimRight(sig.text, " \t")
	var positional []string
	kwOnly := false
	for c := st.nodes[params].first; c >= 0; c = st.nodes[c].next {
		n := &st.nodes[c]
		name := ""
		star := ""
		switch n.kind {
		case "identifier":
			name = st.text(c)
		case "default_parameter", "typed_default_parameter":
			if nm := st.child(c, "name"); nm >= 0 {
				name = st.text(nm)
			}
		case "typed_parameter":
			for d := n.first; d >= 0; d = st.nodes[d].next {
				switch st.nodes[d].kind {
				case "identifier":
					name = st.text(d)
				case "list_splat_pattern":
					star, name = "*", st.text(st.childKind(d, "identifier"))
				case "dictionary_splat_pattern":
					star, name = "**", st.text(st.childKind(d, "identifier"))
				}
				if name != "" {
					break
				}
			}
		case "list_splat_pattern":
			star, name = "*", st.text(st.childKind(c, "identifier"))
		case "dictionary_splat_pattern":
			star, name = "**", st.text(st.childKind(c, "identifier"))
		case "keyword_separator":
			kwOnly = true
			continue
		default:
			continue
		}
		if name == "" {
			continue
		}
		switch {
		case star == "*":
			sig.forward = append(sig.forward, "*"+name)
			kwOnly = true
		case star == "**":
			sig.forward = append(sig.forward, "**"+name)
		case kwOnly:
			sig.forward = append(sig.forward, name+"="+name)
		default:
			sig.forward = append(sig.forward, name)
			positional = append(positional, name)
		}
	}
	if len(positional) < len(rec.KernelParams) {
		return sig, fmt.Errorf("%s takes %d positional parameters; the kernel's sparse_decode needs %d (%s)",
			rec.Old, len(positional), len(rec.KernelParams), strings.Join(rec.KernelParams, ", "))
	}
	sig.kernel = positional[:len(rec.KernelParams)]
	return sig, nil
}

// gateRead says how the dispatcher reads the gate.
type gateRead struct {
	envsModule string // "sglang.srt.environ"; "" reads os.environ
	kernelImp  string // the import statement that brings the kernel module in as mma_kernel
}

// renderDispatcher returns the dispatcher block's lines, markers included.
func renderDispatcher(rec *Recipe, sig signature, g gateRead) []string {
	var l []string
	add := func(s ...string) { l = append(l, s...) }
	add(openMarker(rec, partDispatcher)+": added by `mlagen patch`, removed by `mlagen patch --revert`",
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
		quoted := make([]string, len(rec.Truthy))
		for i, t := range rec.Truthy {
			quoted[i] = fmt.Sprintf("%q", t)
		}
		add("    import os", "",
			fmt.Sprintf("    gate = os.environ.get(%q, %q)", rec.Gate, ""),
			"    if gate.strip().lower() in ("+strings.Join(quoted, ", ")+"):")
	}
	add("        "+g.kernelImp, "")
	add(blackCall("        ", "if mma_kernel.supports", sig.kernel[:rec.SupportsParams], ":")...)
	add(blackCall("            ", "return mma_kernel.sparse_decode", sig.kernel, "")...)
	add(blackCall("    ", "return "+rec.Old, sig.forward, "")...)
	add("    " + closeMarker(rec, partDispatcher))
	return l
}

// renderGate returns the gate registration lines for the environ class.
func renderGate(rec *Recipe, indent string) []string {
	return []string{
		indent + openMarker(rec, partGate) + ": added by `mlagen patch`",
		indent + rec.Gate + " = " + rec.EnvironField + "(False)",
		indent + closeMarker(rec, partGate),
	}
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
	out := []string{indent + head + "("}
	for _, a := range args {
		out = append(out, indent+"    "+a+",")
	}
	return append(out, indent+")"+tail)
}
