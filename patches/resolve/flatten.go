package resolve

// The tree-sitter runtime and the Python grammar are compiled and linked by
// github.com/smacker/go-tree-sitter and its python package; this file only
// declares the few C entry points it calls, so that a whole file is parsed
// and copied into Go memory in two cgo calls instead of several per node
// (measured: 1.8 µs per node through the Go wrapper, which made parsing a
// few hundred files miss the 0.5 s budget).

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef struct TSLanguage TSLanguage;
typedef struct { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
typedef struct { uint32_t row; uint32_t column; } TSPoint;
typedef struct {
	uint32_t start_byte, old_end_byte, new_end_byte;
	TSPoint start_point, old_end_point, new_end_point;
} TSInputEdit;

extern const TSLanguage *tree_sitter_python(void);
extern TSParser *ts_parser_new(void);
extern void ts_parser_delete(TSParser *self);
extern bool ts_parser_set_language(TSParser *self, const TSLanguage *language);
extern TSTree *ts_parser_parse_string(TSParser *self, const TSTree *old_tree, const char *string, uint32_t length);
extern void ts_tree_delete(TSTree *self);
extern TSTree *ts_tree_copy(const TSTree *self);
extern void ts_tree_edit(TSTree *self, const TSInputEdit *edit);
extern TSNode ts_tree_root_node(const TSTree *self);
extern uint16_t ts_node_symbol(TSNode self);
extern uint32_t ts_node_start_byte(TSNode self);
extern uint32_t ts_node_end_byte(TSNode self);
extern bool ts_node_is_named(TSNode self);
extern bool ts_node_is_missing(TSNode self);
extern bool ts_node_is_error(TSNode self);
extern bool ts_node_has_error(TSNode self);
extern const char *ts_node_type(TSNode self);
extern uint32_t ts_node_child_count(TSNode self);
extern TSNode ts_node_child(TSNode self, uint32_t child_index);
extern uint32_t ts_node_descendant_count(TSNode self);
extern TSTreeCursor ts_tree_cursor_new(TSNode node);
extern void ts_tree_cursor_delete(TSTreeCursor *self);
extern TSNode ts_tree_cursor_current_node(const TSTreeCursor *self);
extern uint16_t ts_tree_cursor_current_field_id(const TSTreeCursor *self);
extern bool ts_tree_cursor_goto_parent(TSTreeCursor *self);
extern bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self);
extern bool ts_tree_cursor_goto_first_child(TSTreeCursor *self);
extern uint32_t ts_language_symbol_count(const TSLanguage *self);
extern const char *ts_language_symbol_name(const TSLanguage *self, uint16_t symbol);
extern uint32_t ts_language_field_count(const TSLanguage *self);
extern const char *ts_language_field_name_for_id(const TSLanguage *self, uint16_t id);

typedef struct {
	uint16_t symbol, field;
	uint32_t start, end;
	int32_t parent, first, next;
	uint8_t named;
} mlagen_node;

typedef struct {
	uint32_t start;
	uint8_t missing;
	const char *type;
} mlagen_err;

static TSParser *mlagen_parser(void) {
	TSParser *p = ts_parser_new();
	ts_parser_set_language(p, tree_sitter_python());
	return p;
}

// mlagen_parse parses src; with old (and its edits, in descending offset
// order) it parses incrementally, reusing the unchanged subtrees of old. The
// result is the tree a fresh parse would give; only the work differs.
static TSTree *mlagen_parse(TSParser *p, const TSTree *old, const TSInputEdit *edits, uint32_t nedits,
		const char *src, uint32_t len, uint32_t *count, bool *has_error) {
	TSTree *base = NULL;
	if (old != NULL) {
		base = ts_tree_copy(old);
		for (uint32_t i = 0; i < nedits; i++) ts_tree_edit(base, &edits[i]);
	}
	TSTree *t = ts_parser_parse_string(p, base, src, len);
	if (base != NULL) ts_tree_delete(base);
	if (t == NULL) return NULL;
	TSNode root = ts_tree_root_node(t);
	*count = ts_node_descendant_count(root);
	*has_error = ts_node_has_error(root);
	return t;
}

