package main

import "fmt"

// runPatch is filled in by the patch work; until then it says so plainly.
func runPatch(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen patch: not implemented yet")
	return exitFail
}
