// Package patches wires SGLang to the generated MMA kernel and proves it:
// a gated per-cache dispatcher beside the SIMT kernel with every reference
// rewired, a guarded entry at the top of the whole attention call, a guard
// before SGLang's own backend choice so that the gate takes effect on every
// release, a heads guard in the model so that a tensor-parallel rank's own
// query heads reach the kernel (not the 64 SGLang pads them to), the gate
// registered in SGLang's environ.py, the kernel module beside them (and in
// the distribution's RECORD when SGLang is installed); then the proof of
// all of it, and the exact undo.
//
// Data flows one way: a Checkout (the Python tree from resolve.Scan and, for
// an installed SGLang, its RECORD) is loaded into a resolve.Session with the
// names the recipe is about (session.go); want.go, route.go and heads.go
// work out the wanted state (the defining module, the whole call, the route,
// the gate, the model's padding of a rank's heads), caller.go on which GPUs
// SGLang's model backend calls the route's entries; Patch, Verify and Revert
// (patch.go, verify.go, revert.go) turn it into byte edits of marked blocks
// (blocks.go, render.go; pristine.go tells a block mlagen wrote from one
// edited by hand; kernel.go checks the kernel module) and a Report, the
// changes listed in the order they must be written (order.go); Run
// (workflow.go) first finishes an interrupted run from its journal, then
// writes the changes all or nothing through changeset and proves the result
// from disk.
// Nothing here knows the names it wires: they come from a Recipe
// (recipes/*.json); nothing here resolves Python names: resolve does.
package patches

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sync"

	"github.com/mlagen/mlagen/patches/resolve"
)

//go:embed recipes/*.json
var recipeFS embed.FS

// Recipe names everything that one wiring is about. The rewriter reads these
// fields and nothing else, so a second wiring (another GPU, another kernel) is
// a second JSON file, not a code change.
type Recipe struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Old is the function whose references are rewired; Dispatcher the name
	// of the function inserted right after it.
	Old        string `json:"old"`
	Dispatcher string `json:"dispatcher"`
	// Gate is the environment variable read on every call of the inserted
	// code, never at import.
	Gate string `json:"gate"`
	// SIMTModule is the usual file name of the defining module. It is only a
	// hint for messages: the module is found by what it defines.
	SIMTModule string `json:"simt_module"`
	// KernelModule is the file added beside the defining module.
	KernelModule string `json:"kernel_module"`
	// Marker tags every line mlagen inserts, so it can find and remove them.
	Marker string `json:"marker"`
	// KernelParams is the kernel's sparse_decode signature; the dispatcher
	// maps the old function's first positional parameters onto it, and passes
	// the first SupportsParams of them to supports().
	KernelParams   []string `json:"kernel_params"`
	SupportsParams int      `json:"supports_params"`
	// KernelAPI are the functions the dispatcher calls in the kernel module
	// (the whole call's two are added when it is wired).
	KernelAPI []string `json:"kernel_api"`
	// KernelContract are the names the kernel module contract promises
	// (reported when missing); KernelHeader is the first line of every
	// module mlagen emit writes.
	KernelContract []string `json:"kernel_contract"`
	KernelHeader   string   `json:"kernel_header"`
	// WholeCall is the function around Old that SGLang calls once per layer.
	WholeCall WholeCall `json:"whole_call"`
	// Route describes SGLang's own backend choice above the whole call.
	Route Route `json:"route"`
	// Heads describes how SGLang's model pads a rank's query heads before
	// the attention call; empty: the rewriter leaves the model alone.
	Heads Heads `json:"heads"`
	// Environ*: where SGLang declares its switches (a file of this name with
	// a class EnvironClass whose fields are EnvironField(...) values, exported
	// as EnvironImport).
	EnvironFile string `json:"environ_file"`
	// EnvironPrefer breaks ties between several environ files: the one whose
	// path ends like this (SGLang's own) wins.
	EnvironPrefer string   `json:"environ_prefer"`
	EnvironClass  string   `json:"environ_class"`
	EnvironField  string   `json:"environ_field"`
	EnvironImport string   `json:"environ_import"`
	Truthy        []string `json:"truthy"`
	// Package is the top-level package the project installs ("sglang"):
	// module names are only right from the folder that holds it, so a root
	// that holds it elsewhere is refused (root.go). Empty: not checked.
	Package string `json:"package"`
	// SourceRoot is the directory a checkout keeps its packages under
	// ("python" in SGLang); dropped when naming a module outside packages.
	SourceRoot string `json:"source_root"`
	// DistInfo is the glob of the installed distribution's metadata
	// directory, beside the package ("sglang-*.dist-info"): its RECORD lists
	// the files pip uninstall removes.
	DistInfo string `json:"dist_info"`

	cfgOnce sync.Once
	cfg     *resolve.Config
}

