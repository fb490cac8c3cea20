package sglanglog

import (
	"regexp"
	"strings"
)

// Signature is one way a server start is known to fail.
type Signature struct {
	// Kind is the stable machine name ("oom", "nccl", ...).
	Kind string
	// Title is what a person reads.
	Title string
	re    *regexp.Regexp
}

// signatures is ordered by how much each tells the reader: when one incident
// matches several (an OOM inside graph capture, a CUDA error inside a
// traceback), the first in this list names it. A plain traceback is last
// because every Python failure has one.
//
// Each one matches the form in which a failure is reported, never a word
// alone: an exception line ("RuntimeError: CUDA error: ..."), Python's fatal
// error line, a shell's report of a killed job, a signal being received.
// SGLang's own prose mentions the same words ("This may lead to incorrect
// model outputs or CUDA errors.", logged when a user overrides the context
// length), and a healthy server must not be reported, let alone stopped,
// for saying them.
var signatures = []Signature{
	// "Capture cuda graph failed: ..." (decode, and the draft model's), and
	// in the releases with DeepSeek-V4 also "Capture prefill CUDA graph
	// failed: ..." and "Capture frozen-KV MTP cuda graph failed: ...".
	{"cuda-graph-capture", "CUDA graph capture failed", regexp.MustCompile(`(?i)\bcapture (?:piecewise |prefill |frozen-kv mtp )?cuda graph failed(?::|\.|$)`)},
	{"oom", "out of memory", regexp.MustCompile(`\bOutOfMemoryError: |\bCUDA out of memory\. Tried to allocate\b`)},
	{"compilation", "kernel compilation error", regexp.MustCompile(`\bCompilationError: |\bOutOfResources: out of resource\b`)},
	{"nccl", "NCCL error", regexp.MustCompile(`\bNCCL error(?: in)?: |\bnccl(?:InternalError|SystemError|UnhandledCudaError|InvalidUsage|InvalidArgument|RemoteError)\b|Watchdog caught collective operation timeout`)},
	{"cuda", "CUDA error", regexp.MustCompile(`\bCUDA error: |\bCUDA_ERROR_[A-Z_]{3,}|Triton Error \[CUDA\]: `)},
	{"segfault", "segmentation fault", regexp.MustCompile(`Fatal Python error: Segmentation fault|` + shellReport("Segmentation fault") + `|` + signalReport("SIGSEGV"))},
	{"abort", "aborted", regexp.MustCompile(`Fatal Python error: Aborted|^terminate called (?:after throwing|without an active exception|recursively)|` + shellReport("Aborted") + `|` + signalReport("SIGABRT"))},
	{"killed", "killed", regexp.MustCompile(shellReport("Killed") + `|` + signalReport("SIGKILL"))},
	{"sigquit", "SIGQUIT: a child process failed", regexp.MustCompile(`SIGQUIT received|Received sigquit`)},
	{"traceback", "Python traceback", regexp.MustCompile(`Traceback \(most recent call last\)`)},
}

// shellReport matches a shell's report of a job that died: bash's
// "script.sh: line 12: 31337 Killed  python3 ...", the interactive
// "[1]+  Killed  python3 ...", and a bare "Killed" or "Segmentation fault
// (core dumped)" that is the whole line (a sentence that starts with the
// word is not a report).
func shellReport(what string) string {
	return `(?:: line \d+: +\d+ +|^\[\d+\][+-]? +)` + what + `(?:\s|$)|^` + what + `(?: \(core dumped\))?\s*$`
}

// signalReport matches the ways programs say a signal arrived: Python's
// "<Signals.SIGKILL: 9>", torch's "Signal 9 (SIGKILL) received by PID",
// glog's "*** SIGSEGV (@0x0) received", "received signal SIGSEGV",
// "SIGSEGV received". The bare name, as in advice about signals, is not.
func signalReport(sig string) string {
	return `Signals\.` + sig + `\b|\(` + sig + `\)|\*\*\* ` + sig + `\b|(?i:signal:? )` + sig + `\b|\b` + sig + ` (?i:received)|(?i:received) ` + sig + `\b`
}

// requestLogRE matches the records SGLang writes with --log-requests: they
// quote the prompt and the answer, which may say anything.
var requestLogRE = regexp.MustCompile(`^(?:Receive|Finish): (?:obj|meta_info|rid)=`)

// Signatures lists every known failure signature, most telling first.
func Signatures() []Signature { return append([]Signature(nil), signatures...) }

