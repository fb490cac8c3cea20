package main

import "fmt"

// runSelect is filled in by the select work; until then it says so plainly.
func runSelect(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen select: not implemented yet")
	return exitFail
}
