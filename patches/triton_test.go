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
