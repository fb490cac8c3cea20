package patches

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mlagen/mlagen/patches/resolve"
)

// fuzzModule is the defining module used when the fuzzed input is not it:
// the old function and the whole call around it, upstream-shaped.
const fuzzModule = `def _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale):
    return q, None


def flash_mla_sparse_decode_triton(
    q,
    k_cache,
    indices,
    topk_length,
    attn_sink,
    head_dim_v,
    softmax_scale,
    extra_k_cache=None,
    extra_indices=None,
    extra_topk_length=None,
):
    """Both caches."""
    return _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale)
`

// fuzzEntry is SGLang's sm_120 entry point in miniature: a backend chosen
// at import, the whole call reached in its triton branch only.
const fuzzEntry = `import os

from pkg.flash_mla_sm120_triton import flash_mla_sparse_decode_triton

_sm120_default_backend = "triton" if os.environ.get("SGLANG_SM120_TRITON_FLASHMLA", "1") == "1" else "torch"


def flash_mla_with_kvcache_sm120(**kwargs):
    q = kwargs["q"]
    if _sm120_default_backend == "triton":
        return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)
    return q, None
`

// fuzzReexport re-exports the old name, as forks do: a caller that imports
// it from here must be wired (and unwired) through it, also when a run is
// cut between the writes of the two files (issue 30, bugs 1 and 3).
const fuzzReexport = "from pkg.flash_mla_sm120_triton import _run_triton_sparse_decode\n\n__all__ = [\"_run_triton_sparse_decode\"]\n"

// fuzzViaReexport is a caller through the re-export, under an alias.
const fuzzViaReexport = "from pkg.api import _run_triton_sparse_decode as rt\n\n\ndef f(q):\n    return rt(q, None, None, None, 1.0)\n"

var (
	definesOld   = regexp.MustCompile(`(?m)^(async )?def _run_triton_sparse_decode\b`)
	callsWhole   = regexp.MustCompile(`flash_mla_sparse_decode_triton`)
	declaresEnvs = regexp.MustCompile(`(?m)^class Envs\b`)
)

// fuzzEnviron is SGLang's environ.py in miniature, for the gate.
const fuzzEnviron = "class EnvBool:\n    def __init__(self, default):\n        self.default = default\n\n\nclass Envs:\n    SGLANG_X = EnvBool(False)\n"

// fuzzTree puts the input where it exercises the most code: as SGLang's
// environ.py when it declares class Envs (the gate is registered there), as
// the defining module when it defines the function, as the entry module
// when it names the whole call (the route), else as a caller beside fixed
// ones.
func fuzzTree(src []byte) map[string][]byte {
	files := map[string][]byte{"pkg/__init__.py": nil, "sglang/srt/environ.py": []byte(fuzzEnviron),
		"pkg/flash_mla_sm120_triton.py": []byte(fuzzModule), "pkg/flash_mla_sm120.py": []byte(fuzzEntry),
		"pkg/api.py": []byte(fuzzReexport)}
	switch {
	case declaresEnvs.Match(src) && !definesOld.Match(src):
		files["sglang/srt/environ.py"] = src
	case definesOld.Match(src):
		files["pkg/flash_mla_sm120_triton.py"] = src
	case callsWhole.Match(src):
		files["pkg/flash_mla_sm120.py"] = src
	default:
		files["pkg/caller.py"] = src
	}
	return files
}

// fuzzEntryKeywords is the entry point with the whole call's arguments
// read from the keywords in the call, over several lines.
const fuzzEntryKeywords = `import os

from pkg.flash_mla_sm120_triton import flash_mla_sparse_decode_triton

_sm120_default_backend = "triton" if os.environ.get("SGLANG_SM120_TRITON_FLASHMLA", "1") == "1" else "torch"


def flash_mla_with_kvcache_sm120(**kwargs):
    q = kwargs["q"]
    if _sm120_default_backend == "triton":
        out, lse = flash_mla_sparse_decode_triton(
            q,
            kwargs["k_cache"],
            kwargs["indices"],
            kwargs.get("topk_length"),
            attn_sink=kwargs.get("attn_sink"),
            head_dim_v=512,
            softmax_scale=kwargs.get("softmax_scale"),
        )
        return (out, lse)
    return q, None
`

