package gen

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
)

// SelectionDir is where `mlagen select` writes a target's measured selection
// (<SelectionDir>/<target dir>.json, e.g. gen/selections/sm90.json) and where
// the generator embeds it from: emit, patch and the tests all read the
// embedded copy, so a binary renders the same module wherever it runs.
const SelectionDir = "gen/selections"

//go:embed selections/*.json
var selections embed.FS

// Selection maps (heads, batch size, topk) buckets to variant names.
// Buckets are upper bounds, checked in order; 0 means unbounded.
type Selection struct {
	Target string `json:"target"`
	// Source says where the choices came from: a results file with its GPU
	// and date, or the static rule used before any measurement.
	Source      string `json:"source"`
	BatchBounds []int  `json:"batch_bounds"`
	TopkBounds  []int  `json:"topk_bounds"`
	// Table [batch bucket][topk bucket] serves every head count above the
	// bounds of FewerHeads: all of them when FewerHeads is empty.
	Table [][]string `json:"table"`
	// FewerHeads are the tables of smaller head counts (a rank's heads under
	// tensor parallelism), by ascending bound: a call with at most MaxHeads
	// heads takes the first whose bound it is within.
	FewerHeads []HeadsTable `json:"fewer_heads,omitempty"`
	// WholeCall is the selection of the whole-call entry point
	// (sparse_decode_full), whose TopkBounds count the tokens of both
	// caches; nil means the per-cache tables at the call's total tokens.
	WholeCall *Selection `json:"whole_call,omitempty"`
	// Verdicts are the measured shapes where a peer was timed beside
	// mlagen, by heads, topk and batch: where a peer won, its name is in
	// the tables (IsPeer) and the module declines the bucket.
	Verdicts []Verdict `json:"verdicts,omitempty"`
}

// Verdict is one measured shape where a peer (what SGLang runs without
// mlagen) was timed beside mlagen's configurations: each side's fastest, its
// best time in µs, and the bucket's choice (Winner: the peer only where it
// was faster and SGLang's path reaches it).
type Verdict struct {
	Heads    int     `json:"heads"`
	Batch    int     `json:"batch"`
	Topk     int     `json:"topk"`
	Winner   string  `json:"winner"`
	Mlagen   string  `json:"mlagen"`
	MlagenUS float64 `json:"mlagen_us"`
	Peer     string  `json:"peer"`
	PeerUS   float64 `json:"peer_us"`
	// Reached: SGLang's path reaches Peer when the module declines the
	// bucket (PeerReached); a faster peer it does not reach leaves the
	// bucket to mlagen.
	Reached bool `json:"reached"`
	// WinnerUS is the Winner's time: a reached peer that took the bucket
	// may be slower than an unreached one.
	WinnerUS float64 `json:"winner_us"`
}

// Ratio is mlagen's time over the peer's: below 1 mlagen is faster.
func (v Verdict) Ratio() float64 { return v.MlagenUS / v.PeerUS }

// HeadsTable is the table of the calls with at most MaxHeads heads.
type HeadsTable struct {
	MaxHeads int        `json:"max_heads"`
	Table    [][]string `json:"table"`
}

// HeadBounds are the selection's heads buckets, 0 the last (unbounded) one.
func (s Selection) HeadBounds() []int {
	var out []int
	for _, h := range s.FewerHeads {
		out = append(out, h.MaxHeads)
	}
	return append(out, 0)
}

// Tables are the tables of the heads buckets, in HeadBounds order.
func (s Selection) Tables() [][][]string {
	var out [][][]string
	for _, h := range s.FewerHeads {
		out = append(out, h.Table)
	}
	return append(out, s.Table)
}

// ForWholeCall is the selection the whole-call entry point runs: WholeCall,
// or the per-cache tables at the call's total tokens when there is none.
func (s Selection) ForWholeCall() Selection {
	if s.WholeCall != nil {
		return *s.WholeCall
	}
	w := s
	w.WholeCall = nil
	w.Source = "the per-cache selection at the call's total tokens (" + s.Source + ")"
	return w
}

