package patches

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// UnifiedDiff renders changes as one unified diff (what --dry-run prints),
// with paths a/ and b/ as git does. Line endings are kept as they are, so a
// CRLF file shows its \r.
func UnifiedDiff(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		from, to := "a/"+c.Path, "b/"+c.Path
		if c.Before == nil {
			from = "/dev/null"
		}
		if c.After == nil {
			to = "/dev/null"
		}
		b.WriteString(fileDiff(from, to, string(c.Before), string(c.After)))
	}
	return b.String()
}

// diffOp is one line of a line diff.
type diffOp struct {
	op   diffmatchpatch.Operation
	line string // with its line ending
}

func lineDiff(a, b string) []diffOp {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffMainRunes(ca, cb, false)
	var ops []diffOp
	for _, d := range diffs {
		for _, r := range d.Text {
			ops = append(ops, diffOp{op: d.Type, line: lines[r]})
		}
	}
	return ops
}

const diffContext = 3

func fileDiff(from, to, a, b string) string {
	ops := lineDiff(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	// Group changed lines into hunks with diffContext lines around them.
	for i := 0; i < len(ops); {
		if ops[i].op == diffmatchpatch.DiffEqual {
			i++
			continue
		}
		start := i - diffContext
		if start < 0 {
			start = 0
		}
		end := i
		for end < len(ops) {
			if ops[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end += min(diffContext, run-end)
				break
			}
			end = run
		}
		aStart, bStart := 1, 1
		for _, op := range ops[:start] {
			if op.op != diffmatchpatch.DiffInsert {
				aStart++
			}
			if op.op != diffmatchpatch.DiffDelete {
				bStart++
			}
		}
		aLen, bLen := 0, 0
		var body strings.Builder
		for _, op := range ops[start:end] {
			prefix := " "
			switch op.op {
			case diffmatchpatch.DiffInsert:
				prefix = "+"
				bLen++
			case diffmatchpatch.DiffDelete:
				prefix = "-"
				aLen++
			default:
				aLen++
				bLen++
			}
			body.WriteString(prefix + op.line)
			if !strings.HasSuffix(op.line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		if aLen == 0 {
			aStart--
		}
		if bLen == 0 {
			bStart--
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		out.WriteString(body.String())
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
