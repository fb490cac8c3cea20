package resolve

import (
	"bytes"
	"sort"
)

// Most of a file that mentions the function is code that cannot matter to
// it: other functions and classes. The rewriter therefore parses only the
// top-level statements that can: those that spell a name of interest (the
// function, the dispatcher, the aliases and module names used to reach it)
// and those that import anything (they bind the module-level names every
// lookup ends in). Scoping stays exact because a whole top-level statement is
// either parsed or not, and a name can only be bound or rebound by a
// statement that spells it. tree-sitter parses the chosen ranges as one
// document with the file's real offsets. Whenever the partial parse reports a
// syntax error, the file is parsed whole instead, so a chunking mistake can
// cost time but never a reference.

// topLevelStarts returns the offsets where top-level statements start: lines
// that begin in column 0 outside brackets, strings and line continuations,
// with decorators glued to what they decorate and else/elif/except/finally
// glued to their statement. The first chunk always starts at 0.
func topLevelStarts(src []byte) []int {
	starts := []int{0}
	depth := 0
	var quote byte
	triple := false
	cont := false
	lineStart := true
	last := -1 // offset of the last significant byte of the line so far
	for i := 0; i < len(src); i++ {
		c := src[i]
		if lineStart {
			lineStart = false
			if quote == 0 && depth == 0 && !cont && !dangling(src, last) && i > 0 && !isSpace(c) && c != '#' {
				starts = append(starts, i)
			}
			cont = false
			last = -1
		}
		// Most bytes matter to none of the cases below: skip their runs in
		// one go rather than one byte at a time through the switch.
		if quote == 0 && !scanSpecial[c] {
			j := i + 1
			for j < len(src) && !scanSpecial[src[j]] {
				j++
			}
			for k := j - 1; k >= i; k-- {
				if !isSpace(src[k]) {
					last = k
					break
				}
			}
			i = j - 1
			continue
		}
		if quote != 0 && c != quote && c != '\\' && c != '\n' {
			j := i + 1
			for j < len(src) && src[j] != quote && src[j] != '\\' && src[j] != '\n' {
				j++
			}
			i = j - 1
			continue
		}
		if quote == 0 && !isSpace(c) && c != '#' {
			last = i
		}
		switch {
		case quote != 0:
			switch {
			case c == '\\':
				i++
			case c == quote && (!triple || (i+2 < len(src) && src[i+1] == quote && src[i+2] == quote)):
				if triple {
					i += 2
				}
				quote = 0
			case c == '\n':
				if !triple {
					quote = 0 // unterminated: let the parser complain
				}
				lineStart = true
			}
		case c == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			quote = c
			triple = i+2 < len(src) && src[i+1] == c && src[i+2] == c
			if triple {
				i += 2
			}
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth > 0 {
				depth--
			}
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			cont = true
		case c == '\n':
			lineStart = true
		}
	}
	// Glue decorators to what they decorate, and else/elif/except/finally
	// to the statement they continue.
	out := starts[:1]
	pending := len(src) > 0 && src[0] == '@'
	for _, st := range starts[1:] {
		if pending {
			pending = src[st] == '@'
			continue
		}
		if continuation(src[st:]) {
			continue
		}
		out = append(out, st)
		pending = src[st] == '@'
	}
	return out
}

// dangling reports whether a line whose last significant byte is at last
// cannot end a statement: it ends in an operator, a dot, a comma or a
// keyword that needs more. Python rejects such a line; tree-sitter skips the
// line break and reads on, so the next line must stay in the same chunk for
// the partial parse to see what the whole parse sees. (Merging chunks only
// costs time; splitting one is what could change a result.)
func dangling(src []byte, last int) bool {
	if last < 0 {
		return false
	}
	c := src[last]
	if c == '*' && bytes.HasSuffix(bytes.TrimRight(src[:last], " \t"), []byte("import")) {
		return false // "from m import *" ends its statement
	}
	if bytes.IndexByte([]byte(".,=+-*/%&|^~<>@:!([{\\"), c) >= 0 {
		return true
	}
	if !isIdent(c) {
		return false
	}
	start := last
	for start > 0 && isIdent(src[start-1]) {
		start--
	}
	switch string(src[start : last+1]) {
	case "and", "or", "not", "in", "is", "if", "else", "elif", "lambda", "import", "from", "as",
		"await", "assert", "del", "for", "while", "with", "async", "def", "class", "global", "nonlocal", "except":
		return true
	}
	return false
}

