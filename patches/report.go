package patches

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// Ref is one place in the tree that refers to a function (or, for review
// items, names it in a way that cannot be rewired safely).
type Ref = resolve.Ref

// Report is what a run found and did; `--json` prints it as is.
type Report struct {
	Command string `json:"command"` // patch, revert or verify
	// proofOnly: the proof of a run that writes nothing (verify, patch
	// --check), which has no "nothing to do" verdict.
	proofOnly bool
	// Module is the file that defines the old function.
	Module       string `json:"module,omitempty"`
	KernelModule string `json:"kernel_module,omitempty"`
	// Environ is the environ.py the gate is registered in and read through;
	// empty when the inserted code reads os.environ.
	Environ string `json:"environ,omitempty"`
	// Record is the installed distribution's RECORD that lists the kernel
	// module (site-packages), relative to the root; empty for a checkout.
	Record string `json:"record,omitempty"`
	// OtherRecords are the other dist-infos' RECORDs that list SGLang's
	// files (pip install --ignore-installed leaves the old release's).
	OtherRecords []OtherRecord `json:"other_records,omitempty"`
	Gate         string        `json:"gate"`
	Old          string        `json:"old"`
	New          string        `json:"dispatcher"`
	// Route is how a decode call reaches the kernel with the gate set
	// (patch and verify).
	Route *RouteReport `json:"route,omitempty"`
	// Kernel is what the proof found of the installed kernel module.
	Kernel *KernelCheck `json:"kernel_check,omitempty"`
	// Triton is the Triton installed beside an installed SGLang, which the
	// kernel module compiles with, and whether the modules are checked
	// under it. Not a problem either way: a note for the user.
	Triton *TritonCheck `json:"triton,omitempty"`
	// Recovered says what the run first finished of an interrupted one
	// (undone from its journal, temporary files removed).
	Recovered []string `json:"recovered"`
	// Changes lists the files written (or, in a dry run, to be written).
	Changes []FileChange `json:"changes"`
	// NothingToDo: the tree already was in the requested state (patch and
	// revert; verify's JSON leaves it out).
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
	// module, gate not registered, a guard missing or out of date, a
	// backend choice that would make the gate inert).
	Problems []string `json:"problems"`
	// Unjudged are references the proof cannot judge (an import from a
	// module outside the tree, a file mlagen cannot read that names the
	// function): the proof fails on them rather than pass without them.
	Unjudged []string `json:"unjudged"`
	// Accepted are unjudged references at places the user accepted
	// (--accept-unjudged): they do not fail the proof.
	Accepted []string `json:"accepted_unjudged"`
	Scanned  int      `json:"scanned"`
	Parsed   int      `json:"parsed"`
	// SyntaxIgnored: files that do not parse but do not reference the
	// function either.
	SyntaxIgnored []string `json:"syntax_errors_ignored"`
	NonUTF8       []string `json:"skipped_not_utf8"`
	Outside       []string `json:"symlinks_not_followed"`
	// Diff is the unified diff of a dry run (--json --dry-run only).
	Diff string `json:"diff,omitempty"`

	// unreached says, entry by entry, where the model backend calls an
	// entry only on other GPUs than the kernel module's target (Patch
	// refuses such a tree unless told); unreachedFix what to do about it.
	unreached    []string
	unreachedFix string
}

// OtherRecord is a RECORD that lists SGLang's files beside Report.Record,
// the installed release's.
type OtherRecord struct {
	Path string `json:"path"`
	// Listed is how many of the tree's files it lists, Mismatched how many
	// of those it gives another hash; InstalledMismatched is Mismatched of
	// Report.Record (the files mlagen edits count in both).
	Listed              int `json:"listed"`
	Mismatched          int `json:"mismatched"`
	InstalledMismatched int `json:"installed_mismatched"`
	// Stale: its hashes disagree with more files than Report.Record's do,
	// so it is an earlier release's; false where the two cannot be told
	// apart.
	Stale bool `json:"stale"`
}

func (o OtherRecord) describe(installed string) string {
	const both = "pip uninstall takes whichever dist-info it finds first, and mlagen patch lists the kernel module in each, so either removes it"
	if o.Stale {
		return fmt.Sprintf("%s too, an earlier release's: its hashes disagree with %d of the %d files it lists, %s's with %d (the files mlagen edits count in both). pip install --ignore-installed leaves the old dist-info beside the new; %s. Delete %s (metadata only) to leave pip one release",
			o.Path, o.Mismatched, o.Listed, installed, o.InstalledMismatched, both, path.Dir(o.Path))
	}
	return fmt.Sprintf("%s too, whose hashes agree with the files as well as %s's do (mlagen cannot tell which release pip installed last); %s",
		o.Path, installed, both)
}

// TritonCheck is the Triton beside an installed SGLang.
type TritonCheck struct {
	// Version is "" where none is installed beside it.
	Version string `json:"version"`
	// Checked: the kernel modules are compiled (and their host code run)
	// under this release by mlagen's own checks.
	Checked      bool     `json:"checked"`
	CheckedUnder []string `json:"checked_under"`
}

