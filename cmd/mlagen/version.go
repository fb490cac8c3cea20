package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"text/tabwriter"

	"github.com/mlagen/mlagen/gen"
)

// Stamped by `make build` (-ldflags "-X main.version=... -X main.commit=...
// -X main.commitDate=..."), because a build's VCS stamp is often missing
// (go build -buildvcs=false, a build outside the clone, go run);
// buildVersion falls back to what the Go toolchain recorded.
var (
	version    string
	commit     string
	commitDate string
)

const versionUsage = `Usage: mlagen version [--json]

Print what this binary is: its version, the commit it was built from (and
whether that tree had uncommitted changes), the Go version, and for every
target the measured selection it embeds (the GPU, date and results file
'mlagen select' read; without one, emit uses a static rule) and whether the
target's budget model is calibrated against the Triton compiler or an
estimate never compiled. 'mlagen --version' is the same.

Examples:
  mlagen version
  mlagen version --json | jq '.targets[] | select(.calibrated)'

Exit status: 0, or 2 for bad usage.
`

// versionInfo is `mlagen version --json`.
type versionInfo struct {
	Command    string       `json:"command"` // "version", as in every --json object
	Version    string       `json:"version"`
	Commit     string       `json:"commit"`
	CommitDate string       `json:"commit_date,omitempty"`
	Modified   bool         `json:"modified"`
	Go         string       `json:"go"`
	Platform   string       `json:"platform"`
	Targets    []targetInfo `json:"targets"`
}

type targetInfo struct {
	Target string `json:"target"`
	GPUs   string `json:"gpus"`
	// Selection is nil where no measured selection is embedded.
	Selection   *selectionSource `json:"selection"`
	Calibrated  bool             `json:"calibrated"`
	BudgetModel string           `json:"budget_model"`
}

func runVersion(e *env, args []string) int {
	f := newCmdFlags("version", versionUsage)
	asJSON := f.Bool("json", false, "print JSON instead of text")
	if done, code := f.parse(e, args); done {
		return code
	}
	if done, code := f.noArgs(e); done {
		return code
	}
	info, err := buildVersion()
	if err != nil {
		return failed(e, "version", *asJSON, exitFail, err.Error())
	}
	if *asJSON {
		return emitJSON(e, info, true)
	}
	writeVersion(e.stdout, info)
	return exitOK
}

// buildVersion gathers what the binary was stamped with and embeds.
func buildVersion() (versionInfo, error) {
	v := versionInfo{Command: "version", Version: version, Commit: commit, CommitDate: commitDate,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" {
			v.Version = bi.Main.Version // "(devel)" for a build inside the clone
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && v.Commit == "":
				v.Commit = s.Value
			case s.Key == "vcs.time" && v.CommitDate == "" && len(s.Value) >= 10:
				v.CommitDate = s.Value[:10]
			case s.Key == "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	if commit != "" {
		// A stamped build says itself whether the tree was clean.
		v.Modified = dirtyVersion.MatchString(version)
	}
	for _, t := range gen.Targets() {
		sel, ok, err := gen.MeasuredSelection(t)
		if err != nil {
			return v, err
		}
		c := gen.CalibrationOf(t)
		ti := targetInfo{Target: t.Name, GPUs: t.GPUs, Calibrated: c.Calibrated(), BudgetModel: c.String()}
		if ok {
			src := parseSelectionSource(sel.Source)
			ti.Selection = &src
		}
		v.Targets = append(v.Targets, ti)
	}
	return v, nil
}

var dirtyVersion = regexp.MustCompile(`-dirty$`)

func writeVersion(w io.Writer, v versionInfo) {
	c := v.Commit
	if c == "" {
		c = "unknown (built without VCS information; 'make build' stamps it)"
	}
	if v.CommitDate != "" {
		c += ", " + v.CommitDate
	}
	if v.Modified {
		c += ", with uncommitted changes"
	}
	fmt.Fprintf(w, "mlagen %s\ncommit  %s\ngo      %s %s\n\n", v.Version, c, v.Go, v.Platform)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tGPUs\tmeasured selection (embedded from "+gen.SelectionDir+")\tbudget model")
	for _, t := range v.Targets {
		sel := "none: emit uses the static rule"
		if s := t.Selection; s != nil {
			sel = s.Source
			if s.GPU != "" {
				sel = fmt.Sprintf("%s, %s, %s", s.GPU, s.Date, s.Results)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Target, t.GPUs, sel, t.BudgetModel)
	}
	tw.Flush()
}

// selectionSource is a measured selection's Source, which select writes
// as "measured on GPU (torch T, Triton V, DATE), RESULTS" (formatSource).
type selectionSource struct {
	Source  string `json:"source"`
	GPU     string `json:"gpu,omitempty"`
	Torch   string `json:"torch,omitempty"`
	Triton  string `json:"triton,omitempty"`
	Date    string `json:"date,omitempty"`
	Results string `json:"results,omitempty"`
}

var sourceRE = regexp.MustCompile(`^measured on (.+) \(torch ([^,]+), Triton ([^,]+), ([^)]+)\), (.+)$`)

func formatSource(gpu, torch, triton, date, results string) string {
	return fmt.Sprintf("measured on %s (torch %s, Triton %s, %s), %s", gpu, torch, triton, date, results)
}

// parseSelectionSource splits a Source select wrote; any other text is
// kept whole in Source.
func parseSelectionSource(s string) selectionSource {
	m := sourceRE.FindStringSubmatch(s)
	if m == nil {
		return selectionSource{Source: s}
	}
	return selectionSource{Source: s, GPU: m[1], Torch: m[2], Triton: m[3], Date: m[4], Results: m[5]}
}

// emitJSON prints v as indented JSON; ok chooses exit 0 or 1.
func emitJSON(e *env, v any, ok bool) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "mlagen: %v\n", err)
		return exitFail
	}
	return exitCode(ok)
}

func exitCode(ok bool) int {
	if ok {
		return exitOK
	}
	return exitFail
}