// MatchSignature returns the most telling signature a message matches and
// its rank (lower is more telling).
func MatchSignature(text string) (Signature, int, bool) {
	for i, s := range signatures {
		if s.re.MatchString(text) {
			return s, i, true
		}
	}
	return Signature{}, -1, false
}

// matchFailure is MatchSignature for a record of the log: the lines of
// mlagen's kernel module and SGLang's request log are reports, not
// failures, whatever words they quote (a fallback's reason, a prompt).
func matchFailure(text string) (Signature, int, bool) {
	if requestLogRE.MatchString(text) {
		return Signature{}, -1, false
	}
	if _, ok := MatchKernel(text); ok {
		return Signature{}, -1, false
	}
	return MatchSignature(text)
}

var (
	tracebackRE = regexp.MustCompile(`Traceback \(most recent call last\):?`)
	// chainRE are the lines Python prints between chained exceptions; what
	// follows them belongs to the same failure.
	chainRE = regexp.MustCompile(`^(During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:)`)
	// exceptionRE is the final "Type: message" line of a traceback: a
	// name ending in Error, Exception, Exit or Interrupt, or any class by
	// its module ("triton.runtime.errors.OutOfResources: out of resource:
	// shared memory", "requests.exceptions.ReadTimeout: ...").
	exceptionRE = regexp.MustCompile(`^(?:(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt)\b(?::|$)|(?:[A-Za-z_]\w*\.)+[A-Z]\w*:)`)
)

// Failure is one incident: a signature line and the lines that belong to it
// (a traceback with its chained exceptions is one failure, not several).
type Failure struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Line is the 1-based number, among the lines read, of the first line.
	Line int `json:"line"`
	// Rank is the process tag of the record that started the incident.
	Rank string `json:"rank,omitempty"`
	// Match is the line that decided Kind.
	Match string `json:"match"`
	// Summary is the last exception line of a traceback (the outermost of a
	// chain), or the matching line otherwise.
	Summary string `json:"summary"`
	// Context holds up to ContextLines lines read before the incident.
	Context []string `json:"context"`
	// Lines is the incident itself, first line included.
	Lines []string `json:"lines"`
}

// Detector groups log lines into failures. Feed it every line in order.
type Detector struct {
	// ContextLines is how many lines before a failure it keeps (default 20).
	ContextLines int
	// MaxLines closes an incident that keeps growing (default 200), so a log
	// without prefixes cannot swallow everything after a traceback.
	MaxLines int

	n          int      // lines fed so far
	recent     []string // ring of the last ContextLines lines
	open       *Failure
	openRank   int  // signature rank that named open
	tbSeen     bool // open contains a traceback
	afterChain bool // last non-empty line of open was a chain separator
	// afterRecord: no traceback has followed the last record yet. If that
	// record is a message SGLang logs with the traceback of an exception
	// it handled (MatchHandled, asked only then: not on every line), the
	// traceback that follows is that one, not a failure.
	afterRecord bool
	// handledEnded: the open handled traceback has had its exception line.
	handledEnded bool
	recordText   string // the last record's message
	recordRank   string // and its rank
}

// Handled is the Kind of an incident that is not a failure: the traceback
// SGLang logs below a handled message (logger.warning(..., exc_info=True)),
// after which the server goes on. Flush returns it like a failure, for the
// caller to note.
const Handled = "handled"

func (d *Detector) contextLines() int {
	if d.ContextLines > 0 {
		return d.ContextLines
	}
	return 20
}

func (d *Detector) maxLines() int {
	if d.MaxLines > 0 {
		return d.MaxLines
	}
	return 200
}

// Lines is how many lines the detector has seen.
func (d *Detector) Lines() int { return d.n }

// Open reports whether an incident is still collecting lines.
func (d *Detector) Open() bool { return d.open != nil }

// OpenLine is the first line number of the open incident, 0 if none.
func (d *Detector) OpenLine() int {
	if d.open == nil {
		return 0
	}
	return d.open.Line
}

// Feed takes the next raw line. It returns the incident that this line
// closed, if any; a line can close one incident and start the next.
func (d *Detector) Feed(raw string) *Failure {
	d.n++
	return d.feed(raw, Parse(raw), false)
}

// FeedContinued takes the next piece of a line too long to be read whole
// (see source.Event.Continued): it is not a line of its own, so it neither
// counts as one nor starts a new record, and it belongs to the incident the
// line's earlier pieces are part of.
func (d *Detector) FeedContinued(raw string) *Failure {
	return d.feed(raw, ParsePiece(raw), true)
}

