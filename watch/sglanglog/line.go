// Package sglanglog recognises what an SGLang server's log says about its own
// startup: the prefix every record carries, the startup phases, and the
// failure signatures seen in practice. It only reads lines; it knows nothing
// about files, clocks or terminals, so every rule here is a pure function
// that a test can pin down with a literal log excerpt.
package sglanglog

import (
	"regexp"
	"strings"
	"time"
)

// Record is one log line split into SGLang's prefix and the message.
type Record struct {
	// Stamp is the time in the prefix, read as UTC because the log does not
	// say its zone; only differences between stamps are meaningful.
	Stamp time.Time
	// Rank is the process tag of the prefix ("TP0", "DP1 TP3"), empty for
	// the launcher's own lines.
	Rank string
	// Text is the message after the prefix (the whole line when there is none).
	Text string
	// Prefixed reports whether the line starts a new log record. SGLang
	// prefixes every record; lines without a prefix continue the record
	// before them (a traceback, a multi-line message) or come from raw
	// stderr of a child process.
	Prefixed bool
}

// prefixRE matches "[2026-06-17 22:07:05 TP0] " and "[2026-06-17 22:07:39] ",
// with any number of rank tags ("DP0 TP1 EP1").
var prefixRE = regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})((?: [A-Z]+\d+)*)\] ?`)

const stampLayout = "2006-01-02 15:04:05"

// Parse splits a raw line (without its newline) into prefix and message.
func Parse(line string) Record {
	line = lastCarriageSegment(line)
	m := prefixRE.FindStringSubmatch(line)
	if m == nil {
		return Record{Text: line}
	}
	r := Record{Text: line[len(m[0]):], Rank: strings.TrimSpace(m[2]), Prefixed: true}
	if t, err := time.ParseInLocation(stampLayout, m[1], time.UTC); err == nil {
		r.Stamp = t
	}
	return r
}

// lastCarriageSegment keeps what a terminal would show of a line that a
// progress bar (tqdm, used by SGLang during graph capture) rewrote with
// carriage returns.
func lastCarriageSegment(line string) string {
	line = strings.TrimRight(line, "\r")
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		return line[i+1:]
	}
	return line
}
