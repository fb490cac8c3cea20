package resolve

import (
	"bytes"
	"sort"
)

// Python ends a line at LF, CRLF or a lone CR (universal newlines), so a
// file with CR-only line endings is valid Python; tree-sitter's grammar
// only knows LF. Everything here counts lines Python's way, and the parser
// is given a copy of the file with every lone CR turned into LF: one byte
// for one, so every offset stays the file's own.

// lineIndex holds the offset where each line starts (the first is 0), so
// that turning an offset into a line costs a binary search instead of a
// count from the start of the file: a file with thousands of references
// must not be re-read once per reference.
type lineIndex []int32

func newLineIndex(src []byte) lineIndex {
	li := make(lineIndex, 1, 1+bytes.Count(src, []byte{'\n'})+loneCRs(src))
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			li = append(li, int32(i+1))
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				continue // the LF ends this line
			}
			li = append(li, int32(i+1))
		}
	}
	return li
}

// at is the 0-based line and byte column of off.
func (li lineIndex) at(off int) (int, int) {
	line := sort.Search(len(li), func(i int) bool { return int(li[i]) > off }) - 1
	return line, off - int(li[line])
}

// LineCol turns a byte offset into a 1-based line and column (in bytes, as
// tree-sitter and most editors' "go to" accept). It reads src up to off:
// for many offsets into one file use Syntax.LineCol.
func LineCol(src []byte, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line, col := newLineIndex(src[:off]).at(off)
	return line + 1, col + 1
}

// LineCol is LineCol for an offset into the parsed file, from an index
// built once.
func (st *Syntax) LineCol(off int) (int, int) {
	if off > len(st.src) {
		off = len(st.src)
	}
	st.linesOnce.Do(func() { st.lines = newLineIndex(st.src) })
	line, col := st.lines.at(off)
	return line + 1, col + 1
}

// countLines is how many line endings s holds, Python's way.
func countLines(s string) int {
	return bytes.Count([]byte(s), []byte{'\n'}) + loneCRs([]byte(s))
}

func loneCRs(src []byte) int {
	n := 0
	for i := bytes.IndexByte(src, '\r'); i >= 0; {
		if i+1 >= len(src) || src[i+1] != '\n' {
			n++
		}
		j := bytes.IndexByte(src[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n
}

// parserInput is src as the grammar reads it: lone CRs turned into LFs
// (src itself when it has none).
func parserInput(src []byte) []byte {
	if loneCRs(src) == 0 {
		return src
	}
	out := bytes.Clone(src)
	for i, c := range out {
		if c == '\r' && (i+1 >= len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

// Comment is a line that holds nothing but a comment, at statement level:
// outside strings and brackets and not continued from the line before, so
// Python reads it as a comment between statements (a line that merely looks
// like one inside a triple-quoted string is not).
type Comment struct {
	Line      int // 1-based
	Start     int // the start of its line
	Text, End int // where the # starts, and where the line's text ends (before its line ending)
}

// Comments lists the comment-only lines of src at statement level, in one
// pass over the file.
func Comments(src []byte) []Comment {
	var out []Comment
	lx := lexer{}
	line := 0
	for off := 0; off < len(src); {
		line++
		end, next := lineAt(src, off)
		if lx.statementLevel() {
			i := off
			for i < end && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f') {
				i++
			}
			if i < end && src[i] == '#' {
				out = append(out, Comment{Line: line, Start: off, Text: i, End: end})
			}
		}
		lx.scan(src[off:end])
		off = next
	}
	return out
}

// lineAt is where the line starting at off ends (its text) and where the
// next one starts.
func lineAt(src []byte, off int) (end, next int) {
	i := bytes.IndexAny(src[off:], "\r\n")
	if i < 0 {
		return len(src), len(src)
	}
	end = off + i
	if src[end] == '\r' && end+1 < len(src) && src[end+1] == '\n' {
		return end, end + 2
	}
	return end, end + 1
}

// lexer follows what a Python tokenizer needs to know at a line break:
// whether a string, a bracket or a backslash continuation is still open.
type lexer struct {
	quote  byte // the open string's quote, 0 when none
	triple bool
	depth  int
	cont   bool // the last line ended with a backslash
}

func (lx *lexer) statementLevel() bool { return lx.quote == 0 && lx.depth == 0 && !lx.cont }

// scan reads one line's text (without its line ending).
func (lx *lexer) scan(text []byte) {
	lx.cont = false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if lx.quote != 0 {
			switch {
			case c == '\\':
				if i+1 == len(text) {
					lx.cont = !lx.triple // an escaped line break continues the string
				}
				i++
			case c == lx.quote && (!lx.triple || (i+2 < len(text) && text[i+1] == c && text[i+2] == c)):
				if lx.triple {
					i += 2
				}
				lx.quote = 0
			}
			continue
		}
		switch c {
		case '#':
			return
		case '"', '\'':
			lx.quote = c
			lx.triple = i+2 < len(text) && text[i+1] == c && text[i+2] == c
			if lx.triple {
				i += 2
			}
		case '(', '[', '{':
			lx.depth++
		case ')', ']', '}':
			if lx.depth > 0 {
				lx.depth--
			}
		case '\\':
			if i+1 == len(text) {
				lx.cont = true
			}
		}
	}
	if lx.quote != 0 && !lx.triple && !lx.cont {
		lx.quote = 0 // an unterminated one-line string ends with its line (a syntax error)
	}
}
