package patches

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// fuzzModule is the defining module used when the fuzzed input is a caller.
const fuzzModule = `def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    return q, None
`

var definesOld = regexp.MustCompile(`(?m)^(async )?def _run_triton_sparse_decode\b`)

// fuzzEnviron is SGLang's environ.py in miniature, for the gate.
const fuzzEnviron = "class EnvBool:\n    def __init__(self, default):\n        self.default = default\n\n\nclass Envs:\n    SGLANG_X = EnvBool(False)\n"

var declaresEnvs = regexp.MustCompile(`(?m)^class Envs\b`)

// fuzzTree puts the input where it exercises the most code: as SGLang's
// environ.py when it declares class Envs (the gate is registered there), as
// the defining module when it defines the function, else as a caller beside
// a fixed one.
func fuzzTree(src []byte) map[string][]byte {
	files := map[string][]byte{"pkg/__init__.py": nil, "sglang/srt/environ.py": []byte(fuzzEnviron)}
	switch {
	case declaresEnvs.Match(src) && !definesOld.Match(src):
		files["sglang/srt/environ.py"] = src
		files["pkg/flash_mla_sm120_triton.py"] = []byte(fuzzModule)
	case definesOld.Match(src):
		files["pkg/flash_mla_sm120_triton.py"] = src
	default:
		files["pkg/flash_mla_sm120_triton.py"] = []byte(fuzzModule)
		files["pkg/caller.py"] = src
	}
	return files
}

// FuzzPatchRevert checks the rewriter's two promises on any input that
// parses: patching then reverting gives back the input byte for byte, and
// patching a patched tree changes nothing. It also checks the proof: right
// after patching, nothing may be left unwired.
func FuzzPatchRevert(f *testing.F) {
	rec := mustRecipe(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		files := fuzzTree(src)
		tree := NewTree(files)
		opt := Options{Recipe: rec, Kernel: []byte("def supports(q, k_cache, indices):\n    return False\n")}
		once, err := Patch(tree, opt)
		if err != nil {
			var p *Problem
			if errors.As(err, &p) {
				t.Skip(p.Msg) // not a tree mlagen can patch (syntax error, ambiguity, ...)
			}
			t.Fatal(err)
		}
		if len(tree.NonUTF8) > 0 {
			t.Skip("not UTF-8")
		}
		if !once.Report.OK() {
			t.Fatalf("not wired right after patching:\n%s\ninput:\n%s", once.Report, src)
		}
		// Inserted lines use the file's line endings: a CRLF file stays CRLF.
		for _, c := range once.Changes {
			if c.Before != nil && allCRLF(c.Before) && !allCRLF(c.After) {
				t.Fatalf("%s: CRLF file got other line endings:\n%q", c.Path, c.After)
			}
		}
		patched := tree.with(once.Changes)
		// The partial parse must see exactly what a whole parse sees, on
		// input whose statements tree-sitter splits where Python does (it
		// reads some invalid lines, "from A<newline>import b", as one).
		if !statementsAgree(t, files) {
			return
		}
		// (Syntax errors are judged per statement: an error in a statement that
		// spells no name of interest cannot hide a reference and is not seen
		// by the partial parse, while a whole-file parse stops on it.)
		whole, err := Patch(tree, Options{Recipe: rec, Kernel: opt.Kernel, whole: true})
		var p *Problem
		if errors.As(err, &p) && strings.HasPrefix(p.Msg, "syntax error") {
			return
		}
		if err != nil {
			t.Fatalf("whole-file parse failed where the partial one did not: %v", err)
		}
		if len(whole.Report.SyntaxIgnored) != len(once.Report.SyntaxIgnored) {
			return // a file the whole parse finds broken is skipped, the partial one reads its good statements
		}
		if got, want := UnifiedDiff(once.Changes), UnifiedDiff(whole.Changes); got != want {
			t.Fatalf("partial and whole parses plan different changes:\npartial:\n%s\nwhole:\n%s\ninput:\n%s", got, want, src)
		}
		if got, want := fmt.Sprint(once.Report.Wired, once.Report.Missed, once.Report.Review), fmt.Sprint(whole.Report.Wired, whole.Report.Missed, whole.Report.Review); got != want {
			t.Fatalf("partial and whole parses prove differently:\n%s\n%s\ninput:\n%s", got, want, src)
		}
		twice, err := Patch(patched, opt)
		if err != nil {
			t.Fatalf("patching a patched tree failed: %v\ninput:\n%s", err, src)
		}
		if len(twice.Changes) != 0 {
			t.Fatalf("patching twice changed more:\n%s\ninput:\n%s", UnifiedDiff(twice.Changes), src)
		}
		back, err := Revert(patched, Options{Recipe: rec})
		if err != nil {
			t.Fatalf("revert failed: %v\ninput:\n%s", err, src)
		}
		restored := patched.with(back.Changes)
		if len(restored.Files) != len(tree.Files) {
			t.Fatalf("revert left %d files, want %d", len(restored.Files), len(tree.Files))
		}
		for p, f := range tree.Files {
			g, ok := restored.Files[p]
			if !ok || !bytes.Equal(g.Data, f.Data) {
				t.Fatalf("revert did not restore %s:\n%s", p, UnifiedDiff([]Change{{Path: p, Before: f.Data, After: g.Data}}))
			}
		}
	})
}

// allCRLF is true when src has line endings and every one is CRLF.
func allCRLF(src []byte) bool {
	n := bytes.Count(src, []byte("\n"))
	return n > 0 && bytes.Count(src, []byte("\r\n")) == n
}

// statementsAgree reports whether, in every fuzzed file, the top-level
// statements a whole tree-sitter parse finds start on the lines where the
// partial parse's chunks start.
func statementsAgree(t *testing.T, files map[string][]byte) bool {
	ps := newParser()
	defer ps.close()
	for _, src := range files {
		st, err := ps.parse(src)
		if err != nil {
			t.Fatal(err)
		}
		starts := topLevelStarts(src)
		var chunkLines, stmtLines []int
		for _, s := range starts[1:] {
			l, _ := lineCol(src, s)
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
			l, _ := lineCol(src, int(n.start))
			stmtLines = append(stmtLines, l)
		}
		if inFirst > 1 || fmt.Sprint(chunkLines) != fmt.Sprint(stmtLines) {
			return false
		}
	}
	return true
}
