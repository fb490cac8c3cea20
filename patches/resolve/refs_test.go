package resolve

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected references in testdata from the current output")

// A case is a txtar archive in testdata: its comment says what it is about
// and, on lines "names: a b", "target: path name", which names are of
// interest and whose references to list; in/ holds the tree; refs is the
// expected listing (sites with their flags, review items, conflicts).
// Regions between "# <ignore>" and "# </ignore>" are ignored ranges, as a
// tool's inserted blocks are.
func TestReferences(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, target := caseConfig(t, ar)
			in := map[string][]byte{}
			for _, f := range ar.Files {
				if p, ok := strings.CutPrefix(f.Name, "in/"); ok {
					in[p] = f.Data
				}
			}
			s, err := Load(NewTree(in), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := listing(s.References(target, true))
			whole, err := Load(NewTree(in), cfg, Options{Whole: true})
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Close()
			if w := listing(whole.References(target, true)); w != got {
				t.Errorf("partial and whole parses differ (-whole +partial):\n%s", cmp.Diff(w, got))
			}
			compare(t, file, ar, got)
		})
	}
}

var ignoreRE = regexp.MustCompile(`(?s)# <ignore>.*?# </ignore>`)

func caseConfig(t *testing.T, ar *txtar.Archive) (*Config, Val) {
	cfg := &Config{
		Keep: []string{"# <ignore>"},
		Ignore: func(_ string, src []byte) []Range {
			var out []Range
			for _, m := range ignoreRE.FindAllIndex(src, -1) {
				out = append(out, Range{m[0], m[1]})
			}
			return out
		},
	}
	var target Val
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if v, ok := strings.CutPrefix(line, "names:"); ok {
			cfg.Names = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "target:"); ok {
			f := strings.Fields(v)
			target = Def(f[0], f[1])
			cfg.StringRef = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*\.)*` + regexp.QuoteMeta(f[1]) + `$`)
		}
	}
	if len(cfg.Names) == 0 || target.Name() == "" {
		t.Fatal("case needs names: and target: lines")
	}
	return cfg, target
}

func listing(rs RefSet) string {
	var b strings.Builder
	for _, s := range rs.Sites {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{s.Rename, "rename"}, {s.Bare, "bare"}, {s.Call, "call"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		fmt.Fprintf(&b, "site    %s  [%s]\n", s.Ref, strings.Join(flags, " "))
	}
	for _, r := range rs.Review {
		fmt.Fprintf(&b, "review  %s\n", r)
	}
	for _, r := range rs.Unjudged {
		fmt.Fprintf(&b, "unjudged  %s\n", r)
	}
	for _, c := range rs.Conflicts {
		fmt.Fprintf(&b, "conflict  %s\n", c)
	}
	return b.String()
}

func compare(t *testing.T, file string, ar *txtar.Archive, got string) {
	for i, f := range ar.Files {
		if f.Name != "refs" {
			continue
		}
		if *update {
			ar.Files[i].Data = []byte(got)
			if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if !bytes.Equal(f.Data, []byte(got)) {
			t.Errorf("%s: references differ (-want +got); run go test ./patches/resolve -update after checking:\n%s", file, cmp.Diff(string(f.Data), got))
		}
		return
	}
	if *update {
		ar.Files = append(ar.Files, txtar.File{Name: "refs", Data: []byte(got)})
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: no refs section; run go test ./patches/resolve -update", file)
}
