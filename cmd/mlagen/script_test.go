package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the mlagen binary in-process, so that the
// script tests in testdata/script exercise the CLI exactly as a user types it.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mlagen": func() {
			os.Exit(mainEnv(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
		},
	})
}

// update rewrites the expected output that scripts compare with cmp, as
// 'go test ./... -update' does for every golden file of the module.
var update = flag.Bool("update", false, "rewrite cmp golden files inside the scripts")

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Cmds:                scriptCmds,
	})
}

// scriptCmds are extra script commands (fake servers, log writers); each
// subcommand's test file adds its own in an init function.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"status": cmdStatus,
}

// cmdStatus is "status N PROGRAM ARGS...": exec PROGRAM, which must exit
// with status N exactly (exec and ! exec only tell zero from non-zero);
// its stdout and stderr are kept for the commands that follow.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
