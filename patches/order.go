package patches

import (
	"path"
	"sort"
	"strings"
)

// A run is written one file at a time, and a process can die between any
// two: every prefix of a run's writes must be a tree that still imports and
// runs, so that a server started before the next mlagen run (which finishes
// or undoes the interrupted one) works. Patch therefore writes what is
// referred to before what refers to it:
//
//  1. the gate in environ.py (the inserted code reads envs.<gate>),
//  2. the kernel module (the inserted code imports it),
//  3. the RECORD line for it (so pip uninstall removes it from now on),
//  4. the defining module (the dispatcher, its own callers renamed and the
//     whole-call guard, in one file),
//  5. the other callers, renamed to the dispatcher, which exists by now,
//  6. the entry modules' route guards: only then does the gate take the
//     whole route,
//  7. the models' heads guards last: a rank's own heads go only where the
//     gate takes the call to the kernel (SGLang's other backends may need
//     the padding).
//
// Revert writes in the reverse order. (Two callers that import the name
// through each other, a re-export, cannot both change at once; between the
// two writes one import fails. The journal makes the next run undo that.)
const (
	rankGate = iota
	rankKernel
	rankRecord
	rankModule
	rankCaller
	rankEntry
	rankModel
)

// roles says what each changed file is to the wiring.
type roles struct {
	environ, kernel, module string
	entries, models         map[string]bool
}

func (r roles) rank(p string) int {
	switch {
	case p == r.environ:
		return rankGate
	case p == r.kernel, path.Base(path.Dir(p)) == "__pycache__":
		return rankKernel // the module, or its bytecode (revert deletes both)
	case strings.HasSuffix(p, "/RECORD") && strings.Contains(p, ".dist-info/"):
		return rankRecord
	case p == r.module:
		return rankModule
	case r.entries[p]:
		return rankEntry
	case r.models[p]:
		return rankModel
	}
	return rankCaller
}

// inWriteOrder sorts changes for writing: by role (reversed for a revert),
// then by path.
func inWriteOrder(changes []Change, r roles, revert bool) []Change {
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := r.rank(changes[i].Path), r.rank(changes[j].Path)
		if a != b {
			return a < b != revert
		}
		return changes[i].Path < changes[j].Path
	})
	return changes
}
