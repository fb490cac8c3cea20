package patches

import (
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// signature is what inserted code copies from a definition.
type signature struct {
	text       string   // "(q, k_cache, ...) -> Tuple[...]": parameters to the colon, verbatim
	forward    []string // arguments that pass every parameter on unchanged
	positional []string // the positional parameters' names, in order
}

// readSignature reads the parameter list of the def at node def (named
// name, for messages). The parameter text is copied byte for byte (defaults
// and annotations included); the call arguments are derived from it.
func readSignature(st *resolve.Syntax, def int32, name string) (signature, error) {
	var sig signature
	params := st.Child(def, "parameters")
	colon := int32(-1)
	for c := st.First(def); c >= 0; c = st.Next(c) {
		if st.Kind(c) == ":" {
			colon = c
		}
		if st.Kind(c) == "async" {
			return sig, fmt.Errorf("%s is async; mlagen's templates are for a plain def", name)
		}
	}
	if params < 0 || colon < 0 {
		return sig, fmt.Errorf("cannot read the parameter list of %s", name)
	}
	sig.text = strings.TrimRight(string(st.Src()[st.Start(params):st.Start(colon)]), " \t")
	kwOnly := false
	for c := st.First(params); c >= 0; c = st.Next(c) {
		if st.Kind(c) == "keyword_separator" {
			kwOnly = true
			continue
		}
		star, pname := paramName(st, c)
		if pname == "" {
			continue
		}
		switch {
		case star == "*":
			sig.forward = append(sig.forward, "*"+pname)
			kwOnly = true
		case star == "**":
			sig.forward = append(sig.forward, "**"+pname)
		case kwOnly:
			sig.forward = append(sig.forward, pname+"="+pname)
		default:
			sig.forward = append(sig.forward, pname)
			sig.positional = append(sig.positional, pname)
		}
	}
	return sig, nil
}

// paramName is the name one parameter node binds and its star ("", "*" or
// "**"); "" for a node that is not a parameter.
func paramName(st *resolve.Syntax, c int32) (star, name string) {
	splat := func(d int32) string {
		if id := st.ChildKind(d, "identifier"); id >= 0 {
			return st.Text(id)
		}
		return ""
	}
	switch st.Kind(c) {
	case "identifier":
		return "", st.Text(c)
	case "default_parameter", "typed_default_parameter":
		if nm := st.Child(c, "name"); nm >= 0 {
			return "", st.Text(nm)
		}
	case "typed_parameter":
		for d := st.First(c); d >= 0; d = st.Next(d) {
			switch st.Kind(d) {
			case "identifier":
				return "", st.Text(d)
			case "list_splat_pattern":
				return "*", splat(d)
			case "dictionary_splat_pattern":
				return "**", splat(d)
			}
		}
	case "list_splat_pattern":
		return "*", splat(c)
	case "dictionary_splat_pattern":
		return "**", splat(c)
	}
	return "", ""
}

// dispatcherArgs checks that the old function's parameters are the
// kernel's sparse_decode signature, by name and order, and nothing more: the
// dispatcher passes them by position, so a reordered or renamed parameter
// would pass the wrong tensor, and one the kernel does not take (an out=
// buffer, a flag) would be dropped on the MMA path.
func (sig signature) dispatcherArgs(rec *Recipe) ([]string, error) {
	if !sig.exactly(rec.KernelParams) {
		return nil, fmt.Errorf("%s takes %s; the kernel's sparse_decode takes (%s): its parameters changed, so it is not wired (wire it by hand or use a newer mlagen)",
			rec.Old, sig.params(), strings.Join(rec.KernelParams, ", "))
	}
	return sig.positional, nil
}

// wholeCallArgs checks the whole call's parameters against the kernel's
// whole-call contract the same way.
func (sig signature) wholeCallArgs(rec *Recipe) ([]string, error) {
	if !sig.exactly(rec.WholeCall.Params) {
		return nil, fmt.Errorf("%s takes %s; the kernel's %s takes (%s): SGLang changed the whole call, so it is not wired (wire it by hand or use a newer mlagen)",
			rec.WholeCall.Function, sig.params(), rec.WholeCall.Decode, strings.Join(rec.WholeCall.Params, ", "))
	}
	return sig.positional, nil
}

// exactly reports whether the parameters are want, positional, in order,
// with no others (keyword-only, *args, **kwargs).
func (sig signature) exactly(want []string) bool {
	return len(sig.forward) == len(want) && strings.Join(sig.positional, ",") == strings.Join(want, ",")
}

// params is the parameter list as written, on one line.
func (sig signature) params() string {
	return strings.Join(strings.Fields(sig.text), " ")
}
