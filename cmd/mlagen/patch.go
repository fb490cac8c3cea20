package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mlagen/mlagen/patches"
)

const patchHelp = `Usage: mlagen patch [flags] SGLANG_ROOT

Wire the generated MMA sparse-decode kernel into an SGLang checkout:

  1. find the module that defines {old} (by parsing, not
     by path; --module picks one when several do),
  2. add the kernel module {kmod} beside it and insert the
     dispatcher {new} right after the old function, with the
     same signature; it runs the MMA kernel when {gate} is
     true at call time and the kernel supports the inputs, else the old one
     (the gate is registered in SGLang's environ.py when the checkout has it),
  3. rename every reference to the old function, in every file (calls,
     aliases, module attributes, re-exports, values), to the dispatcher,
  4. re-read the tree and prove that none was missed.

Nothing outside the edited byte ranges changes; files are replaced by rename,
all or none, never through a symlink or outside the root. Running it again
changes nothing. --revert restores the original bytes exactly.

Only files that spell one of the two names (or a name the function is
re-exported under) are parsed, and of those only the top-level statements
that spell such a name or import something. A syntax error in such a
statement stops the run (file, line, the parser's complaint); other broken
files are counted and ignored. Files that are not UTF-8 are skipped and
listed. Strings that name the function by dotted path (mock.patch targets,
getattr) are listed for review, never rewritten.

Examples:
  mlagen patch --dry-run ~/sglang            # show the diff, write nothing
  mlagen patch ~/sglang                      # wire it (kernel rendered for sm_120)
  mlagen patch --kernels kernels/sm_120 ~/sglang
  mlagen patch --check ~/sglang              # CI: exit 1 unless fully wired
  mlagen patch --revert ~/sglang             # take it all out again
  mlagen patch --json --dry-run ~/sglang | jq .missed

Exit status: 0 done (or nothing to do), 1 a problem (not found, several
modules, syntax error in a referencing file, not wired under --check),
2 bad usage (nothing written).

Flags:
`

const verifyHelp = `Usage: mlagen verify [flags] SGLANG_ROOT

Prove that an SGLang checkout is fully wired: parse every file that names
{old} or {new}, resolve each reference
through imports, aliases and re-exports, and report those that still reach
the old kernel (only the dispatcher's own fallback call may). Also checks
that the kernel module is present and the gate registered. Writes nothing.

Examples:
  mlagen verify ~/sglang
  mlagen verify --json ~/sglang | jq '.missed | length'

Exit status: 0 fully wired, 1 something unwired or missing, 2 bad usage.

Flags:
`

// runPatch is `mlagen patch`.
func runPatch(e *env, args []string) int {
	fs := pflag.NewFlagSet("patch", pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	module := fs.String("module", "", "the defining module to use when several define the function (path relative to SGLANG_ROOT)")
	target := fs.String("target", "sm_120", "GPU target the kernel module is rendered for")
	kernels := fs.String("kernels", "", "copy the kernel module from `DIR`/sparse_mla_mma.py instead of rendering it")
	dryRun := fs.Bool("dry-run", false, "write nothing; print the unified diff (and the report on stderr)")
	check := fs.Bool("check", false, "write nothing; exit 1 unless the tree is fully wired (for CI)")
	revert := fs.Bool("revert", false, "remove everything mlagen added, restoring the original bytes")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout")
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, helpText(patchHelp))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(e.stderr, "mlagen patch: %v (see mlagen patch --help)\n", err)
		return exitUsage
	}
	if *help {
		fs.SetOutput(e.stdout)
		fmt.Fprint(e.stdout, helpText(patchHelp))
		fs.PrintDefaults()
		return exitOK
	}
	root, ok := oneRoot(e, fs, "patch")
	if !ok {
		return exitUsage
	}
	if *check && (*revert || *dryRun) {
		fmt.Fprintln(e.stderr, "mlagen patch: --check cannot be combined with --revert or --dry-run")
		return exitUsage
	}
	rec, err := patches.DefaultRecipe()
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen patch: %v\n", err)
		return exitFail
	}
	opt := patches.Options{Recipe: rec, Module: *module}
	tree, code := scanRoot(e, "patch", root)
	if tree == nil {
		return code
	}
	if *check {
		return proveAndReport(e, "patch", tree, opt, *asJSON)
	}
	var res *patches.Result
	if *revert {
		res, err = patches.Revert(tree, opt)
	} else {
		kernel, kerr := kernelModule(*target, *kernels)
		if kerr != nil {
			fmt.Fprintf(e.stderr, "mlagen patch: kernel module: %v\n", kerr)
			return exitFail
		}
		opt.Kernel = kernel
		res, err = patches.Patch(tree, opt)
	}
	if err != nil {
		return problem(e, "patch", err, *asJSON)
	}
	rep := res.Report
	if *dryRun {
		diff := patches.UnifiedDiff(res.Changes)
		if *asJSON {
			rep.Diff = diff
			return emitJSON(e, rep, rep.OK())
		}
		io.WriteString(e.stdout, diff)
		rep.WriteText(e.stderr)
		return exitCode(rep.OK())
	}
	if err := (patches.Writer{Root: root}).Apply(res.Changes); err != nil {
		fmt.Fprintf(e.stderr, "mlagen patch: %v\n", err)
		return exitFail
	}
	// The proof is re-done from what is on disk now, not from the plan.
	after, code := scanRoot(e, "patch", root)
	if after == nil {
		return code
	}
	if *revert {
		again, err := patches.Revert(after, opt)
		if err != nil {
			return problem(e, "patch", err, *asJSON)
		}
		if !again.Report.NothingToDo {
			rep.Problems = append(rep.Problems, "mlagen changes are still present after reverting")
		}
	} else {
		opt.Module = rep.Module
		proof, err := patches.Verify(after, opt)
		if err != nil {
			return problem(e, "patch", err, *asJSON)
		}
		proof.Command, proof.Changes, proof.NothingToDo = "patch", rep.Changes, rep.NothingToDo
		rep = proof
	}
	if *asJSON {
		return emitJSON(e, rep, rep.OK())
	}
	rep.WriteText(e.stdout)
	return exitCode(rep.OK())
}

