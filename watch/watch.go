// Package watch is the deployment vigil: it follows an SGLang server's log
// from start to "ready", prints each startup phase as it happens, stops at
// the first failure signature (or collects them all), times out loudly, and
// only calls a deployment good once the server has answered a real request
// correctly.
//
// The loop is driven by one channel of log events and an injected Clock, so
// tests replay whole starts, time-outs included, without sleeping.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"regexp"
	"strings"
	"time"

	"github.com/mlagen/mlagen/watch/baseline"
	"github.com/mlagen/mlagen/watch/sglanglog"
	"github.com/mlagen/mlagen/watch/smoke"
	"github.com/mlagen/mlagen/watch/source"
)

// Config is one watch.
type Config struct {
	Source source.Source
	// Clock defaults to the wall clock.
	Clock Clock
	// Out receives the human-readable progress.
	Out io.Writer
	// TTY redraws the status line in place instead of printing lines.
	TTY bool
	// Width is the terminal's width in columns; a status line longer than
	// that would wrap and could not be redrawn in place (default 100).
	Width int
	// Timeout bounds the wait for "ready" (default 10m).
	Timeout time.Duration
	// Interval is how often the status line is shown (default 10s).
	Interval time.Duration
	// KeepGoing collects every failure instead of stopping at the first.
	KeepGoing bool
	// Quiet is how long the lines of a failure may pause before it is
	// taken as complete (default 2s): a dead server writes no line to end
	// its last traceback.
	Quiet time.Duration
	// Smoke is the request sent once the server is ready.
	Smoke smoke.Request
	// Baseline, when set, is compared with this start's phase durations.
	Baseline *baseline.File
	// BaselinePath names the baseline in messages.
	BaselinePath string
	// ExpectKernel makes READY also require, after the smoke answer, a line
	// of mlagen's kernel module saying that decode ran on the MMA kernel.
	ExpectKernel bool
	// ExpectKernelWhy says why, for people ("the server was started with
	// SGLANG_SM120_MMA_FLASHMLA=1", "--expect-kernel").
	ExpectKernelWhy string
	// Stopping, when set, is called just before a server the source started
	// is stopped (SIGTERM, the grace period, SIGKILL): the caller lets a
	// Ctrl-C end the process at once from then on, leaving the server as
	// it is, as the message printed then says.
	Stopping func()
	// KernelWait is how long, after the smoke answer, the log may take to
	// show that line (default DefaultKernelWait; never past Timeout). The
	// module logs it at first use, so it is usually there before the
	// answer.
	KernelWait time.Duration
	// KernelSettle is how long, after the smoke answer, a watch that does
	// not require the kernel reads on for a line of the kernel module when
	// none has come (default DefaultKernelSettle): the module logs at
	// first use, which in a server without CUDA graphs is the smoke
	// request itself, before the answer, but a file is read every
	// source.DefaultPoll (a command's log as it passes it on), so the line
	// can be on its way when the answer comes; without the wait the report
	// said "served: unknown".
	KernelSettle time.Duration
}

// listeningRE finds the address in Uvicorn's "Uvicorn running on
// http://0.0.0.0:30000 (Press CTRL+C to quit)".
var listeningRE = regexp.MustCompile(`Uvicorn running on (https?://[^\s]+)`)

// sameAddress reports whether the server's own address and --url can be
// the same server: the same port (a wildcard host such as 0.0.0.0 serves
// every address of the machine, so hosts are not compared).
func sameAddress(listening, url string) bool {
	return portOf(listening) == portOf(url)
}

func portOf(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		return ""
	}
	if port := p.Port(); port != "" {
		return port
	}
	if p.Scheme == "https" {
		return "443"
	}
	return "80"
}

// ContextLines is how many lines before a failure are shown with it.
const ContextLines = 20

// shownFailureLines caps the lines of one failure printed for people; the
// JSON report has them all.
const shownFailureLines = 40

type item struct {
	ev  source.Event
	end bool
	err error
}

type watcher struct {
	cfg      Config
	ctx      context.Context
	clk      Clock
	p        *printer
	start    time.Time
	deadline time.Time
	det      sglanglog.Detector
	rep      *Report

	// smoking receives the smoke request's result while it is asked; the
	// log is read meanwhile, since a kernel that fails does so on that
	// request. nil when no request is out.
	smoking     chan smoke.Result
	cancelSmoke context.CancelFunc
	smokeLeft   time.Duration // what was left of the time-out when asked
	// ended: the log ended (endErr says how) while the smoke request was
	// out or the log was read on after its answer; what it said is all
	// there is.
	ended  bool
	endErr error
	// listening is the address the server's log says it serves on
	// ("Uvicorn running on http://..."), for a smoke request that cannot
	// connect.
	listening string
	// answered is set once the smoke request succeeded while a kernel line
	// is still awaited, until kernelBy.
	answered bool
	// reading is set while the log is read on after the smoke answer
	// (readOn), from answerAt, before the answer is judged.
	reading  bool
	answerAt time.Time
	// keepServer: the watch fails for a reason that is not the server's
	// (a slower start than the baseline), and a server it started, which
	// answered correctly, is left running.
	keepServer bool
	// absent: the source's last notice said its file does not exist (yet).
	absent   bool
	kernelBy time.Time

	seen     map[sglanglog.Kind]*seenPhase
	order    []sglanglog.Kind
	last     *seenPhase // last phase reached
	firstLog time.Time  // first stamp in the log
	lastLine string
	lastAt   time.Time
	quietAt  time.Time // when an open failure counts as complete
	openLine int       // first line of the open failure
	openAt   time.Time // when that line was read
}

