package resolve

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// On real code the chunker splits exactly where tree-sitter's top-level
// statements start (so a partial parse is a whole parse of fewer
// statements).
func TestChunksMatchStatements(t *testing.T) {
	for label, src := range corpus(t) {
		ok, err := ChunkingExact(src)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("%s: chunk starts differ from the whole parse's statements", label)
		}
	}
}