// everywhere is s with name in every cell of every table (the whole call's
// are the per-cache ones then), and source as its source.
func (s Selection) everywhere(name, source string) Selection {
	fill := func(table [][]string) [][]string {
		out := make([][]string, len(table))
		for i, row := range table {
			out[i] = slices.Repeat([]string{name}, len(row))
		}
		return out
	}
	out := Selection{Target: s.Target, Source: source, BatchBounds: s.BatchBounds, TopkBounds: s.TopkBounds, Table: fill(s.Table)}
	for _, h := range s.FewerHeads {
		out.FewerHeads = append(out.FewerHeads, HeadsTable{h.MaxHeads, fill(h.Table)})
	}
	return out
}

// Names lists every name the selection holds, whole call included.
func (s Selection) Names() []string {
	var out []string
	for _, table := range s.Tables() {
		for _, row := range table {
			out = append(out, row...)
		}
	}
	if s.WholeCall != nil {
		out = append(out, s.WholeCall.Names()...)
	}
	return out
}

// The shapes every measurement times: decode batches 1, 16, 64 and 128 (one
// request to a full server) and topk 512 and 2048 (DeepSeek-V4-Flash's
// compressed-cache token lists). Each bucket runs up to the shape it was measured at (bucketBounds). Every
// results file must time these; SelectMeasured adds a batch bucket for any
// other timed batch.
var (
	bucketBatch = []int{1, 16, 64, 128}
	bucketTopk  = []int{512, 2048}
)

// bucketBounds turns measured shapes into bucket bounds: each bucket runs up
// to the shape it was measured at, and the last one has no bound (0).
func bucketBounds(measured []int) []int {
	bounds := slices.Clone(measured)
	bounds[len(bounds)-1] = 0
	return bounds
}

// SelectionFile is the file name of t's measured selection under
// SelectionDir.
func SelectionFile(t Target) string { return t.Dir() + ".json" }

// MeasuredSelection returns the selection `mlagen select` measured for t, as
// this binary embeds it; ok is false when t has none.
func MeasuredSelection(t Target) (sel Selection, ok bool, err error) {
	data, err := selections.ReadFile("selections/" + SelectionFile(t))
	if errors.Is(err, fs.ErrNotExist) {
		return sel, false, nil
	}
	if err == nil {
		sel, err = ParseSelection(data)
	}
	if err == nil && sel.Target != t.Name {
		err = fmt.Errorf("it is for %s", sel.Target)
	}
	if err != nil {
		return sel, false, fmt.Errorf("embedded selection %s/%s: %w (rewrite it with `mlagen select`)", SelectionDir, SelectionFile(t), err)
	}
	return sel, true, nil
}

// ParseSelection reads a selection as `mlagen select` writes it (the
// embedded ones, or a file of a user's own for `mlagen emit --selection`).
// A field it does not know is an error, so that a file of another kind is
// named as such rather than read as an empty selection; the harness's
// results file, the likeliest mix-up, is named as that. Whether the
// selection's variants fit a sweep is Validate's question.
func ParseSelection(data []byte) (Selection, error) {
	var sel Selection
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return sel, fmt.Errorf("not a selection: %w", JSONError(data, err))
	}
	if _, timed := fields["timing"]; timed {
		return sel, errors.New("this is a results file of the harness, not a selection: `mlagen select --selections DIR` on it writes DIR/<target>.json")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sel); err != nil {
		return sel, fmt.Errorf("not a selection: %w", JSONError(data, err))
	}
	if t, err := LookupTarget(sel.Target); err != nil || t.Name != sel.Target {
		return sel, fmt.Errorf("not a selection: its target %q is not one of mlagen's", sel.Target)
	}
	if err := sel.validShape(); err != nil {
		return sel, fmt.Errorf("not a selection: %w", err)
	}
	return sel, nil
}

// MarshalSelection is the file `mlagen select` writes: indented JSON and a
// final newline, the form embedded under SelectionDir.
func MarshalSelection(sel Selection) ([]byte, error) {
	data, err := json.MarshalIndent(sel, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("selection for %s: %w", sel.Target, err)
	}
	return append(data, '\n'), nil
}

