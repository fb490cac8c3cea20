package gen

import "testing"

// thousandSweep is 5 x 5 x 5 x 2 x 4 = 1,000 variants on sm_120, most of
// them refused, so the nearest-fit search runs for most of them too.
func thousandSweep() Sweep {
	tg, _ := LookupTarget("sm_120")
	return Sweep{Target: tg, Heads: 64,
		BlockH: []int{16, 32, 64, 128, 256}, BlockT: []int{16, 32, 64, 128, 256},
		SplitK: []int{1, 2, 4, 8, 16}, NumWarps: []int{4, 8}, NumStages: []int{1, 2, 3, 4}}
}

// BenchmarkBudgetAndRender1000 budgets a 1,000-variant sweep and renders its
// directory, the bundle holding every variant that fits, and one standalone
// module per fitting variant (emit --per-variant).
func BenchmarkBudgetAndRender1000(b *testing.B) {
	s := thousandSweep()
	if n := len(s.Variants()); n != 1000 {
		b.Fatalf("sweep has %d variants", n)
	}
	for b.Loop() {
		e, err := Emit(s, "bench", nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.PerVariantFiles(); err != nil {
			b.Fatal(err)
		}
	}
}
