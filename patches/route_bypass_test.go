package patches

import (
	"maps"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// Backend choices a fork or the next release might make, over the tree of
// route_flashmla_backend.txtar (0.5.15 and later: FlashInfer by default).
// In each, a decode call with the gate set would never reach the guard
// mlagen can place, so the gate would do nothing; patch refuses, writes
// nothing, and says why. The tree as it is patches (the control).
func TestRouteBypassRefused(t *testing.T) {
	const entry = "python/sglang/kernels/ops/attention/flash_mla_sm120.py"
	const triton = "python/sglang/kernels/ops/attention/flash_mla_sm120_triton.py"
	const flashinfer = `    if _sm120_default_backend == "flashinfer":
        return _decode_flashinfer(
            q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale
        )
`
	const tritonIf = `    if _sm120_default_backend == "triton":
`
	for _, c := range []struct {
		name, file, old, new, want string
	}{
		{"control", entry, "", "", ""},
		{"control with a checkout's benchmark and test", "", "", "", ""},
		{"a statement between the choices", entry, flashinfer, flashinfer + "\n    q = q.contiguous()\n", "can return at line"},
		{"the first choice through a helper", entry, flashinfer,
			strings.Replace(flashinfer, `_sm120_default_backend == "flashinfer"`, "_use_flashinfer()", 1), "can return at line"},
		{"the Triton call after the choices, untested", entry, tritonIf, "    if True:\n", "inside an if statement"},
		{"the Triton call in a match", entry, tritonIf, "    match _sm120_default_backend:\n      case \"triton\":\n", "case clause"},
		{"the Triton branch in a helper", entry, "def flash_mla_with_kvcache_sm120(**kwargs):",
			"def _triton(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, extra_k_cache, extra_indices, extra_topk_length):\n" +
				"    return flash_mla_sparse_decode_triton(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, extra_k_cache, extra_indices, extra_topk_length)\n\n\n" +
				"def flash_mla_with_kvcache_sm120(**kwargs):", "is itself used at line"},
		{"the call after a return inside a with", entry, flashinfer + "\n" + tritonIf + "        from sglang.kernels.ops.attention.flash_mla_sm120_triton import (\n",
			"    with torch.no_grad():\n        if q.shape[0] > 64:\n            return None\n        from sglang.kernels.ops.attention.flash_mla_sm120_triton import (\n", "can return at line"},
		{"the Triton branch in a decorated public helper", entry, "def flash_mla_with_kvcache_sm120(**kwargs):",
			"@torch.compiler.disable\ndef triton_path(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, extra_k_cache, extra_indices, extra_topk_length):\n" +
				"    return flash_mla_sparse_decode_triton(q, k_cache, indices, topk_length, attn_sink, head_dim_v, softmax_scale, extra_k_cache, extra_indices, extra_topk_length)\n\n\n" +
				"def flash_mla_with_kvcache_sm120(**kwargs):", "is itself used at line"},
		{"a new whole call", triton, "def flash_mla_sparse_decode_triton(", "def flash_mla_sparse_decode_triton_mh(*a):\n    return _run_triton_sparse_decode(*a[:5])\n\n\ndef flash_mla_sparse_decode_triton(", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ar, err := txtar.ParseFile("testdata/golden/route_flashmla_backend.txtar")
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for _, f := range ar.Files {
				if p, ok := strings.CutPrefix(f.Name, "in/"); ok {
					files[p] = string(f.Data)
				}
			}
			if c.old != "" {
				if !strings.Contains(files[c.file], c.old) {
					t.Fatalf("the fixture's %s is not as this test expects", c.file)
				}
				files[c.file] = strings.Replace(files[c.file], c.old, c.new, 1)
			}
			if helper, ok := map[string]string{"the Triton branch in a helper": "_triton", "the Triton branch in a decorated public helper": "triton_path"}[c.name]; ok {
				// The choice now calls the helper; the whole call is
				// imported at module level for it.
				files[c.file] = strings.Replace(files[c.file], "        out, lse = flash_mla_sparse_decode_triton(", "        out, lse = "+helper+"(", 1)
				files[c.file] = strings.Replace(files[c.file], "import torch\n", "import torch\n\nfrom sglang.kernels.ops.attention.flash_mla_sm120_triton import flash_mla_sparse_decode_triton\n", 1)
			}
			if c.name == "a new whole call" {
				files[entry] = strings.Replace(files[entry], "flash_mla_sparse_decode_triton", "flash_mla_sparse_decode_triton_mh", -1)
				c.want = "no function in this tree calls flash_mla_sparse_decode_triton"
			}
			if c.name == "control with a checkout's benchmark and test" {
				// Outside the package or in a test, a direct call of the
				// whole call goes through its own guard: no route to prove.
				bench := "from sglang.kernels.ops.attention.flash_mla_sm120_triton import flash_mla_sparse_decode_triton\n\n\ndef bench(args, iters):\n    for _ in range(iters):\n        if args:\n            flash_mla_sparse_decode_triton(*args)\n"
				files["benchmark/kernels/bench_sparse_decode.py"] = bench
				files["test/srt/test_sparse_decode.py"] = strings.Replace(bench, "def bench", "def test_bench", 1)
			}
			root := t.TempDir()
			writeFiles(t, root, files)
			before := snapshot(t, root)
			_, err = Run(patchJob(t, root))
			if c.want == "" {
				if err != nil {
					t.Fatalf("the stock tree was refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want a refusal saying %q, got %v", c.want, err)
			}
			if !maps.Equal(before, snapshot(t, root)) {
				t.Error("a refused patch changed the tree")
			}
		})
	}
}
