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
