package patches

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// goldenSources returns every input file of the golden cases.
func goldenSources(t *testing.T) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob("../golden/patch/*.txtar")
	out := map[string][]byte{}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasPrefix(file.Name, "in/") && len(file.Data) > 0 {
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

func flat(st *syntaxTree) []flatNode {
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
	for label, src := range goldenSources(t) {
		var edits []edit
		for _, m := range name.FindAllIndex(src, -1) {
			edits = append(edits, edit{start: m[0], end: m[1], text: "_run_sparse_decode"})
		}
		if i := bytes.IndexByte(src, '\n'); i > 0 {
			edits = append(edits, edit{start: i, end: i, text: "\n\n\ndef inserted(a, b):\n    return a  # é\n"})
		}
		if len(edits) == 0 {
			continue
		}
		old, err := ps.parseInc(src, nil, nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		after := applyEdits(src, append([]edit(nil), edits...))
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

// The inserted code must be what black would write: running black over the
// patched module changes nothing. Skipped where black is not installed.
func TestDispatcherIsBlackFormatted(t *testing.T) {
	// The project's venv (make deps, which CI runs) has black; so may PATH.
	black, err := filepath.Abs("../.venv/bin/black")
	if _, serr := os.Stat(black); err != nil || serr != nil {
		if black, err = exec.LookPath("black"); err != nil {
			t.Skip("black not installed (make deps installs it)")
		}
	}
	for _, c := range []string{"upstream", "layout_kernels_ops", "crlf_tabs"} {
		ar, err := txtar.ParseFile("../golden/patch/" + c + ".txtar")
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		writeInput(t, root, ar)
		tree, err := Scan(root)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Patch(tree, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range res.Changes {
			if !bytes.Contains(ch.After, []byte("def _run_sparse_decode")) {
				continue
			}
			// Only the inserted block is ours to judge: format the block alone.
			start := bytes.Index(ch.After, []byte("# >>> mlagen"))
			end := bytes.Index(ch.After, []byte("# <<< mlagen:sm120_mma dispatcher"))
			block := bytes.ReplaceAll(ch.After[start:end+len("# <<< mlagen:sm120_mma dispatcher")], []byte("\r\n"), []byte("\n"))
			block = append(block, '\n')
			p := filepath.Join(t.TempDir(), "block.py")
			if err := os.WriteFile(p, block, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(black, "--quiet", "--check", "--diff", p).CombinedOutput()
			if err != nil {
				t.Errorf("%s: black would reformat the dispatcher:\n%s", c, out)
			}
		}
	}
}
