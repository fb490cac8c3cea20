package gen

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/mlagen/mlagen/templates"
)

// File names of an emitted directory.
const (
	BundleFile  = "sparse_mla_mma.py" // every configuration; the one file `mlagen patch` installs
	SIMTName    = "simt_baseline"     // the per-head yardstick, and what select() names when nothing fits
	HarnessFile = "harness.py"
	VariantsDoc = "VARIANTS.md"
)

// SIMT baseline tile: one warp group per (head, batch row), 32 tokens a tile.
const (
	simtBlockT   = 32
	simtNumWarps = 4
)

// File is one emitted file, path relative to the output directory.
type File struct {
	Name string
	Data []byte
}

// Emission is everything one `mlagen emit` produces, before it is written.
type Emission struct {
	Command   string
	Sweep     Sweep
	Budgets   []Budget
	Selection Selection
	// SelectionNote says why the target's measured selection was not used
	// (it names variants this sweep does not fit); empty when it was, or
	// when the target has none.
	SelectionNote string
	// SelectionLeftOut are the variants the measured selection names that
	// this sweep does not fit, where the target's curated sweep fits every
	// one of them: the sweep's own flags left them out (the CLI names the
	// flags). Empty otherwise.
	SelectionLeftOut []string
	Files            []File // sorted by name
}

// Bundle is the emission's sparse_mla_mma.py (Emit always renders it): the
// module `mlagen patch` installs.
func (e Emission) Bundle() []byte {
	for _, f := range e.Files {
		if f.Name == BundleFile {
			return f.Data
		}
	}
	panic("gen: an emission without " + BundleFile)
}

// Fitting returns the budgets of the variants that fit, in sweep order.
func (e Emission) Fitting() []Budget {
	var out []Budget
	for _, b := range e.Budgets {
		if b.Fits {
			out = append(out, b)
		}
	}
	return out
}

// IsDefaultCommand says whether command is some target's DefaultCommand:
// one `make kernels` runs.
func IsDefaultCommand(command string) bool {
	for _, t := range targets {
		if command == DefaultCommand(t) {
			return true
		}
	}
	return false
}

// DefaultCommand is the command that emits t's default sweep, recorded in
// the header of every file it writes.
func DefaultCommand(t Target) string { return "mlagen emit --target " + t.Name }

// Emit budgets the sweep and renders the files of its directory: the bundle
// with every variant that fits, the SIMT baseline, the harness and
// VARIANTS.md. sel is the selection to carry; nil means the target's
// measured selection where it fits the sweep, else the static rule. command
// is recorded in each file's header.
func Emit(s Sweep, command string, sel *Selection) (Emission, error) {
	if err := s.Validate(); err != nil {
		return Emission{}, err
	}
	e := Emission{Command: command, Sweep: s, Budgets: CheckSweep(s)}
	if sel != nil {
		if sel.Target != s.Target.Name {
			return e, fmt.Errorf("selection is for %s, sweep is for %s", sel.Target, s.Target.Name)
		}
		if err := sel.Validate(fitNames(e.Budgets)); err != nil {
			return e, err
		}
		e.Selection = *sel
	} else {
		var err error
		if e.Selection, e.SelectionNote, e.SelectionLeftOut, err = selectionFor(s, e.Budgets); err != nil {
			return e, err
		}
	}
	r, err := newRenderer()
	if err != nil {
		return e, err
	}
	files := []struct {
		name, tmpl string
		data       any
	}{
		{BundleFile, "bundle.py.tmpl", newBundleData(command, s.Target, "", e.Fitting(), e.Selection)},
		{SIMTName + ".py", "simt.py.tmpl", simtData{Command: command, FP8: s.Target.FP8, BlockT: simtBlockT, NumWarps: simtNumWarps}},
		{HarnessFile, "harness.py.tmpl", harnessData{Command: command, Target: s.Target, Bundle: BundleFile, SIMT: SIMTName}},
		{VariantsDoc, "variants.md.tmpl", newVariantsData(command, s, e.Budgets, e.Selection)},
	}
	for _, f := range files {
		data, err := r.render(f.tmpl, f.data)
		if err != nil {
			return e, fmt.Errorf("render %s: %w", f.name, err)
		}
		e.Files = append(e.Files, File{f.name, data})
	}
	slices.SortFunc(e.Files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return e, nil
}

// PerVariantFiles renders, for every variant of e that fits, a standalone
// module <name>.py holding that configuration alone, for whoever wants one
// file per variant (mlagen emit --per-variant). They are never installed:
// the bundle is what ships and what the harness measures.
func (e Emission) PerVariantFiles() ([]File, error) {
	r, err := newRenderer()
	if err != nil {
		return nil, err
	}
	var out []File
	for _, b := range e.Fitting() {
		// The emission's buckets, every one of them running b.
		sel := e.Selection.everywhere(b.Name, "this module's one configuration, in every bucket")
		data, err := r.render("bundle.py.tmpl", newBundleData(e.Command+" --per-variant", e.Sweep.Target, b.Name, []Budget{b}, sel))
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", b.Name, err)
		}
		out = append(out, File{b.Name + ".py", data})
	}
	return out, nil
}

