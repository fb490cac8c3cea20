package gen

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckedTritons holds CheckedTritons to what the repository checks:
// the pinned Triton first, then the Makefile's TRITONS, each with the
// golden file calib/versions.py wrote under it.
func TestCheckedTritons(t *testing.T) {
	read := func(p string) string {
		data, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	got := CheckedTritons()
	pinned := regexp.MustCompile(`(?m)^triton==(\S+)$`).FindStringSubmatch(read(".ci/constraints.txt"))
	if pinned == nil || got[0] != pinned[1] {
		t.Errorf("CheckedTritons()[0] = %s, .ci/constraints.txt pins %v", got[0], pinned)
	}
	line := regexp.MustCompile(`(?m)^TRITONS\s*:=\s*(.*)$`).FindStringSubmatch(read("Makefile"))
	if line == nil {
		t.Fatal("Makefile: no TRITONS := line")
	}
	if diff := cmp.Diff(strings.Fields(line[1]), got[1:]); diff != "" {
		t.Errorf("CheckedTritons()[1:] against the Makefile's TRITONS (-Makefile +gen):\n%s", diff)
	}
	for _, v := range got[1:] {
		if head := read("calib/triton-" + v + ".txt"); !strings.HasPrefix(head, "# Triton "+v+":") {
			t.Errorf("calib/triton-%s.txt does not start with its release's header", v)
		}
	}
}

func TestTritonLines(t *testing.T) {
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"3.6.0", "3.7.1", "3.8.0", "3.9.0"}, []string{"3.6", "3.7", "3.8", "3.9"}},
		{[]string{"3.6.0", "3.6.1", "3.7.1"}, []string{"3.6", "3.7"}},
		{[]string{"4"}, []string{"4"}},
		{nil, nil},
	} {
		if diff := cmp.Diff(c.want, TritonLines(c.in)); diff != "" {
			t.Errorf("TritonLines(%v) (-want +got):\n%s", c.in, diff)
		}
	}
}
