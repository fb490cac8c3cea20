package patches

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

func TestTopLevelStarts(t *testing.T) {
	src := `"""Docstring
def not_a_statement():
"""
import os
@dec
@dec2(
x)
def f():
    s = """
class NotOne:
"""
    return (1,
2)
x = [1,
2]
y = 1 + \
3
if x:
    pass
else:
    pass
try:
    pass
except E:
    pass
finally:
    pass
# comment at column 0
z = 'it''s # not a comment'
`
	var got []string
	for _, s := range topLevelStarts([]byte(src)) {
		line := src[s:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		got = append(got, line)
	}
	want := []string{`"""Docstring`, "import os", "@dec", "x = [1,", "y = 1 + \\", "if x:", "try:", "z = 'it''s # not a comment'"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statement starts (-want +got):\n%s", diff)
	}
}

// Parsing only the relevant statements must find exactly what parsing whole
// files finds: same changes, same proof, same review list, on every golden
// case.
func TestPartialParseMatchesWhole(t *testing.T) {
	files, _ := filepath.Glob("../golden/patch/*.txtar")
	rec := mustRecipe(t)
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string][]byte{}
		for _, f := range ar.Files {
			if p, ok := strings.CutPrefix(f.Name, "in/"); ok {
				in[p] = f.Data
			}
		}
		run := func(whole bool) string {
			res, err := Patch(NewTree(in), Options{Recipe: rec, Kernel: []byte(fakeKernel), whole: whole})
			var p *Problem
			if errors.As(err, &p) {
				return "problem: " + p.Msg
			}
			if err != nil {
				t.Fatal(err)
			}
			return UnifiedDiff(res.Changes) + res.Report.String()
		}
		if diff := cmp.Diff(run(true), run(false)); diff != "" {
			t.Errorf("%s: partial parse differs from whole (-whole +partial):\n%s", filepath.Base(file), diff)
		}
	}
}

// A syntax error in a statement that spells the name stops the run even
// though only part of the file is parsed: the partial parse fails and the
// whole file is parsed to report the parser's complaint.
func TestSyntaxErrorInReferencingStatementStops(t *testing.T) {
	tree := NewTree(map[string][]byte{
		"pkg/__init__.py":               nil,
		"pkg/flash_mla_sm120_triton.py": []byte(fuzzModule),
		"pkg/caller.py": []byte("from .flash_mla_sm120_triton import _run_triton_sparse_decode as f\n\n\n" +
			"def ok():\n    return 1\n\n\ndef bad(q):\n    return f(q,, 1)\n"),
	})
	_, err := Patch(tree, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "pkg/caller.py:9:") {
		t.Fatalf("want a syntax-error problem at pkg/caller.py:9, got %v", err)
	}
}

// On real code the chunker splits exactly where tree-sitter's top-level
// statements start (so a partial parse is a whole parse of fewer
// statements).
func TestChunksMatchStatements(t *testing.T) {
	for label, src := range goldenSources(t) {
		if !statementsAgree(t, map[string][]byte{"x.py": src}) {
			t.Errorf("%s: chunk starts differ from the whole parse's statements", label)
		}
	}
}
