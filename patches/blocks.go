package patches

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// mlagen brackets everything it inserts into an existing file with a pair of
// comment lines:
//
//	# >>> mlagen:sm120_mma dispatcher: added by `mlagen patch`, ...
//	...
//	# <<< mlagen:sm120_mma dispatcher
//
// and a block also owns a fixed number of line endings just before its
// opening line or just after its closing one (the blank lines black wants
// around a top-level def, the line ending of a block inserted before a
// statement). Knowing both is what lets --revert give back the original
// bytes exactly.

const (
	partDispatcher = "dispatcher"
	partGate       = "gate"
	partWholeCall  = "whole-call"
	partRoute      = "route"
	partHeads      = "heads"
)

var parts = []string{partDispatcher, partGate, partWholeCall, partRoute, partHeads}

// partNames say what each block is, in reports.
var partNames = map[string]string{partDispatcher: "dispatcher", partGate: "gate", partWholeCall: "whole-call guard", partRoute: "route guard", partHeads: "heads guard"}

// blockLead is how many line endings before the opening marker belong to a
// block: the dispatcher is inserted at the end of the old function's last
// line and opens with two blank lines; the gate starts on a new line.
// blockTrail is how many after the closing marker do: the guards are
// inserted at the start of a line and end with their own line ending.
var (
	blockLead  = map[string]int{partDispatcher: 3, partGate: 1}
	blockTrail = map[string]int{partWholeCall: 1, partRoute: 1, partHeads: 1}
)

type block struct {
	part       string
	open       int // start of the opening marker line (its indentation)
	close      int // end of the closing marker text (before its line ending)
	openLine   int
	unfinished bool
}

func openMarker(rec *Recipe, part string) string  { return "# >>> " + rec.Marker + " " + part }
func closeMarker(rec *Recipe, part string) string { return "# <<< " + rec.Marker + " " + part }

// openLine is a block's first line: the marker and what it is.
func openLine(rec *Recipe, part string) string {
	if part == partGate {
		return openMarker(rec, part) + ": added by `mlagen patch`"
	}
	return openMarker(rec, part) + ": added by `mlagen patch`, removed by `mlagen patch --revert`"
}

// findBlocks lists mlagen's blocks in src, in order. A marker counts only
// where mlagen puts one: a line holding nothing but the marker comment, in
// exactly the form rendered, at statement level (the same text inside a
// string, a test's expected output say, is not a marker).
func findBlocks(src []byte, rec *Recipe) []block {
	if !bytes.Contains(src, []byte(rec.Marker)) {
		return nil
	}
	var out []block
	var cur *block
	for _, c := range resolve.Comments(src) {
		text := string(bytes.TrimRight(src[c.Text:c.End], " \t"))
		if !strings.Contains(text, rec.Marker) {
			continue
		}
		for _, part := range parts {
			if cur == nil && text == openLine(rec, part) {
				out = append(out, block{part: part, open: c.Start, openLine: c.Line, unfinished: true})
				cur = &out[len(out)-1]
			} else if cur != nil && cur.part == part && text == closeMarker(rec, part) {
				cur.close = c.Start + len(bytes.TrimRight(src[c.Start:c.End], " \t"))
				cur.unfinished = false
				cur = nil
			}
		}
	}
	return out
}

// blockRanges are the bytes the resolver must not count as the tree's own
// code: every block, an unfinished one to the end of the file.
func blockRanges(bs []block, size int) []resolve.Range {
	var out []resolve.Range
	for _, b := range bs {
		end := b.close
		if b.unfinished {
			end = size
		}
		out = append(out, resolve.Range{Start: b.open, End: end})
	}
	return out
}

// removal is the byte range a block occupies, its own line endings
// included; it fails when the block was edited so that its extent is no
// longer certain.
func (b block) removal(src []byte, path string) (int, int, error) {
	if b.unfinished {
		return 0, 0, fmt.Errorf("%s:%d: mlagen %s block has no closing marker; remove it by hand", path, b.openLine, b.part)
	}
	// The line endings around the block are the block's own (patch wrote
	// them with the block's line ending), which the opening line shows.
	eol := eolAt(src, lineEnd(src, b.open))
	start := b.open
	for i := 0; i < blockLead[b.part]; i++ {
		if start < len(eol) || string(src[start-len(eol):start]) != eol {
			return 0, 0, fmt.Errorf("%s:%d: the lines before the mlagen %s block were edited; remove it by hand", path, b.openLine, b.part)
		}
		start -= len(eol)
	}
	end := b.close
	for i := 0; i < blockTrail[b.part]; i++ {
		if end+len(eol) > len(src) || string(src[end:end+len(eol)]) != eol {
			return 0, 0, fmt.Errorf("%s:%d: the line after the mlagen %s block was edited; remove it by hand", path, b.openLine, b.part)
		}
		end += len(eol)
	}
	return start, end, nil
}

// blocksOf returns the blocks of a parsed file.
func blocksOf(fi *resolve.Info, rec *Recipe) []block { return findBlocks(fi.Syntax().Src(), rec) }

func findBlock(fi *resolve.Info, rec *Recipe, part string) (block, bool) {
	for _, b := range blocksOf(fi, rec) {
		if b.part == part {
			return b, true
		}
	}
	return block{}, false
}

func hasBlock(fi *resolve.Info, rec *Recipe, part string) bool {
	_, ok := findBlock(fi, rec, part)
	return ok
}

// blocksIn lists the blocks of part whose opening line lies in [start, end).
func blocksIn(fi *resolve.Info, rec *Recipe, part string, start, end int) []block {
	var out []block
	for _, b := range blocksOf(fi, rec) {
		if b.part == part && b.open >= start && b.open < end {
			out = append(out, b)
		}
	}
	return out
}

// eolAt is the line ending that starts at offset at (a line end as
// lineEnd returns it); at the end of the file it is the file's first line
// ending, or "\n". Inserted lines use it, so a CRLF file stays CRLF and a
// CR-only one CR-only.
func eolAt(src []byte, at int) string {
	if at < len(src) {
		if src[at] == '\n' {
			return "\n"
		}
		if src[at] == '\r' {
			if at+1 < len(src) && src[at+1] == '\n' {
				return "\r\n"
			}
			return "\r"
		}
	}
	if i := bytes.IndexAny(src, "\r\n"); i >= 0 {
		return eolAt(src, i)
	}
	return "\n"
}

// lineEnd is the offset where the line containing off ends: its first CR or
// LF, or the end of the file.
func lineEnd(src []byte, off int) int {
	i := bytes.IndexAny(src[off:], "\r\n")
	if i < 0 {
		return len(src)
	}
	e := off + i
	// A node can end between the CR and the LF of a CRLF (a comment's
	// text runs to the LF): the line ends before the CR.
	if src[e] == '\n' && e > 0 && src[e-1] == '\r' {
		e--
	}
	return e
}

// lineStart is the offset where the line containing off starts (after an
// LF, a CRLF or a lone CR).
func lineStart(src []byte, off int) int { return bytes.LastIndexAny(src[:off], "\r\n") + 1 }
