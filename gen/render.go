package gen

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/mlagen/mlagen/templates"
)

// File names every emitted directory holds besides the variant modules.
const (
	SIMTName    = "simt_baseline"
	IndexFile   = "index.py"
	BundleFile  = "sparse_mla_mma.py" // the one file `mlagen patch` installs
	VariantsDoc = "VARIANTS.md"
	HarnessFile = "harness.py"
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
	Budgets   []Budget
	Selection Selection
	Files     []File
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

// Emit budgets the sweep and renders every file for the variants that fit.
// sel is the measured selection to write into the index (nil: the static
// rule). command is recorded in each file's header.
func Emit(s Sweep, command string, sel *Selection) (Emission, error) {
	if err := s.Validate(); err != nil {
		return Emission{}, err
	}
	e := Emission{Command: command, Budgets: CheckSweep(s)}
	fits := map[string]bool{}
	for _, b := range e.Fitting() {
		fits[b.Name] = true
	}
	if sel != nil {
		if sel.Target != s.Target.Name {
			return e, fmt.Errorf("selection is for %s, sweep is for %s", sel.Target, s.Target.Name)
		}
		if err := sel.Validate(fits); err != nil {
			return e, err
		}
		e.Selection = *sel
	} else {
		e.Selection = HeuristicSelection(s.Target, s.Heads, e.Budgets)
	}
	r, err := newRenderer()
	if err != nil {
		return e, err
	}
	for _, b := range e.Fitting() {
		data, err := r.render("variant.py.tmpl", map[string]any{"Command": command, "Target": s.Target, "V": b.Variant, "Budget": b, "WS": wsConstants})
		if err != nil {
			return e, fmt.Errorf("render %s: %w", b.Name, err)
		}
		e.Files = append(e.Files, File{b.Name + ".py", data})
	}
	configs := selectedBudgets(e)
	common := map[string]any{
		"Command": command, "Target": s.Target, "Sweep": s,
		"Budgets": e.Budgets, "Fitting": e.Fitting(), "Selection": e.Selection,
		"BlockT": simtBlockT, "NumWarps": simtNumWarps, "Calibrated": CalibratedWith,
		"Configs": configs, "SIMT": SIMTName, "WS": wsConstants,
		"HasWS":  slices.ContainsFunc(configs, func(b Budget) bool { return b.Variant.WarpSpec }),
		"HasMMA": slices.ContainsFunc(configs, func(b Budget) bool { return !b.Variant.WarpSpec }),
		// Cluster code goes only into modules that hold a wsc_* variant.
		"HasCluster": slices.ContainsFunc(configs, func(b Budget) bool { return b.Variant.ClusterMerge }),
	}
	for _, f := range []struct{ name, tmpl string }{
		{SIMTName + ".py", "simt.py.tmpl"},
		{IndexFile, "index.py.tmpl"},
		{BundleFile, "bundle.py.tmpl"},
		{VariantsDoc, "variants.md.tmpl"},
		{HarnessFile, "harness.py.tmpl"},
	} {
		data, err := r.render(f.tmpl, common)
		if err != nil {
			return e, fmt.Errorf("render %s: %w", f.name, err)
		}
		e.Files = append(e.Files, File{f.name, data})
	}
	slices.SortFunc(e.Files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return e, nil
}

// selectedBudgets are the distinct MMA variants the selection table uses, in
// sweep order: what the single-file bundle has to carry.
func selectedBudgets(e Emission) []Budget {
	used := map[string]bool{}
	for _, row := range e.Selection.Table {
		for _, n := range row {
			used[n] = true
		}
	}
	var out []Budget
	for _, b := range e.Fitting() {
		if used[b.Name] {
			out = append(out, b)
		}
	}
	return out
}

// wsConstants are the warp-specialised family's fixed settings, rendered
// into the modules from the same constants the budget model uses.
var wsConstants = map[string]int{"ProducerWarps": WSProducerWarps, "ProducerRegs": WSProducerRegs, "MaxRegs": WSMaxRegs, "DSMEMSplitK": DSMEMSplitK}

type renderer struct{ t *template.Template }

func newRenderer() (*renderer, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"commas": commas,
		"dict": func(kv ...any) (map[string]any, error) {
			if len(kv)%2 != 0 {
				return nil, fmt.Errorf("dict: odd number of arguments")
			}
			m := map[string]any{}
			for i := 0; i < len(kv); i += 2 {
				k, ok := kv[i].(string)
				if !ok {
					return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
				}
				m[k] = kv[i+1]
			}
			return m, nil
		},
		"join": strings.Join,
		"boundText": func(n int) string {
			if n == 0 {
				return "any"
			}
			return fmt.Sprintf("<= %d", n)
		},
		"pyList": func(ns []int) string {
			parts := make([]string, len(ns))
			for i, n := range ns {
				if n == 0 {
					parts[i] = "None"
				} else {
					parts[i] = fmt.Sprint(n)
				}
			}
			return "(" + strings.Join(parts, ", ") + ")"
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