// WholeCall is the guarded entry at the top of the whole attention call:
// with the gate set, Function's first positional parameters (which must be
// Params, by name and order: the kernel's whole-call contract) go to the
// kernel module's Decode when its Supports accepts them; otherwise the old
// body runs. Defers, asked with the same arguments by the route guard
// before SGLang's backend choice, says when the selection gives the call's
// shape to a peer: the guard then leaves the call to SGLang's choice.
// Required is how many of Params the kernel's whole-call entry points take
// without a default (the others default to None).
type WholeCall struct {
	Function string   `json:"function"`
	Params   []string `json:"params"`
	Required int      `json:"required"`
	Supports string   `json:"supports"`
	Decode   string   `json:"decode"`
	Defers   string   `json:"defers"`
}

// Route is what the recipe knows of SGLang's backend choice: a function
// that forwards to WholeCall.Function only in the branch of an if that tests
// a variable set from one of Choices is an entry; mlagen copies that branch
// under the gate right before the choice, where it runs unless
// WholeCall.Defers says the selection gives the call to a peer. EnvironmentReads are the
// identifiers that show a test (or the value it tests) reads the
// environment: a choice made from anything else is not one mlagen knows.
type Route struct {
	Choices          []Choice `json:"choices"`
	EnvironmentReads []string `json:"environment_reads"`
	// Platform says on which GPUs SGLang's model backend calls the entries.
	Platform Platform `json:"platform"`
}

// Platform is what the recipe knows of the test SGLang makes above the
// entries: a call of an entry in the branch of an if whose test spells one
// of Predicates (a name, an attribute or a function called, last in the
// test's dotted name) runs only on GPUs whose compute capability major is
// one of Majors; GPUs says which in words.
type Platform struct {
	Predicates []string `json:"predicates"`
	Majors     []int    `json:"majors"`
	GPUs       string   `json:"gpus"`
}

// Heads is what the recipe knows of the model code that sets how many
// query heads a rank's attention call gets under tensor parallelism: SGLang
// pads a rank's Local heads to FlashMLA's 64 before the call. It does so in
// one of two shapes, and mlagen edits each so that, with the gate set on the
// GPUs of Route.Platform.Majors, the call gets the rank's own heads:
//   - a method Method(self, ...) returning the count: a guard at the top of
//     its body returns self.Local;
//   - an assignment Padded = <expression of self.Local> in a method, followed
//     in the same block by `if self.Sink is None:` that sizes the rank's
//     attention sink from Padded on the layer's first call: a block right
//     after the assignment sets Padded to self.Local on that first call, and
//     afterwards to the width the sink has (the sink must match the query).
//
// A third shape mlagen does not change, only lists: a method that calls
// self.SinkHelper() with no width takes the rank's sink at the padded width
// and pads its query to match on its own (SGLang's DSpark draft model, to a
// module constant), so its calls reach the kernel with padded heads.
type Heads struct {
	Local      string `json:"local"`
	Method     string `json:"method"`
	Padded     string `json:"padded"`
	Sink       string `json:"sink"`
	SinkHelper string `json:"sink_helper"`
	// Model is the end of the path of the model file that sets a rank's
	// heads (srt/models/deepseek_v4.py in every release): where that file
	// counts them (spells Local) but has none of the shapes above, the
	// route notes that no heads guard was put.
	Model string `json:"model,omitempty"`
}