func continuation(line []byte) bool {
	for _, kw := range []string{"else", "elif", "except", "finally"} {
		if bytes.HasPrefix(line, []byte(kw)) && len(line) > len(kw) && !isIdent(line[len(kw)]) {
			return true
		}
	}
	return false
}

// scanSpecial marks the bytes topLevelStarts must look at outside strings:
// line ends, comments, quotes, brackets and backslashes.
var scanSpecial = func() (t [256]bool) {
	for _, c := range []byte("\n#\"'()[]{}\\") {
		t[c] = true
	}
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' }

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// wordAt lists the offsets where word occurs as a whole identifier.
func wordAt(src []byte, word string) []int {
	var out []int
	w := []byte(word)
	for off := 0; ; {
		i := bytes.Index(src[off:], w)
		if i < 0 {
			return out
		}
		at := off + i
		end := at + len(w)
		if (at == 0 || !isIdent(src[at-1])) && (end >= len(src) || !isIdent(src[end])) {
			out = append(out, at)
		}
		off = end
	}
}

// selectChunks returns the byte ranges of the chunks that contain one of
// words (or one of the substrings keep), merged where adjacent; all is true when
// that is the whole file.
func selectChunks(src []byte, starts []int, words []string, keep []string) (ranges [][2]int, all bool) {
	chosen := make([]bool, len(starts))
	mark := func(at int) {
		k := sort.SearchInts(starts, at+1) - 1
		if k >= 0 {
			chosen[k] = true
		}
	}
	for _, w := range words {
		for _, at := range wordAt(src, w) {
			mark(at)
		}
	}
	for _, marker := range keep {
		for off := 0; marker != ""; {
			i := bytes.Index(src[off:], []byte(marker))
			if i < 0 {
				break
			}
			mark(off + i)
			off += i + len(marker)
		}
	}
	all = true
	for k, c := range chosen {
		if !c {
			all = false
			continue
		}
		end := len(src)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		if n := len(ranges); n > 0 && ranges[n-1][1] == starts[k] {
			ranges[n-1][1] = end
		} else {
			ranges = append(ranges, [2]int{starts[k], end})
		}
	}
	return ranges, all
}

// ChunkingExact reports whether the partial parse splits src into top-level
// statements exactly where a whole tree-sitter parse does (input Python
// would reject can read differently, "from A<newline>import b" for one).
// Where it does, a partial parse sees what a whole parse sees; tests and
// fuzzing use it to know when to expect equal results.
func ChunkingExact(src []byte) (bool, error) {
	ps := newParser()
	defer ps.close()
	st, err := ps.parse(src)
	if err != nil {
		return false, err
	}
	starts := topLevelStarts(parserInput(src))
	var chunkLines, stmtLines []int
	for _, s := range starts[1:] {
		l, _ := st.LineCol(s)
		chunkLines = append(chunkLines, l)
	}
	inFirst := 0
	for c := st.nodes[0].first; c >= 0; c = st.nodes[c].next {
		n := st.nodes[c]
		if n.kind == "comment" {
			continue
		}
		if len(starts) == 1 || int(n.start) < starts[1] {
			inFirst++
			continue
		}
		l, _ := st.LineCol(int(n.start))
		stmtLines = append(stmtLines, l)
	}
	if inFirst > 1 || len(chunkLines) != len(stmtLines) {
		return false, nil
	}
	for i := range chunkLines {
		if chunkLines[i] != stmtLines[i] {
			return false, nil
		}
	}
	return true, nil
}
