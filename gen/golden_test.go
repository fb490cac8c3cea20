package gen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under golden/")

// checkGolden compares got with golden/<rel>; -update rewrites it.
func checkGolden(t *testing.T, rel string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "golden", rel)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test ./gen -update' to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("golden/%s differs (-want +got); if the change is intended run 'make golden' and review the diff:\n%s",
			rel, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
	}
}

// Three canonical variants per target: a small-batch deep split, a
// mid-size one and the large-batch workhorse; on sm_90 also the
// warp-specialised (Gluon) kernel with a split, and its cluster form, whose
// producer and merge take other template branches. A reviewer reads these
// diffs when a template changes.
var canonical = map[string][]string{
	"sm_120": {"mma_h16_t16_k32_w8_s1", "mma_h16_t32_k4_w8_s1", "mma_h16_t16_k1_w8_s2"},
	"sm_90": {
		"mma_h16_t64_k32_w8_s1", "mma_h64_t16_k4_w8_s2", "mma_h64_t64_k1_w8_s2",
		"ws_h64_t64_k2_w8_s2", "wsc_h64_t64_k2_w8_s2",
	},
}

func TestGoldenEmit(t *testing.T) {
	for target, names := range canonical {
		tg, err := LookupTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSweep(tg)
		e, err := Emit(s, "mlagen emit --target "+tg.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range e.Files {
			files[f.Name] = f.Data
		}
		for _, n := range names {
			data, ok := files[n+".py"]
			if !ok {
				t.Errorf("%s: canonical variant %s was not emitted", target, n)
				continue
			}
			checkGolden(t, filepath.Join("emit", tg.Dir(), n+".py"), data)
		}
	}
}

func TestGoldenBudget(t *testing.T) {
	for _, target := range []string{"sm_120", "sm_90"} {
		tg, _ := LookupTarget(target)
		s := DefaultSweep(tg)
		var buf bytes.Buffer
		WriteBudgetTable(&buf, s, CheckSweep(s))
		checkGolden(t, filepath.Join("budget", tg.Dir()+".txt"), buf.Bytes())
	}
}