// mlagen_flatten copies the tree in pre-order into out (count entries).
static uint32_t mlagen_flatten(TSTree *t, mlagen_node *out, uint32_t cap) {
	TSNode root = ts_tree_root_node(t);
	TSTreeCursor c = ts_tree_cursor_new(root);
	int32_t parents[4096];
	int32_t last[4096];
	int depth = 0;
	uint32_t n = 0;
	parents[0] = -1;
	last[0] = -1;
	for (;;) {
		if (n >= cap) break;
		TSNode cur = ts_tree_cursor_current_node(&c);
		mlagen_node *m = &out[n];
		m->symbol = ts_node_symbol(cur);
		m->field = ts_tree_cursor_current_field_id(&c);
		m->start = ts_node_start_byte(cur);
		m->end = ts_node_end_byte(cur);
		m->parent = parents[depth];
		m->first = -1;
		m->next = -1;
		m->named = ts_node_is_named(cur) ? 1 : 0;
		if (last[depth] >= 0) out[last[depth]].next = (int32_t)n;
		else if (parents[depth] >= 0) out[parents[depth]].first = (int32_t)n;
		last[depth] = (int32_t)n;
		int32_t idx = (int32_t)n;
		n++;
		if (depth < 4095 && ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			parents[depth] = idx;
			last[depth] = -1;
			continue;
		}
		while (!ts_tree_cursor_goto_next_sibling(&c)) {
			if (!ts_tree_cursor_goto_parent(&c)) goto done;
			depth--;
		}
	}
done:
	ts_tree_cursor_delete(&c);
	return n;
}

static void mlagen_error_at(TSNode n, mlagen_err *e) {
	e->start = ts_node_start_byte(n);
	e->missing = ts_node_is_missing(n);
	e->type = ts_node_type(n);
}

// mlagen_whole_statement: a node an ERROR may hold in front of the real
// error, because it parsed completely (the statements before a broken one).
static bool mlagen_whole_statement(TSNode n) {
	if (!ts_node_is_named(n) || ts_node_has_error(n)) return false;
	const char *t = ts_node_type(n);
	size_t l = strlen(t);
	return strcmp(t, "comment") == 0 || (l > 10 && strcmp(t + l - 10, "_statement") == 0) ||
		(l > 11 && strcmp(t + l - 11, "_definition") == 0);
}

// mlagen_first_error_rec finds where parsing failed: a missing node, or
// inside an ERROR the first child that is not a whole statement (tree-sitter
// often wraps everything from the top of the file in one ERROR, so the
// ERROR's own start would say line 1).
static bool mlagen_first_error_rec(TSNode n, mlagen_err *e) {
	if (ts_node_is_missing(n)) {
		mlagen_error_at(n, e);
		return true;
	}
	bool err = ts_node_is_error(n);
	uint32_t k = ts_node_child_count(n);
	for (uint32_t i = 0; i < k; i++) {
		TSNode c = ts_node_child(n, i);
		if (ts_node_has_error(c) || ts_node_is_missing(c)) {
			if (mlagen_first_error_rec(c, e)) return true;
		} else if (err && !mlagen_whole_statement(c)) {
			mlagen_error_at(c, e);
			return true;
		}
	}
	if (err) mlagen_error_at(n, e);
	return err;
}

static bool mlagen_first_error(TSTree *t, mlagen_err *e) {
	return mlagen_first_error_rec(ts_tree_root_node(t), e);
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unsafe"

	// The runtime and the grammar whose C symbols are declared above.
	_ "github.com/smacker/go-tree-sitter"
	_ "github.com/smacker/go-tree-sitter/python"
)

// parser owns one tree-sitter parser; it is not safe for concurrent use, so
// each worker has its own. Call close when done.
type parser struct {
	p      *C.TSParser
	names  []string // symbol id -> grammar type
	fields []string // field id -> field name
}

