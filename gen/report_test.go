package gen

import (
	"regexp"
	"strings"
	"testing"
)

// The budget report's numbers stand in one column within a variant, the
// totals' too, also where a term's name is longer than the usual ten
// characters (the role split's producer_max).
func TestBudgetReportAlignsLongNames(t *testing.T) {
	sm90, err := LookupTarget("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	var long []Budget
	for _, b := range CheckSweep(DefaultSweep(sm90)) {
		for _, it := range b.Regs {
			if len(it.Name) > 10 {
				long = append(long, b)
				break
			}
		}
	}
	if len(long) == 0 {
		t.Fatal("no sm_90 variant has a register term named longer than 10 characters: the test needs one")
	}
	var out strings.Builder
	WriteBudgetReport(&out, DefaultSweep(sm90), long[:1])
	// The end of the number after the label: "    name   123  why",
	// "  registers    168 per", "  shared memory 206080 B".
	num := regexp.MustCompile(`^(    \S+ +|  registers +|  shared memory +)(\d+)`)
	ends := map[int][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := num.FindStringSubmatchIndex(line); m != nil {
			ends[m[5]] = append(ends[m[5]], line)
		}
	}
	if len(ends) != 1 {
		t.Errorf("the numbers end in %d columns, want one:\n%s", len(ends), out.String())
	}
}
