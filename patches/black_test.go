package patches

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The inserted code must be what black would write: on every golden case,
// black run over each patched file changes no line of mlagen's blocks (the
// dispatcher, the whole-call guard, the route guard, the gate). Lines
// outside them are SGLang's, whose formatting a rename may change (a
// shorter name lets black join a call). Skipped where black is not
// installed.
func TestInsertedCodeIsBlackFormatted(t *testing.T) {
	// The project's venv (make deps, which CI runs) has black; so may PATH.
	black, err := filepath.Abs("../.venv/bin/black")
	if _, serr := os.Stat(black); err != nil || serr != nil {
		if black, err = exec.LookPath("black"); err != nil {
			t.Skip("black not installed (make deps installs it)")
		}
	}
	rec := mustRecipe(t)
	files, _ := filepath.Glob("testdata/golden/*.txtar")
	dir := t.TempDir()
	blocks := map[string][]block{}
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
		res, err := Patch(NewCheckout(in), Options{Recipe: rec, Kernel: []byte(fakeKernel)})
		if err != nil {
			continue // a case about a refusal
		}
		for i, c := range res.Changes {
			bs := findBlocks(c.After, rec)
			if c.Before == nil || len(bs) == 0 || bytes.Contains(c.After, []byte("\r")) || bytes.Contains(c.After, []byte("\t")) {
				continue // black rewrites CRLF and tab indentation everywhere
			}
			name := fmt.Sprintf("%s_%d_%s", strings.TrimSuffix(filepath.Base(file), ".txtar"), i, filepath.Base(c.Path))
			blocks[name] = bs
			os.WriteFile(filepath.Join(dir, name), c.After, 0o644)
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("only %d patched files to check: the test checks too little", len(blocks))
	}
	out, _ := exec.Command(black, "--diff", "-q", dir).Output()
	for name, lines := range removedLines(string(out)) {
		for _, b := range blocks[name] {
			first := b.openLine - blockLead[b.part]
			last := b.openLine + strings.Count(string(readFile(t, filepath.Join(dir, name))[b.open:b.close]), "\n") + blockTrail[b.part]
			for _, l := range lines {
				if l >= first && l <= last {
					t.Errorf("%s: black would change line %d of the mlagen %s block:\n%s", name, l, b.part, out)
				}
			}
		}
	}
}

// removedLines reads black's unified diff: the old line numbers it would
// change, by file name.
func removedLines(diff string) map[string][]int {
	out := map[string][]int{}
	name, line := "", 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			name = filepath.Base(strings.Fields(strings.TrimPrefix(l, "--- "))[0])
		case strings.HasPrefix(l, "+++ "):
		case strings.HasPrefix(l, "@@ "):
			fmt.Sscanf(l, "@@ -%d", &line)
		case strings.HasPrefix(l, "-"):
			out[name] = append(out[name], line)
			line++
		case strings.HasPrefix(l, " "):
			line++
		}
	}
	return out
}
