// Command mlagen generates budget-checked Triton MMA sparse-MLA decode kernels
// for DeepSeek-V4-Flash, wires them into an SGLang checkout and watches the
// deployment come up.
//
// Each subcommand lives in its own file (emit.go, budget.go, select.go,
// patch.go, watch.go) and returns its exit status; main only dispatches.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit statuses shared by every subcommand. Subcommands may define more
// (watch uses 3 and 4), but these three mean the same thing everywhere.
const (
	exitOK    = 0
	exitFail  = 1 // the job ran and found a problem (nothing fits, tree not wired, ...)
	exitUsage = 2 // bad flags or arguments; nothing was written
)

// env is what a subcommand may touch of the outside world. Tests build one
// with buffers; main builds it from the process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// getenv is os.Getenv in production; tests may override it.
	getenv func(string) string
}

type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

func commands() []command {
	return []command{
		{"emit", "render budget-checked Triton kernel variants into a directory", runEmit},
		{"budget", "print the shared-memory and register budget of each variant", runBudget},
		{"select", "turn measured results into the static selection table of an index module", runSelect},
		{"patch", "wire the MMA dispatcher into every call site of an SGLang checkout", runPatch},
		{"verify", "prove that no reference to the old kernel is left unwired", runVerify},
		{"watch", "follow a server's startup until it answers correctly", runWatch},
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
	case "-h", "--help", "help":
		usage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "mlagen: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "mlagen: Triton MMA sparse-MLA decode kernels for DeepSeek-V4-Flash, from tile parameters to a verified deployment.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: mlagen <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	for _, c := range cs {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mlagen <command> --help' for a command's flags and examples.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 the job found a problem, 2 bad usage (command-specific codes are listed in its help).")
}
