package changeset

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Diff is the whole set as one unified diff (what --diff and --dry-run
// print), paths a/ and b/ as git writes them, /dev/null for a created or
// deleted file. A path changed twice shows once, from its first Before to
// its last After. Line endings are kept, so a CRLF file shows its \r.
func (s Set) Diff() string {
	var b strings.Builder
	first := map[string]Change{}
	last := map[string]Change{}
	for _, c := range s.Changes {
		p, err := cleanPath(c.Path)
		if err != nil {
			p = c.Path
		}
		if _, ok := first[p]; !ok {
			first[p] = c
		}
		last[p] = c
	}
	for _, p := range s.Paths() {
		cp, err := cleanPath(p)
		if err != nil {
			cp = p
		}
		c := Change{Path: cp, Before: first[cp].Before, After: last[cp].After}
		if (c.Before == nil) == (c.After == nil) && string(c.Before) == string(c.After) {
			continue
		}
		b.WriteString(c.Diff())
	}
	return b.String()
}

// Diff is the change as a unified diff with three lines of context; a
// binary file (bytecode a revert deletes) gets git's one line instead.
func (c Change) Diff() string {
	from, to := "a/"+c.Path, "b/"+c.Path
	if c.Before == nil {
		from = "/dev/null"
	}
	if c.After == nil {
		to = "/dev/null"
	}
	if binary(c.Before) || binary(c.After) {
		return fmt.Sprintf("Binary files %s and %s differ\n", from, to)
	}
	return unified(from, to, string(c.Before), string(c.After))
}

// binary says whether data is not text: not UTF-8, or with a NUL byte.
func binary(data []byte) bool {
	return !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0
}

// line is one line of a line diff, with its line ending.
type line struct {
	op   diffmatchpatch.Operation
	text string
}

func lineDiff(a, b string) []line {
	dmp := diffmatchpatch.New()
	ra, rb, table := dmp.DiffLinesToRunes(a, b)
	var out []line
	for _, d := range dmp.DiffMainRunes(ra, rb, false) {
		for _, r := range d.Text {
			out = append(out, line{d.Type, table[r]})
		}
	}
	return out
}

const context = 3

// unified renders the hunks of a line diff: runs of changed lines with up
// to three unchanged lines around them, hunks closer than that merged.
func unified(from, to, a, b string) string {
	ls := lineDiff(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	// oldAt[i] and newAt[i] are the 1-based line numbers of ls[i] in a and b.
	oldAt, newAt := make([]int, len(ls)+1), make([]int, len(ls)+1)
	o, n := 1, 1
	for i, l := range ls {
		oldAt[i], newAt[i] = o, n
		if l.op != diffmatchpatch.DiffInsert {
			o++
		}
		if l.op != diffmatchpatch.DiffDelete {
			n++
		}
	}
	oldAt[len(ls)], newAt[len(ls)] = o, n
	for i := 0; i < len(ls); {
		if ls[i].op == diffmatchpatch.DiffEqual {
			i++
			continue
		}
		start := max(0, i-context)
		end := hunkEnd(ls, i)
		writeHunk(&out, ls[start:end], oldAt[start], newAt[start])
		i = end
	}
	return out.String()
}

// hunkEnd is where the hunk that starts changing at i ends: after the last
// change that is followed by fewer than 2*context unchanged lines before the
// next change, plus context lines.
func hunkEnd(ls []line, i int) int {
	last := i
	for j := i; j < len(ls); j++ {
		if ls[j].op != diffmatchpatch.DiffEqual {
			if j-last-1 > 2*context {
				break
			}
			last = j
		}
	}
	return min(len(ls), last+1+context)
}

func writeHunk(out *strings.Builder, ls []line, oldStart, newStart int) {
	oldN, newN := 0, 0
	for _, l := range ls {
		if l.op != diffmatchpatch.DiffInsert {
			oldN++
		}
		if l.op != diffmatchpatch.DiffDelete {
			newN++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldN), hunkRange(newStart, newN))
	for _, l := range ls {
		prefix := " "
		switch l.op {
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		}
		out.WriteString(prefix + l.text)
		if !strings.HasSuffix(l.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is GNU diff's "start,count", with the start one line earlier
// for an empty range (a file created or emptied).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
