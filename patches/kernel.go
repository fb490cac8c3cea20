package patches

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// The kernel module is installed as it comes (rendered by gen, or from
// --kernels DIR) and checked like the rest of the wiring: it must be Python
// and define, at module level, what the inserted code calls; the report
// also says whether it carries mlagen's generated header and the kernel
// contract's names, and whether it is byte for byte what this mlagen emits
// for its TARGET (Options.Emitted says what that is).

// KernelCheck is what the proof says of the kernel module.
type KernelCheck struct {
	Path   string `json:"path"`
	Target string `json:"target,omitempty"`
	// Python: the module parses.
	Python bool `json:"python"`
	// Generated: it starts with mlagen's generated-code header.
	Generated bool `json:"generated"`
	// Command is the command its generated header names (an emit with a
	// --selection of the user's own, say), "" without one.
	Command string `json:"command,omitempty"`
	// Missing are the contract's names it does not define.
	Missing []string `json:"missing"`
	// Emitted: "identical" or "differs" (from what this mlagen emits for
	// Target), or "not compared" (no target, or no Options.Emitted).
	Emitted string `json:"emitted"`
	// otherCommand: it differs, and its header names another command than
	// the one this mlagen's own module was emitted by (a sweep or a
	// selection of the user's), so it is not a stale copy of that module.
	otherCommand bool
}

// kernelSource is a kernel module's source as parsed.
type kernelSource struct {
	src    []byte
	syntax string // the first syntax error, "" when it parses
	fi     *resolve.Info
}

func readKernel(src []byte) (*kernelSource, error) {
	fi, err := resolve.Analyze("kernel module", src)
	if err != nil {
		return nil, err
	}
	k := &kernelSource{src: src, fi: fi}
	if e := fi.Syntax().Err(); e != nil {
		k.syntax = e.String()
	}
	return k, nil
}

// defines reports whether the module defines every name at module level.
func (k *kernelSource) missing(names []string) []string {
	var out []string
	for _, n := range names {
		if k.syntax != "" || !k.fi.Binds(n) {
			out = append(out, n)
		}
	}
	return out
}

// fault is why the wiring cannot use the module ("" when it can): it does
// not parse, or lacks a function the inserted code calls.
func (k *kernelSource) fault(rec *Recipe) string {
	if k.syntax != "" {
		return "it is not Python (" + k.syntax + ")"
	}
	if miss := k.missing(rec.KernelAPI); len(miss) > 0 {
		return "it does not define " + strings.Join(miss, ", ") + ", which the wiring calls"
	}
	return ""
}

// whole reports whether the module has the whole-call entry points.
func (k *kernelSource) whole(rec *Recipe) bool {
	return len(k.missing([]string{rec.WholeCall.Supports, rec.WholeCall.Decode})) == 0
}

// hasWholeCall reports whether a kernel module's source defines the
// whole-call entry points.
func hasWholeCall(kernel []byte, rec *Recipe) bool {
	k, err := readKernel(kernel)
	return err == nil && k.whole(rec)
}

// hasDefers reports whether a kernel module's source defines what the route
// guard asks before SGLang's backend choice (defers_full).
func hasDefers(kernel []byte, rec *Recipe) bool {
	k, err := readKernel(kernel)
	return err == nil && len(k.missing([]string{rec.WholeCall.Defers})) == 0
}

// check describes the module for the report; body is the source without
// the install header.
func (k *kernelSource) check(path string, body []byte, rec *Recipe, emitted func(string) ([]byte, error)) *KernelCheck {
	kc := &KernelCheck{Path: path, Target: kernelTarget(body), Python: k.syntax == "",
		Generated: bytes.HasPrefix(body, []byte(rec.KernelHeader)), Missing: k.missing(rec.KernelContract), Emitted: "not compared"}
	if kc.Generated {
		kc.Command = kernelCommand(body)
	}
	if kc.Target != "" && emitted != nil {
		if want, err := emitted(kc.Target); err == nil {
			kc.Emitted = "differs"
			if bytes.Equal(want, body) {
				kc.Emitted = "identical"
			}
			kc.otherCommand = kc.Emitted == "differs" && kc.Command != "" && kc.Command != kernelCommand(want)
		}
	}
	return kc
}

// describe is the kernel hop's sentence.
func (kc *KernelCheck) describe() string {
	var parts []string
	if kc.Target != "" {
		parts = append(parts, "target "+kc.Target)
	}
	switch {
	case kc.Emitted == "identical":
		parts = append(parts, fmt.Sprintf("byte for byte what this mlagen emits for %s", kc.Target))
	case kc.otherCommand:
		// Written on purpose by another emit: say which, not that it
		// might be stale.
		parts = append(parts, fmt.Sprintf("emitted by `%s` (this mlagen's own for %s differs: mlagen patch without --kernels installs that)", kc.Command, kc.Target))
	case kc.Emitted == "differs":
		parts = append(parts, fmt.Sprintf("differs from what this mlagen emits for %s (installed from --kernels, edited, or by another mlagen: mlagen patch installs this one's)", kc.Target))
	}
	if !kc.Generated {
		parts = append(parts, "no generated-code header (not written by mlagen emit)")
	}
	if len(kc.Missing) > 0 {
		parts = append(parts, "lacks the contract's "+strings.Join(kc.Missing, ", "))
	}
	how := "the generated MMA kernel module"
	if len(parts) > 0 {
		how += ", " + strings.Join(parts, "; ")
	}
	return how
}
