package patches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDistVersion reads an installed distribution's version from its
// METADATA headers only, and says nothing where there is none.
func TestDistVersion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name, "METADATA")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := distVersion(dir, "triton"); got != "" {
		t.Errorf("no dist-info: %q", got)
	}
	write("tritonx-1.0.dist-info", "Name: tritonx\nVersion: 1.0\n")
	write("triton-3.8.0.dist-info", "Metadata-Version: 2.1\nName: triton\nVersion: 3.8.0\n\nVersion: 9 (in the description)\n")
	if got := distVersion(dir, "triton"); got != "3.8.0" {
		t.Errorf("distVersion = %q, want 3.8.0", got)
	}
	write("torch-2.11.0.dist-info", "Name: torch\n\nVersion: 1 (in the description)\n")
	if got := distVersion(dir, "torch"); got != "" {
		t.Errorf("a Version line past the headers was read: %q", got)
	}
}

// TestTritonCheckSays: the note names the release and, when unchecked, says
// what to do; checked, which release the timings were taken under.
func TestTritonCheckSays(t *testing.T) {
	under := []string{"3.6.0", "3.7.1", "3.8.0"}
	ok := (&TritonCheck{Version: "3.7.1", Checked: true, CheckedUnder: under}).describe()
	if !strings.Contains(ok, "3.7.1 beside SGLang, one of") || !strings.Contains(ok, "timed under 3.6.0") {
		t.Errorf("checked: %s", ok)
	}
	bad := (&TritonCheck{Version: "3.9.0", CheckedUnder: under}).describe()
	if !strings.Contains(bad, "3.9.0 beside SGLang, not one") || !strings.Contains(bad, "harness") {
		t.Errorf("unchecked: %s", bad)
	}
}

// TestTritonBesideInstalled: verify on an installed SGLang names the Triton
// beside it, and says so where there is none (the server then imports one
// mlagen cannot see); a checkout, with no RECORD, gets no Triton line.
func TestTritonBesideInstalled(t *testing.T) {
	for _, c := range []struct {
		name      string
		installed bool
		triton    string
		want      string
	}{
		{"checkout", false, "", ""},
		{"installed with 3.8.0", true, "3.8.0", "3.8.0 beside SGLang, one of"},
		{"installed without", true, "", "none installed beside SGLang"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			files := upstreamFiles()
			if c.installed {
				files["sglang-0.5.23.dist-info/RECORD"] = "sglang/srt/environ.py,,\n"
			}
			if c.triton != "" {
				files["triton-"+c.triton+".dist-info/METADATA"] = "Name: triton\nVersion: " + c.triton + "\n"
			}
			writeFiles(t, root, files)
			rep, err := Check(root, Options{Recipe: mustRecipe(t), Tritons: []string{"3.6.0", "3.7.1", "3.8.0", "3.9.0"}})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if rep.Triton != nil {
				got = rep.Triton.describe()
			}
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("the Triton line is %q, want one with %q", got, c.want)
			}
		})
	}
}