type seenPhase struct {
	mark  Mark
	phase sglanglog.Phase
	at    time.Time // watch clock
	stamp time.Time // log clock, zero when the line had none
}

// Run watches until the server is ready and answered, a failure is found,
// the time-out passes, the log is lost, or ctx ends (Ctrl-C). A server the
// source started is stopped unless the watch succeeded.
func Run(ctx context.Context, cfg Config) *Report {
	cfg = withDefaults(cfg)
	w := &watcher{
		cfg:  cfg,
		ctx:  ctx,
		clk:  cfg.Clock,
		p:    &printer{w: cfg.Out, tty: cfg.TTY, width: cfg.Width},
		det:  sglanglog.Detector{ContextLines: ContextLines},
		seen: map[sglanglog.Kind]*seenPhase{},
		rep: &Report{Source: cfg.Source.Describe(), Timeline: []Mark{}, Failures: []sglanglog.Failure{}, Notices: []Notice{}, Phases: []baseline.Phase{},
			Kernel: newKernelReport(cfg)},
	}
	w.start = w.clk.Now()
	w.deadline = w.start.Add(cfg.Timeout)

	srcCtx, stopSource := context.WithCancel(ctx)
	items := make(chan item, 256)
	quit := make(chan struct{})
	srcDone := make(chan struct{})
	go forward(srcCtx, cfg.Source, items, quit, srcDone)

	w.p.line("mlagen watch: %s; ready within %s; status every %s", w.rep.Source, short(cfg.Timeout), short(cfg.Interval))
	if cfg.ExpectKernel {
		w.p.line("mlagen watch: the MMA kernel must serve decode (%s): READY needs the kernel module's line saying so", cfg.ExpectKernelWhy)
	}
	outcome, verdict := w.loop(ctx, items)
	w.stopSmoke()

	// Stop reading, then wait (boundedly) for the source to let go, so no
	// "ssh ... tail -F" is left behind.
	stopSource()
	close(quit)
	drain := time.NewTimer(5 * time.Second)
	select {
	case <-srcDone:
	case <-drain.C:
	}
	drain.Stop()

	if st, ok := cfg.Source.(source.Stopper); ok {
		if outcome != Ready && !w.keepServer {
			ctrlC := "Ctrl-C now ends mlagen at once"
			if outcome == Interrupted {
				ctrlC = "a second Ctrl-C ends mlagen at once"
			}
			if cfg.Stopping != nil {
				cfg.Stopping()
			}
			w.p.line("stopping the server the watch started (SIGTERM to its process group, SIGKILL after the grace); %s and leaves it as it is", ctrlC)
			w.rep.Server = st.Stop()
			w.p.line("%s", w.rep.Server)
		}
	}
	if d, ok := cfg.Source.(source.Detacher); ok && (outcome == Ready || w.keepServer) {
		w.rep.Server = d.Detach()
		w.p.line("%s", w.rep.Server)
	}
	w.p.clearStatus()
	w.rep.Outcome = outcome
	w.rep.ExitCode = outcome.ExitCode()
	w.rep.Command, w.rep.Verdict = "watch", verdict
	if outcome != Ready {
		w.rep.Error = verdict
	}
	w.rep.Lines = w.det.Lines()
	w.rep.ElapsedS = w.since().Seconds()
	fmt.Fprintln(w.cfg.Out, verdict)
	return w.rep
}

func withDefaults(cfg Config) Config {
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Second
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 2 * time.Second
	}
	if cfg.KernelWait <= 0 {
		cfg.KernelWait = DefaultKernelWait
	}
	if cfg.KernelSettle <= 0 {
		cfg.KernelSettle = DefaultKernelSettle
	}
	return cfg
}

// forward runs the source and hands its events, then its end, to the watch
// loop; once quit is closed it drains the source without passing anything
// on, so that the source sees its context end and returns.
func forward(ctx context.Context, src source.Source, items chan<- item, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ch := make(chan source.Event)
	errc := make(chan error, 1)
	go func() { errc <- src.Run(ctx, ch) }()
	for {
		select {
		case ev := <-ch:
			select {
			case items <- item{ev: ev}:
			case <-quit:
			}
		case err := <-errc:
			select {
			case items <- item{end: true, err: err}:
			case <-quit:
			}
			return
		}
	}
}

func (w *watcher) since() time.Duration { return w.clk.Now().Sub(w.start) }

