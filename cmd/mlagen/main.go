// Command mlagen generates budget-checked Triton MMA sparse-MLA decode kernels
// for DeepSeek-V4-Flash, wires them into an SGLang checkout and watches the
// deployment come up.
//
// Each subcommand lives in its own file (emit.go, budget.go, select.go,
// patch.go, watch.go, version.go): it parses its flags (cli.go), makes one
// call into the library that does the job, prints the result and returns
// its exit status; main only dispatches.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mlagen/mlagen/changeset"
)

// Exit statuses shared by every subcommand. Subcommands may define more
// (watch uses 3 and 4), but these three mean the same thing everywhere.
const (
	exitOK    = 0
	exitFail  = 1 // the job ran and found a problem (nothing fits, tree not wired, ...)
	exitUsage = 2 // bad flags or arguments, a missing or unreadable input; nothing was written
)

// env is what a subcommand may touch of the outside world. Tests build one
// with buffers; main builds it from the process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// getenv is os.Getenv in production; tests may override it.
	getenv func(string) string
	// write is how emit and select apply their changes; tests set its
	// Hook to fail or interrupt a write at any step.
	write changeset.Options
}

type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

func commands() []command {
	return []command{
		{"emit", "render the budget-checked kernel module of a sweep (and its harness) into a folder", runEmit},
		{"budget", "print the shared-memory and register budget of each variant", runBudget},
		{"select", "turn measured harness results into a target's static selection table", runSelect},
		{"patch", "wire the MMA kernel into every call site of an SGLang checkout", runPatch},
		{"verify", "prove that no reference to the old kernel is left unwired", runVerify},
		{"watch", "follow a server's startup until it answers correctly", runWatch},
		{"version", "print the version, commit, Go version and what each target embeds", runVersion},
		{"help", "show the help of a command ('mlagen help emit')", runHelp},
	}
}

func main() {
	os.Exit(mainEnv(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

func mainEnv(e *env, args []string) int {
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help":
		usage(e.stdout)
		return exitOK
	case "--version":
		return runVersion(e, args[1:])
	}
	if c, ok := lookupCommand(args[0]); ok {
		return c.run(e, args[1:])
	}
	return unknownCommand(e, args[0])
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// unknownCommand answers a misspelt command (or flag before any command)
// with the nearest command and the hint.
func unknownCommand(e *env, name string) int {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	what := "command"
	if len(name) > 0 && name[0] == '-' {
		what = "flag"
		names = []string{"--help", "--version"}
	}
	msg := fmt.Sprintf("mlagen: unknown %s %q", what, name)
	if s := suggest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	fmt.Fprintln(e.stderr, msg)
	fmt.Fprintln(e.stderr, "Run 'mlagen --help' for usage.")
	return exitUsage
}

// runHelp is `mlagen help [CMD]`: the same as `mlagen CMD --help`.
func runHelp(e *env, args []string) int {
	switch {
	case len(args) == 0:
		usage(e.stdout)
		return exitOK
	case len(args) > 1:
		return usageError(e, "help", "want at most one command, got %d arguments", len(args))
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help":
		fmt.Fprintln(e.stdout, "Usage: mlagen help [COMMAND]\n\nPrints the help of COMMAND, as 'mlagen COMMAND --help' does, or the list of commands.")
		return exitOK
	}
	if c, ok := lookupCommand(args[0]); ok {
		return c.run(e, []string{"--help"})
	}
	return unknownCommand(e, args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "mlagen: Triton MMA sparse-MLA decode kernels for DeepSeek-V4-Flash, from tile parameters to a verified deployment.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: mlagen <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Examples:")
	fmt.Fprintln(w, "  mlagen emit --target sm_90 --dry-run        # what the sm_90 module would be, nothing written")
	fmt.Fprintln(w, "  mlagen help patch")
	fmt.Fprintln(w, "  mlagen --version")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mlagen <command> --help' (or 'mlagen help <command>') for a command's flags and examples.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 the job found a problem, 2 bad usage or a missing or unreadable input")
	fmt.Fprintln(w, "(nothing written); watch adds 3 (time-out), 4 (log source lost) and 130 (interrupted).")
}
