package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlagen/mlagen/gen"
	"github.com/mlagen/mlagen/patches"
)

const patchHelp = `Usage: mlagen patch [flags] SGLANG_ROOT

Wire the generated MMA sparse-decode kernel into an SGLang checkout or an
installed SGLang (SGLANG_ROOT = .../site-packages/sglang):

  1. find the module that defines {old} (by parsing, not
     by path; --module picks one when several do),
  2. add the kernel module {kmod} beside it and insert the
     per-cache dispatcher {new} right after the old function,
     with the same signature, and rename every reference to the old
     function, in every file (calls, aliases, module attributes, re-exports,
     values), to the dispatcher,
  3. put a guarded entry at the top of the whole call ({whole}):
     it returns the kernel's {decode}() when {supports}()
     accepts the inputs, else the old body runs (per cache, as above),
  4. find SGLang's entry points by what they do (functions that call the
     whole call only in one branch of a backend choice made from the
     environment:
       {choices})
     and put a guard before that choice that runs the branch reaching the
     whole call, so the gate takes effect whatever the backend variable
     says, unless the kernel's {defers}() says the selection gives the
     call's shape to a peer (the choice then runs as before); a choice
     mlagen does not know, or a branch whose call it cannot pass on to
     {defers}() as written, stops the run (nothing written),
  5. where SGLang's model pads a rank's query heads to 64 under tensor
     parallelism (FlashMLA's width), put a heads guard after the padding
     (or at the top of the method that returns the count) so that, with
     the gate set on {platform}, a rank's
     call gets its own heads; a padding in a shape mlagen does not know is
     left as it is, and the route says why,
  6. register the gate {gate} in SGLang's environ.py (every guard
     reads it at call time, never at import; unset or false, SGLang runs
     exactly as before) and, for an installed SGLang, list the kernel
     module in the dist-info RECORD so that pip uninstall removes it (in
     each, where pip install --ignore-installed left an old release's
     dist-info beside the new),
  7. re-read the tree and prove that no reference was missed, and print the
     route a decode call takes with the gate set, from the calls of each
     entry point in SGLang's model backend, which calls the sm_120 entry
     only on {platform}: a kernel
     module whose --target is another GPU's would never run there, so
     patch refuses it (nothing written) unless --allow-unreached says to
     wire it anyway.

Nothing outside the edited byte ranges changes; files are replaced by rename,
all or none, never through a symlink or outside the root, with their owners
and modes kept. The writes are journalled and ordered so that every prefix
of them is a tree that imports and runs (the gate first, the entry points'
guards, then the model's heads guard last); a run killed half way is
finished or undone by the next patch or --revert, which also remove the
temporary files it left. Running it
again changes nothing (a tree patched by an earlier mlagen is upgraded in
place); a block mlagen wrote that was edited by hand is refused, not
overwritten, and so is an installed kernel module edited by hand (its
header records the SHA-256 of what patch wrote) or one installed from
--kernels or --selection, which a run without either would replace with the
built-in tables (pass the same flag again, or --revert first). --revert
restores the original bytes exactly, RECORD included, and deletes the
bytecode Python compiled of the kernel module (its __pycache__ files).

Only files that spell one of the names (or a name the function is
re-exported under) are parsed, and of those only the top-level statements
that spell such a name or import something; a model file that pads a
rank's heads is parsed whole. A syntax error in such a
statement stops the run (file, line, the parser's complaint); other broken
files are counted and ignored. Files that declare latin-1 (or another
single-byte encoding) are read and wired; another file that is not UTF-8 and
names the function makes the proof fail ("cannot judge"), as does a star
import that would bring it in. Strings that name the function by dotted path
are never rewritten: in tests (mock.patch targets) they are listed for review,
in the server's code (getattr, a registry) they make the proof fail, as does
the function reached through something that is not a module of the tree. The
kernel module is parsed and checked: Python, mlagen's header, the names the
guards call, and whether it is what this mlagen emits for its TARGET.
Each "cannot judge" line starts with its place (PATH:LINE, or PATH for a
whole file). Read it; where you know what it reaches, --accept-unjudged
PLACE passes that one (listed as accepted) and patch wires the rest. Give
verify the same flags. A PLACE where nothing is left to judge fails.

Examples:
  mlagen patch --dry-run ~/sglang            # show the diff, write nothing
  mlagen patch ~/sglang                      # wire it (kernel rendered for sm_120)
  mlagen patch .venv/lib/python3.11/site-packages/sglang   # an installed SGLang
  mlagen patch --kernels kernels/sm120 ~/sglang
  mlagen patch --selection sm120.json ~/sglang   # your card's tables ('mlagen select --selections . results.json')
  mlagen patch --check ~/sglang              # CI: exit 1 unless fully wired
  mlagen patch --target sm_89 ~/sglang      # exit 1: SGLang calls the entry on sm_120 GPUs only
  mlagen patch --target sm_89 --allow-unreached ~/sglang   # wire it anyway (a harness that calls the entry)
  mlagen patch --accept-unjudged python/sglang/srt/registry.py:3 ~/sglang   # after reading that 'cannot judge' place
  mlagen patch --revert ~/sglang             # take it all out again
  mlagen patch --json --dry-run ~/sglang | jq .route

Then start the server with {gate}=1 in its environment.

Exit status: 0 done (or nothing to do), 1 a problem (not found, several
modules, syntax error in a referencing file, a backend choice mlagen does
not know, a --target whose GPUs the model backend never calls the entry
on, a kernel module without the functions the wiring calls, a reference
the proof cannot judge or a planned tree that fails the proof in any other
way, a refused star import or edited block, an installed kernel module
edited by hand or installed from --kernels/--selection that the run would
replace, a folder of the tree it cannot write or, unless run as root, a
file of another user (replacing it would change its owner), a pending
journal under --dry-run or --check, not wired under --check, a --selection
naming a variant the target's sweep does not fit, --revert on a folder
with neither SGLang's function nor mlagen's code), 2 bad usage, an unknown
--target, a --kernels folder without the module or whose module was edited
since emit wrote it (its .mlagen.sha256 says so), a --selection file that
cannot be read, is not a selection, or is for another GPU than --target, a
--kernels module whose TARGET is not the --target given, a file of the
tree it cannot read, mlagen's own repository as SGLANG_ROOT, or a root
from which the module names would be wrong (above the folder that holds
the sglang package, such as a venv's root or a folder holding the
checkout, or inside the package: the message names the folder to give). A
failure writes nothing. --revert is all or nothing too: a block mlagen
wrote that was edited by hand stops it before it writes anything (exit 1,
the blocks listed; move the edit out of the block, or delete the block by
hand), and so does an installed kernel module edited by hand (copy it
elsewhere and delete it, then revert); a --module that is not a file under
the root defining the function is refused; only a file in the kernel
module's place that mlagen did not write is left there, listed, while the
rest is taken out (exit 1). With --json a failure, a mistake in the flags
too, is an object on stdout as well; under --revert every object, the
report and a failure's alike, names its command "revert".
`

