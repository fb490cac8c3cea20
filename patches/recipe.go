// Package patches rewires an SGLang checkout so that every reference to the
// SIMT sparse-decode kernel goes through a gated dispatcher that may run the
// generated MMA kernel instead, proves that none was missed, and undoes it
// byte for byte.
//
// Data flows one way: Scan reads the tree (tree.go); a byte prefilter and a
// partial parse (chunks.go, flatten.go) turn the files that can matter into
// flat syntax trees; scope.go binds names within a file and resolve.go across
// files (imports, aliases, re-exports); refs.go lists every reference;
// Patch/Revert (patch.go, verify.go) turn them into byte edits and blocks
// (blocks.go, render.go); Verify re-parses the result; Apply (apply.go) writes
// it all-or-nothing. Nothing here knows the wiring's names: they come from a
// Recipe (recipes/*.json).
package patches

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
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
	// Gate is the environment variable read on every dispatcher call.
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
	// SourceRoot is the directory a checkout keeps its packages under
	// ("python" in SGLang); dropped when naming a module outside packages.
	SourceRoot string `json:"source_root"`

	refOnce sync.Once
	ref     *regexp.Regexp
}

// sharedCore is the longest common suffix of Old and Dispatcher
// ("_sparse_decode"): a file without it can spell neither.
func (r *Recipe) sharedCore() string {
	a, b := r.Old, r.Dispatcher
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	if n < 4 {
		return ""
	}
	return a[len(a)-n:]
}

// stringRef matches a string literal's content that names Old by dotted path
// ("pkg.mod._run_triton_sparse_decode"); compiled once per recipe.
func (r *Recipe) stringRef() *regexp.Regexp {
	r.refOnce.Do(func() {
		r.ref = regexp.MustCompile(`^\s*(?:[A-Za-z_][A-Za-z0-9_]*\.)*` + regexp.QuoteMeta(r.Old) + `\s*$`)
	})
	return r.ref
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
	for _, f := range []struct{ what, v string }{
		{"old", r.Old}, {"dispatcher", r.Dispatcher}, {"gate", r.Gate},
		{"environ_class", r.EnvironClass}, {"environ_field", r.EnvironField}, {"environ_import", r.EnvironImport},
	} {
		if !identRE.MatchString(f.v) {
			return nil, fmt.Errorf("recipe %q: %s %q is not a Python identifier", name, f.what, f.v)
		}
	}
	if r.Old == r.Dispatcher {
		return nil, fmt.Errorf("recipe %q: old and dispatcher are both %q", name, r.Old)
	}
	if len(r.KernelParams) == 0 || r.SupportsParams < 0 || r.SupportsParams > len(r.KernelParams) {
		return nil, fmt.Errorf("recipe %q: kernel_params/supports_params inconsistent", name)
	}
	if r.Marker == "" || r.KernelModule == "" {
		return nil, fmt.Errorf("recipe %q: marker and kernel_module are required", name)
	}
	return &r, nil
}
