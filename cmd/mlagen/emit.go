package main

import "fmt"

// runEmit is filled in by the emit work; until then it says so plainly.
func runEmit(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen emit: not implemented yet")
	return exitFail
}
