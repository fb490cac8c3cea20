package watch

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printer writes what a person watching sees. On a terminal the status line
// is redrawn in place and erased before any other line; in a pipe (a CI log,
// "| tee") every status is a plain line, because carriage returns there
// produce unreadable logs.
type printer struct {
	w           io.Writer
	tty         bool
	width       int
	statusShown bool
}

const clearLine = "\r\x1b[K"

func (p *printer) clearStatus() {
	if p.tty && p.statusShown {
		io.WriteString(p.w, clearLine)
		p.statusShown = false
	}
}

// line prints one finished line.
func (p *printer) line(format string, args ...any) {
	p.clearStatus()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// status prints the waiting line: in place on a terminal.
func (p *printer) status(s string) {
	if p.tty {
		width := p.width
		if width <= 0 {
			width = 100
		}
		io.WriteString(p.w, clearLine+clip(s, width-1))
		p.statusShown = true
		return
	}
	fmt.Fprintln(p.w, s)
}

// stamp is the "[  33.9s]" column: time since the watch started.
func stamp(d time.Duration) string {
	return fmt.Sprintf("[%7s]", short(d))
}

// short formats a duration for people: 0.6s, 34.2s, 1m05s, 10m00s.
func short(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	m := int(d / time.Minute)
	s := int((d % time.Minute) / time.Second)
	if m >= 60 {
		return fmt.Sprintf("%dh%02dm%02ds", m/60, m%60, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// nLines counts lines for a phrase such as "the %s before it": "line" for
// one (not "1 lines"), "N lines" otherwise.
func nLines(n int) string {
	if n == 1 {
		return "line"
	}
	return fmt.Sprintf("%d lines", n)
}

// shownLineRunes caps one log line printed for people: a progress bar
// written without newlines makes a line of up to a megabyte, which would
// push the failure it comes with out of sight. The JSON report keeps every
// line whole.
const shownLineRunes = 500

// indent prints log lines for people, each cut at shownLineRunes.
func indent(lines []string, mark string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(mark)
		if cut := clip(l, shownLineRunes); cut != l {
			l = cut + " (cut; --json has it whole)"
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