// FuzzPatchRevert checks the rewriter's promises on any input that parses:
// right after patching nothing is left unwired (dispatcher, whole-call
// guard, route guards, each route guard asking defers_full before it runs
// the branch); patching a patched tree changes nothing; patching
// then reverting gives back the input byte for byte; every prefix of a
// patch's or a revert's writes (a run killed between two of them) still
// runs and is brought to a whole state by the next patch or revert; and a
// partial parse plans what a whole parse plans.
func FuzzPatchRevert(f *testing.F) {
	rec := mustRecipe(f)
	f.Add([]byte(fuzzModule))
	f.Add([]byte(fuzzEntry))
	f.Add([]byte(fuzzEntryKeywords))
	f.Add([]byte(strings.ReplaceAll(strings.ReplaceAll(fuzzEntryKeywords, "    ", "\t"), "\n", "\r\n")))
	f.Add([]byte(fuzzViaReexport))
	f.Fuzz(func(t *testing.T, src []byte) {
		files := fuzzTree(src)
		co := NewCheckout(files)
		opt := Options{Recipe: rec, Kernel: []byte(fakeKernel)}
		once, err := Patch(co, opt)
		if err != nil {
			var p *Problem
			if strings.HasPrefix(err.Error(), "proof after patching") {
				t.Fatalf("the patched tree does not prove: %v\ninput:\n%s", err, src)
			}
			if errors.As(err, &p) {
				t.Skip(p.Msg) // not a tree mlagen can patch (syntax error, ambiguity, unknown choice, ...)
			}
			t.Fatal(err)
		}
		if len(co.Tree.NonUTF8) > 0 {
			t.Skip("not UTF-8")
		}
		if len(once.Report.Unjudged) > 0 {
			t.Skip("the input refers to modules outside the tree: the proof cannot judge it")
		}
		if !once.Report.OK() {
			t.Fatalf("not wired right after patching:\n%s\ninput:\n%s", once.Report, src)
		}
		// Inserted lines use the file's line endings: a CRLF file stays CRLF.
		// A route guard never sends a call into the whole call without
		// asking defers_full first.
		for _, c := range once.Changes {
			if c.Before != nil && allCRLF(c.Before) && !allCRLF(c.After) {
				t.Fatalf("%s: CRLF file got other line endings:\n%q", c.Path, c.After)
			}
			for _, b := range findBlocks(c.After, rec) {
				if previousRoute(c.After, b, rec) {
					t.Fatalf("%s: a route guard without the defers_full test:\n%s", c.Path, c.After[b.open:b.close])
				}
			}
		}
		patched := co.with(once.Changes)
		samePlanWhole(t, co, opt, once, files, src)
		twice, err := Patch(patched, opt)
		if err != nil {
			t.Fatalf("patching a patched tree failed: %v\ninput:\n%s", err, src)
		}
		if len(twice.Changes) != 0 {
			t.Fatalf("patching twice changed more:\n%s\ninput:\n%s", unifiedDiff(twice.Changes), src)
		}
		back, err := Revert(patched, Options{Recipe: rec})
		if err != nil {
			t.Fatalf("revert failed: %v\ninput:\n%s", err, src)
		}
		// Every prefix of either run's writes (a kill -9 between two of
		// them) runs, and the next patch or revert reaches a whole state.
		prefixesRecover(t, rec, []byte(fakeKernel), co, once.Changes, patched, co)
		prefixesRecover(t, rec, []byte(fakeKernel), patched, back.Changes, patched, co)
		restored := patched.with(back.Changes)
		if len(restored.Tree.Files) != len(co.Tree.Files) {
			t.Fatalf("revert left %d files, want %d", len(restored.Tree.Files), len(co.Tree.Files))
		}
		for p, f := range co.Tree.Files {
			g, ok := restored.Tree.Files[p]
			if !ok || !bytes.Equal(g.Data, f.Data) {
				t.Fatalf("revert did not restore %s:\n%s", p, unifiedDiff([]Change{{Path: p, Before: f.Data, After: g.Data}}))
			}
		}
	})
}

// samePlanWhole checks that parsing whole files plans and proves what the
// partial parse does, on input whose statements tree-sitter splits where
// the partial parser does (it reads some invalid lines, "from A<newline>
// import b", as one).
func samePlanWhole(t *testing.T, co *Checkout, opt Options, once *Result, files map[string][]byte, src []byte) {
	for _, data := range files {
		if ok, err := resolve.ChunkingExact(data); err != nil || !ok {
			return
		}
	}
	whole, err := Patch(co, Options{Recipe: opt.Recipe, Kernel: opt.Kernel, whole: true})
	var p *Problem
	if errors.As(err, &p) && strings.HasPrefix(p.Msg, "syntax error") {
		// Syntax errors are judged per statement: an error in a statement
		// that spells no name of interest cannot hide a reference and is not
		// seen by the partial parse, while a whole-file parse stops on it.
		return
	}
	if err != nil {
		t.Fatalf("whole-file parse failed where the partial one did not: %v", err)
	}
	if len(whole.Report.SyntaxIgnored) != len(once.Report.SyntaxIgnored) {
		return // a file the whole parse finds broken is skipped, the partial one reads its good statements
	}
	if got, want := unifiedDiff(once.Changes), unifiedDiff(whole.Changes); got != want {
		t.Fatalf("partial and whole parses plan different changes:\npartial:\n%s\nwhole:\n%s\ninput:\n%s", got, want, src)
	}
	if got, want := fmt.Sprint(once.Report.Wired, once.Report.Missed, once.Report.Review), fmt.Sprint(whole.Report.Wired, whole.Report.Missed, whole.Report.Review); got != want {
		t.Fatalf("partial and whole parses prove differently:\n%s\n%s\ninput:\n%s", got, want, src)
	}
}

// allCRLF is true when src has line endings and every one is CRLF.
func allCRLF(src []byte) bool {
	n := bytes.Count(src, []byte("\n"))
	return n > 0 && bytes.Count(src, []byte("\r\n")) == n
}
