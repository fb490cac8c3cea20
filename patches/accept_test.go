package patches

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// Every reference the proof cannot judge starts with a place that
// --accept-unjudged takes, and accepting every place printed passes each
// one: the golden cases that have them, run again with their places.
func TestAcceptEveryUnjudged(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	rec := mustRecipe(t)
	cases := 0
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		job, mode := goldenJob(t, ar, rec)
		if mode != "" {
			continue
		}
		dir := t.TempDir()
		writeInput(t, dir, ar)
		job.Root = filepath.Join(dir, filepath.FromSlash(job.Root))
		job.DryRun = true
		out, err := Run(job)
		if err != nil || len(out.Report.Unjudged) == 0 {
			continue
		}
		cases++
		name := filepath.Base(file)
		var places []string
		for _, u := range out.Report.Unjudged {
			at := unjudgedPlace(u)
			if at == "" || !strings.HasPrefix(u, at) {
				t.Errorf("%s: no place at the start of %q", name, u)
				continue
			}
			if !slices.Contains(places, at) {
				places = append(places, at)
			}
		}
		job.AcceptUnjudged = places
		again, err := Run(job)
		if err != nil {
			t.Fatalf("%s: with every place accepted: %v", name, err)
		}
		if r := again.Report; len(r.Unjudged) != 0 || len(r.Accepted) != len(out.Report.Unjudged) || slices.ContainsFunc(r.Problems, func(p string) bool { return strings.Contains(p, "--accept-unjudged") }) {
			t.Errorf("%s: with %v accepted, %d unjudged and %d accepted (want 0 and %d), problems %q", name, places, len(r.Unjudged), len(r.Accepted), len(out.Report.Unjudged), r.Problems)
		}
	}
	if cases < 3 {
		t.Errorf("only %d golden cases with unjudged references; the test expects at least 3", cases)
	}
}

// The places of the whole-file lines (a file mlagen cannot read, a link
// out of the tree) are their paths; one that names no such place is a
// problem, not a silent pass.
func TestAcceptPlaces(t *testing.T) {
	for u, want := range map[string]string{
		"pkg/a.py:12: the name as a string outside tests: x; why":                               "pkg/a.py:12",
		"pkg/b.py is neither UTF-8 nor declares a single-byte encoding, and it names f: fix it": "pkg/b.py",
		"pkg/c.py is a symlink to a file outside the tree, which mlagen neither reads":          "pkg/c.py",
		"dir with space/d.py:3: names _k, the Triton kernel":                                    "dir with space/d.py:3",
		"no place here: something else":                                                         "",
	} {
		if got := unjudgedPlace(u); got != want {
			t.Errorf("unjudgedPlace(%q) = %q, want %q", u, got, want)
		}
	}
	rep := &Report{Unjudged: []string{"pkg/a.py:12: x", "pkg/b.py is neither UTF-8 nor ..."}}
	v := &verifier{rep: rep}
	v.accept([]string{"pkg/b.py", "pkg/a.py:13"})
	if len(rep.Unjudged) != 1 || !strings.HasPrefix(rep.Unjudged[0], "pkg/a.py:12:") || len(rep.Accepted) != 1 {
		t.Errorf("accepting pkg/b.py and a wrong line of pkg/a.py: unjudged %q, accepted %q", rep.Unjudged, rep.Accepted)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "--accept-unjudged pkg/a.py:13: nothing there") {
		t.Errorf("the stale place is not a problem: %q", rep.Problems)
	}
}