func (w *watcher) loop(ctx context.Context, items <-chan item) (Outcome, string) {
	deadline := w.deadline
	nextStatus := w.start.Add(w.cfg.Interval)
	for {
		now := w.clk.Now()
		if w.det.Open() && !now.Before(w.quietAt) {
			if stop := w.failure(w.det.Flush()); stop {
				return w.failed()
			}
		}
		if w.answered && !now.Before(w.kernelBy) {
			return w.kernelWaitOver()
		}
		if !now.Before(deadline) && w.smoking == nil {
			// (The smoke request has the same deadline and says itself
			// what it was waiting for.)
			return w.timedOut()
		}
		if !now.Before(nextStatus) {
			if !w.det.Open() {
				// While a failure is being read, its report comes next;
				// a "waiting" line in between would only mislead.
				w.status()
			}
			for !nextStatus.After(now) {
				nextStatus = nextStatus.Add(w.cfg.Interval)
			}
		}
		wake := deadline
		if nextStatus.Before(wake) {
			wake = nextStatus
		}
		if w.det.Open() && w.quietAt.Before(wake) {
			wake = w.quietAt
		}
		if w.answered && w.kernelBy.Before(wake) {
			wake = w.kernelBy
		}
		var timer <-chan time.Time
		stopTimer := func() {}
		switch {
		case w.smoking == nil:
			timer, stopTimer = w.clk.After(wake.Sub(now))
		default:
			// While the smoke request is out the deadline is the
			// request's own; the status line still comes every
			// --interval (a server stuck in its first decode says
			// nothing), and the end of a failure being read is timed.
			wake = nextStatus
			if w.det.Open() && w.quietAt.Before(wake) {
				wake = w.quietAt
			}
			timer, stopTimer = w.clk.After(wake.Sub(now))
		}
		select {
		case it := <-items:
			stopTimer()
			if o, v, done := w.take(ctx, it, &items); done {
				return o, v
			}
		case res := <-w.smoking:
			stopTimer()
			w.smoking = nil
			smokeOut(w.clk, false)
			w.cancelSmoke()
			// The lines logged before the answer was read come first (a
			// traceback of the request, or the server starting again, in a
			// log read through --cmd), and some are still on their way.
			if o, v, done := w.readOn(ctx, &items); done {
				return o, v
			}
			if !w.reading {
				continue // the answer is an earlier run's: set aside
			}
			w.reading = false
			if o, v, done := w.smoked(ctx, res); done {
				return o, v
			}
		case <-timer:
		case <-ctx.Done():
			stopTimer()
			return w.interrupted()
		}
	}
}

// take handles one item of the log; done reports that the watch is over.
// *items is set to nil when the log ends while the smoke request is out or
// its answer is read on (readOn).
func (w *watcher) take(ctx context.Context, it item, items *<-chan item) (Outcome, string, bool) {
	if it.end {
		if it.err == nil && ctx.Err() != nil {
			o, v := w.interrupted()
			return o, v, true
		}
		if w.smoking != nil || w.reading {
			// No more lines will come, but the request is out or its
			// answer not yet judged: the answer (or the connection the
			// exit broke) decides, then the log's end is taken (smoked).
			w.ended, w.endErr = true, it.err
			*items = nil
			return "", "", false
		}
		o, v := w.sourceEnded(it.err)
		return o, v, true
	}
	if it.ev.Notice != "" {
		w.notice(it.ev)
		return "", "", false
	}
	return w.line(ctx, it.ev)
}

// After the smoke answer the log is read on until it pauses for
// AnswerPause, or for AnswerReadMax at most, before the answer is judged. A
// log read through a pipe (--cmd "cat LOG", "ssh ... tail -F") can hold, not
// yet passed on, the lines of a run started after the one whose "ready" sent
// the request; taking only the lines already passed on judged that answer as
// the earlier run's whenever the reader was a moment behind. The pause is a
// little longer than a file's poll (source.DefaultPoll), so that a file
// still being written is read once more; a busy live log never pauses,
// hence the bound. Exported, with the kernel line's waits, for `mlagen
// watch --help`, which states them (a test holds the text to these values).
const (
	AnswerPause   = source.DefaultPoll + source.DefaultPoll/4
	AnswerReadMax = 5 * time.Second
)

// How long after the smoke answer the kernel module's line is waited for
// when it is required (DefaultKernelWait) and when it is not
// (DefaultKernelSettle), unless Config says otherwise.
const (
	DefaultKernelWait   = 10 * time.Second
	DefaultKernelSettle = time.Second
)

// readOn takes the lines that follow the smoke answer until the log pauses,
// the bound passes, the log ends (taken once the answer is: smoked), or the
// server starts again (setAside clears w.reading: the answer is not this
// run's).
func (w *watcher) readOn(ctx context.Context, items *<-chan item) (Outcome, string, bool) {
	w.reading, w.answerAt = true, w.clk.Now()
	until := w.answerAt.Add(AnswerReadMax)
	for w.reading && *items != nil {
		wait := min(AnswerPause, until.Sub(w.clk.Now()))
		if wait <= 0 {
			break
		}
		timer, stopTimer := w.clk.After(wait)
		select {
		case it := <-*items:
			stopTimer()
			if o, v, done := w.take(ctx, it, items); done {
				return o, v, true
			}
		case <-timer:
			return "", "", false
		case <-ctx.Done():
			stopTimer()
			o, v := w.interrupted()
			return o, v, true
		}
	}
	return "", "", false
}

