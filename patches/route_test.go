package patches

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// routeEntry is fuzzEntry with its triton branch replaced by branch (the
// branch's lines, indented as the body of the if) and pre put before the
// choice.
func routeEntry(pre, branch string) string {
	return strings.Replace(strings.Replace(fuzzEntry,
		"        return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)\n", branch, 1),
		"    q = kwargs[\"q\"]\n", "    q = kwargs[\"q\"]\n"+pre, 1)
}

// The route guard asks the kernel module's defers_full first, with the
// arguments of the branch's call exactly as written there, and runs the
// branch (one level deeper) only when it says no: a call whose shape the
// selection gives to a peer goes on to SGLang's backend choice. Without
// the test the guard would send such a call into the whole call, which the
// previous mlagen did.
func TestRouteGuardAsksDefersFirst(t *testing.T) {
	for _, c := range []struct{ name, branch, test string }{
		{"upstream", "        return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)\n",
			"        if not mma_kernel.defers_full(q, None, None, None, None, 512, None):\n" +
				"            return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)\n"},
		{"keywords", "        return flash_mla_sparse_decode_triton(\n            q=q,  # by keyword\n            k_cache=kwargs.get(\"k_cache\"), indices=None, topk_length=None,\n            attn_sink=None, head_dim_v=512, softmax_scale=None,\n        )\n",
			"        if not mma_kernel.defers_full(\n" +
				"            q=q,\n            k_cache=kwargs.get(\"k_cache\"),\n            indices=None,\n            topk_length=None,\n" +
				"            attn_sink=None,\n            head_dim_v=512,\n            softmax_scale=None,\n        ):\n" +
				"            return flash_mla_sparse_decode_triton(\n                q=q,  # by keyword\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			files := upstreamFiles()
			files["pkg/flash_mla_sm120.py"] = routeEntry("", c.branch)
			writeFiles(t, root, files)
			if rep := runOK(t, patchJob(t, root)); !rep.OK() {
				t.Fatalf("patch:\n%s", rep)
			}
			got := readFile(t, filepath.Join(root, "pkg/flash_mla_sm120.py"))
			want := "    if envs.SGLANG_SM120_MMA_FLASHMLA.get():\n        from . import flash_mla_sm120_mma as mma_kernel\n\n" + c.test
			if !strings.Contains(got, want) {
				t.Errorf("the route guard does not ask defers_full first; want\n%s\nin\n%s", want, got)
			}
			if rep := runOK(t, patchJob(t, root)); !rep.NothingToDo {
				t.Errorf("patching twice changed more:\n%s", rep)
			}
			runOK(t, revertJob(t, root))
			if after := snapshot(t, root); !equalMaps(files, after) {
				t.Errorf("revert: %v", diffMaps(files, after))
			}
		})
	}
}

// An entry point in another package than the kernel module imports it by
// the package's dotted name.
func TestRouteGuardImportsKernelFromElsewhere(t *testing.T) {
	root := t.TempDir()
	files := upstreamFiles()
	files["api/__init__.py"] = ""
	files["api/entry.py"] = files["pkg/flash_mla_sm120.py"]
	delete(files, "pkg/flash_mla_sm120.py")
	writeFiles(t, root, files)
	if rep := runOK(t, patchJob(t, root)); !rep.OK() {
		t.Fatalf("patch:\n%s", rep)
	}
	if got := readFile(t, filepath.Join(root, "api/entry.py")); !strings.Contains(got, "        from pkg import flash_mla_sm120_mma as mma_kernel\n") {
		t.Errorf("the route guard in api/entry.py does not import the kernel module from pkg:\n%s", got)
	}
	runOK(t, revertJob(t, root))
	if after := snapshot(t, root); !equalMaps(files, after) {
		t.Errorf("revert: %v", diffMaps(files, after))
	}
}

