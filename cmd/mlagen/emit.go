package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/mlagen/mlagen/gen"
)

const emitUsage = `Usage: mlagen emit [flags]

Budget-check every variant of a sweep against the target's shared-memory and
register limits, and write sparse_mla_mma.py (every variant that fits, as a
configuration, the static selection by batch and topk, and the launchers:
the single file 'mlagen patch' installs), simt_baseline.py, harness.py
(validates and times every configuration on your GPU) and VARIANTS.md (read
it first). The selection is the target's measured one (gen/selections,
written by 'mlagen select' and built into mlagen) where every variant it
names fits the sweep, else a static rule, and emit says so. --out changes
where the files go, never what they hold.

On sm_90 the sweep also holds the warp-specialised family (ws_*, written in
Gluon: a producer warp group gathers and dequantises K tiles while two
consumer warp groups run the wgmma); --ws-split-k picks its SPLIT_K values,
and --ws-cluster-split-k those of its wsc_* form, whose splits run as one
thread-block cluster and merge their partials without a combine kernel.

Examples:
  mlagen emit                                  # curated sm_120 sweep into kernels/sm120
  mlagen emit --target sm_90                   # curated sm_90 sweep into kernels/sm90
  mlagen emit --block-h 16,32 --block-t 16 --split-k 1,8 --dry-run
  mlagen emit --target sm_90 --check           # CI: fail when kernels/sm90 is stale
  mlagen emit --target sm_90 --ws-split-k none # Triton kernels only
  mlagen emit --target sm_90 --per-variant --out /tmp/k  # one module per variant too

Exit status: 0 written (or up to date), 1 nothing fits or --check found a
difference, 2 bad flags (nothing written).
`

// fileStatus is what emit did, or would do, to one file.
type fileStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "new", "changed", "unchanged", "stale" (generated, no longer emitted)
}

func runEmit(e *env, args []string) int {
	fs := newFlagSet("emit", e)
	var sf sweepFlags
	sf.register(fs)
	out := fs.String("out", "", "output directory (default kernels/<target>, e.g. kernels/sm120)")
	dryRun := fs.Bool("dry-run", false, "write nothing; list what would be written")
	check := fs.Bool("check", false, "write nothing; exit 1 when the directory differs from what would be emitted")
	asJSON := fs.Bool("json", false, "print a JSON report instead of tables")
	perVariant := fs.Bool("per-variant", false, "also write each fitting variant alone as <variant>.py (never installed: the bundle ships)")
	if done, code := parseFlags(fs, e, args, emitUsage); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "mlagen emit: unexpected argument %q (emit takes flags only)\n", fs.Arg(0))
		return exitUsage
	}
	s, err := sf.sweep(fs)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen emit: %v\n", err)
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("kernels", s.Target.Dir())
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		fmt.Fprintf(e.stderr, "mlagen emit: --out %s is a file, not a directory\n", dir)
		return exitUsage
	}
	if *dryRun && *check {
		fmt.Fprintln(e.stderr, "mlagen emit: --dry-run and --check are exclusive")
		return exitUsage
	}
	em, err := gen.Emit(s, sweepCommand("emit", s), nil)
	if err == nil && *perVariant {
		var extra []gen.File
		extra, err = em.PerVariantFiles()
		em.Files = append(em.Files, extra...)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen emit: %v\n", err)
		return exitFail
	}
	if em.SelectionNote != "" && !*asJSON {
		fmt.Fprintf(e.stdout, "note: %s\n", em.SelectionNote)
	}
	statuses, err := compareDir(dir, em.Files)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen emit: %v\n", err)
		return exitFail
	}
	nothingFits := len(em.Fitting()) == 0
	mode := "write"
	switch {
	case *dryRun:
		mode = "dry-run"
	case *check:
		mode = "check"
	}
	differs := false
	for _, st := range statuses {
		if st.Status != "unchanged" {
			differs = true
		}
	}
	if mode == "write" && !nothingFits {
		if err := writeDir(dir, em.Files, statuses); err != nil {
			fmt.Fprintf(e.stderr, "mlagen emit: %v\n", err)
			return exitFail
		}
	}
	code := exitOK
	if nothingFits || (mode == "check" && differs) {
		code = exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{
			"target": s.Target.Name, "out": dir, "mode": mode, "command": em.Command,
			"variants": em.Budgets, "selection": em.Selection, "files": statuses,
			"fitting": len(em.Fitting()), "refused": len(em.Budgets) - len(em.Fitting()),
		})
		return code
	}
	printVerdicts(e.stdout, s, em.Budgets)
	if nothingFits {
		fmt.Fprintf(e.stderr, "mlagen emit: no variant of the sweep fits %s; nothing written (see 'mlagen budget' for the breakdowns)\n", s.Target.Name)
		return code
	}
	counts := map[string]int{}
	for _, st := range statuses {
		counts[st.Status]++
	}
	switch mode {
	case "dry-run":
		fmt.Fprintf(e.stdout, "\nwould write to %s (nothing written):\n", dir)
		for _, st := range statuses {
			fmt.Fprintf(e.stdout, "  %-9s %s\n", st.Status, filepath.Join(dir, st.Name))
		}
	case "check":
		if !differs {
			fmt.Fprintf(e.stdout, "\n%s is up to date (%d files)\n", dir, len(statuses))
			break
		}
		fmt.Fprintf(e.stdout, "\n%s differs from what '%s' would emit:\n", dir, em.Command)
		for _, st := range statuses {
			if st.Status != "unchanged" {
				fmt.Fprintf(e.stdout, "  %-9s %s\n", st.Status, filepath.Join(dir, st.Name))
			}
		}
		fmt.Fprintln(e.stdout, "Run 'make kernels' (or that command) and commit the result.")
	default:
		fmt.Fprintf(e.stdout, "\n%s: %d new, %d changed, %d unchanged, %d stale removed (%d variants fit, %d refused)\n",
			dir, counts["new"], counts["changed"], counts["unchanged"], counts["stale"], len(em.Fitting()), len(em.Budgets)-len(em.Fitting()))
	}
	return code
}

