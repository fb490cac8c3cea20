package patches

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report is what a run found and did; `--json` prints it as is.
type Report struct {
	Command string `json:"command"` // patch, revert or verify
	// Module is the file that defines the old function.
	Module       string `json:"module,omitempty"`
	KernelModule string `json:"kernel_module,omitempty"`
	// Environ is the environ.py the gate is registered in and read through;
	// empty when the dispatcher reads os.environ.
	Environ string `json:"environ,omitempty"`
	Gate    string `json:"gate"`
	Old     string `json:"old"`
	New     string `json:"dispatcher"`
	// Changes lists the files written (or, in a dry run, to be written).
	Changes []FileChange `json:"changes"`
	// NothingToDo: the tree already was in the requested state.
	NothingToDo bool `json:"nothing_to_do"`
	// Wired are the references that now go through the dispatcher (after a
	// revert: those that were turned back); Missed those that do not.
	Wired  []Ref `json:"wired"`
	Missed []Ref `json:"missed"`
	Files  int   `json:"files"`
	// Review lists what names the old function in a way mlagen does not
	// rewrite (dotted-name strings, unbound names).
	Review []Ref `json:"review"`
	// Problems are structural faults verify found (no dispatcher, no kernel
	// module, gate not registered).
	Problems []string `json:"problems"`
	Scanned  int      `json:"scanned"`
	Parsed   int      `json:"parsed"`
	// SyntaxIgnored: files that do not parse but do not reference the
	// function either.
	SyntaxIgnored []string `json:"syntax_errors_ignored"`
	NonUTF8       []string `json:"skipped_not_utf8"`
	Outside       []string `json:"symlinks_not_followed"`
	// Diff is the unified diff of a dry run (--json --dry-run only).
	Diff string `json:"diff,omitempty"`
}

// FileChange is one file a run writes.
type FileChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // create, edit, delete
	What   string `json:"what"`
}

// MarshalJSON writes empty lists as [] rather than null, so that CI scripts
// can count them without special cases.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	c := plain(*r)
	for _, l := range []*[]Ref{&c.Wired, &c.Missed, &c.Review} {
		if *l == nil {
			*l = []Ref{}
		}
	}
	for _, l := range []*[]string{&c.Problems, &c.SyntaxIgnored, &c.NonUTF8, &c.Outside} {
		if *l == nil {
			*l = []string{}
		}
	}
	if c.Changes == nil {
		c.Changes = []FileChange{}
	}
	return json.Marshal(c)
}

// OK is true when nothing is left unwired and nothing is structurally wrong.
func (r *Report) OK() bool { return len(r.Missed) == 0 && len(r.Problems) == 0 }

// Summary is the proof line.
func (r *Report) Summary() string {
	if r.Command == "revert" {
		return fmt.Sprintf("%s restored in %s, %d still wired", plural(len(r.Wired), "reference"), plural(r.Files, "file"), len(r.Missed))
	}
	return fmt.Sprintf("%s wired in %s, %d missed", plural(len(r.Wired), "reference"), plural(r.Files, "file"), len(r.Missed))
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	if r.Module != "" {
		p("module: %s defines %s", r.Module, r.Old)
	}
	if r.Command != "revert" && r.Module != "" {
		if r.Environ != "" {
			p("gate:   %s, read through envs at call time (%s)", r.Gate, r.Environ)
		} else {
			p("gate:   %s, read from os.environ at call time (no environ.py with class Envs)", r.Gate)
		}
	}
	if len(r.Changes) > 0 {
		p("changes:")
		for _, c := range r.Changes {
			p("  %-6s %s  (%s)", c.Action, c.Path, c.What)
		}
	}
	if r.NothingToDo {
		switch r.Command {
		case "revert":
			p("nothing to revert: no mlagen changes in this tree")
		default:
			p("already patched: nothing to change")
		}
	}
	section := func(title string, refs []Ref) {
		if len(refs) == 0 {
			return
		}
		p("%s:", title)
		for _, ref := range refs {
			p("  %s", ref)
		}
	}
	switch r.Command {
	case "revert":
		section("restored", r.Wired)
		section("still wired", r.Missed)
	default:
		section("wired", r.Wired)
		section("missed", r.Missed)
	}
	section("review (names "+r.Old+" in a way mlagen does not rewrite)", r.Review)
	for _, pr := range r.Problems {
		p("problem: %s", pr)
	}
	for _, s := range r.SyntaxIgnored {
		p("ignored: %s (syntax error, no reference)", s)
	}
	for _, s := range r.NonUTF8 {
		p("skipped: %s (not UTF-8)", s)
	}
	for _, s := range r.Outside {
		p("not followed: %s (symlink out of the tree)", s)
	}
	p("scanned %d Python files, parsed %d", r.Scanned, r.Parsed)
	p("%s", r.Summary())
}

// String is WriteText into a string.
func (r *Report) String() string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}
