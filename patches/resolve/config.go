// Package resolve answers, for a tree of Python files, which module-level
// definition every name use denotes, following the language's scoping rules
// and, across files, imports, aliases and re-exports. It turns "every
// reference to f" from a text search into a property that can be proven.
//
// It knows nothing of SGLang or of what a caller does with the answers: the
// caller says which names it is interested in, which byte ranges are not the
// tree's own code (blocks a tool inserted), and which files to read whole; it
// gets back references with their kinds and locations, and the scopes,
// bindings and syntax trees behind them.
//
// Data flows one way: Scan reads the tree (tree.go); a byte prefilter and a
// partial parse (chunks.go, flatten.go) turn the files that can matter into
// flat syntax trees (syntax.go); scope.go binds names within a file and
// resolve.go across files; refs.go lists the references of one target; a
// Session (session.go) holds one parse of a tree and answers the questions.
package resolve

import (
	"bytes"
	"regexp"
	"sort"
	"sync"
)

// Config is what a caller is interested in. A Config must not change once a
// Session has used it (files cache the prefilter's verdict per Config).
type Config struct {
	// Names are the module-level names whose references are followed. Only
	// files that spell one of them (or a name one of them is re-exported
	// under) are parsed, and of those only the top-level statements that can
	// matter, unless Always or Whole says otherwise.
	Names []string
	// Always selects more files to parse whatever they spell (the caller's
	// own files); nil selects none.
	Always func(path string, data []byte) bool
	// Whole says which parsed files are parsed whole rather than in part
	// (files whose every statement the caller inspects); nil: none.
	Whole func(path string, data []byte) bool
	// Keep are substrings whose top-level statements a partial parse always
	// includes (a caller's markers), besides those that spell a name.
	Keep []string
	// Ignore returns the byte ranges of a file that are not the tree's own
	// code (blocks a tool inserted): uses, bindings and definitions inside
	// them are not references. nil: none.
	Ignore func(path string, src []byte) []Range
	// StringRef, when set, matches the content of string literals that name
	// a target by dotted path (mock.patch targets, getattr names); they are
	// listed for review when a caller asks for it.
	StringRef *regexp.Regexp

	once sync.Once
	core []byte // the longest substring every name shares (prefilter)
}

func (c *Config) prepare() { c.once.Do(func() { c.core = sharedCore(c.Names) }) }

// Range is a byte range [Start, End) of a file.
type Range struct{ Start, End int }

func inRanges(rs []Range, at uint32) bool {
	for _, r := range rs {
		if int(at) >= r.Start && int(at) < r.End {
			return true
		}
	}
	return false
}

// sharedCore is the longest substring all names share ("_sparse_decode"):
// a file without it can spell none of them, which most files fail to in one
// pass. Too short a core is no help and is not used.
func sharedCore(names []string) []byte {
	if len(names) == 0 {
		return nil
	}
	sorted := append([]string(nil), names...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) < len(sorted[j]) })
	short := sorted[0]
	best := ""
	for i := 0; i < len(short); i++ {
		for j := len(short); j > i+len(best); j-- {
			sub := short[i:j]
			all := true
			for _, n := range sorted[1:] {
				if !bytes.Contains([]byte(n), []byte(sub)) {
					all = false
					break
				}
			}
			if all {
				best = sub
				break
			}
		}
	}
	if len(best) < 4 {
		return nil
	}
	return []byte(best)
}

// candidate is the byte prefilter: a file can only refer to a name if it
// spells it (imports, calls, attributes all do). Everything else is never
// parsed, which is most of a checkout.
func (c *Config) candidate(f *File) bool {
	if c.Always != nil && c.Always(f.Path, f.Data) {
		return true
	}
	if c.core != nil && !bytes.Contains(f.Data, c.core) {
		return false
	}
	for _, n := range c.Names {
		if bytes.Contains(f.Data, []byte(n)) {
			return true
		}
	}
	return false
}

func (c *Config) ignored(path string, src []byte) []Range {
	if c.Ignore == nil {
		return nil
	}
	return c.Ignore(path, src)
}

func (c *Config) whole(path string, data []byte) bool {
	return c.Whole != nil && c.Whole(path, data)
}