func newParser() *parser {
	lang := C.tree_sitter_python()
	n := int(C.ts_language_symbol_count(lang))
	names := make([]string, n)
	for i := 0; i < n; i++ {
		names[i] = C.GoString(C.ts_language_symbol_name(lang, C.uint16_t(i)))
	}
	nf := int(C.ts_language_field_count(lang))
	fields := make([]string, nf+1)
	for i := 1; i <= nf; i++ {
		fields[i] = C.GoString(C.ts_language_field_name_for_id(lang, C.uint16_t(i)))
	}
	return &parser{p: C.mlagen_parser(), names: names, fields: fields}
}

func (ps *parser) close() {
	if ps.p != nil {
		C.ts_parser_delete(ps.p)
		ps.p = nil
	}
}

// cTree is a tree-sitter tree kept alive after flattening, so that the
// proof can re-parse an edited file incrementally. free releases it.
type cTree struct{ t *C.TSTree }

func (c *cTree) free() {
	if c != nil && c.t != nil {
		C.ts_tree_delete(c.t)
		c.t = nil
	}
}

// parse parses src and flattens the result into Go memory.
func (ps *parser) parse(src []byte) (*Syntax, error) {
	return ps.parseInc(src, nil, nil, nil, false)
}

// parseRanges parses only the given byte ranges of src (whole top-level
// statements, in order), as one document with src's offsets. The ranges
// are copied next to each other and parsed as one buffer, whose offsets are
// then mapped back: tree-sitter's own included ranges cost time in the
// number of ranges for every token, which made a file with thousands of
// referencing statements quadratic.
func (ps *parser) parseRanges(src []byte, ranges [][2]int) (*Syntax, error) {
	return ps.run(src, nil, nil, nil, ranges, false)
}

// parseInc parses src, incrementally when old is the tree of the bytes that
// edits turned into src; keep retains the C tree in the result.
func (ps *parser) parseInc(src []byte, old *cTree, oldSrc []byte, edits []Edit, keep bool) (*Syntax, error) {
	return ps.run(src, old, oldSrc, edits, nil, keep)
}

func (ps *parser) run(src []byte, old *cTree, oldSrc []byte, edits []Edit, ranges [][2]int, keep bool) (*Syntax, error) {
	if len(src) >= 1<<31 {
		return nil, fmt.Errorf("file too large to parse (%d bytes)", len(src))
	}
	var count C.uint32_t
	var hasErr C.bool
	buf := parserInput(src)
	var spans *spanMap
	if len(ranges) > 0 {
		buf, spans = compact(buf, ranges)
	}
	if len(buf) == 0 {
		buf = []byte{0} // tree-sitter wants a valid pointer even for length 0
	}
	csrc := (*C.char)(unsafe.Pointer(&buf[0]))
	var oldT *C.TSTree
	var cedits []C.TSInputEdit
	if old != nil && old.t != nil && spans == nil {
		oldT = old.t
		cedits = inputEdits(oldSrc, edits)
	}
	var editPtr *C.TSInputEdit
	if len(cedits) > 0 {
		editPtr = &cedits[0]
	}
	n := len(src)
	if spans != nil {
		n = spans.size()
	}
	t := C.mlagen_parse(ps.p, oldT, editPtr, C.uint32_t(len(cedits)), csrc, C.uint32_t(n), &count, &hasErr)
	if t == nil {
		return nil, fmt.Errorf("tree-sitter returned no tree")
	}
	raw := make([]C.mlagen_node, int(count)+1)
	got := int(C.mlagen_flatten(t, &raw[0], C.uint32_t(len(raw))))
	st := &Syntax{src: src, nodes: make([]node, got)}
	for i := 0; i < got; i++ {
		r := &raw[i]
		kind := "ERROR"
		if int(r.symbol) < len(ps.names) {
			kind = ps.names[r.symbol]
		}
		field := ""
		if int(r.field) < len(ps.fields) {
			field = ps.fields[r.field]
		}
		start, end := uint32(r.start), uint32(r.end)
		if spans != nil {
			start, end = spans.orig(start, end)
		}
		st.nodes[i] = node{kind: kind, field: field, start: start, end: end,
			parent: int32(r.parent), first: int32(r.first), next: int32(r.next), named: r.named != 0}
	}
	if bool(hasErr) {
		var e C.mlagen_err
		if C.mlagen_first_error(t, &e) {
			at := uint32(e.start)
			if spans != nil {
				at, _ = spans.orig(at, at)
			}
			st.err = describeError(st, int(at), e.missing != 0, C.GoString(e._type))
		} else {
			st.err = &SyntaxError{Line: 1, Col: 1, Msg: "syntax error"}
		}
	}
	if keep && spans == nil {
		st.ctree = &cTree{t: t}
	} else {
		C.ts_tree_delete(t)
	}
	return st, nil
}