func (t *TritonCheck) describe() string {
	under := strings.Join(t.CheckedUnder, ", ")
	if t.Version == "" {
		return fmt.Sprintf("none installed beside SGLang (no triton-*.dist-info beside its own), so the server imports whichever Triton its Python finds first, which mlagen cannot see from here; the kernel modules are compiled and checked under %s: ask the server's Python (python3 -c 'import triton; print(triton.__version__)') before setting the gate", under)
	}
	if t.Checked {
		return fmt.Sprintf("%s beside SGLang, one of the releases the kernel modules are compiled and checked under (%s; timed under %s)", t.Version, under, t.CheckedUnder[0])
	}
	return fmt.Sprintf("%s beside SGLang, not one the kernel modules are checked under (%s): they may not compile there; run the harness on the GPU (docs/targets.md, \"Triton versions\") before setting the gate", t.Version, under)
}

// RouteReport is the route of a decode call with the gate set, outermost
// first: the model's heads, SGLang's entry points, the whole call, the
// per-cache dispatcher, the kernel module.
type RouteReport struct {
	// Env is what to set in the server's environment.
	Env string `json:"env"`
	// Heads are the places of the models that set how many query heads a
	// rank's attention call gets (padded to 64 by SGLang under tensor
	// parallelism), with what mlagen's heads guard makes of each.
	Heads      []RouteHop   `json:"heads"`
	Entries    []RouteEntry `json:"entries"`
	WholeCall  *RouteHop    `json:"whole_call"`
	Dispatcher *RouteHop    `json:"dispatcher"`
	Kernel     RouteHop     `json:"kernel"`
	// Notes say what the route does not cover: no entry in the tree, the
	// whole call used as a value.
	Notes []string `json:"notes"`
}

// RouteHop is one function on the route and what it does with the gate
// set.
type RouteHop struct {
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Function string `json:"function,omitempty"`
	How      string `json:"how"`
	// Wired: mlagen's code for this hop is in the tree as mlagen writes it
	// (else How says what would happen once it is).
	Wired bool `json:"wired"`
}

// RouteEntry is an entry point: a function that forwards to the whole call.
type RouteEntry struct {
	RouteHop
	// Choice is SGLang's backend choice the route guard overrides, with
	// the variable behind it; empty when the entry forwards whatever the
	// environment says.
	Choice   string `json:"choice,omitempty"`
	Variable string `json:"variable,omitempty"`
	Releases string `json:"releases,omitempty"`
	// Callers are the calls of the entry found in the tree (SGLang's model
	// backend), with whether each runs on the kernel module's target.
	Callers []RouteCaller `json:"callers"`
}

// RouteCaller is one call of an entry point, one hop further out.
type RouteCaller struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	// Test is the test of the GPU that decides whether the call runs, as
	// written ("not x" for the earlier test of an if whose later branch
	// holds the call); empty when none does.
	Test string `json:"test,omitempty"`
	// AlsoRequires: where the call runs on the target's GPUs, what its
	// branch needs of the if's tests of something else, which mlagen does
	// not judge: the other parts of an and ("ready" of "is_sm120 and
	// ready"), an elif's test, "not x" for an earlier test x ("if ready:
	// ... elif is_sm120:" needs "not ready"). The call runs only where
	// they hold.
	AlsoRequires string `json:"also_requires,omitempty"`
	// Reach: "yes" (it runs on the target's GPUs), "no" (never there), or
	// "unknown" (no test of the GPU mlagen reads decides it).
	Reach string `json:"reach"`
	// InTest: the call is in a test file, which the server does not run;
	// it does not count either way.
	InTest bool   `json:"in_test"`
	How    string `json:"how"`
}

// FileChange is one file a run writes.
type FileChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // create, edit, delete
	What   string `json:"what"`
}

// MarshalJSON writes empty lists as [] rather than null, so that CI scripts
// can count them without special cases, nothing_to_do only for the
// commands that write (patch, revert), and "error" where the report is not
// OK.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	c := plain(*r)
	for _, l := range []*[]Ref{&c.Wired, &c.Missed, &c.Review} {
		if *l == nil {
			*l = []Ref{}
		}
	}
	for _, l := range []*[]string{&c.Recovered, &c.Problems, &c.Unjudged, &c.Accepted, &c.SyntaxIgnored, &c.NonUTF8, &c.Outside} {
		if *l == nil {
			*l = []string{}
		}
	}
	if c.Changes == nil {
		c.Changes = []FileChange{}
	}
	if c.Kernel != nil && c.Kernel.Missing == nil {
		k := *c.Kernel
		k.Missing = []string{}
		c.Kernel = &k
	}
	if c.Route != nil {
		rt := *c.Route
		rt.Entries = append([]RouteEntry{}, rt.Entries...)
		for i := range rt.Entries {
			if rt.Entries[i].Callers == nil {
				rt.Entries[i].Callers = []RouteCaller{}
			}
		}
		if rt.Notes == nil {
			rt.Notes = []string{}
		}
		if rt.Heads == nil {
			rt.Heads = []RouteHop{}
		}
		c.Route = &rt
	}
	// A report that is not OK has an "error", as every failing command's
	// --json object has one: CI finds a failure the same way whichever
	// command printed it.
	errLine := r.errorLine()
	if c.proofOnly || c.Command == "verify" {
		// verify (and patch --check) change nothing, so "nothing to do"
		// would only read as a verdict it is not: the field is left out.
		return json.Marshal(struct {
			plain
			NothingToDo *bool  `json:"nothing_to_do,omitempty"`
			Error       string `json:"error,omitempty"`
		}{plain: c, Error: errLine})
	}
	return json.Marshal(struct {
		plain
		Error string `json:"error,omitempty"`
	}{plain: c, Error: errLine})
}