// What the route guard cannot copy safely is refused (nothing written),
// with the reason and "wire it by hand".
func TestRouteGuardRefusals(t *testing.T) {
	call := func(args string) string {
		return "        return flash_mla_sparse_decode_triton(" + args + ")\n"
	}
	for _, c := range []struct{ name, pre, branch, want string }{
		{"splat", "", call("*kwargs[\"args\"]"), "with *kwargs[\"args\"]: mlagen cannot tell which arguments defers_full would get"},
		{"dict splat", "", call("**kwargs"), "with **kwargs: mlagen cannot tell"},
		{"bound in the branch", "", "        scale = kwargs.get(\"softmax_scale\")\n" + call("q, None, None, None, None, 512, scale"),
			"names scale, which the branch binds (line 11)"},
		{"imported in the branch", "", "        from math import e as scale\n\n" + call("q, None, None, None, None, 512, scale"),
			"names scale, which the branch binds (line 11)"},
		{"multi-line string", "", "        note = \"\"\"two\nlines\"\"\"\n" + call("q, None, None, None, None, 512, None"),
			"holds a string that spans lines (line 11)"},
		{"a call", "", call("q, None, None, None, None, 512, scale_of(q)"), "is not a plain name or value (it holds a call)"},
		{"an assignment expression", "", call("q, None, None, None, None, 512, (s := 1.0)"), "it holds a named expression"},
		{"an argument over lines", "", call("q, None, None, None, None, 512, kwargs[\n            \"scale\"\n        ]"), "spans lines"},
		{"too few", "", call("q, None, None, None, None, 512"), "does not pass softmax_scale, which defers_full takes"},
		{"too many", "", call("q, None, None, None, None, 512, None, None, None, None, None"), "more arguments than defers_full takes"},
		{"a keyword it does not take", "", call("q, None, None, None, None, 512, None, out=None"), "a keyword argument out that defers_full does not take"},
		{"mma_kernel", "    mma_kernel = None\n", call("q, None, None, None, None, 512, None"), "uses the name mma_kernel, which the route guard binds"},
		{"envs", "    envs = None\n", call("q, None, None, None, None, 512, None"), "uses the name envs, which the route guard binds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			files := upstreamFiles()
			files["pkg/flash_mla_sm120.py"] = routeEntry(c.pre, c.branch)
			writeFiles(t, root, files)
			_, err := Run(patchJob(t, root))
			var p *Problem
			if !errors.As(err, &p) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "wire it by hand") {
				t.Errorf("want a refusal saying %q and to wire it by hand, got %v", c.want, err)

			}
			if after := snapshot(t, root); !equalMaps(files, after) {
				t.Errorf("a refused patch wrote: %v", diffMaps(files, after))
			}
		})
	}
}

// A route guard as mlagen writes it now is never taken for the previous
// mlagen's, and the previous one always is.
func TestPreviousRoute(t *testing.T) {
	rec := mustRecipe(t)
	co := NewCheckout(map[string][]byte{"pkg/__init__.py": nil, "pkg/flash_mla_sm120_triton.py": []byte(fuzzModule),
		"pkg/flash_mla_sm120.py": []byte(fuzzEntry), "sglang/srt/environ.py": []byte(fuzzEnviron)})
	res, err := Patch(co, Options{Recipe: rec, Kernel: []byte(fakeKernel)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Changes {
		for _, b := range findBlocks(c.After, rec) {
			if b.part == partRoute && previousRoute(c.After, b, rec) {
				t.Errorf("%s: the route guard mlagen writes now counts as the previous mlagen's:\n%s", c.Path, c.After[b.open:b.close])
			}
		}
	}
	old := "    # >>> mlagen:sm120_mma route: added by `mlagen patch`, removed by `mlagen patch --revert`\n" +
		"    from sglang.srt.environ import envs\n\n    if envs.SGLANG_SM120_MMA_FLASHMLA.get():\n" +
		"        return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)\n    # <<< mlagen:sm120_mma route\n"
	bs := findBlocks([]byte(old), rec)
	if len(bs) != 1 || !previousRoute([]byte(old), bs[0], rec) {
		t.Errorf("the previous mlagen's route guard is not recognised: %+v", bs)
	}
}