func (w *watcher) notice(ev source.Event) {
	w.absent = ev.Absent
	w.rep.Notices = append(w.rep.Notices, Notice{AtS: w.since().Seconds(), Text: ev.Notice})
	w.p.line("%s note: %s", stamp(w.since()), ev.Notice)
	if ev.Restarted && w.runSeen() {
		// The log was emptied and is being written again: a restarted
		// server ("> log"), whose answer is no more the earlier run's
		// than an appended restart's is.
		if w.setAside() {
			w.noteAside("the log starts again")
		}
		w.startOver()
	}
}

// setAside drops the smoke request out, or the answer taken, of a run the
// log has moved on from, and reports whether there was one: only the run
// that follows can say that it is ready and answers.
func (w *watcher) setAside() bool {
	if w.smoking == nil && !w.answered && !w.reading {
		return false
	}
	w.stopSmoke()
	w.rep.Smoke = nil
	w.answered, w.reading = false, false
	return true
}

// noteAside says, as a notice, that an answer was set aside and why.
func (w *watcher) noteAside(why string) {
	text := why + "; what it answered before is set aside"
	w.rep.Notices = append(w.rep.Notices, Notice{AtS: w.since().Seconds(), Text: text})
	w.p.line("%s note: %s", stamp(w.since()), text)
}

// startOver forgets what the log said of an earlier run of the server: a
// restarted server goes through every phase anew, and only its own lines
// can say that the MMA kernel serves it. Failures seen stay (with
// --keep-going they are part of what happened).
func (w *watcher) startOver() {
	if !w.runSeen() {
		return
	}
	w.seen = map[sglanglog.Kind]*seenPhase{}
	w.order = nil
	w.last = nil
	w.firstLog = time.Time{}
	w.listening = ""
	w.rep.Phases = []baseline.Phase{}
	w.rep.Timeline = []Mark{}
	w.rep.Kernel = newKernelReport(w.cfg)
	w.p.line("%s note: phases start over (the kernel module's lines too)", stamp(w.since()))
}

// runSeen says whether the log has said anything of a run of the server
// yet: a phase, a kernel module's line, the address it listens on.
func (w *watcher) runSeen() bool {
	return len(w.seen) > 0 || len(w.rep.Kernel.Lines) > 0 || w.listening != ""
}

// line handles one log line (or a piece of a long one); done reports that
// the watch is over.
func (w *watcher) line(ctx context.Context, ev source.Event) (Outcome, string, bool) {
	now := w.clk.Now()
	// Escape sequences (a coloured log) are dropped before anything reads,
	// keeps or prints the line.
	raw := sglanglog.StripEscapes(ev.Line)
	w.lastLine, w.lastAt = raw, now
	var f *sglanglog.Failure
	if ev.Continued {
		f = w.det.FeedContinued(raw)
	} else {
		f = w.det.Feed(raw)
	}
	if f != nil && w.failure(f) {
		o, v := w.failed()
		return o, v, true
	}
	if w.det.Open() {
		w.quietAt = now.Add(w.cfg.Quiet)
		if l := w.det.OpenLine(); l != w.openLine {
			w.openLine, w.openAt = l, now
		}
	}
	rec := sglanglog.Parse(raw)
	if ev.Continued {
		rec = sglanglog.ParsePiece(raw)
	}
	if !ev.Continued && sglanglog.MatchStart(rec.Text) && w.runSeen() {
		// A second server_args= line: the log goes on with another run of
		// the server (an earlier run's log appended to, "tee -a", read from
		// its start; or a server restarted under the watch), and only that
		// run can say that it is ready and that the MMA kernel serves it. A
		// smoke request sent on the earlier run's "ready" is not its answer.
		text := fmt.Sprintf("log line %d: the server starts again", w.det.Lines())
		if w.setAside() {
			w.noteAside(text)
		} else {
			w.rep.Notices = append(w.rep.Notices, Notice{AtS: w.since().Seconds(), Text: text})
			w.p.line("%s note: %s", stamp(w.since()), text)
		}
		w.startOver()
	}
	if m := listeningRE.FindStringSubmatch(rec.Text); m != nil && w.listening == "" {
		w.listening = m[1]
	}
	if w.firstLog.IsZero() && !rec.Stamp.IsZero() {
		w.firstLog = rec.Stamp
	}
	if k, ok := sglanglog.MatchKernel(rec.Text); ok {
		w.kernelLine(k, rec)
		if w.answered && w.kernelSettled() {
			o, v := w.readyVerdict()
			return o, v, true
		}
		return "", "", false
	}
	ph, ok := sglanglog.MatchPhase(rec.Text)
	if !ok || w.seen[ph.Kind] != nil {
		return "", "", false // other ranks repeat each phase; the first one counts
	}
	sp := &seenPhase{phase: ph, at: now, stamp: rec.Stamp, mark: Mark{
		Phase:    ph.Kind.ID(),
		AtS:      now.Sub(w.start).Seconds(),
		Rank:     rec.Rank,
		Line:     w.det.Lines(),
		ElapsedS: ph.ElapsedS,
		AvailGB:  ph.AvailGB,
		UsedGB:   ph.UsedGB,
		Batches:  ph.Batches,
		Text:     raw,
	}}
	if !rec.Stamp.IsZero() {
		sp.mark.LogTime = rec.Stamp.Format("2006-01-02 15:04:05")
	}
	w.seen[ph.Kind] = sp
	w.order = append(w.order, ph.Kind)
	if ph.Kind != sglanglog.CaptureBatches || w.seen[sglanglog.CaptureBegin] == nil {
		// The batch list is detail of graph capture, not a step of its
		// own, except in SGLang versions where it is the only line that
		// says capture began.
		w.last = sp
	}
	w.rep.Timeline = append(w.rep.Timeline, sp.mark)
	w.p.line("%s %-34s %s", stamp(now.Sub(w.start)), ph.Kind.String(), phaseDetail(ph, rec))
	if ph.Kind == sglanglog.Ready {
		return w.ready(ctx)
	}
	return "", "", false
}

