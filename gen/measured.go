package gen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Results is the part of a harness results file (harness.py) that
// selection reads.
type Results struct {
	Target string `json:"target"`
	GPU    string `json:"gpu"`
	Torch  string `json:"torch"`
	Triton string `json:"triton"`
	Date   string `json:"date"`
	// Capability is the GPU's as the harness records it ("sm_90";
	// "interpreter" without one); files from before it have none.
	Capability string `json:"capability"`
	// Variants is the harness's --variants ("selected", "all" or a list),
	// and Command its command line: files of harnesses that did not record
	// Variants say it there.
	Variants string `json:"variants"`
	Command  string `json:"command"`
	// Complete is false in the file of a harness run cut short (it is
	// rewritten after each section); files from before it have none.
	Complete    *bool       `json:"complete"`
	Correctness []CaseCheck `json:"correctness"`
	Timing      []Timing    `json:"timing"`
}

// CaseCheck is a correctness row: one configuration on one harness case,
// against the float64 reference.
type CaseCheck struct {
	Variant string `json:"variant"`
	Case    string `json:"case"`
	Passed  bool   `json:"passed"`
}

// EntryWholeCall marks a timing row of the whole-call entry point
// (sparse_decode_full); rows without an entry time the per-cache one.
// Rows of any other entry (the harness's "one kernel", one kernel call over
// a whole call's tokens) are for reading, not for selection.
const EntryWholeCall = "whole call"

// PeerPrefix starts the variant name of a peer's row ("peer:flashmla"):
// what SGLang runs without mlagen, timed by the harness on the same inputs.
// A bucket a peer wins is the peer's: the selection names it, and the
// module declines the shape so that SGLang's own path runs. A peer can win
// only where that path leads to it (PeerReached).
const PeerPrefix = "peer:"

// NearTiePercent is how close, in percent, a runner-up must be to count as
// tied with the fastest: the selected rows of repeated harness runs on the
// H200 moved by up to 1.6%. select lists such buckets, and rows timed under
// another Triton release choose among them (rankShapes).
const NearTiePercent = 2

// IsPeer says whether a selection name is a peer's.
func IsPeer(name string) bool { return strings.HasPrefix(name, PeerPrefix) }

// reachedPeers are, per entry, the peers that SGLang's path reaches once
// the module declines a call. Per cache, SGLang's dispatcher then runs its
// own kernel (_run_triton_sparse_decode: the sglang-triton and
// simt-baseline peers). A whole call that defers_full() leaves to SGLang
// goes to its sm_120 entry's backend choice: FlashInfer, that same Triton
// path, or PyTorch. FlashMLA is on neither path (SGLang calls it on sm_90
// and sm_100 without that entry), nor is a file: peer of one's own: giving
// them a bucket would send its calls to neither them nor mlagen.
var reachedPeers = map[string][]string{
	"":             {"sglang-triton", "simt-baseline"},
	EntryWholeCall: {"flashinfer", "sglang-triton", "simt-baseline"},
}

// reachedPeerNames are the peers PeerReached accepts for entry, with
// PeerPrefix.
func reachedPeerNames(entry string) []string {
	var out []string
	for _, p := range reachedPeers[entry] {
		out = append(out, PeerPrefix+p)
	}
	return out
}

// PeerReached says whether SGLang's path reaches peer name (with
// PeerPrefix) when the module declines a call of entry ("" per cache, or
// EntryWholeCall).
func PeerReached(entry, name string) bool {
	return slices.Contains(reachedPeers[entry], strings.TrimPrefix(name, PeerPrefix))
}

