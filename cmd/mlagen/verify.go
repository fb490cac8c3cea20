package main

import "fmt"

// runVerify is filled in by the verify work; until then it says so plainly.
func runVerify(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen verify: not implemented yet")
	return exitFail
}
