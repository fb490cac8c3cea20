package patches

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden from the current output")

// fakeKernel stands in for the generated kernel module: the rewriter only
// copies it (and checks that it defines what the wiring calls), so its
// content does not matter beyond being recognisable.
const fakeKernel = `TARGET = "sm_120"


def supports(q, k_cache, indices):
    return True


def sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    raise NotImplementedError("fake kernel for golden tests")


def supports_full(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, *extra):
    return True


def sparse_decode_full(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, *extra):
    raise NotImplementedError("fake kernel for golden tests")
`

// A golden case is a txtar archive in testdata/golden:
//
//	comment: what the case is about; a line "args: --module P --revert
//	--verify --roundtrip --root DIR" sets options
//	-- in/<path> --   the input tree (files under in/)
//	-- mode/<path> -- optional: "755" sets that input file's mode
//	-- diff --        expected unified diff of the dry run
//	-- report --      expected report (or "error: ..." when the run fails)
//
// The run is the workflow's (Run), from disk, on in/ or on in/DIR with
// --root; with --verify it is the proof alone (Check: no diff). With
// --roundtrip the case patches the tree on disk, proves it,
// reverts it, and checks that every byte and mode is back; the report is
// the revert's.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	rec := mustRecipe(t)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			job, mode := goldenJob(t, ar, rec)
			dir := t.TempDir()
			input := writeInput(t, dir, ar)
			job.Root = filepath.Join(dir, filepath.FromSlash(job.Root))
			var diff, report string
			var out *Outcome
			switch mode {
			case "roundtrip":
				report = roundTrip(t, dir, job, input)
			case "verify":
				var rep *Report
				if rep, err = Check(job.Root, job.Options); err == nil {
					out = &Outcome{Report: rep}
				}
			default:
				job.DryRun = true
				out, err = Run(job)
			}
			switch {
			case mode == "roundtrip":
			case err != nil:
				var p *Problem
				if !errors.As(err, &p) {
					t.Fatalf("unexpected non-problem error: %v", err)
				}
				report = "error: " + err.Error() + "\n"
			default:
				diff, report = out.Diff, out.Report.String()
			}
			check(t, file, ar, "diff", diff)
			check(t, file, ar, "report", strings.ReplaceAll(report, dir, "$ROOT"))
			if *update {
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// goldenJob reads a case's "args:" line: the job and the mode ("",
// "verify" or "roundtrip").
func goldenJob(t *testing.T, ar *txtar.Archive, rec *Recipe) (Job, string) {
	job := Job{Root: ".", Options: Options{Recipe: rec, Kernel: []byte(fakeKernel)}}
	mode := ""
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		args, ok := strings.CutPrefix(line, "args:")
		if !ok {
			continue
		}
		fs := strings.Fields(args)
		for i := 0; i < len(fs); i++ {
			switch fs[i] {
			case "--module":
				i++
				job.Module = fs[i]
			case "--root":
				i++
				job.Root = fs[i]
			case "--revert":
				job.Revert = true
			case "--roundtrip":
				mode = "roundtrip"
			case "--verify":
				mode = "verify"
			default:
				t.Fatalf("unknown golden arg %q", fs[i])
			}
		}
	}
	return job, mode
}

func mustRecipe(t testing.TB) *Recipe {
	t.Helper()
	rec, err := DefaultRecipe()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// writeInput lays the in/ files of ar under root and returns them by path.
func writeInput(t *testing.T, root string, ar *txtar.Archive) map[string][]byte {
	t.Helper()
	input := map[string][]byte{}
	modes := map[string]os.FileMode{}
	for _, f := range ar.Files {
		if p, ok := strings.CutPrefix(f.Name, "mode/"); ok {
			var m os.FileMode
			for _, c := range strings.TrimSpace(string(f.Data)) {
				m = m*8 + os.FileMode(c-'0')
			}
			modes[p] = m
		}
	}
	for _, f := range ar.Files {
		p, ok := strings.CutPrefix(f.Name, "in/")
		if !ok {
			continue
		}
		input[p] = f.Data
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if m, ok := modes[p]; ok {
			mode = m
		}
		if err := os.WriteFile(full, f.Data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
	}
	return input
}

// roundTrip patches the tree on disk (which proves it from disk), checks
// the proof, reverts it and checks that everything under dir is byte- and
// mode-identical to the input; it returns the revert's report.
func roundTrip(t *testing.T, dir string, job Job, input map[string][]byte) string {
	t.Helper()
	modes := snapshotModes(t, dir)
	out, err := Run(job)
	if err != nil {
		t.Fatalf("roundtrip: patch failed: %v", err)
	}
	if !out.Report.OK() {
		t.Fatalf("verify after patch is not OK:\n%s", out.Report)
	}
	again, err := Run(job)
	if err != nil || !again.Report.NothingToDo {
		t.Fatalf("patching twice changed more (err %v):\n%s", err, again.Report)
	}
	job.Revert, job.Module = true, ""
	rv, err := Run(job)
	if err != nil {
		t.Fatal(err)
	}
	after := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			after[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	if diff := cmp.Diff(input, after); diff != "" {
		t.Errorf("revert did not restore the input (-input +after):\n%s", diff)
	}
	if diff := cmp.Diff(modes, snapshotModes(t, dir)); diff != "" {
		t.Errorf("file modes changed (-before +after):\n%s", diff)
	}
	return rv.Report.String()
}

func snapshotModes(t *testing.T, root string) map[string]os.FileMode {
	out := map[string]os.FileMode{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = info.Mode()
		}
		return nil
	})
	return out
}

// check compares got with the archive's section, or rewrites it with -update.
func check(t *testing.T, file string, ar *txtar.Archive, name, got string) {
	t.Helper()
	for i, f := range ar.Files {
		if f.Name != name {
			continue
		}
		if *update {
			ar.Files[i].Data = []byte(got)
			return
		}
		if !bytes.Equal(f.Data, []byte(got)) {
			t.Errorf("%s: %s differs from golden (-want +got); run go test ./patches -update after checking:\n%s",
				file, name, cmp.Diff(string(f.Data), got))
		}
		return
	}
	if *update {
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(got)})
		return
	}
	t.Errorf("%s: no %q section; run go test ./patches -update", file, name)
}
