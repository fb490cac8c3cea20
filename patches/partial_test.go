package patches

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// Parsing only the relevant statements must find exactly what parsing whole
// files finds: same changes, same proof, same review list, on every golden
// case.
func TestPartialParseMatchesWhole(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txtar")
	rec := mustRecipe(t)
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string][]byte{}
		for _, f := range ar.Files {
			if p, ok := strings.CutPrefix(f.Name, "in/"); ok && strings.HasSuffix(p, ".py") {
				in[p] = f.Data
			}
		}
		run := func(whole bool) string {
			res, err := Patch(NewCheckout(in), Options{Recipe: rec, Kernel: []byte(fakeKernel), whole: whole})
			var p *Problem
			if errors.As(err, &p) {
				return "problem: " + p.Msg
			}
			if err != nil {
				t.Fatal(err)
			}
			return unifiedDiff(res.Changes) + res.Report.String()
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
	co := NewCheckout(map[string][]byte{
		"pkg/__init__.py":               nil,
		"pkg/flash_mla_sm120_triton.py": []byte(fuzzModule),
		"pkg/caller.py": []byte("from .flash_mla_sm120_triton import _run_triton_sparse_decode as f\n\n\n" +
			"def ok():\n    return 1\n\n\ndef bad(q):\n    return f(q,, 1)\n"),
	})
	_, err := Patch(co, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
	var p *Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "pkg/caller.py:9:") {
		t.Fatalf("want a syntax-error problem at pkg/caller.py:9, got %v", err)
	}
}