const verifyHelp = `Usage: mlagen verify [flags] SGLANG_ROOT

Prove that an SGLang checkout (or installed SGLang) is fully wired and that
the gate takes effect: parse every file that names {old},
{new} or {whole}, resolve each reference through
imports, aliases and re-exports, and report those that still reach the old
kernel (only the dispatcher's own fallback call may); check that the whole
call and every backend choice above it carry mlagen's guards as mlagen writes
them (a route guard an earlier mlagen wrote, without the {defers}() test,
fails: mlagen patch upgrades it), that the kernel module is present and
defines what they call, that the gate is registered and, when SGLang is
installed, that RECORD lists the kernel module (a RECORD that lists it over
upstream files means pip replaced them: verify prints the command that
restores the wiring; a tree an interrupted run left half written gets the
journal's line instead). Then print the route a decode call takes with
{gate}=1: caller in the model backend -> entry point ->
whole call -> per-cache dispatcher -> kernel module. Each caller runs only
where the tests of the GPU around it allow; SGLang's DeepSeek-V4 backend
calls the sm_120 entry only on {platform}.
Where every call of an entry runs only on other GPUs than the kernel
module's TARGET, the kernel would never run, and verify fails
(--allow-unreached: a note). A reference it cannot judge fails it, unless
--accept-unjudged names its place (as patch takes it). For an installed
SGLang it also names the
Triton installed beside it, which the kernel module compiles with, and
whether mlagen's own checks cover that release, or that none is installed
there (a note, not a failure). Writes nothing.

Examples:
  mlagen verify ~/sglang
  mlagen verify --json ~/sglang | jq '.missed | length'
  mlagen verify --json ~/sglang | jq .route.entries

Exit status: 0 fully wired, 1 something unwired or missing (or a backend
choice that would make the gate inert, or a kernel module whose TARGET the
model backend never calls the entry on), 2 bad usage (or SGLANG_ROOT is not
a directory, is mlagen's own repository, or is a folder from which the
module names would be wrong: above the folder that holds the sglang
package, such as a venv's root, or inside the package; the message names
the folder to give). With --json a failure, a mistake in the flags too, is
an object on stdout as well, and so is a failing proof: the report, with
an "error".
`

