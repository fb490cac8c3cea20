package patches

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genTree writes a synthetic checkout of n Python files under root, of which
// importers reference the old function (in rotating styles: import, alias,
// module attribute, value), and returns how many references it planted.
// The other files are ordinary code of a realistic size (~3 KB) that the
// prefilter must skip.
func genTree(t testing.TB, root string, n, importers int) int {
	t.Helper()
	write := func(rel, body string) {
		full := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const pkg = "python/sglang/srt/layers/attention/"
	write("python/sglang/__init__.py", "")
	write("python/sglang/srt/__init__.py", "")
	write("python/sglang/srt/layers/__init__.py", "")
	write(pkg+"__init__.py", "")
	write("python/sglang/srt/environ.py", "class EnvBool:\n    def __init__(self, default):\n        self.default = default\n\n\nclass Envs:\n    SGLANG_X = EnvBool(False)\n\n\nenvs = Envs()\n")
	write(pkg+"flash_mla_sm120_triton.py", `from typing import Optional, Tuple

import torch


def _run_triton_sparse_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    indices: torch.Tensor,
    topk_length: Optional[torch.Tensor],
    softmax_scale: float,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return q, q


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
    out, lse = _run_triton_sparse_decode(q, k_cache, indices, topk_length, softmax_scale)
    out2, lse2 = _run_triton_sparse_decode(q, extra_k_cache, extra_indices, extra_topk_length, softmax_scale)
    return out, lse
`)
	write(pkg+"flash_mla_sm120.py", `from sglang.srt.environ import envs

_sm120_default_backend = envs.SGLANG_SM120_FLASHMLA_BACKEND.get()


def flash_mla_with_kvcache_sm120(**kwargs):
    q = kwargs["q"]
    if _sm120_default_backend == "flashinfer":
        return q, None

    if _sm120_default_backend == "triton":
        from sglang.srt.layers.attention.flash_mla_sm120_triton import (
            flash_mla_sparse_decode_triton,
        )

        return flash_mla_sparse_decode_triton(q, None, None, None, None, 512, None)
    return q, None
`)
	refs := 2
	filler := func(i int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "\"\"\"Module %d: ordinary code the prefilter skips.\"\"\"\n\nimport math\nimport torch\n\n", i)
		for f := 0; f < 12; f++ {
			fmt.Fprintf(&b, "\ndef helper_%d_%d(x, y=None, *, scale=1.0):\n    \"\"\"Scale x.\"\"\"\n    if y is None:\n        y = math.sqrt(scale)\n    total = 0\n    for i in range(10):\n        total += x * y + i\n    return torch.tensor(total)\n\n", i, f)
		}
		return b.String()
	}
	for i := 0; i < n-7; i++ {
		dir := fmt.Sprintf("python/sglang/srt/mod%02d/", i%50)
		body := filler(i)
		if i < importers {
			switch i % 4 {
			case 0:
				body = "from sglang.srt.layers.attention.flash_mla_sm120_triton import _run_triton_sparse_decode\n" + body +
					"\n\ndef use(q, kv, idx):\n    return _run_triton_sparse_decode(q, kv, idx, None, 1.0)\n"
				refs += 2
			case 1:
				body = "from sglang.srt.layers.attention.flash_mla_sm120_triton import (\n    _run_triton_sparse_decode as sparse,\n)\n" + body +
					"\n\ndef use(q, kv, idx):\n    return sparse(q, kv, idx, None, 1.0)\n"
				refs += 2
			case 2:
				body = "import sglang.srt.layers.attention.flash_mla_sm120_triton as fm\n" + body +
					"\n\ndef use(q, kv, idx):\n    return fm._run_triton_sparse_decode(q, kv, idx, None, 1.0)\n"
				refs++
			case 3:
				body = "import functools\n\nfrom sglang.srt.layers.attention import flash_mla_sm120_triton\n" + body +
					"\n\nIMPL = functools.partial(flash_mla_sm120_triton._run_triton_sparse_decode, softmax_scale=1.0)\n"
				refs++
			}
		}
		write(fmt.Sprintf("%smodule_%04d.py", dir, i), body)
	}
	return refs
}

func TestGeneratedTreeFullyWired(t *testing.T) {
	root := t.TempDir()
	want := genTree(t, root, 500, 40)
	co, err := ScanCheckout(root, mustRecipe(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Patch(co, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Report.Wired); got != want || !res.Report.OK() {
		t.Fatalf("wired %d references (want %d), ok=%v:\n%s", got, want, res.Report.OK(), res.Report)
	}
}

// BenchmarkPatchDryRun5000 is the speed bar: a full patch with its
// proof, dry run (scan from disk, parse, resolve, plan, re-parse and prove,
// unified diff), on 5,000 files of which 300 reference the function.
func BenchmarkPatchDryRun5000(b *testing.B) {
	root := b.TempDir()
	want := genTree(b, root, 5000, 300)
	rec := mustRecipe(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		co, err := ScanCheckout(root, rec)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Patch(co, Options{Recipe: rec, Kernel: []byte(fakeKernel)})
		if err != nil {
			b.Fatal(err)
		}
		_ = unifiedDiff(res.Changes)
		if len(res.Report.Wired) != want || !res.Report.OK() {
			b.Fatalf("wired %d, want %d", len(res.Report.Wired), want)
		}
	}
}
