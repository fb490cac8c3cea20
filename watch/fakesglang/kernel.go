package fakesglang

import (
	"regexp"
	"strconv"
	"time"
)

// The lines the kernel module mlagen installs logs, once per process per
// distinct message, through SGLang's logging: which sparse-MLA decode path
// served a call. The texts are fixed by the kernel module's contract.

// Target, Config and Heads are what the fake kernel lines name (Heads: a
// rank's 16 at TP 4, as a patched SGLang passes them).
const (
	Target = "sm_120"
	Config = "ws_h64_t64_k2_w8_s2"
	Heads  = 16
)

// FallbackReason is the reason the fake fallback lines give.
const FallbackReason = "supports_full() refused: 20 heads is not a multiple of 16"

// KernelRanLine is the line of a rank ("TP0"; empty for none) whose decode
// ran on the MMA kernel, with Heads heads.
func KernelRanLine(rank, entry, target, config string) string {
	return prefix("2026-06-17 22:07:08", rank) + "mlagen: sparse-MLA decode on the MMA kernel (" + entry + ", target " + target + ", config " + config + ", " + strconv.Itoa(Heads) + " heads)"
}

// KernelFallbackLine is the line of a rank whose decode the module
// declined, so SGLang's own kernel ran.
func KernelFallbackLine(rank, entry, reason string) string {
	return prefix("2026-06-17 22:07:08", rank) + "mlagen: sparse-MLA decode not on the MMA kernel (" + entry + "): " + reason + "; SGLang's kernel runs"
}

func prefix(stamp, rank string) string {
	if rank == "" {
		return "[" + stamp + "] "
	}
	return "[" + stamp + " " + rank + "] "
}

// withCapture puts lines right after graph capture begins, where the
// module logs them: capture runs the decode kernel for the first time.
func withCapture(lines ...string) []Step {
	steps := concat(Head(), Capture())
	var out []Step
	for i, st := range steps {
		out = append(out, st)
		if i == len(Head())+2 { // after "Capture cuda graph bs [...]"
			for j, l := range lines {
				out = append(out, Step{At: st.At + time.Duration(j+1)*100*time.Millisecond, Line: l})
			}
		}
	}
	return concat(out, Tail())
}

// KernelStart is a clean start on which every rank's decode ran on the MMA
// kernel, whole call.
func KernelStart() []Step {
	return withCapture(
		KernelRanLine("TP0", "whole call", Target, Config),
		KernelRanLine("TP3", "whole call", Target, Config),
	)
}

// FallbackStart is a clean start on which the module declined every call:
// the whole call (FallbackReason) and then each cache.
func FallbackStart() []Step {
	return withCapture(
		KernelFallbackLine("TP0", "whole call", FallbackReason),
		KernelFallbackLine("TP3", "whole call", FallbackReason),
		KernelFallbackLine("TP0", "per cache", "supports() refused: 20 heads is not a multiple of 16"),
	)
}

// sgr matches what Colour wraps.
var sgr = regexp.MustCompile(`^(\[[^\]]*\])( ?)(INFO:)?`)

// Colour is a line as a colouring log formatter writes it: the prefix in
// green and uvicorn's "INFO:" in bold, reset after each.
func Colour(line string) string {
	return sgr.ReplaceAllString(line, "\x1b[32m$1\x1b[0m$2\x1b[1m$3\x1b[0m")
}

// Coloured returns steps with every line coloured.
func Coloured(steps []Step) []Step {
	out := make([]Step, len(steps))
	for i, st := range steps {
		out[i] = Step{At: st.At, Line: Colour(st.Line)}
	}
	return out
}