// runPatch is `mlagen patch`.
func runPatch(e *env, args []string) int {
	f := newCmdFlags("patch", helpText(patchHelp))
	module := f.String("module", "", "the defining module to use when several define the function (path relative to SGLANG_ROOT)")
	target := f.String("target", "sm_120", "GPU target the kernel module is rendered for: "+targetNames())
	kernels := f.String("kernels", "", "install `DIR`/sparse_mla_mma.py (as 'mlagen emit --kernels DIR' wrote it) instead of rendering it")
	selection := f.String("selection", "", "render the module with the selection in `FILE` (as 'mlagen select --selections DIR' writes it)\ninstead of the one built into mlagen, as 'mlagen emit --selection FILE' would; the target is the file's (--target, if given, must agree)")
	dryRun := f.Bool("dry-run", false, "write nothing; print the unified diff (and the report on stderr)")
	check := f.Bool("check", false, "write nothing; exit 1 unless the tree is fully wired (for CI)")
	revert := f.Bool("revert", false, "remove everything mlagen added, restoring the original bytes")
	allow := f.Bool("allow-unreached", false, "wire the tree even where SGLang's model backend never calls the entry on --target's GPUs (for a harness that calls it itself)")
	accept := f.StringArray("accept-unjudged", nil, "wire the tree although the proof cannot judge the reference at `PLACE` (PATH:LINE, or PATH, as a\n'cannot judge' line prints it), after you have read it (repeatable; give verify the same)")
	asJSON := f.Bool("json", false, "print the report as JSON on stdout")
	f.report = func() string { return patchReport(f.given("revert")) }
	if done, code := f.parse(e, args); done {
		return code
	}
	if done, code := f.emptyGiven(e, "kernels", "selection", "module"); done {
		return code
	}
	if *check && (*revert || *dryRun) {
		return f.usageError(e, "--check cannot be combined with --revert or --dry-run")
	}
	if *selection != "" && (*kernels != "" || *revert || *check) {
		return f.usageError(e, "--selection renders the module to install: it cannot be combined with --kernels (a module already rendered), --revert or --check")
	}
	if *revert && (*kernels != "" || f.Changed("target") || *allow || len(*accept) > 0) {
		return f.usageError(e, "--revert takes out whatever mlagen put in: --kernels, --target, --allow-unreached and --accept-unjudged choose what to install, and do not apply")
	}
	if _, err := gen.LookupTarget(*target); err != nil {
		return f.usageError(e, "--target: %v", err)
	}
	// Flag mistakes first, then the tree they name.
	report := patchReport(*revert)
	root, code := oneRoot(e, f, report, *asJSON)
	if code != exitOK {
		return code
	}
	rec, err := patches.DefaultRecipe()
	if err != nil {
		return failedAs(e, "patch", report, *asJSON, exitFail, err.Error())
	}
	opt := patches.Options{Recipe: rec, Module: *module, Emitted: emittedBundle, AllowUnreached: *allow, AcceptUnjudged: *accept, Tritons: gen.CheckedTritons()}
	if *check {
		return proveAndReport(e, "patch", root, opt, *asJSON)
	}
	job := patches.Job{Root: root, Options: opt, Revert: *revert, DryRun: *dryRun}
	if !*revert {
		switch {
		case *selection != "":
			job.Kernel, code = selectedKernel(e, *selection, *target, f.Changed("target"), *asJSON)
			job.KernelFrom = "--selection"
		case *kernels != "":
			job.Kernel, code = kernelFor(e, *target, *kernels, *asJSON)
			if code == exitOK && f.Changed("target") {
				code = sameTarget(e, *kernels, *target, job.Kernel, *asJSON)
			}
			job.KernelFrom = "--kernels"
		default:
			job.Kernel, code = kernelFor(e, *target, "", *asJSON)
		}
		if code != exitOK {
			return code
		}
	}
	out, err := patches.Run(job)
	if err != nil {
		return problem(e, "patch", report, err, *asJSON)
	}
	rep := out.Report
	switch {
	case *dryRun && *asJSON:
		rep.Diff = out.Diff
		return emitJSON(e, rep, rep.OK())
	case *dryRun:
		io.WriteString(e.stdout, out.Diff)
		rep.WriteText(e.stderr)
		return exitCode(rep.OK())
	case *asJSON:
		return emitJSON(e, rep, rep.OK())
	}
	rep.WriteText(e.stdout)
	return exitCode(rep.OK())
}