// runVerify is `mlagen verify`: the proof alone.
func runVerify(e *env, args []string) int {
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	module := fs.String("module", "", "the module holding the dispatcher, when several do")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout")
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, helpText(verifyHelp))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(e.stderr, "mlagen verify: %v (see mlagen verify --help)\n", err)
		return exitUsage
	}
	if *help {
		fs.SetOutput(e.stdout)
		fmt.Fprint(e.stdout, helpText(verifyHelp))
		fs.PrintDefaults()
		return exitOK
	}
	root, ok := oneRoot(e, fs, "verify")
	if !ok {
		return exitUsage
	}
	rec, err := patches.DefaultRecipe()
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen verify: %v\n", err)
		return exitFail
	}
	tree, code := scanRoot(e, "verify", root)
	if tree == nil {
		return code
	}
	return proveAndReport(e, "verify", tree, patches.Options{Recipe: rec, Module: *module}, *asJSON)
}

func oneRoot(e *env, fs *pflag.FlagSet, cmd string) (string, bool) {
	if fs.NArg() != 1 {
		fmt.Fprintf(e.stderr, "mlagen %s: want exactly one SGLANG_ROOT, got %d arguments (see mlagen %s --help)\n", cmd, fs.NArg(), cmd)
		return "", false
	}
	return fs.Arg(0), true
}

// scanRoot reads the tree; a root that is not a directory is a usage error.
func scanRoot(e *env, cmd, root string) (*patches.Tree, int) {
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintf(e.stderr, "mlagen %s: %s is not a directory\n", cmd, root)
		return nil, exitUsage
	}
	tree, err := patches.Scan(root)
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen %s: %v\n", cmd, err)
		return nil, exitFail
	}
	return tree, exitOK
}

func proveAndReport(e *env, cmd string, tree *patches.Tree, opt patches.Options, asJSON bool) int {
	rep, err := patches.Verify(tree, opt)
	if err != nil {
		return problem(e, cmd, err, asJSON)
	}
	if asJSON {
		return emitJSON(e, rep, rep.OK())
	}
	rep.WriteText(e.stdout)
	return exitCode(rep.OK())
}

// problem reports a failed run. A *patches.Problem is the user's to fix (no
// module, a syntax error, ...); anything else is an I/O failure. Both exit 1:
// the flags were fine, the job found something wrong.
func problem(e *env, cmd string, err error, asJSON bool) int {
	fmt.Fprintf(e.stderr, "mlagen %s: %v\n", cmd, err)
	if asJSON {
		// CI reading --json gets an object either way.
		out := struct {
			Command string   `json:"command"`
			Error   string   `json:"error"`
			Details []string `json:"details"`
		}{Command: cmd, Error: err.Error(), Details: []string{}}
		var p *patches.Problem
		if errors.As(err, &p) {
			out.Error, out.Details = p.Msg, append(out.Details, p.Lines...)
		}
		emitJSON(e, out, false)
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
	return strings.NewReplacer("{old}", rec.Old, "{new}", rec.Dispatcher, "{gate}", rec.Gate, "{kmod}", rec.KernelModule).Replace(tmpl)
}

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