func phaseDetail(ph sglanglog.Phase, rec sglanglog.Record) string {
	var parts []string
	if ph.ElapsedS > 0 {
		parts = append(parts, fmt.Sprintf("took %.2f s", ph.ElapsedS))
	}
	if ph.AvailGB > 0 {
		parts = append(parts, fmt.Sprintf("avail mem %.2f GB", ph.AvailGB))
	}
	if ph.UsedGB > 0 {
		parts = append(parts, fmt.Sprintf("mem usage %.2f GB", ph.UsedGB))
	}
	if ph.Batches != "" {
		parts = append(parts, "bs ["+clip(ph.Batches, 60)+"]")
	}
	detail := strings.Join(parts, ", ")
	if where := strings.TrimSpace(rec.Rank + " " + logClock(rec.Stamp)); where != "" {
		detail = strings.TrimSpace(detail + "  (" + where + ")")
	}
	return detail
}

func logClock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "log " + t.Format("15:04:05")
}

func (w *watcher) status() {
	d := w.since()
	var b strings.Builder
	fmt.Fprintf(&b, "%s waiting: ", stamp(d))
	if w.smoking != nil {
		b.WriteString("for the smoke request's answer; ")
	}
	if w.answered {
		fmt.Fprintf(&b, "for the kernel module's line, %s more; ", short(w.kernelBy.Sub(w.clk.Now())))
	}
	if w.last != nil {
		fmt.Fprintf(&b, "%s %s ago", w.last.phase.Kind, short(w.clk.Now().Sub(w.last.at)))
	} else {
		b.WriteString("no phase yet")
	}
	fmt.Fprintf(&b, "; %d lines", w.det.Lines())
	if n := len(w.rep.Failures); n > 0 {
		fmt.Fprintf(&b, ", %d failures", n)
	}
	if w.lastLine != "" {
		fmt.Fprintf(&b, "; last line: %s", clip(strings.TrimSpace(sglanglog.Parse(w.lastLine).Text), 70))
	}
	w.p.status(b.String())
}

// failure records and prints a complete failure; it reports whether the
// watch stops here.
func (w *watcher) failure(f *sglanglog.Failure) bool {
	if f == nil {
		return false
	}
	if f.Kind == sglanglog.Handled {
		// SGLang logged it as a warning and went on: said, not counted.
		text := fmt.Sprintf("log line %d: %s: %s", f.Line, f.Title, clip(f.Summary, 160))
		w.rep.Notices = append(w.rep.Notices, Notice{AtS: w.since().Seconds(), Text: text})
		w.p.line("%s note: %s", stamp(w.since()), text)
		return false
	}
	w.rep.Failures = append(w.rep.Failures, *f)
	n := len(w.rep.Failures)
	where := fmt.Sprintf("log line %d", f.Line)
	if f.Rank != "" {
		where = f.Rank + ", " + where
	}
	at := w.since()
	if f.Line == w.openLine {
		at = w.openAt.Sub(w.start) // when it began, not when it was complete
	}
	w.p.line("%s FAILURE %d: %s (%s)\n    %s", stamp(at), n, f.Title, where, clip(f.Summary, 200))
	if len(f.Context) > 0 {
		w.p.line("  the %s before it:\n%s", nLines(len(f.Context)), indent(f.Context, "| "))
	}
	shown := f.Lines
	more := 0
	if len(shown) > shownFailureLines {
		more = len(shown) - shownFailureLines
		shown = shown[:shownFailureLines]
	}
	w.p.line("  the failure:\n%s", indent(shown, "> "))
	if more > 0 {
		w.p.line("    ... %d more lines (--json has them all)", more)
	}
	return !w.cfg.KeepGoing
}