// patchReport is the "command" of patch's --json objects: "revert" under
// --revert, as patches.Revert's report names itself, for its failures too;
// "patch" otherwise.
func patchReport(revert bool) string {
	if revert {
		return "revert"
	}
	return "patch"
}

// kernelFor is the kernel module patch installs (the target is known: the
// flags were checked); a --kernels folder without the module is bad usage
// (exit 2), like any other flag mistake, and --json gets the error as an
// object.
func kernelFor(e *env, target, kernelsDir string, asJSON bool) ([]byte, int) {
	data, err := kernelModule(target, kernelsDir)
	switch {
	case err == nil:
		return data, exitOK
	case kernelsDir != "":
		return nil, failed(e, "patch", asJSON, exitUsage, err.Error())
	}
	return nil, failed(e, "patch", asJSON, exitFail, fmt.Sprintf("kernel module: %v", err))
}

// sameTarget refuses (bad usage, exit 2) a --target given beside --kernels
// DIR that is not the TARGET the module in DIR was rendered for: the
// module is installed as it is, so the flag would be silently ignored.
func sameTarget(e *env, dir, target string, module []byte, asJSON bool) int {
	if got := patches.KernelTarget(module); got != target {
		if got == "" {
			got = "not named (no TARGET line)"
		}
		return failed(e, "patch", asJSON, exitUsage, fmt.Sprintf("--kernels %s: the module is for %s, --target is %s (--kernels installs the module as it is: drop --target, or emit one for %s with 'mlagen emit --target %s --kernels DIR')",
			dir, got, target, target, target))
	}
	return exitOK
}

// selectedKernel is the kernel module `patch --selection path` installs:
// byte for byte what `mlagen emit --selection path` writes, for the
// selection's target (which --target, where given, must name). A file that
// is not a selection for that target is bad usage (exit 2); a selection
// the target's sweep does not fit is a problem (exit 1), as in emit.
func selectedKernel(e *env, path, target string, targetGiven, asJSON bool) ([]byte, int) {
	sf := sweepFlags{target: target}
	sel, err := readSelection(path, &sf, targetGiven)
	if err != nil {
		return nil, failed(e, "patch", asJSON, exitUsage, fmt.Sprintf("--selection %s: %v", path, err))
	}
	t, err := gen.LookupTarget(sf.target)
	if err != nil {
		return nil, failed(e, "patch", asJSON, exitUsage, fmt.Sprintf("--selection %s: %v", path, err))
	}
	sweep := gen.DefaultSweep(t)
	em, err := gen.Emit(sweep, sweepCommand("emit", sweep, "--selection "+shellWord(path)), sel)
	var unfit gen.UnfitError
	if errors.As(err, &unfit) {
		// patch has no sweep flags: a table timed with others is rendered
		// by emit, which has them, and installed as a rendered module.
		return nil, failed(e, "patch", asJSON, exitFail, fmt.Sprintf("--selection %s: it names %s, which %s's default sweep does not fit (its results were timed with other sweep flags); patch --selection renders with the default sweep: render it with yours, then install it: 'mlagen emit --selection %s SWEEP-FLAGS --kernels DIR', then 'mlagen patch --kernels DIR SGLANG_ROOT'",
			path, unfit.Name, t.Name, shellWord(path)))
	}
	if err != nil {
		return nil, failed(e, "patch", asJSON, exitFail, fmt.Sprintf("--selection %s: %v", path, err))
	}
	return em.Bundle(), exitOK
}

// runVerify is `mlagen verify`: the proof alone.
func runVerify(e *env, args []string) int {
	f := newCmdFlags("verify", helpText(verifyHelp))
	module := f.String("module", "", "the module holding the dispatcher, when several do")
	allow := f.Bool("allow-unreached", false, "pass a tree whose model backend never calls the entry on the kernel module's TARGET (reported as a note)")
	accept := f.StringArray("accept-unjudged", nil, "pass the reference the proof cannot judge at `PLACE` (PATH:LINE, or PATH, as a 'cannot judge'\nline prints it), listed as accepted (repeatable)")
	asJSON := f.Bool("json", false, "print the report as JSON on stdout")
	if done, code := f.parse(e, args); done {
		return code
	}
	if done, code := f.emptyGiven(e, "module"); done {
		return code
	}
	root, code := oneRoot(e, f, "verify", *asJSON)
	if code != exitOK {
		return code
	}
	rec, err := patches.DefaultRecipe()
	if err != nil {
		return failed(e, "verify", *asJSON, exitFail, err.Error())
	}
	return proveAndReport(e, "verify", root, patches.Options{Recipe: rec, Module: *module, Emitted: emittedBundle, AllowUnreached: *allow, AcceptUnjudged: *accept, Tritons: gen.CheckedTritons()}, *asJSON)
}