func (d *Detector) feed(raw string, rec Record, piece bool) *Failure {
	var closed *Failure
	if d.open != nil {
		if piece || d.continues(rec) {
			d.absorb(raw, rec)
			if len(d.open.Lines) >= d.maxLines() {
				closed = d.Flush()
			}
			d.remember(raw)
			return closed
		}
		closed = d.Flush()
	}
	if rec.Prefixed {
		d.afterRecord = true
		d.recordText, d.recordRank = strings.TrimSpace(rec.Text), rec.Rank
	}
	if d.afterRecord && !rec.Prefixed && tracebackRE.MatchString(rec.Text) && MatchHandled(d.recordText) {
		// Its lines are the handled exception's, whatever they say (a CUDA
		// error a fallback caught): nothing in them is a failure.
		d.open = &Failure{
			Kind:    Handled,
			Title:   "traceback of a handled exception (logged as a warning)",
			Line:    d.n,
			Rank:    d.recordRank,
			Match:   raw,
			Summary: d.recordText,
			Context: append([]string(nil), d.recent...),
			Lines:   []string{raw},
		}
		d.openRank, d.tbSeen, d.afterChain, d.afterRecord, d.handledEnded = -1, true, false, false, false
		d.remember(raw)
		return closed
	}
	if sig, rank, ok := matchFailure(rec.Text); ok {
		d.open = &Failure{
			Kind:    sig.Kind,
			Title:   sig.Title,
			Line:    d.n,
			Rank:    rec.Rank,
			Match:   raw,
			Summary: strings.TrimSpace(rec.Text),
			Context: append([]string(nil), d.recent...),
			Lines:   []string{raw},
		}
		d.openRank = rank
		d.tbSeen = tracebackRE.MatchString(rec.Text)
		d.afterChain = false
	}
	d.remember(raw)
	return closed
}

// continues decides whether a line belongs to the open incident.
func (d *Detector) continues(rec Record) bool {
	if rec.Prefixed {
		return false // a new log record always starts something new
	}
	if d.open.Kind == Handled && d.handledEnded && strings.TrimSpace(rec.Text) != "" && !chainRE.MatchString(rec.Text) {
		// A handled traceback ends at its exception line (and what chains
		// to it): a line after that is the log going on, and a process
		// that aborts right after the fallback is a failure of its own.
		return false
	}
	if tracebackRE.MatchString(rec.Text) {
		// A traceback right after "During handling..." is the same failure;
		// a second unchained one is another process failing.
		return d.afterChain || !d.tbSeen
	}
	return true
}

func (d *Detector) absorb(raw string, rec Record) {
	f := d.open
	f.Lines = append(f.Lines, raw)
	text := rec.Text
	if tracebackRE.MatchString(text) {
		d.tbSeen = true
	}
	if strings.TrimSpace(text) != "" {
		d.afterChain = chainRE.MatchString(text)
	}
	if sig, rank, ok := matchFailure(text); ok && rank < d.openRank {
		f.Kind, f.Title, f.Match = sig.Kind, sig.Title, raw
		d.openRank = rank
	}
	if f.Kind == Handled {
		switch {
		case chainRE.MatchString(text):
			d.handledEnded = false
		case exceptionRE.MatchString(text):
			d.handledEnded = true
		}
		return
	}
	if d.tbSeen && exceptionRE.MatchString(text) {
		f.Summary = strings.TrimSpace(text)
	}
}

func (d *Detector) remember(raw string) {
	d.recent = append(d.recent, raw)
	if over := len(d.recent) - d.contextLines(); over > 0 {
		d.recent = append(d.recent[:0], d.recent[over:]...)
	}
}

// Flush closes the open incident (at the end of the source, after a quiet
// spell, when the server says it is ready) and returns it, or nil.
func (d *Detector) Flush() *Failure {
	f := d.open
	d.open = nil
	d.tbSeen, d.afterChain, d.openRank, d.handledEnded = false, false, 0, false
	if f != nil {
		// Trailing blank lines are noise in a report.
		for len(f.Lines) > 1 && strings.TrimSpace(f.Lines[len(f.Lines)-1]) == "" {
			f.Lines = f.Lines[:len(f.Lines)-1]
		}
	}
	return f
}

// Recent returns the last ContextLines lines fed, oldest first.
func (d *Detector) Recent() []string { return append([]string(nil), d.recent...) }