func (w *watcher) failed() (Outcome, string) {
	fs := w.rep.Failures
	kinds := map[string]int{}
	var names []string
	for _, f := range fs {
		if kinds[f.Title] == 0 {
			names = append(names, f.Title)
		}
		kinds[f.Title]++
	}
	var parts []string
	for _, n := range names {
		if kinds[n] > 1 {
			parts = append(parts, fmt.Sprintf("%d× %s", kinds[n], n))
		} else {
			parts = append(parts, n)
		}
	}
	noun := "failures"
	if len(fs) == 1 {
		noun = "failure"
	}
	v := fmt.Sprintf("FAILED after %s: %d %s (%s)", short(w.since()), len(fs), noun, strings.Join(parts, ", "))
	if !w.cfg.KeepGoing && len(fs) > 0 && fs[len(fs)-1].Kind != "server-exit" {
		v += "; stopped at the first, --keep-going collects them all"
	}
	if w.smoking != nil {
		v += "; the server had logged ready, and this came while the smoke request was out"
	}
	return Failed, v + "."
}

func (w *watcher) lastPhaseText() string {
	if w.last == nil {
		return "no startup phase was reached"
	}
	return fmt.Sprintf("last phase reached: %s, %s ago (log line %d)", w.last.phase.Kind, short(w.clk.Now().Sub(w.last.at)), w.last.mark.Line)
}

func (w *watcher) timedOut() (Outcome, string) {
	// A failure still collecting lines is as complete as it will get.
	if f := w.det.Flush(); f != nil {
		w.failure(f)
	}
	now := w.clk.Now()
	info := &TimeoutInfo{AfterS: w.cfg.Timeout.Seconds()}
	if w.last != nil {
		info.LastPhase = w.last.phase.Kind.ID()
		info.LastPhaseAgoS = now.Sub(w.last.at).Seconds()
	}
	v := fmt.Sprintf("TIMEOUT after %s: the server was not ready; %s", short(w.cfg.Timeout), w.lastPhaseText())
	switch {
	case w.det.Lines() == 0 && w.absent:
		v += "; the log file never appeared"
	case w.det.Lines() == 0:
		v += "; the log stayed empty"
	default:
		info.LastLineAgoS = now.Sub(w.lastAt).Seconds()
		v += fmt.Sprintf("; the last of %d log lines came %s ago: \"%s\"", w.det.Lines(), short(now.Sub(w.lastAt)), clip(strings.TrimSpace(w.lastLine), 120))
	}
	if k, ok := w.cfg.Source.(source.StderrKeeper); ok {
		if tail := k.StderrTail(); len(tail) > 0 {
			v += fmt.Sprintf("; the log command's stderr ends with: %s", clip(strings.Join(tail, " | "), 300))
		}
	}
	w.rep.Timeout = info
	if len(w.rep.Failures) > 0 {
		// --keep-going collected failures and the dead server never came
		// up: that is a failed start, not a slow one.
		o, fv := w.failed()
		return o, fv + " " + v + "."
	}
	return TimedOut, v + "."
}

func (w *watcher) interrupted() (Outcome, string) {
	if f := w.det.Flush(); f != nil {
		w.failure(f)
	}
	why := ""
	if c := context.Cause(w.ctx); c != nil && c != context.Canceled {
		why = " (" + c.Error() + ")"
	}
	return Interrupted, fmt.Sprintf("INTERRUPTED%s after %s: %s; %d failures seen.", why, short(w.since()), w.lastPhaseText(), len(w.rep.Failures))
}

// goneAfterAnswer is the verdict on a server that answered the smoke
// request and then exited: not a server to call ready.
func (w *watcher) goneAfterAnswer(exit error) (Outcome, string) {
	return Failed, fmt.Sprintf("FAILED after %s: the server answered the smoke request, but %v.", short(w.since()), exit)
}

// sourceEnded handles the end of the log: a server that exited before
// ready is a failure; any other end is a lost source, unless failures were
// already seen (then the start failed, whatever became of the log).
func (w *watcher) sourceEnded(err error) (Outcome, string) {
	if f := w.det.Flush(); f != nil {
		if w.failure(f) {
			return w.failed()
		}
	}
	var exit *source.ExitError
	exited := errors.As(err, &exit)
	if w.answered {
		// No more lines can come; what the log said is all there is.
		if exited && !w.rep.Kernel.Required {
			return w.goneAfterAnswer(exit)
		}
		o, v := w.kernelWaitOver()
		if exited {
			v = strings.TrimSuffix(v, ".") + "; then the " + exit.Error() + "."
		}
		return o, v
	}
	if exited {
		f := sglanglog.Failure{
			Kind:    "server-exit",
			Title:   "server exited before ready",
			Line:    w.det.Lines(),
			Summary: exit.Error(),
			Match:   exit.Error(),
			Context: w.det.Recent(),
			Lines:   []string{},
		}
		w.rep.Failures = append(w.rep.Failures, f)
		w.p.line("%s FAILURE %d: %s\n    %s", stamp(w.since()), len(w.rep.Failures), f.Title, f.Summary)
		if len(f.Context) > 0 {
			w.p.line("  its last %s:\n%s", nLines(len(f.Context)), indent(f.Context, "| "))
		}
		o, v := w.failed()
		return o, v
	}
	if len(w.rep.Failures) > 0 {
		return w.failed()
	}
	if err == nil {
		err = errors.New("the source ended")
	}
	w.rep.Lost = err.Error()
	return SourceLost, fmt.Sprintf("LOG SOURCE LOST after %s: %v\nThe server's state is unknown (this is not a success); %s.", short(w.since()), err, w.lastPhaseText())
}