// selectionFor is the selection a sweep's module carries: the measured one
// when every variant it names fits in this sweep, else the static rule. note
// says why the measured one was not used ("" when it was, or there is
// none); leftOut names the variants it lacks when the target's curated
// sweep fits them all, so that the sweep's own flags left them out.
func selectionFor(s Sweep, budgets []Budget) (sel Selection, note string, leftOut []string, err error) {
	measured, ok, err := MeasuredSelection(s.Target)
	if err != nil {
		return sel, "", nil, err
	}
	if !ok {
		return HeuristicSelection(s.Target, s.Heads, budgets), "", nil, nil
	}
	fits := fitNames(budgets)
	if verr := measured.Validate(fits); verr != nil {
		note = fmt.Sprintf("the measured selection (%s/%s) does not fit this sweep (%v): static rule used",
			SelectionDir, SelectionFile(s.Target), verr)
		missing := measured.unfit(fits)
		if len(missing) > 0 && len(measured.unfit(fitNames(CheckSweep(DefaultSweep(s.Target))))) == 0 {
			leftOut = missing
		}
		return HeuristicSelection(s.Target, s.Heads, budgets), note, leftOut, nil
	}
	return measured, "", nil, nil
}

func fitNames(budgets []Budget) map[string]bool {
	fits := map[string]bool{}
	for _, b := range budgets {
		if b.Fits {
			fits[b.Name] = true
		}
	}
	return fits
}

// Validate checks the tables' shapes, that the heads bounds ascend, and
// that every name is among fits.
func (s Selection) Validate(fits map[string]bool) error {
	if err := s.validShape(); err != nil {
		return fmt.Errorf("selection: %w", err)
	}
	if unfit := s.unfit(fits); len(unfit) > 0 {
		return UnfitError{unfit[0]}
	}
	return nil
}

// UnfitError is Validate's error for a selection that names a
// configuration the sweep does not fit: most often a table made from
// results timed with other sweep flags.
type UnfitError struct{ Name string }

func (e UnfitError) Error() string {
	return fmt.Sprintf("selection names %s, which is not a fitting variant of this sweep (emit with the sweep flags its results were timed with, or re-run `mlagen select` on results timed with these)", e.Name)
}

// validShape checks what makes a selection one whatever the sweep: the
// tables' shapes, bounds that ascend, names the module can hold (a
// configuration's, the SIMT baseline's, or a peer SGLang's path reaches
// for the entry), the whole call's too. A file of a user's own is rendered
// into Python, so nothing in its tables may be anything else.
func (s Selection) validShape() error {
	return s.validShapeOf("")
}

func (s Selection) validShapeOf(entry string) error {
	if len(s.BatchBounds) == 0 || len(s.TopkBounds) == 0 {
		return fmt.Errorf("no batch or topk buckets")
	}
	if err := ascending("batch_bounds", s.BatchBounds); err != nil {
		return err
	}
	if err := ascending("topk_bounds", s.TopkBounds); err != nil {
		return err
	}
	prev := 0
	for _, h := range s.FewerHeads {
		if h.MaxHeads <= prev {
			return fmt.Errorf("heads bound %d after %d (want ascending, positive bounds)", h.MaxHeads, prev)
		}
		prev = h.MaxHeads
	}
	for i, table := range s.Tables() {
		if len(table) != len(s.BatchBounds) {
			return fmt.Errorf("heads bucket %d has %d batch rows for %d batch buckets", i, len(table), len(s.BatchBounds))
		}
		for j, row := range table {
			if len(row) != len(s.TopkBounds) {
				return fmt.Errorf("heads bucket %d, batch bucket %d has %d entries for %d topk buckets", i, j, len(row), len(s.TopkBounds))
			}
		}
	}
	for _, table := range s.Tables() {
		for _, row := range table {
			for _, name := range row {
				if err := validName(entry, name); err != nil {
					return err
				}
			}
		}
	}
	if s.WholeCall != nil {
		if entry != "" || s.WholeCall.WholeCall != nil {
			return fmt.Errorf("the whole call's selection has a whole call of its own")
		}
		if err := s.WholeCall.validShapeOf(EntryWholeCall); err != nil {
			return fmt.Errorf("whole call: %w", err)
		}
	}
	return nil
}

// ascending checks a bucket bound list: positive and ascending, the last
// one 0 (unbounded) or above the others. A call above every bound takes the
// last bucket either way (the module's _bucket).
func ascending(field string, bounds []int) error {
	for i, b := range bounds {
		last := i == len(bounds)-1
		switch {
		case b < 0, b == 0 && !last:
			return fmt.Errorf("%s %v: want positive bounds, ascending, the last 0 for unbounded", field, bounds)
		case i > 0 && b != 0 && b <= bounds[i-1]:
			return fmt.Errorf("%s %v: bound %d after %d (want positive bounds, ascending, the last 0 for unbounded)", field, bounds, b, bounds[i-1])
		}
	}
	return nil
}

