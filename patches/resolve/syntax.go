package resolve

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
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

// Syntax is a parsed file: its bytes, its nodes (index 0 is the module),
// and the first syntax error when the parser had to recover.
type Syntax struct {
	src   []byte
	nodes []node
	err   *SyntaxError
	ctree *cTree // the C tree, when kept for an incremental re-parse

	linesOnce sync.Once
	lines     lineIndex
}

// SyntaxError is where tree-sitter could not parse, in the user's terms.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) String() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// text returns the source bytes of node i.
func (st *Syntax) text(i int32) string { return string(st.src[st.nodes[i].start:st.nodes[i].end]) }

// child returns the first child of i with the given field, or -1.
func (st *Syntax) child(i int32, field string) int32 {
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].field == field {
			return c
		}
	}
	return -1
}

// childKind returns the first child of i of the given kind, or -1.
func (st *Syntax) childKind(i int32, kind string) int32 {
	for c := st.nodes[i].first; c >= 0; c = st.nodes[c].next {
		if st.nodes[c].kind == kind {
			return c
		}
	}
	return -1
}

// Edit replaces src[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// ApplyEdits returns src with edits applied (they must not overlap; their
// order does not matter).
func ApplyEdits(src []byte, edits []Edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	size := len(src)
	for _, e := range edits {
		size += len(e.Text) - (e.End - e.Start)
	}
	var b bytes.Buffer
	b.Grow(max(size, 0))
	at := 0
	for _, e := range edits {
		b.Write(src[at:e.Start])
		b.WriteString(e.Text)
		at = e.End
	}
	b.Write(src[at:])
	return b.Bytes()
}