// ready runs once the server says it is ready: close what is open, derive
// the phase durations, ask the server, compare with the baseline, and see
// whether the MMA kernel served (waiting for its line when it must).
func (w *watcher) ready(ctx context.Context) (Outcome, string, bool) {
	if f := w.det.Flush(); f != nil {
		if w.failure(f) {
			o, v := w.failed()
			return o, v, true
		}
	}
	w.rep.Phases = w.durations()
	w.askSmoke(ctx)
	return "", "", false
}

// askSmoke sends the smoke request, within what is left of the time-out,
// while the loop goes on reading the log: a kernel that fails does so on
// this request, and its traceback is the answer to give.
func (w *watcher) askSmoke(ctx context.Context) {
	req := w.cfg.Smoke
	w.smokeLeft = w.deadline.Sub(w.clk.Now())
	sctx, cancel := context.WithTimeout(ctx, w.smokeLeft)
	done := make(chan smoke.Result, 1)
	go func() { done <- smoke.Run(sctx, req) }()
	w.smoking, w.cancelSmoke = done, cancel
	smokeOut(w.clk, true)
}

// stopSmoke ends a smoke request still out (the watch ended otherwise)
// and waits for it, so that nothing is left asking the server.
func (w *watcher) stopSmoke() {
	if w.smoking == nil {
		return
	}
	w.cancelSmoke()
	<-w.smoking
	w.smoking = nil
	smokeOut(w.clk, false)
}

// smoked takes the smoke request's result: print it, compare with the
// baseline, and see whether the MMA kernel served (waiting for its line
// when it must).
func (w *watcher) smoked(ctx context.Context, res smoke.Result) (Outcome, string, bool) {
	w.rep.Smoke = &res
	if f := w.det.Flush(); f != nil {
		// A traceback still being read when the answer came (a server
		// that dies on the request drops the connection at once) is as
		// complete as it will get: it is the verdict's reason.
		w.failure(f)
	}
	if ctx.Err() != nil {
		o, v := w.interrupted()
		return o, v, true
	}
	w.printSmoke(res)
	left := w.smokeLeft
	// exited: the server the watch started is gone (its log ended with
	// its exit while the request was out).
	var exited *source.ExitError
	if w.ended {
		errors.As(w.endErr, &exited)
	}
	regressed := w.compareBaseline()

	switch {
	case len(w.rep.Failures) > 0:
		o, v := w.failed()
		if !res.OK {
			v += " The smoke request failed too: " + res.Problem + "."
		}
		return o, v, true
	case res.TimedOut:
		w.rep.Timeout = &TimeoutInfo{AfterS: w.cfg.Timeout.Seconds(), LastPhase: sglanglog.Ready.ID()}
		return TimedOut, fmt.Sprintf("TIMEOUT after %s: the server logged ready, but the smoke request got no answer within the %s left of --timeout %s: %s.", short(w.since()), short(left), short(w.cfg.Timeout), res.Problem), true
	case !res.OK && exited != nil:
		return Failed, fmt.Sprintf("FAILED after %s: the server logged ready but the smoke request failed: %s; meanwhile %v.", short(w.since()), res.Problem, exited), true
	case !res.OK:
		return Failed, fmt.Sprintf("FAILED after %s: the server logged ready but the smoke request failed: %s%s.", short(w.since()), res.Problem, w.smokeHint(res)), true
	case exited != nil && (!w.rep.Kernel.Required || w.kernelSettled()):
		// (Where the kernel's line is required and never came, that is
		// the verdict, the exit its end: sourceEnded, below.)
		o, v := w.goneAfterAnswer(exited)
		return o, v, true
	case len(regressed) > 0 && exited == nil:
		w.keepServer = true
		return Failed, fmt.Sprintf("FAILED after %s: the server answered correctly, but %s regressed more than %d%% against %s.", short(w.since()), strings.Join(regressed, ", "), int(baseline.Limit*100), w.cfg.BaselinePath), true
	}
	if w.kernelSettled() {
		o, v := w.readyVerdict()
		return o, v, true
	}
	// The kernel module logs at first use; the line may still be on its way.
	w.answered = true
	if w.ended {
		o, v := w.sourceEnded(w.endErr)
		return o, v, true
	}
	wait := w.cfg.KernelWait
	if !w.rep.Kernel.Required {
		wait = w.cfg.KernelSettle
	}
	// (Counted from the answer: the log was read on for a moment since.)
	w.kernelBy = w.answerAt.Add(wait)
	if w.kernelBy.After(w.deadline) {
		w.kernelBy = w.deadline
	}
	if w.rep.Kernel.Required {
		w.p.line("%s waiting up to %s for the kernel module's line (no \"on the MMA kernel\" line yet)", stamp(w.since()), short(w.kernelBy.Sub(w.answerAt)))
	}
	return "", "", false
}

