package sglanglog

import (
	"regexp"
	"strconv"
)

// Kind names one startup phase boundary that SGLang logs.
type Kind int

const (
	LoadBegin Kind = iota + 1
	LoadEnd
	CaptureBegin
	CaptureBatches
	CaptureEnd
	PiecewiseBegin
	PiecewiseEnd
	Ready
)

var kindNames = map[Kind][2]string{
	LoadBegin:      {"load-weights-begin", "load weights begin"},
	LoadEnd:        {"load-weights-end", "load weights end"},
	CaptureBegin:   {"cuda-graph-begin", "cuda graph capture begin"},
	CaptureBatches: {"cuda-graph-batches", "cuda graph capture batches"},
	CaptureEnd:     {"cuda-graph-end", "cuda graph capture end"},
	// The prefill graph was the "piecewise" one in SGLang's older words;
	// the IDs keep that name, so that saved baselines still line up.
	PiecewiseBegin: {"piecewise-cuda-graph-begin", "prefill cuda graph capture begin"},
	PiecewiseEnd:   {"piecewise-cuda-graph-end", "prefill cuda graph capture end"},
	Ready:          {"ready", "ready"},
}

// ID is the stable machine name used in JSON and baselines.
func (k Kind) ID() string { return kindNames[k][0] }

// String is the name printed for people.
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n[1]
	}
	return "unknown phase"
}

// Phase is a recognised phase line with the numbers SGLang put in it.
// A number SGLang did not log is zero.
type Phase struct {
	Kind Kind
	// ElapsedS is the duration SGLang itself measured ("elapsed=33.84 s",
	// "Time elapsed: 19.25 s"); it is more precise than anything derived
	// from second-resolution stamps, so baselines prefer it.
	ElapsedS float64
	AvailGB  float64
	UsedGB   float64
	// Batches is the batch-size list of "Capture cuda graph bs [...]", or
	// the "bs=[...]" of a named capture's begin or end line.
	Batches string
}

var phaseRules = []struct {
	kind Kind
	re   *regexp.Regexp
}{
	// Order matters only where texts overlap; none of these do.
	{LoadBegin, regexp.MustCompile(`Load weight begin\b`)},
	{LoadEnd, regexp.MustCompile(`Load weight end\b`)},
	// The decode graph, where the kernel first runs. The releases with
	// DeepSeek-V4 name each capture (0.5.14, 0.5.16 and 0.5.23 checked by
	// .ci/sglang-releases.sh against their own sources): "Capture target
	// decode CUDA graph begin. backend=..., avail mem=..." ("target
	// verify" with speculative decoding), the batch list as "bs=[...]" on
	// the begin line (0.5.14, 0.5.16) or the end line (0.5.23). Earlier
	// ones said "Capture cuda graph begin. This can take up to several
	// minutes.", the list on a line of its own. The draft model's captures
	// ("Capture draft decode ...") come after the target's and are not
	// phases here.
	{CaptureBegin, regexp.MustCompile(`(?i)Capture (?:target (?:decode|verify) )?cuda graph begin\b`)},
	{CaptureBatches, regexp.MustCompile(`(?i)Capture cuda graph bs \[([^\]]*)\]`)},
	{CaptureEnd, regexp.MustCompile(`(?i)Capture (?:target (?:decode|verify) )?cuda graph end\b`)},
	// The prefill graph: "Capture target prefill CUDA graph begin/end" in
	// the releases above, "Capture piecewise CUDA graph begin/end" before.
	{PiecewiseBegin, regexp.MustCompile(`(?i)Capture (?:piecewise|target prefill) cuda graph begin\b`)},
	{PiecewiseEnd, regexp.MustCompile(`(?i)Capture (?:piecewise|target prefill) cuda graph end\b`)},
	{Ready, regexp.MustCompile(`The server is fired up and ready to roll`)},
}

var (
	batchesRE = regexp.MustCompile(`\bbs=\[([^\]]*)\]`)
	availRE   = regexp.MustCompile(`avail mem=\s*([\d.]+)\s*GB`)
	usedRE    = regexp.MustCompile(`mem usage=\s*([\d.]+)\s*GB`)
	elapsedRE = regexp.MustCompile(`(?i)elapsed(?:=|:)\s*([\d.]+)\s*s\b`)
)

// MatchPhase recognises a phase line from the message text of a record.
func MatchPhase(text string) (Phase, bool) {
	for _, r := range phaseRules {
		m := r.re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		p := Phase{
			Kind:     r.kind,
			ElapsedS: number(elapsedRE, text),
			AvailGB:  number(availRE, text),
			UsedGB:   number(usedRE, text),
		}
		switch r.kind {
		case CaptureBatches:
			p.Batches = m[1]
		case CaptureBegin, CaptureEnd:
			if b := batchesRE.FindStringSubmatch(text); b != nil {
				p.Batches = b[1]
			}
		}
		return p, true
	}
	return Phase{}, false
}

func number(re *regexp.Regexp, text string) float64 {
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	return f
}
