package sglanglog

import (
	"regexp"
	"strconv"
	"strings"
)

// KernelLine is what the kernel module mlagen installs says about which
// sparse-MLA decode path served. The module logs each distinct message
// once per process, through SGLang's logging (so with SGLang's prefix):
//
//	mlagen: sparse-MLA decode on the MMA kernel (<entry>, target <t>, config <name>, <h> heads)
//	mlagen: sparse-MLA decode not on the MMA kernel (<entry>): <reason>; SGLang's kernel runs
//	mlagen: sparse-MLA decode not on the MMA kernel (whole call): <reason>; SGLang's backend choice runs
//
// <entry> is "whole call" or "per cache"; <h> the heads the call had,
// padded ones included (modules emitted before 2026-12-06 leave it out).
// The last line is defers_full's: the selection gives the call's shape to
// a peer, and mlagen's route guard leaves the call to SGLang's backend
// choice.
type KernelLine struct {
	// Ran is true for "on the MMA kernel", false for a fallback.
	Ran    bool   `json:"ran"`
	Entry  string `json:"entry"`
	Target string `json:"target,omitempty"`
	Config string `json:"config,omitempty"`
	// Heads are the query heads of the call (0: the line does not say):
	// under tensor parallelism, a rank's own or the 64 SGLang pads them to.
	Heads int `json:"heads,omitempty"`
	// Reason is why the module declined (fallback lines only).
	Reason string `json:"reason,omitempty"`
	// Deferred: the line says SGLang's backend choice runs (the module
	// deferred the call to a peer), not SGLang's kernel.
	Deferred bool `json:"deferred,omitempty"`
}

// The expressions are not anchored at the start: SGLang's prefix comes
// first, and a deployment with its own logging format may put a level or a
// logger name before the message.
var (
	kernelRanRE      = regexp.MustCompile(`mlagen: sparse-MLA decode on the MMA kernel \(([^,()]+), target ([^,()]+), config ([^,()]+)(?:, ([0-9]+) heads)?\)`)
	kernelFallbackRE = regexp.MustCompile(`mlagen: sparse-MLA decode not on the MMA kernel \(([^()]+)\): (.*); SGLang's (kernel|backend choice) runs`)
)

// MatchKernel recognises a kernel module line in the message text of a
// record.
func MatchKernel(text string) (KernelLine, bool) {
	if !strings.Contains(text, "mlagen: sparse-MLA decode ") {
		return KernelLine{}, false // the common case, without a regexp
	}
	if m := kernelRanRE.FindStringSubmatch(text); m != nil {
		heads, _ := strconv.Atoi(m[4]) // "" (an older module): 0
		return KernelLine{Ran: true, Entry: strings.TrimSpace(m[1]), Target: strings.TrimSpace(m[2]), Config: strings.TrimSpace(m[3]), Heads: heads}, true
	}
	if m := kernelFallbackRE.FindStringSubmatch(text); m != nil {
		return KernelLine{Entry: strings.TrimSpace(m[1]), Reason: strings.TrimSpace(m[2]), Deferred: m[3] == "backend choice"}, true
	}
	return KernelLine{}, false
}

// String is the line's content for people, without the fixed words.
func (k KernelLine) String() string {
	if k.Ran {
		s := k.Entry + ", target " + k.Target + ", config " + k.Config
		if k.Heads > 0 {
			s += ", " + strconv.Itoa(k.Heads) + " heads"
		}
		return s
	}
	return k.Entry + ": " + k.Reason
}
