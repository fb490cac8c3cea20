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

// BenchmarkBudgetAndRender1000 budgets a 1,000-variant sweep and renders the
// module of every one of the 1,000 (fitting or not), as emit would if all fit.
func BenchmarkBudgetAndRender1000(b *testing.B) {
	s := thousandSweep()
	if n := len(s.Variants()); n != 1000 {
		b.Fatalf("sweep has %d variants", n)
	}
	for b.Loop() {
		r, err := newRenderer()
		if err != nil {
			b.Fatal(err)
		}
		for _, bud := range CheckSweep(s) {
			if _, err := r.render("variant.py.tmpl", map[string]any{"Command": "bench", "Target": s.Target, "V": bud.Variant, "Budget": bud}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