// printVerdicts is the short per-variant table emit prints.
func printVerdicts(w io.Writer, s gen.Sweep, bs []gen.Budget) {
	fmt.Fprintf(w, "%s (%s), shared memory limit %d B, %d variants:\n", s.Target.Name, s.Target.GPUs, s.Target.SmemLimit, len(bs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tsmem B\tregs\tverdict")
	for _, b := range bs {
		v := b.Verdict()
		if !b.Fits {
			v += ": " + strings.Join(b.Reasons, "; ")
			if b.Nearest != "" {
				v += " (nearest fit: " + b.Nearest + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", b.Name, b.SmemBytes, b.RegsEst, v)
	}
	tw.Flush()
}

// isGenerated reports whether a file carries mlagen's generated-code header,
// so that emit only ever removes files it wrote itself.
func isGenerated(data []byte) bool {
	return bytes.HasPrefix(data, []byte("# Code generated by mlagen; DO NOT EDIT.")) ||
		bytes.Contains(data[:min(len(data), 300)], []byte("Generated by `mlagen emit"))
}

// compareDir says, for every emitted file and every stale generated file
// already in dir, what writing would do.
func compareDir(dir string, files []gen.File) ([]fileStatus, error) {
	var out []fileStatus
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		old, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			out = append(out, fileStatus{f.Name, "new"})
		case err != nil:
			return nil, err
		case bytes.Equal(old, f.Data):
			out = append(out, fileStatus{f.Name, "unchanged"})
		default:
			out = append(out, fileStatus{f.Name, "changed"})
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, ent := range entries {
		if ent.IsDir() || want[ent.Name()] || !(strings.HasSuffix(ent.Name(), ".py") || strings.HasSuffix(ent.Name(), ".md")) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err == nil && isGenerated(data) {
			out = append(out, fileStatus{ent.Name(), "stale"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// writeDir writes each new or changed file through a temporary file and a
// rename, so that no file is ever half-written, then removes stale
// generated files.
func writeDir(dir string, files []gen.File, statuses []fileStatus) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	st := map[string]string{}
	for _, s := range statuses {
		st[s.Name] = s.Status
	}
	for _, f := range files {
		if st[f.Name] == "unchanged" {
			continue
		}
		if err := writeFileAtomic(filepath.Join(dir, f.Name), f.Data); err != nil {
			return err
		}
	}
	for _, s := range statuses {
		if s.Status == "stale" {
			if err := os.Remove(filepath.Join(dir, s.Name)); err != nil {
				return fmt.Errorf("remove stale %s: %w", s.Name, err)
			}
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}
