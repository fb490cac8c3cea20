package main

import "fmt"

// runWatch is filled in by the watch work; until then it says so plainly.
func runWatch(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen watch: not implemented yet")
	return exitFail
}
