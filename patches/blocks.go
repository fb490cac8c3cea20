package patches

import (
	"bytes"
	"fmt"
	"strings"
)

// mlagen brackets everything it inserts into an existing file with a pair of
// comment lines:
//
//	# >>> mlagen:sm120_mma dispatcher: added by `mlagen patch`, ...
//	...
//	# <<< mlagen:sm120_mma dispatcher
//
// and a block also owns a fixed number of line endings just before its
// opening line (the blank lines black wants around a top-level def). Knowing
// both is what lets --revert give back the original bytes exactly.

const (
	partDispatcher = "dispatcher"
	partGate       = "gate"
)

// blockLead is how many line endings before the opening marker belong to a
// block: the dispatcher is inserted at the end of the old function's last
// line and opens with two blank lines; the gate starts on a new line.
var blockLead = map[string]int{partDispatcher: 3, partGate: 1}

type block struct {
	part       string
	open       int // start of the opening marker line (its indentation)
	close      int // end of the closing marker text (before its line ending)
	openLine   int
	unfinished bool
}

func openMarker(rec *Recipe, part string) string  { return "# >>> " + rec.Marker + " " + part }
func closeMarker(rec *Recipe, part string) string { return "# <<< " + rec.Marker + " " + part }

// findBlocks lists mlagen's blocks in src, in order.
func findBlocks(src []byte, rec *Recipe) []block {
	if !bytes.Contains(src, []byte(rec.Marker)) {
		return nil
	}
	var out []block
	var cur *block
	off := 0
	line := 0
	for off < len(src) {
		line++
		end := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			next = off + end + 1
			end = off + end
		} else {
			end = len(src)
		}
		text := bytes.TrimRight(src[off:end], "\r")
		trimmed := strings.TrimLeft(string(text), " \t")
		for _, part := range []string{partDispatcher, partGate} {
			if cur == nil && (trimmed == openMarker(rec, part) || strings.HasPrefix(trimmed, openMarker(rec, part)+":")) {
				out = append(out, block{part: part, open: off, openLine: line, unfinished: true})
				cur = &out[len(out)-1]
			} else if cur != nil && cur.part == part && trimmed == closeMarker(rec, part) {
				cur.close = off + len(text)
				cur.unfinished = false
				cur = nil
			}
		}
		off = next
	}
	return out
}

func inBlocks(bs []block, at uint32) bool {
	for _, b := range bs {
		if int(at) >= b.open && (b.unfinished || int(at) < b.close) {
			return true
		}
	}
	return false
}

// removal is the byte range a block occupies, line endings before it
// included; it fails when the block was edited so that its extent is no
// longer certain.
func (b block) removal(src []byte, path string) (int, int, error) {
	if b.unfinished {
		return 0, 0, fmt.Errorf("%s:%d: mlagen %s block has no closing marker; remove it by hand", path, b.openLine, b.part)
	}
	// The line endings before the block are the block's own (patch wrote
	// them with the block's line ending), which the opening line shows.
	eol := eolAt(src, lineEnd(src, b.open))
	start := b.open
	for i := 0; i < blockLead[b.part]; i++ {
		if start < len(eol) || string(src[start-len(eol):start]) != eol {
			return 0, 0, fmt.Errorf("%s:%d: the lines before the mlagen %s block were edited; remove it by hand", path, b.openLine, b.part)
		}
		start -= len(eol)
	}
	return start, b.close, nil
}