// spanMap maps offsets of a buffer of ranges copied next to each other back
// to the offsets of the file they came from.
type spanMap struct {
	at   []uint32 // where each range starts in the buffer
	from []uint32 // where it starts in the file
	end  uint32   // the buffer's length
}

// compact copies the ranges of src into one buffer.
func compact(src []byte, ranges [][2]int) ([]byte, *spanMap) {
	total := 0
	for _, r := range ranges {
		total += r[1] - r[0]
	}
	buf := make([]byte, 0, total)
	m := &spanMap{}
	for _, r := range ranges {
		m.at = append(m.at, uint32(len(buf)))
		m.from = append(m.from, uint32(r[0]))
		buf = append(buf, src[r[0]:r[1]]...)
	}
	m.end = uint32(len(buf))
	return buf, m
}

func (m *spanMap) size() int { return int(m.end) }

// orig maps a node's [start, end) in the buffer to the file: each end by the
// range its last byte is in (a node that ends a range ends where that range
// ends in the file, not where the next one starts).
func (m *spanMap) orig(start, end uint32) (uint32, uint32) {
	k := sort.Search(len(m.at), func(i int) bool { return m.at[i] > start }) - 1
	s := start - m.at[k] + m.from[k]
	if end <= start {
		return s, s + (end - start)
	}
	j := sort.Search(len(m.at), func(i int) bool { return m.at[i] > end-1 }) - 1
	return s, end - m.at[j] + m.from[j]
}

// inputEdits describes edits (offsets into oldSrc) for ts_tree_edit, last
// first, so that every edit's coordinates are still those of oldSrc.
func inputEdits(oldSrc []byte, edits []Edit) []C.TSInputEdit {
	sorted := append([]Edit(nil), edits...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Start > sorted[j].Start })
	out := make([]C.TSInputEdit, len(sorted))
	lines := newLineIndex(oldSrc)
	for i, e := range sorted {
		sp := lines.point(e.Start)
		ne := sp
		if k := countLines(e.Text); k > 0 {
			ne.row += C.uint32_t(k)
			ne.column = C.uint32_t(len(e.Text) - (strings.LastIndexAny(e.Text, "\r\n") + 1))
		} else {
			ne.column += C.uint32_t(len(e.Text))
		}
		out[i] = C.TSInputEdit{
			start_byte: C.uint32_t(e.Start), old_end_byte: C.uint32_t(e.End), new_end_byte: C.uint32_t(e.Start + len(e.Text)),
			start_point: sp, old_end_point: lines.point(e.End), new_end_point: ne,
		}
	}
	return out
}

// point is the tree-sitter point (row, byte column) of an offset, rows
// counted as the parser sees them (a lone CR is an LF to it).
func (li lineIndex) point(off int) C.TSPoint {
	row, col := li.at(off)
	return C.TSPoint{row: C.uint32_t(row), column: C.uint32_t(col)}
}

func describeError(st *Syntax, start int, missing bool, typ string) *SyntaxError {
	src := st.src
	line, col := st.LineCol(start)
	if missing {
		return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("missing %q", typ)}
	}
	text := src[min(start, len(src)):]
	if i := bytes.IndexAny(text, "\r\n"); i >= 0 {
		text = text[:i]
	}
	text = bytes.TrimSpace(text)
	if len(text) > 40 {
		text = text[:40]
	}
	return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("invalid syntax near %q", text)}
}