// Timing is one timed shape of one configuration, or of a peer. Heads is 0
// in results written before the harness recorded it; a whole-call row's
// Topk is the tokens of both caches (window and extra). A declined or
// failed row (Declined, Error) has no time.
type Timing struct {
	Variant  string   `json:"variant"`
	Entry    string   `json:"entry,omitempty"`
	Heads    int      `json:"heads,omitempty"`
	Batch    int      `json:"batch"`
	Topk     int      `json:"topk"`
	US       float64  `json:"us"`
	GraphUS  *float64 `json:"graph_us"`
	Passed   *bool    `json:"passed,omitempty"`
	Declined string   `json:"declined,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Triton is the release the row was timed under where that is not
	// the file's (Results.Triton): rows of another release SGLang
	// installs, which choose only among near ties (rankShapes).
	Triton string `json:"triton,omitempty"`
}

// time is the row's time for selection (CUDA-graph replay where measured,
// as SGLang's decode runs), and whether it has one.
func (t Timing) time() (float64, bool) {
	if t.Declined != "" || t.Error != "" {
		return 0, false
	}
	if t.GraphUS != nil && *t.GraphUS > 0 {
		return *t.GraphUS, true
	}
	return t.US, t.US > 0
}

// ownRelease is r with only the rows timed under its own Triton release
// (Timing.Triton empty or the file's): the shapes, batches and kernels a
// selection is made of. Other releases' rows only break near ties.
func (r Results) ownRelease() Results {
	r.Timing = slices.DeleteFunc(slices.Clone(r.Timing), func(t Timing) bool {
		return t.Triton != "" && t.Triton != r.Triton
	})
	return r
}

// AddRelease is r with other's rows added: other is a run of the same
// target on the same GPU under another Triton release, whose timing rows
// are marked with that release (Timing.Triton) so that they break r's near
// ties only, and whose correctness rows count as r's (a configuration that
// failed a case under any release is never chosen).
func AddRelease(r, other Results) (Results, error) {
	switch {
	case other.Target != r.Target:
		return r, fmt.Errorf("%s results, not %s", other.Target, r.Target)
	case other.GPU != r.GPU:
		return r, fmt.Errorf("timed on %s, not on %s: other releases' rows must come from the same GPU", other.GPU, r.GPU)
	case other.EntryPointsOnly():
		return r, ErrEntryPointsOnly
	case other.Complete != nil && !*other.Complete:
		return r, ErrIncomplete
	case other.Triton == "" || other.Triton == r.Triton:
		return r, fmt.Errorf("timed under Triton %q, as the results it would add to: give one run per release", other.Triton)
	}
	r.Timing = slices.Clone(r.Timing)
	for _, t := range other.Timing {
		if t.Triton == "" {
			t.Triton = other.Triton
		}
		r.Timing = append(r.Timing, t)
	}
	r.Correctness = append(slices.Clone(r.Correctness), other.Correctness...)
	return r, nil
}

// ParseResults decodes a harness results file.
func ParseResults(data []byte) (Results, error) {
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("results: %w", JSONError(data, err))
	}
	if r.Target != "" && len(r.Timing) > 0 {
		return r, nil
	}
	// Not results: the other JSON files a user holds beside them, named
	// for what they are by their own fields.
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(data, &fields)
	has := func(k string) bool { _, ok := fields[k]; return ok }
	switch {
	case has("table") && has("batch_bounds"):
		return r, errors.New("results: this is a selection (what mlagen select writes), not harness results: give it to mlagen emit or patch --selection, and select the harness's results file")
	case has("rows") && has("sms"):
		return r, errors.New("results: this is gpu/splits.py's output (the split counts fitted to the GPU), not harness results: select the harness's results file")
	case r.Target == "":
		return r, errors.New("results: no target: not a harness results file")
	default:
		return r, errors.New("results: no timing rows (a harness run with --no-timing, or one that stopped before its timings): run the harness without --no-timing")
	}
}

// JSONError says where in data a decoding error lies and what was
// wanted there, in the file's terms (line, column, field), not the
// decoder's Go types; other errors pass through.
func JSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("not JSON: line %d, column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		want := "a " + typ.Type.Kind().String()
		switch k := typ.Type.Kind(); {
		case k == reflect.Struct || k == reflect.Map:
			want = "an object"
		case k == reflect.Slice || k == reflect.Array:
			want = "a list"
		case k == reflect.Bool:
			want = "true or false"
		case k >= reflect.Int && k <= reflect.Uint64 && strings.HasPrefix(typ.Value, "number"):
			// A number, but not one the field holds (1.5, or too large).
			want = "a whole number in range"
		case (k == reflect.Float32 || k == reflect.Float64) && strings.HasPrefix(typ.Value, "number"):
			want = "a number in float64's range"
		case k >= reflect.Int && k <= reflect.Float64:
			want = "a number"
		}
		where := "the file"
		if typ.Field != "" {
			where = fmt.Sprintf("%q", typ.Field)
		}
		return fmt.Errorf("line %d, column %d: %s is a JSON %s, want %s", line, col, where, typ.Value, want)
	}
	return err
}

// lineCol is the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	return line, int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// EntryPointsOnly says whether r comes from the harness's --variants
// selected: it times the module's entry points, each shape on the
// configuration the module's built-in tables pick (and names the row after
// it), so a selection made from it would only repeat those tables.
func (r Results) EntryPointsOnly() bool {
	if r.Variants != "" {
		return r.Variants == "selected"
	}
	args := strings.Fields(r.Command)
	for i, a := range args {
		if a == "--variants=selected" || a == "--variants" && i+1 < len(args) && args[i+1] == "selected" {
			return true
		}
	}
	return false
}

// ErrIncomplete is why select refuses the file of a run cut short: the
// job's problem (exit 1), not a file it cannot read, whichever place the
// file is given in.
var ErrIncomplete = errors.New("the harness run did not finish (its file says \"complete\": false: it was stopped or crashed, and holds only the sections before that), so a selection from it would choose among the shapes it reached: run the harness again to the end")

// ErrEntryPointsOnly is why select refuses such results (exit 1, as
// ErrIncomplete).
var ErrEntryPointsOnly = errors.New("the harness ran with --variants selected: it timed the module's entry points, each shape on the configuration the module's built-in tables pick, so a selection from it would only repeat those tables; run it with --variants all (the default) to time every configuration")

// SelectMeasured picks, for every (heads, batch, topk) bucket, the fastest
// variant among fits that passed every correctness case and were checked
// at all (a correctness row, or a timing row's own check): a harness run
// with --no-check, before the harness checked every shape it times, timed
// configurations it never compared with the reference.
// Results of the harness's --variants selected, or of a run cut short, are
// refused. A call's time is
// its CUDA-graph replay time where measured (what SGLang's decode sees),
// else its plain launch time. A bucket with no passing MMA variant gets the
// SIMT baseline, which the bundle hands back to SGLang's own kernel.
//
// The batch buckets are the batches the results timed: the measured shapes 1,
// 16, 64 and 128 must be there, and any other timed batch (the harness also
// times 8 and 32) adds a bucket that runs up to it, so a decode batch is
// served by the variant measured at the nearest batch at or above it.
//
// The heads buckets are the head counts the results timed, the same way:
// each runs up to its count, the largest takes every count above, and a
// shape a smaller head count was not timed at takes the next larger one's
// choice. Results with one head count (or none recorded) give one table for
// every H. Rows of the whole-call entry give the whole call's selection,
// over the token totals they timed; without them the whole call runs the
// per-cache tables at the call's total tokens.
func SelectMeasured(r Results, fits map[string]bool, source string) (Selection, error) {
	if r.EntryPointsOnly() {
		return Selection{}, ErrEntryPointsOnly
	}
	if r.Complete != nil && !*r.Complete {
		return Selection{}, ErrIncomplete
	}
	ranked := rankShapes(r, fits)
	r = r.ownRelease()
	timed, _ := Coverage(r, fits)
	if len(timed) == 0 {
		// Every bucket would go to the SIMT baseline, as if each
		// configuration had failed: say what the rows are instead.
		return Selection{}, fmt.Errorf("results time none of the sweep's configurations per cache (their timing rows name only: %s)%s",
			timedNames(r), untimedHint(r))
	}
	if timedCfg := timedConfigs(r, fits); len(unchecked(r, timedCfg)) == len(timedCfg) {
		return Selection{}, fmt.Errorf("results check none of the %d configurations they time against the reference (no correctness rows, no timing row with its own check: a harness older than the one that checks every timed shape, run with --no-check?), and select chooses only checked ones: run the harness this mlagen emits (mlagen emit --kernels DIR writes DIR/harness.py)", len(timedCfg))
	}
	for _, entry := range []string{"", EntryWholeCall} {
		if mixedHeads(r, entry) {
			what := "per-cache"
			if entry != "" {
				what = entry
			}
			return Selection{}, fmt.Errorf("the %s rows mix runs that record a head count (%v) with rows that record none (from a harness before it did): select from one run, or time the old one again", what, timedHeads(r, entry)[1:])
		}
	}
	s, missing, failed := measuredSelection(r, ranked, "", bucketTopk)
	s.Target, s.Source = r.Target, source
	if len(failed) > 0 {
		return s, failedShapes("", failed)
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("results have no timing for %s: the selection needs batch %v x topk %v (run the harness with its default --batches and --topks)",
			strings.Join(missing, ", "), measuredBatches(r, ""), bucketTopk)
	}
	if tokens := timedTopks(r, EntryWholeCall); len(tokens) > 0 {
		w, missing, failed := measuredSelection(r, ranked, EntryWholeCall, tokens)
		w.Target, w.Source = r.Target, source+" (whole call)"
		if len(failed) > 0 {
			return s, failedShapes(EntryWholeCall, failed)
		}
		if len(missing) > 0 {
			return s, fmt.Errorf("results have no whole-call timing for %s: the largest timed head count needs every timed batch x tokens", strings.Join(missing, ", "))
		}
		s.WholeCall = &w
	}
	return s, nil
}

// measuredSelection is the selection of one entry's rows over topks, the
// shapes it needed that the results did not time, and the shapes whose
// every row failed to run or was declined (each with its first row's
// error). The largest head count must be timed at every batch and topk; a
// smaller one's untimed cell takes the choice of the next larger head
// count there, but a cell whose rows all failed is no untimed one: the
// larger count's choice may be what failed there.
func measuredSelection(r Results, ranked map[shape][]timed, entry string, topks []int) (Selection, []string, []string) {
	batches := measuredBatches(r, entry)
	s := Selection{BatchBounds: bucketBounds(batches), TopkBounds: bucketBounds(topks)}
	heads := timedHeads(r, entry)
	tables := make([][][]string, len(heads))
	var missing, failed []string
	for i := len(heads) - 1; i >= 0; i-- {
		h := heads[i]
		for bi, b := range batches {
			var row []string
			for ti, tk := range topks {
				k := shape{entry, h, b, tk}
				can := choices(k, ranked[k])
				if v, ok := verdictOf(k, ranked[k], can); ok {
					s.Verdicts = append(s.Verdicts, v)
				}
				where := fmt.Sprintf("batch %d topk %d", b, tk)
				if len(heads) > 1 {
					where = fmt.Sprintf("heads %d %s", h, where)
				}
				name := SIMTName
				switch {
				case len(can) > 0:
					name = can[0].name
				case timedShape(r, k):
					// Timed, but nothing that fits passed: SGLang's kernel.
				case hasShape(r, k):
					failed = append(failed, where+" ("+firstFailure(r, k)+")")
				case i < len(heads)-1:
					name = tables[i+1][bi][ti]
				default:
					missing = append(missing, where)
				}
				row = append(row, name)
			}
			tables[i] = append(tables[i], row)
		}
	}
	for i, h := range heads[:len(heads)-1] {
		// A head count whose table is the next larger one's needs none of
		// its own: that bucket runs down to it.
		if !slices.EqualFunc(tables[i], tables[i+1], slices.Equal) {
			s.FewerHeads = append(s.FewerHeads, HeadsTable{MaxHeads: h, Table: tables[i]})
		}
	}
	s.Table = tables[len(heads)-1]
	slices.SortFunc(s.Verdicts, func(a, b Verdict) int {
		return cmp.Or(cmp.Compare(a.Heads, b.Heads), cmp.Compare(a.Topk, b.Topk), cmp.Compare(a.Batch, b.Batch))
	})
	return s, missing, failed
}

// failedShapes is SelectMeasured's error for shapes whose every row failed
// to run or was declined: the harness timed them (it is not a shape left
// out), and what failed there is for the user to see, not to be covered
// by another head count's choice or by SGLang's kernel.
func failedShapes(entry string, failed []string) error {
	what := "per-cache"
	if entry != "" {
		what = entry
	}
	return fmt.Errorf("every %s row at %s failed to run or was declined, so no time says what serves it: see the run's log, and time it again", what, strings.Join(failed, "; "))
}

// firstFailure is the error, or the reason declined, of the first row at
// shape k.
func firstFailure(r Results, k shape) string {
	for _, t := range r.Timing {
		if (shape{entryOf(t), t.Heads, t.Batch, t.Topk}) != k {
			continue
		}
		switch {
		case t.Error != "":
			return t.Variant + ": " + t.Error
		case t.Declined != "":
			return t.Variant + " declined: " + t.Declined
		}
	}
	return "no time"
}

// hasShape says whether any row, timed or not, is at shape k.
func hasShape(r Results, k shape) bool {
	for _, t := range r.Timing {
		if (shape{entryOf(t), t.Heads, t.Batch, t.Topk}) == k {
			return true
		}
	}
	return false
}

// verdictOf is the verdict of one timed shape where a peer and mlagen
// were both timed (ranked fastest first, can the ones the bucket can go
// to: choices); ok is false where not. Peer is the fastest peer, reached or
// not; Winner is the bucket's choice, can[0].
func verdictOf(k shape, ranked, can []timed) (v Verdict, ok bool) {
	v = Verdict{Heads: k.heads, Batch: k.batch, Topk: k.topk}
	for _, c := range ranked {
		switch {
		case IsPeer(c.name) && v.Peer == "":
			v.Peer, v.PeerUS = c.name, c.us
		case !IsPeer(c.name) && v.Mlagen == "":
			v.Mlagen, v.MlagenUS = c.name, c.us
		}
	}
	if v.Peer == "" || v.Mlagen == "" {
		return v, false
	}
	v.Reached = PeerReached(k.entry, v.Peer)
	v.Winner, v.WinnerUS = can[0].name, can[0].us
	return v, true
}

// choices are the ranked variants the bucket of shape k can go to: every
// mlagen configuration, and the peers SGLang's path reaches there.
func choices(k shape, ranked []timed) []timed {
	return slices.DeleteFunc(slices.Clone(ranked), func(c timed) bool {
		return IsPeer(c.name) && !PeerReached(k.entry, c.name)
	})
}

// measuredBatches is bucketBatch plus every other batch the entry's rows
// timed, ascending. The whole call: the batches its largest head count
// timed at every token count. A shape the harness declined there (out of
// GPU memory at a prefill batch, say) drops that batch's bucket, whose
// calls go to the largest bucket below it, rather than leave a table
// with a hole.
func measuredBatches(r Results, entry string) []int {
	var batches []int
	if entry == "" {
		batches = slices.Clone(bucketBatch)
		for _, t := range r.Timing {
			if t.Batch > 0 && entryOf(t) == entry {
				batches = append(batches, t.Batch)
			}
		}
		slices.Sort(batches)
		return slices.Compact(batches)
	}
	heads, topks := timedHeads(r, entry), timedTopks(r, entry)
	if len(heads) == 0 {
		return nil
	}
	top := heads[len(heads)-1]
	timed := map[[2]int]bool{}
	for _, t := range r.Timing {
		if _, ok := t.time(); ok && t.Batch > 0 && entryOf(t) == entry && t.Heads == top {
			timed[[2]int{t.Batch, t.Topk}] = true
		}
	}
	for bt := range timed {
		if !slices.ContainsFunc(topks, func(tk int) bool { return !timed[[2]int{bt[0], tk}] }) {
			batches = append(batches, bt[0])
		}
	}
	slices.Sort(batches)
	return slices.Compact(batches)
}

// PerCacheHeads are the head counts the results time per cache, ascending
// ({0} where the rows record none): one count gives one table for every H.
func PerCacheHeads(r Results) []int { return timedHeads(r.ownRelease(), "") }

// timedHeads are the head counts the entry's rows timed, ascending (0 when
// none is recorded).
func timedHeads(r Results, entry string) []int {
	var heads []int
	for _, t := range r.Timing {
		if entryOf(t) == entry {
			heads = append(heads, t.Heads)
		}
	}
	slices.Sort(heads)
	heads = slices.Compact(heads)
	if len(heads) == 0 {
		return []int{0}
	}
	return heads
}

// timedTopks are the topks (whole call: token totals) the entry's rows
// timed, ascending.
func timedTopks(r Results, entry string) []int {
	var topks []int
	for _, t := range r.Timing {
		if entryOf(t) == entry && t.Topk > 0 {
			topks = append(topks, t.Topk)
		}
	}
	slices.Sort(topks)
	return slices.Compact(topks)
}

// entryOf is "" for a per-cache row, EntryWholeCall for a whole-call one,
// and the entry itself for any other (which no selection reads).
func entryOf(t Timing) string {
	if t.Entry == "per cache" {
		return ""
	}
	return t.Entry
}

// A NearTie is a bucket whose chosen variant and the next passing one are
// within the tolerance NearTies was given: a rerun of the harness may
// choose the other. Where rows timed under other Triton releases decided
// between them (rankShapes), Releases names those releases and Worst the
// choice's and the runner-up's largest time over the fastest of the tied
// variants under any of them; the choice may then be the slower one here.
type NearTie struct {
	Entry                string
	Batch, Topk          int
	Chosen, RunnerUp     string
	ChosenUS, RunnerUpUS float64
	Releases             []string
	Worst                []float64
}

// NearTies lists, in bucket order, the per-cache buckets of the largest
// timed head count where the runner-up of SelectMeasured's ranking is
// within frac (0.02 for 2%) of the choice, then the whole call's buckets
// of its largest head count the same way. It changes nothing: it tells
// whoever reviews a new selection which choices are within the
// run-to-run spread of the measurement, and which of them other releases'
// rows decided.
func NearTies(r Results, fits map[string]bool, frac float64) []NearTie {
	ranked := rankShapes(r, fits)
	r = r.ownRelease()
	var ties []NearTie
	for _, entry := range []string{"", EntryWholeCall} {
		heads := timedHeads(r, entry)
		topks := bucketTopk
		if entry != "" {
			topks = timedTopks(r, entry)
		}
		if len(heads) == 0 || len(topks) == 0 {
			continue
		}
		h := heads[len(heads)-1]
		for _, b := range measuredBatches(r, entry) {
			for _, tk := range topks {
				k := shape{entry, h, b, tk}
				c := choices(k, ranked[k])
				if len(c) < 2 || max(c[0].us, c[1].us) > min(c[0].us, c[1].us)*(1+frac) {
					continue
				}
				t := NearTie{entry, b, tk, c[0].name, c[1].name, c[0].us, c[1].us, nil, nil}
				if c[0].releases != nil {
					t.Releases, t.Worst = c[0].releases, []float64{c[0].worst, c[1].worst}
				}
				ties = append(ties, t)
			}
		}
	}
	return ties
}

// shape is one timed cell: the entry ("" per cache), heads, batch, topk.
type shape struct {
	entry              string
	heads, batch, topk int
}

type timed struct {
	name string
	us   float64
	// Set where other releases' rows broke a near tie (breakTies): the
	// releases that timed every tied variant, and this one's largest time
	// over the fastest of them under any of those releases.
	releases []string
	worst    float64
}

// rankShapes orders, per timed shape, the variants among fits that passed
// every correctness case, fastest first; equal times go to the name that
// sorts first, so the table is stable. Rows timed under another Triton
// release than the file's (Timing.Triton) only reorder the near ties at
// the head of a shape's ranking (breakTies): the tables follow the lent
// GPU's release, and where that cannot tell two variants apart, the one
// that holds up under the releases SGLang installs goes first.
func rankShapes(r Results, fits map[string]bool) map[shape][]timed {
	failed, checked := checks(r)
	// A variant timed twice at one shape counts with its faster time.
	fastest := map[shape]map[string]float64{}
	// The same for the other releases' rows: shape, release, variant.
	others := map[shape]map[string]map[string]float64{}
	keep := func(m map[string]float64, name string, us float64) {
		if cur, ok := m[name]; !ok || us < cur {
			m[name] = us
		}
	}
	for _, t := range r.Timing {
		us, ok := t.time()
		candidate := fits[t.Variant] || IsPeer(t.Variant)
		if !ok || !candidate || failed[t.Variant] || (t.Passed != nil && !*t.Passed) {
			continue
		}
		if !checked[t.Variant] {
			continue // never compared with the reference (a peer neither)
		}
		k := shape{entryOf(t), t.Heads, t.Batch, t.Topk}
		if t.Triton != "" && t.Triton != r.Triton {
			if others[k] == nil {
				others[k] = map[string]map[string]float64{}
			}
			if others[k][t.Triton] == nil {
				others[k][t.Triton] = map[string]float64{}
			}
			keep(others[k][t.Triton], t.Variant, us)
			continue
		}
		if fastest[k] == nil {
			fastest[k] = map[string]float64{}
		}
		keep(fastest[k], t.Variant, us)
	}
	ranked := map[shape][]timed{}
	for k, byName := range fastest {
		c := make([]timed, 0, len(byName))
		for name, us := range byName {
			c = append(c, timed{name: name, us: us})
		}
		sort.Slice(c, func(i, j int) bool {
			if c[i].us != c[j].us {
				return c[i].us < c[j].us
			}
			return c[i].name < c[j].name
		})
		ranked[k] = breakTies(c, others[k])
	}
	return ranked
}

// breakTies reorders the near ties at the head of c (mlagen configurations
// within NearTiePercent of the fastest, up to the first peer) by the rows
// other releases timed of them: by each one's largest time over the fastest
// of them under any release that timed them all, then as before. Releases
// that did not time every tied variant do not judge, and without one c is
// returned as it is.
func breakTies(c []timed, other map[string]map[string]float64) []timed {
	n := 0
	for n < len(c) && !IsPeer(c[n].name) && c[n].us <= c[0].us*(1+NearTiePercent/100.0) {
		n++
	}
	if n < 2 {
		return c
	}
	worst := make([]float64, n)
	var judges []string
	for _, release := range slices.Sorted(maps.Keys(other)) {
		times := other[release]
		best := 0.0
		for _, v := range c[:n] {
			us, ok := times[v.name]
			if !ok {
				best = 0
				break
			}
			if best == 0 || us < best {
				best = us
			}
		}
		if best == 0 {
			continue
		}
		judges = append(judges, release)
		for i, v := range c[:n] {
			worst[i] = max(worst[i], times[v.name]/best)
		}
	}
	if judges == nil {
		return c
	}
	tied := slices.Clone(c[:n])
	for i := range tied {
		tied[i].releases, tied[i].worst = judges, worst[i]
	}
	sort.SliceStable(tied, func(i, j int) bool { return tied[i].worst < tied[j].worst })
	return append(tied, c[n:]...)
}

// Coverage is which kernels of fits (a configuration less its split
// count, which the entry points fit to the GPU and the batch at run time)
// the results time per cache, and all of them, each sorted and named as
// its split-1 configuration would be: a kernel timed at no split count is
// never chosen.
func Coverage(r Results, fits map[string]bool) (timed, fitting []string) {
	for name := range fits {
		fitting = append(fitting, kernelOf(name))
	}
	for _, t := range r.ownRelease().Timing {
		if _, ok := t.time(); ok && fits[t.Variant] && entryOf(t) == "" {
			timed = append(timed, kernelOf(t.Variant))
		}
	}
	slices.Sort(timed)
	slices.Sort(fitting)
	return slices.Compact(timed), slices.Compact(fitting)
}

// checks are the configurations (and peers) that failed a correctness
// case, and those compared with the reference at all: a correctness row,
// or a timing row that carries its own check. A timed shape whose own
// check failed fails the configuration everywhere, as a failed case does:
// a kernel wrong at one shape is not chosen at another.
func checks(r Results) (failed, checked map[string]bool) {
	failed, checked = map[string]bool{}, map[string]bool{}
	for _, c := range r.Correctness {
		checked[c.Variant] = true
		if !c.Passed {
			failed[c.Variant] = true
		}
	}
	for _, t := range r.Timing {
		if t.Passed != nil {
			checked[t.Variant] = true
			if !*t.Passed {
				failed[t.Variant] = true
			}
		}
	}
	return failed, checked
}

// timedConfigs are the sweep's configurations (fits) that r times, any
// entry, sorted.
func timedConfigs(r Results, fits map[string]bool) []string {
	var out []string
	for _, t := range r.Timing {
		if _, ok := t.time(); ok && fits[t.Variant] {
			out = append(out, t.Variant)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Unchecked are the sweep's configurations that r times but never
// compared with the reference: no correctness row, and no timing row that
// carries its own check. Select never chooses them.
func Unchecked(r Results, fits map[string]bool) []string {
	return unchecked(r, timedConfigs(r, fits))
}

// unchecked are the names among timed that r never checked.
func unchecked(r Results, timed []string) []string {
	_, checked := checks(r)
	var out []string
	for _, name := range timed {
		if !checked[name] {
			out = append(out, name)
		}
	}
	return out
}

// kernelOf is a configuration's name with its split count set to 1, the
// name its split-count siblings share.
func kernelOf(name string) string {
	v, err := ParseVariantName(name)
	if err != nil {
		return name
	}
	v.SplitK = 1
	return v.Name()
}

// timedNames lists the names of the results' timing rows, sorted, once
// each: the first few, and how many more.
func timedNames(r Results) string {
	var names []string
	for _, t := range r.Timing {
		names = append(names, t.Variant)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	const shown = 4
	if len(names) > shown {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
	}
	return strings.Join(names, ", ")
}

// untimedHint says how to time every configuration: the harness's
// --variants selected (rows named "selected") times only the module's entry
// points, through its built-in tables.
func untimedHint(r Results) string {
	for _, t := range r.Timing {
		if t.Variant == "selected" {
			return ": the harness ran with --variants selected, which times the module's entry points through its built-in tables; run it with --variants all (the default) to time every configuration"
		}
	}
	return ": run the harness with --variants all (the default) on this sweep's module"
}

// timedShape says whether any row at shape k has a time: rows that failed
// to run or were declined have none (hasShape still finds them).
func timedShape(r Results, k shape) bool {
	for _, t := range r.Timing {
		if _, ok := t.time(); ok && (shape{entryOf(t), t.Heads, t.Batch, t.Topk}) == k {
			return true
		}
	}
	return false
}

// mixedHeads says whether entry's rows mix a recorded head count with
// rows that record none (a harness from before it recorded them): such
// rows cannot be put in a heads bucket.
func mixedHeads(r Results, entry string) bool {
	heads := timedHeads(r, entry)
	return len(heads) > 1 && heads[0] == 0
}
