package sglanglog

import "flag"

// This package keeps no golden files; it accepts -update so that
// 'go test ./... -update' (make golden) runs across the whole module.
var _ = flag.Bool("update", false, "no golden files in this package")