// OK is true when nothing is left unwired, nothing is structurally wrong
// and nothing is beyond judging.
func (r *Report) OK() bool { return len(r.Missed) == 0 && len(r.Problems) == 0 && len(r.Unjudged) == 0 }

// errorLine counts what makes OK false ("" when nothing does); the lists
// say what each is.
func (r *Report) errorLine() string {
	if r.OK() {
		return ""
	}
	var parts []string
	if n := len(r.Missed); n > 0 {
		how := "missed"
		if r.Command == "revert" {
			how = "still wired"
		}
		parts = append(parts, plural(n, "reference")+" "+how)
	}
	if n := len(r.Problems); n > 0 {
		parts = append(parts, plural(n, "problem"))
	}
	if n := len(r.Unjudged); n > 0 {
		parts = append(parts, plural(n, "place")+" mlagen cannot judge")
	}
	return strings.Join(parts, ", ") + " (listed under missed, problems and unjudged)"
}

// failures lists what makes OK false, worded as WriteText words it.
func (r *Report) failures() []string {
	var out []string
	for _, m := range r.Missed {
		out = append(out, "missed: "+m.String())
	}
	for _, pr := range r.Problems {
		out = append(out, "problem: "+pr)
	}
	for _, u := range r.Unjudged {
		out = append(out, "cannot judge: "+u)
	}
	if len(r.Unjudged) > 0 {
		out = append(out, acceptHint)
	}
	return out
}

// acceptHint follows the "cannot judge" lines: how to go on past one.
const acceptHint = "(each 'cannot judge' line starts with its place: after reading it, --accept-unjudged PLACE passes that one, for patch and verify alike)"

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
	r.writeHead(p)
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
	r.Route.write(p)
	for _, pr := range r.Problems {
		p("problem: %s", pr)
	}
	for _, u := range r.Unjudged {
		p("cannot judge: %s", u)
	}
	if len(r.Unjudged) > 0 {
		p("%s", acceptHint)
	}
	for _, u := range r.Accepted {
		p("accepted: %s (--accept-unjudged)", u)
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
	if r.Command != "revert" && r.Route != nil && r.OK() {
		p("set %s in the server's environment", r.Route.Env)
	}
}

func (r *Report) writeHead(p func(string, ...any)) {
	for _, s := range r.Recovered {
		p("recovered: %s", s)
	}
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
	if r.Record != "" {
		p("record: %s (installed SGLang: pip uninstall removes what it lists)", r.Record)
		for _, o := range r.OtherRecords {
			p("record: %s", o.describe(r.Record))
		}
	}
	if r.Triton != nil {
		p("triton: %s", r.Triton.describe())
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
}

// write prints the route, outermost first.
func (rt *RouteReport) write(p func(string, ...any)) {
	if rt == nil {
		return
	}
	p("route (with %s in the server's environment):", rt.Env)
	hop := func(label string, h *RouteHop) {
		at := h.Path
		if h.Line > 0 {
			at = fmt.Sprintf("%s:%d", h.Path, h.Line)
		}
		if h.Function != "" {
			at += " " + h.Function
		}
		p("  %-10s  %s", label, at)
		if h.Wired {
			p("  %-10s    %s", "", h.How)
		} else {
			p("  %-10s    not wired: %s", "", h.How)
		}
	}
	for i := range rt.Heads {
		hop("heads", &rt.Heads[i])
	}
	for i := range rt.Entries {
		for _, c := range rt.Entries[i].Callers {
			p("  %-10s  %s:%d %s", "caller", c.Path, c.Line, c.Function)
			if c.Reach == "no" && !c.InTest {
				p("  %-10s    not reached: %s", "", c.How)
			} else {
				p("  %-10s    %s", "", c.How)
			}
		}
		hop("entry", &rt.Entries[i].RouteHop)
	}
	if rt.WholeCall != nil {
		hop("whole call", rt.WholeCall)
	}
	if rt.Dispatcher != nil {
		hop("per cache", rt.Dispatcher)
	}
	hop("kernel", &rt.Kernel)
	for _, n := range rt.Notes {
		p("  note: %s", n)
	}
}

// String is WriteText into a string.
func (r *Report) String() string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}
