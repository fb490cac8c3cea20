package gen

import (
	"slices"
	"strings"
)

// CheckedTritons are the Triton releases the emitted modules are checked
// under. The first is the one the budget model is calibrated against and
// every timing was taken with (calib/calibrate.py, .ci/constraints.txt);
// the others are those newer SGLang releases install through the torch
// they pin, under which every kernel is compiled and the modules' host
// code run (calib/versions.py, the Makefile's TRITONS).
func CheckedTritons() []string { return []string{"3.6.0", "3.7.1", "3.8.0", "3.9.0"} }

// TritonLines are the release lines (major.minor) of versions, in order,
// each once: "3.6.0", "3.6.1" and "3.7.1" give "3.6" and "3.7".
func TritonLines(versions []string) []string {
	var lines []string
	for _, v := range versions {
		parts := strings.SplitN(v, ".", 3)
		line := v
		if len(parts) >= 2 {
			line = parts[0] + "." + parts[1]
		}
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return lines
}
