package main

import (
	"os"
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

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                scriptCmds,
	})
}

// scriptCmds are extra script commands (fake servers, log writers); each
// subcommand's test file adds its own in an init function.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}