// validName checks one table entry of entry's tables ("" per cache): a
// configuration's name (which sweep it fits is Validate's question), the
// SIMT baseline, or a peer that SGLang's path reaches there (PeerReached:
// a bucket given to another would send its calls to neither).
func validName(entry, name string) error {
	switch {
	case name == SIMTName:
		return nil
	case IsPeer(name) && PeerReached(entry, name):
		return nil
	case IsPeer(name):
		where := "per cache"
		if entry != "" {
			where = "for the " + entry
		}
		return fmt.Errorf("table entry %q: SGLang's path does not reach that peer %s once the module declines (reached: %s)",
			name, where, strings.Join(reachedPeerNames(entry), ", "))
	}
	// Which configurations fit is Validate's question (against a sweep);
	// here a name only has to be one: lower-case letters, digits and
	// underscores, as every configuration's is.
	if name == "" || strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return fmt.Errorf("table entry %q: not a configuration's name (mma_h16_t16_k32_w4_s1, say), %s or a peer's (%s)",
			name, SIMTName, strings.Join(reachedPeerNames(entry), ", "))
	}
	return nil
}

// unfit lists the variants s names (the whole call's too), each once, in
// order, that are not among fits: the SIMT baseline and peers are not
// variants and always pass.
func (s Selection) unfit(fits map[string]bool) []string {
	var out []string
	for _, name := range s.Names() {
		if name != SIMTName && !IsPeer(name) && !fits[name] && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// bucketHeads are the head counts of a rank the selections tell apart:
// DeepSeek-V4-Flash's 64 under tensor parallelism 4 and 2 (and 64 itself,
// the sweep's default --heads).
var bucketHeads = []int{16, 32}

// staticRuleSource is the Source of HeuristicSelection's selections.
const staticRuleSource = "static rule (no measurements yet): fill about 128 programs, widest tiles first"

// StaticRule says whether s is the static rule's (HeuristicSelection),
// whose tables follow the sweep's --heads, not measurements.
func (s Selection) StaticRule() bool { return s.Source == staticRuleSource }

// HeuristicSelection is the static rule used until measurements exist: for
// each bucket, the fitting variant whose grid (head blocks x splits x batch)
// first reaches about one program per multiprocessor, widest head block and
// tile first (masked rows, of a head block wider than the heads, count
// against it). Head counts of 16 and 32 get tables of their own, below the
// one for heads (the sweep's --heads and above). Measured choices from
// `mlagen select` replace it.
func HeuristicSelection(t Target, heads int, budgets []Budget) Selection {
	s := Selection{Target: t.Name, Source: staticRuleSource,
		BatchBounds: bucketBounds(bucketBatch), TopkBounds: bucketBounds(bucketTopk)}
	table := func(heads int) [][]string {
		var rows [][]string
		for _, batch := range bucketBatch {
			var row []string
			for _, topk := range bucketTopk {
				row = append(row, heuristicPick(heads, batch, topk, budgets))
			}
			rows = append(rows, row)
		}
		return rows
	}
	for _, h := range bucketHeads {
		if h < heads {
			s.FewerHeads = append(s.FewerHeads, HeadsTable{MaxHeads: h, Table: table(h)})
		}
	}
	s.Table = table(heads)
	return s
}

func heuristicPick(heads, batch, topk int, budgets []Budget) string {
	const wantPrograms = 128
	best, bestScore := SIMTName, math.MinInt
	for _, b := range budgets {
		if !b.Fits {
			continue
		}
		v := b.Variant
		if v.BlockT*v.SplitK > topk {
			continue // splits that would get no tokens
		}
		programs := (heads + v.BlockH - 1) / v.BlockH * v.SplitK * batch
		// Reward reaching the program target, then the least waste beyond
		// it, then head-block and tile width, then more warps.
		score := 0
		if programs >= wantPrograms {
			score += 1 << 20
			score -= programs / wantPrograms << 12
		} else {
			score += programs << 8
		}
		// A head block wider than the heads runs the rest of its rows
		// masked: the rows it fills count for it, the masked ones against.
		rows := min(v.BlockH, heads)
		score += rows*4 - (v.BlockH-rows)*4 + v.BlockT + v.NumWarps
		if score > bestScore {
			best, bestScore = b.Name, score
		}
	}
	return best
}