// smokeHint is what a failed smoke request's verdict adds: where the log
// says the server listens, when it could not be reached at --url, and the
// API key a server started with --api-key wants.
func (w *watcher) smokeHint(res smoke.Result) string {
	switch {
	case res.Unauthorized && w.cfg.Smoke.APIKey == "":
		return " (give its key with --api-key-env NAME, NAME an environment variable holding it)"
	case res.HealthStatus == 0 && w.listening != "" && !sameAddress(w.listening, w.cfg.Smoke.URL):
		return fmt.Sprintf(" (the log says the server listens on %s: give that as --url)", w.listening)
	}
	return ""
}

// printSmoke prints what the server answered.
func (w *watcher) printSmoke(res smoke.Result) {
	req := w.cfg.Smoke
	now := stamp(w.since())
	if res.HealthStatus == 200 {
		w.p.line("%s smoke: GET %s -> 200 OK", now, smoke.HealthPath(req.URL))
		if res.Endpoint != "" && (res.OK || res.Answer != "") {
			verdict := "ok"
			if !res.OK {
				verdict = "WRONG"
			}
			w.p.line("%s smoke: POST %s %q -> %q; %s: %s", now, res.Endpoint, clip(req.Prompt, 60), clip(res.Answer, 80), res.Check, verdict)
		}
	}
	if !res.OK {
		w.p.line("%s smoke: FAILED: %s", now, res.Problem)
	}
}

func (w *watcher) readyVerdict() (Outcome, string) {
	v := fmt.Sprintf("READY after %s: the server is up (startup %s) and answered correctly", short(w.since()), w.startupText())
	return Ready, v + w.kernelVerdict() + "."
}

func (w *watcher) startupText() string {
	for _, p := range w.rep.Phases {
		if p.Name == baseline.Startup {
			return fmt.Sprintf("%.1fs", p.Seconds)
		}
	}
	return "?"
}

func (w *watcher) compareBaseline() []string {
	if w.cfg.Baseline == nil {
		return nil
	}
	rows := baseline.Compare(*w.cfg.Baseline, w.rep.Phases)
	w.rep.Baseline = rows
	w.p.line("baseline %s (a phase more than %d%% slower is a regression):", w.cfg.BaselinePath, int(baseline.Limit*100))
	var regressed []string
	for _, r := range rows {
		mark := "ok"
		if r.Regressed {
			mark = "REGRESSION"
			regressed = append(regressed, r.Phase)
		}
		w.p.line("  %-30s %8.2fs  baseline %8.2fs  %+6.1f%%  %s", r.Phase, r.Seconds, r.Baseline, r.SlowerPct, mark)
	}
	if len(rows) == 0 {
		w.p.line("  no phase in common with the baseline")
	}
	return regressed
}

// durations turns the timeline into phase durations. SGLang's own elapsed
// figures win; then the log's stamps (right even when the watch started
// late or read an old log at once); then the watch's clock.
func (w *watcher) durations() []baseline.Phase {
	var out []baseline.Phase
	span := func(name string, begin, end sglanglog.Kind, endAlt sglanglog.Kind) {
		b := w.seen[begin]
		if b == nil && begin == sglanglog.CaptureBegin {
			b = w.seen[sglanglog.CaptureBatches] // the older way to say it
		}
		e := w.seen[end]
		if e != nil && e.phase.ElapsedS > 0 {
			out = append(out, baseline.Phase{Name: name, Seconds: e.phase.ElapsedS})
			return
		}
		if e == nil {
			e = w.seen[endAlt]
		}
		if b == nil || e == nil {
			return
		}
		out = append(out, baseline.Phase{Name: name, Seconds: between(b, e)})
	}
	span(baseline.LoadWeights, sglanglog.LoadBegin, sglanglog.LoadEnd, 0)
	span(baseline.GraphCapture, sglanglog.CaptureBegin, sglanglog.CaptureEnd, sglanglog.Ready)
	span(baseline.PrefillCapture, sglanglog.PiecewiseBegin, sglanglog.PiecewiseEnd, sglanglog.Ready)
	if r := w.seen[sglanglog.Ready]; r != nil {
		s := r.at.Sub(w.start).Seconds()
		if !r.stamp.IsZero() && !w.firstLog.IsZero() {
			s = r.stamp.Sub(w.firstLog).Seconds()
		}
		out = append(out, baseline.Phase{Name: baseline.Startup, Seconds: s})
	}
	return out
}

func between(b, e *seenPhase) float64 {
	if !b.stamp.IsZero() && !e.stamp.IsZero() {
		return e.stamp.Sub(b.stamp).Seconds()
	}
	return e.at.Sub(b.at).Seconds()
}
