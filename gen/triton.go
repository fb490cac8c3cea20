package gen

// CheckedTritons are the Triton releases the emitted modules are checked
// under. The first is the one the budget model is calibrated against and
// every timing was taken with (calib/calibrate.py, .ci/constraints.txt);
// the others are those newer SGLang releases install through the torch
// they pin, under which every kernel is compiled and the modules' host
// code run (calib/versions.py, the Makefile's TRITONS).
func CheckedTritons() []string { return []string{"3.6.0", "3.7.1", "3.8.0"} }
