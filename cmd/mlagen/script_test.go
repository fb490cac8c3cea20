package main

import (
	"flag"
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
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}