// oneRoot is the one SGLANG_ROOT argument; a missing one, several, one
// that is not a directory, or mlagen's own clone is a usage error (nothing
// is read or written). Past the count, --json gets the error as an object
// naming report as its command.
func oneRoot(e *env, f *cmdFlags, report string, asJSON bool) (string, int) {
	if f.NArg() != 1 {
		return "", f.usageError(e, "want exactly one SGLANG_ROOT, got %d arguments", f.NArg())
	}
	root := f.Arg(0)
	switch st, err := os.Stat(root); {
	case errors.Is(err, fs.ErrNotExist):
		return "", failedAs(e, f.cmd, report, asJSON, exitUsage, root+" does not exist: give the root of your SGLang checkout or installed sglang package")
	case err != nil:
		return "", failedAs(e, f.cmd, report, asJSON, exitUsage, fmt.Sprintf("%s: %v", root, err))
	case !st.IsDir():
		return "", failedAs(e, f.cmd, report, asJSON, exitUsage, root+" is a file, not a directory: give the root of your SGLang checkout or installed sglang package")
	}
	if isMlagenRepo(root) {
		return "", failedAs(e, f.cmd, report, asJSON, exitUsage, root+" is mlagen's own repository, whose stand-in SGLang trees are its tests' fixtures: give the root of your SGLang checkout or installed sglang package")
	}
	return root, exitOK
}

// isMlagenRepo says whether root is this repository's clone (its go.mod
// names mlagen's module): `mlagen patch .` typed there would wire the
// stand-in tree under gpu/dispatch and succeed.
func isMlagenRepo(root string) bool {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "module github.com/mlagen/mlagen" {
			return true
		}
	}
	return false
}

// proveAndReport runs the proof on the tree under root and prints it.
func proveAndReport(e *env, cmd, root string, opt patches.Options, asJSON bool) int {
	rep, err := patches.Check(root, opt)
	if err != nil {
		return problem(e, cmd, cmd, err, asJSON)
	}
	rep.Command = cmd // "verify", or "patch" for patch --check
	if asJSON {
		return emitJSON(e, rep, rep.OK())
	}
	rep.WriteText(e.stdout)
	return exitCode(rep.OK())
}

// problem reports a failed run. A *patches.Problem is the user's to fix (no
// module, a syntax error, ...); anything else is an I/O failure. Both exit 1:
// the flags were fine, the job found something wrong. A root mlagen cannot
// work from (*patches.RootError) is the argument's mistake: exit 2. The
// --json object names report as its command (failedAs).
func problem(e *env, cmd, report string, err error, asJSON bool) int {
	var re *patches.RootError
	if errors.As(err, &re) {
		return failedAs(e, cmd, report, asJSON, exitUsage, re.Msg)
	}
	fmt.Fprintf(e.stderr, "mlagen %s: %v\n", cmd, err)
	if asJSON {
		// CI reading --json gets an object either way.
		msg, details := err.Error(), []string(nil)
		var p *patches.Problem
		if errors.As(err, &p) {
			msg, details = p.Msg, p.Lines
		}
		jsonError(e, report, msg, details)
	}
	return exitFail
}

// helpText fills a help template with the recipe's names, so the help never
// disagrees with what the command does.
func helpText(tmpl string) string {
	rec, err := patches.DefaultRecipe()
	if err != nil {
		return tmpl
	}
	var choices []string
	for _, c := range rec.Route.Choices {
		choices = append(choices, c.Variable+" in "+c.Releases)
	}
	return strings.NewReplacer("{choices}", strings.Join(choices, ";\n       "), "{old}", rec.Old, "{new}", rec.Dispatcher, "{gate}", rec.Gate, "{kmod}", rec.KernelModule,
		"{whole}", rec.WholeCall.Function, "{decode}", rec.WholeCall.Decode, "{supports}", rec.WholeCall.Supports,
		"{defers}", rec.WholeCall.Defers, "{platform}", rec.Route.Platform.GPUs).Replace(tmpl)
}

// targetNames lists the targets for a flag's help.
func targetNames() string {
	var names []string
	for _, t := range gen.Targets() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}
