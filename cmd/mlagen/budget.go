package main

import "fmt"

// runBudget is filled in by the budget work; until then it says so plainly.
func runBudget(e *env, args []string) int {
	fmt.Fprintln(e.stderr, "mlagen budget: not implemented yet")
	return exitFail
}
