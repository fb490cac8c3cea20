package resolve

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// corpus returns Python sources to test the parser on: the inputs of this
// package's cases and, as more real-looking code, those of the SGLang
// wiring's golden cases beside it (read only).
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	own, _ := filepath.Glob("testdata/*.txtar")
	wiring, _ := filepath.Glob("../testdata/golden/*.txtar")
	files := append(own, wiring...)
	out := map[string][]byte{}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasPrefix(file.Name, "in/") && strings.HasSuffix(file.Name, ".py") && len(file.Data) > 0 {
				out[filepath.Base(f)+":"+file.Name] = file.Data
			}
		}
	}
	return out
}

type flatNode struct {
	Kind, Field string
	Start, End  uint32
	Parent      int32
}

func flat(st *Syntax) []flatNode {
	out := make([]flatNode, len(st.nodes))
	for i, n := range st.nodes {
		out[i] = flatNode{n.kind, n.field, n.start, n.end, n.parent}
	}
	return out
}

// The proof re-parses edited files incrementally; that is only sound if the
// result is exactly the tree a fresh parse gives. Checked on every golden
// input with the rename and insertion edits patch makes.
func TestIncrementalParseMatchesFresh(t *testing.T) {
	ps := newParser()
	defer ps.close()
	name := regexp.MustCompile(`_run_triton_sparse_decode`)
	for label, src := range corpus(t) {
		var edits []Edit
		for _, m := range name.FindAllIndex(src, -1) {
			edits = append(edits, Edit{Start: m[0], End: m[1], Text: "_run_sparse_decode"})
		}
		if i := bytes.IndexByte(src, '\n'); i > 0 {
			edits = append(edits, Edit{Start: i, End: i, Text: "\n\n\ndef inserted(a, b):\n    return a  # é\n"})
		}
		if len(edits) == 0 {
			continue
		}
		old, err := ps.parseInc(src, nil, nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		after := ApplyEdits(src, append([]Edit(nil), edits...))
		inc, err := ps.parseInc(after, old.ctree, src, edits, false)
		if err != nil {
			t.Fatal(err)
		}
		old.ctree.free()
		fresh, err := ps.parse(after)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(flat(fresh), flat(inc)); diff != "" {
			t.Errorf("%s: incremental parse differs from a fresh one (-fresh +incremental):\n%s", label, diff)
		}
	}
}