// Bundle renders the module `mlagen patch` installs for t: the bundle of t's
// default sweep with t's measured selection, byte for byte the
// sparse_mla_mma.py that `mlagen emit --target t` writes, whatever --out.
func Bundle(t Target) ([]byte, error) {
	s := DefaultSweep(t)
	budgets := CheckSweep(s)
	sel, note, _, err := selectionFor(s, budgets)
	if err != nil {
		return nil, err
	}
	if note != "" {
		// The measured selection is for this very sweep: not fitting it
		// means the sweep or the budget model changed under it.
		return nil, fmt.Errorf("%s: %s; re-measure and run `mlagen select`", t.Name, note)
	}
	var fitting []Budget
	for _, b := range budgets {
		if b.Fits {
			fitting = append(fitting, b)
		}
	}
	r, err := newRenderer()
	if err != nil {
		return nil, err
	}
	data, err := r.render("bundle.py.tmpl", newBundleData(DefaultCommand(t), t, "", fitting, sel))
	if err != nil {
		return nil, fmt.Errorf("render %s for %s: %w", BundleFile, t.Name, err)
	}
	return data, nil
}

// newBundleData lists configs (in their order) and the families they need.
func newBundleData(command string, t Target, alone string, configs []Budget, sel Selection) bundleData {
	d := bundleData{Command: command, Target: t, Alone: alone, Selection: sel, SIMT: SIMTName, FP8: t.FP8,
		PerCache: newPyTables("", "topk", sel), WholeCall: newPyTables("FULL_", "tokens", sel.ForWholeCall()),
		Tritons: TritonLines(CheckedTritons())}
	for _, b := range configs {
		d.Configs = append(d.Configs, newConfigEntry(b.Variant))
		switch KernelFamily(b.Variant) {
		case FamilyWS:
			d.WS = newWSFamily()
		case FamilyPP:
			d.PP = newPPFamily(t, configs)
		default:
			d.MMA = &mmaFamily{FP8: t.FP8}
		}
	}
	return d
}

// newPPFamily is the pipelined family's template data for t, whose pipelined
// configurations are among budgets.
func newPPFamily(t Target, budgets []Budget) *ppFamily {
	var smem []int
	var rs *roleSplit
	for _, b := range budgets {
		if b.Variant.Pipelined && b.Fits {
			smem = append(smem, b.SmemBytes)
			if b.Variant.RoleSplit() {
				rs = newRoleSplit()
			}
		}
	}
	return &ppFamily{FP8: t.FP8, HalvesBlockT: PPHalvesBlockT, QRegGroups: PPQRegGroups,
		QRegGroupsOnePiece: ppQRegGroupsOnePiece(t), OnePerSM: onePerSM(t, smem), RoleSplit: rs,
		Prefetch: ppPrefetch(t), PrefetchNarrowExtra: ppPrefetchNarrowExtra(t)}
}

func newVariantsData(command string, s Sweep, budgets []Budget, sel Selection) variantsData {
	d := variantsData{Command: command, Target: s.Target, Calibrated: CalibrationOf(s.Target).String(),
		Budgets: budgets, Selection: sel, Bundle: BundleFile, SIMT: SIMTName}
	if sel.StaticRule() {
		d.Heads = s.Heads
	}
	if slices.ContainsFunc(budgets, func(b Budget) bool { return b.Variant.WarpSpec }) {
		d.WS = newWSFamily()
	}
	if slices.ContainsFunc(budgets, func(b Budget) bool { return b.Variant.Pipelined }) {
		d.PP = newPPFamily(s.Target, budgets)
	}
	d.FP8 = s.Target.FP8
	d.PerCache, d.WholeCall = newPyTables("", "topk", sel), newPyTables("", "tokens", sel.ForWholeCall())
	return d
}

type renderer struct{ t *template.Template }

func newRenderer() (*renderer, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"commas": commas,
		"join":   strings.Join,
		// byMakeKernels: the command is one `make kernels` runs (a target's
		// default sweep and built-in selection), so the header may send a
		// reader there; another command's file comes from that command only.
		"byMakeKernels": IsDefaultCommand,
		// boundText is a bucket bound for humans: "<= 16", or "any" for 0.
		"boundText": func(n int) string {
			if n == 0 {
				return "any"
			}
			return fmt.Sprintf("<= %d", n)
		},
		// pyBounds is a bound list as a Python tuple, 0 as None.
		"pyBounds": func(ns []int) string {
			parts := make([]string, len(ns))
			for i, n := range ns {
				if n == 0 {
					parts[i] = "None"
				} else {
					parts[i] = fmt.Sprint(n)
				}
			}
			if len(parts) == 1 {
				return "(" + parts[0] + ",)"
			}
			return "(" + strings.Join(parts, ", ") + ")"
		},
		// pyDoc is text from outside mlagen (a selection's source: a
		// results file's GPU name and path) made safe inside a """
		// docstring: what would end it or start an escape is escaped, and
		// so is what is not printable.
		"pyDoc": pyDoc,
		"pyBool": func(b bool) string {
			if b {
				return "True"
			}
			return "False"
		},
	}).ParseFS(templates.FS, "*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parse templates: %w", err)
	}
	return &renderer{t}, nil
}

func (r *renderer) render(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := r.t.ExecuteTemplate(&buf, name, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pyDoc escapes s for a Python docstring ("""...""", not raw): a backslash
// or a double quote gets a backslash, and a character that is not
// printable its \x, \u or \U escape, so that the docstring reads as s and
// nothing in s can end it.
func pyDoc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			b.WriteString(EscapeCodePoint(r))
		}
	}
	return b.String()
}

// EscapeCodePoint is r as the \xHH, \uHHHH or \UHHHHHHHH escape that both
// a Python string literal and bash's $'...' read back as r.
func EscapeCodePoint(r rune) string {
	switch {
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	case r < 0x10000:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}
