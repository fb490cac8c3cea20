package patches

import (
	"bytes"
	"fmt"
)

// node is one syntax node, copied out of tree-sitter into a flat slice. The
// copy costs one pass over the C tree; after it every question the resolver
// asks is a slice index instead of a cgo call, which is what makes scanning a
// few hundred files fast.
type node struct {
	kind       string // grammar type ("call", "identifier", ...)
	field      string // field name in the parent ("function", "name", ...)
	start, end uint32 // byte range
	parent     int32
	first      int32 // first child, -1 when none
	next       int32 // next sibling, -1 when none
	named      bool
}

// syntaxTree is a parsed file: its bytes, its nodes (index 0 is the module),
// and the first syntax error when the parser had to recover.
type syntaxTree struct {
	src   []byte
	nodes []node
	err   *syntaxError
	ctree *cTree // the C tree, when kept for an incremental re-parse
}

// syntaxError is where tree-sitter could not parse, in the user's terms.
type syntaxError struct {
	Line, Col int
	Msg       string
}

func (e *syntaxError) String() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// lineCol turns a byte offset into a 1-based line and column (in bytes, as
// tree-sitter and most editors' "go to" accept).
func lineCol(src []byte, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line := 1 + bytes.Count(src[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return line, col
}

// text returns the source bytes of node i.
func (st *syntaxTree) text(i int32) string { return string(st.src[st.nodes[i].start:st.nodes[i].end]) }

// child returns the first child of i with the given field, or -1.
func (st *syntaxTree) child(i int32, field string) int32 {
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].field == field {
			return c
		}
	}
	return -1
}

// childKind returns the first child of i of the given kind, or -1.
func (st *syntaxTree) childKind(i int32, kind string) int32 {
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].kind == kind {
			return c
		}
	}
	return -1
}
