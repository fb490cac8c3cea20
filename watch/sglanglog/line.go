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
	// Rank is the process tag of the prefix ("TP0", "DP1 TP3", "DP0
	// ATTN_CP1 TP1"), empty for the launcher's own lines.
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
// with milliseconds after the seconds where SGLANG_LOG_MS is set
// ("22:07:05.123"), and any number of rank tags, some with an underscore
// ("DP0 ATTN_CP1 MOE_DP0 TP1 EP1": a scheduler's tags in 0.5.23).
var prefixRE = regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)((?: [A-Z][A-Z_]*\d+)*)\] ?`)

// stampLayout reads the stamp with or without its fraction of a second.
const stampLayout = "2006-01-02 15:04:05.999999"

// Parse splits a raw line (without its newline) into prefix and message.
// Terminal escape sequences are removed first: a coloured log ("\x1b[32m[2026-06-17
// 22:07:05 TP0]\x1b[0m ...") must give the same stamps, phases and
// failures as a plain one.
func Parse(line string) Record {
	line = lastCarriageSegment(StripEscapes(line))
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

// ParsePiece is Parse for a piece of a line too long to be read whole,
// after its first: it starts in the middle of the line, so whatever it
// starts with is not a prefix.
func ParsePiece(piece string) Record {
	return Record{Text: lastCarriageSegment(StripEscapes(piece))}
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

// escapeRE matches the terminal escape sequences a log can carry: CSI
// sequences (colours, cursor moves, "erase line"), OSC sequences (window
// titles, hyperlinks) ended by BEL or ST, character set designations, and
// the other two-byte escapes (save and restore cursor, ...).
var escapeRE = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+][0-~]|[0-Z\\-~])`)

// StripEscapes removes terminal escape sequences from a line. The watch
// applies it to every line before it keeps or prints one, so that a
// server's colours reach neither the parsers nor the reader's terminal.
func StripEscapes(line string) string {
	if strings.IndexByte(line, 0x1b) < 0 {
		return line
	}
	return escapeRE.ReplaceAllString(line, "")
}