// Choice is one environment variable SGLang has chosen the backend by.
type Choice struct {
	Variable string `json:"variable"`
	Releases string `json:"releases"`
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultRecipe is the recipe `mlagen patch` uses: sm120_mma.
func DefaultRecipe() (*Recipe, error) { return LoadRecipe("sm120_mma") }

// LoadRecipe reads an embedded recipe by name and checks that its names are
// usable as Python identifiers, so a typo fails here rather than as a broken
// checkout.
func LoadRecipe(name string) (*Recipe, error) {
	data, err := recipeFS.ReadFile("recipes/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("recipe %q: %w", name, err)
	}
	var r Recipe
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("recipe %q: %w", name, err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("recipe %q: %w", name, err)
	}
	return &r, nil
}

func (r *Recipe) check() error {
	idents := []struct{ what, v string }{
		{"old", r.Old}, {"dispatcher", r.Dispatcher}, {"gate", r.Gate}, {"package", r.Package},
		{"environ_class", r.EnvironClass}, {"environ_field", r.EnvironField}, {"environ_import", r.EnvironImport},
		{"whole_call.function", r.WholeCall.Function}, {"whole_call.supports", r.WholeCall.Supports}, {"whole_call.decode", r.WholeCall.Decode}, {"whole_call.defers", r.WholeCall.Defers},
	}
	for _, p := range append(append(append([]string(nil), r.KernelParams...), r.WholeCall.Params...), r.KernelAPI...) {
		idents = append(idents, struct{ what, v string }{"a parameter or kernel function", p})
	}
	for _, c := range r.Route.Choices {
		idents = append(idents, struct{ what, v string }{"route.choices.variable", c.Variable})
	}
	for _, p := range r.Route.Platform.Predicates {
		idents = append(idents, struct{ what, v string }{"route.platform.predicates", p})
	}
	if h := r.Heads; h != (Heads{}) {
		idents = append(idents, struct{ what, v string }{"heads.local", h.Local}, struct{ what, v string }{"heads.method", h.Method},
			struct{ what, v string }{"heads.padded", h.Padded}, struct{ what, v string }{"heads.sink", h.Sink})
		if h.SinkHelper != "" { // optional: only listed, never edited
			idents = append(idents, struct{ what, v string }{"heads.sink_helper", h.SinkHelper})
		}
	}
	for _, f := range idents {
		if !identRE.MatchString(f.v) {
			return fmt.Errorf("%s %q is not a Python identifier", f.what, f.v)
		}
	}
	if r.Old == r.Dispatcher || r.Old == r.WholeCall.Function || r.Dispatcher == r.WholeCall.Function {
		return fmt.Errorf("old, dispatcher and whole_call.function must differ")
	}
	if len(r.KernelParams) == 0 || r.SupportsParams < 0 || r.SupportsParams > len(r.KernelParams) {
		return fmt.Errorf("kernel_params/supports_params inconsistent")
	}
	if len(r.WholeCall.Params) == 0 || len(r.Route.Choices) == 0 {
		return fmt.Errorf("whole_call.params and route.choices are required")
	}
	if r.WholeCall.Required <= 0 || r.WholeCall.Required > len(r.WholeCall.Params) {
		return fmt.Errorf("whole_call.required must be 1 to %d (whole_call.params)", len(r.WholeCall.Params))
	}
	if pf := r.Route.Platform; len(pf.Predicates) == 0 || len(pf.Majors) == 0 || pf.GPUs == "" {
		return fmt.Errorf("route.platform needs predicates, majors and gpus")
	}
	if r.Marker == "" || r.KernelModule == "" || r.DistInfo == "" {
		return fmt.Errorf("marker, kernel_module and dist_info are required")
	}
	if _, err := path.Match(r.DistInfo, ""); err != nil {
		return fmt.Errorf("dist_info %q: %w", r.DistInfo, err)
	}
	return nil
}

// headsFile reports whether a file may set the heads of a rank's attention
// call (Heads): it spells the local count and the method, the padded count
// or the sink helper.
func (r *Recipe) headsFile(data []byte) bool {
	h := r.Heads
	return h.Local != "" && bytes.Contains(data, []byte(h.Local)) &&
		(bytes.Contains(data, []byte(h.Method)) || bytes.Contains(data, []byte(h.Padded)) ||
			h.SinkHelper != "" && bytes.Contains(data, []byte(h.SinkHelper)))
}

// config is what the resolver is asked about for this recipe: the three
// functions' names; mlagen's own files and blocks; SGLang's environ.py, the
// kernel module and every file that names the whole call read whole (their
// every statement is inspected: the class, the kernel's functions, the
// backend choice), and the model files that pad a rank's heads.
func (r *Recipe) config() *resolve.Config {
	r.cfgOnce.Do(func() {
		ref := regexp.MustCompile(`^\s*(?:[A-Za-z_][A-Za-z0-9_]*\.)*` + regexp.QuoteMeta(r.Old) + `\s*$`)
		envClass := []byte("class " + r.EnvironClass)
		whole := []byte(r.WholeCall.Function)
		r.cfg = &resolve.Config{
			Names: []string{r.Old, r.Dispatcher, r.WholeCall.Function},
			Always: func(p string, data []byte) bool {
				switch path.Base(p) {
				case r.KernelModule:
					return true
				case r.EnvironFile:
					if bytes.Contains(data, envClass) {
						return true
					}
				}
				return bytes.Contains(data, []byte(r.Marker)) || r.headsFile(data)
			},
			Whole: func(p string, data []byte) bool {
				b := path.Base(p)
				return b == r.EnvironFile || b == r.KernelModule || bytes.Contains(data, whole) || r.headsFile(data)
			},
			Keep:      []string{r.Marker},
			Ignore:    func(_ string, src []byte) []resolve.Range { return blockRanges(findBlocks(src, r), len(src)) },
			StringRef: ref,
		}
	})
	return r.cfg
}
