package patches

import (
	"path/filepath"
	"strings"
	"testing"
)

// headsModel is SGLang 0.5.14's padding of a rank's heads, cut down: forward
// reads envs before it pads, as upstream does.
const headsModel = `import torch

from sglang.srt.environ import envs


class MQALayer:
    def forward(self, x, attn):
        overlap = envs.SGLANG_OPT_USE_MULTI_STREAM_OVERLAP.get()
        q_padded = None
        if self.tp_size > 1:
            padded_num_heads = 64 if self.n_local_heads <= 64 else self.n_heads
            q_padded = x.new_empty(x.shape[0], padded_num_heads, self.head_dim)
            if self._attn_sink_local is None:
                sink = self.attn_sink.new_zeros(padded_num_heads)
                self._attn_sink_local = sink
        return attn(q_padded, self._attn_sink_local, overlap)
`

const headsModelPath = "sglang/srt/models/deepseek_v4.py"

// patchedWithHeads is a tree with the model patched, on disk at root.
func patchedWithHeads(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	files := upstreamFiles()
	files[headsModelPath] = headsModel
	writeFiles(t, root, files)
	rep := runOK(t, patchJob(t, root))
	if !rep.OK() || len(rep.Route.Heads) != 1 || !rep.Route.Heads[0].Wired {
		t.Fatalf("patch did not wire the model's heads:\n%s", rep)
	}
	return root
}

// The heads guard is written last (after the route guards: a rank's own
// heads go only where the gate takes the call to the kernel) and taken out
// first (heads_roundtrip.txtar checks the bytes revert gives back).
func TestHeadsGuardWrittenLast(t *testing.T) {
	in := map[string][]byte{headsModelPath: []byte(headsModel)}
	for p, data := range upstreamFiles() {
		in[p] = []byte(data)
	}
	co := NewCheckout(in)
	res, err := Patch(co, Options{Recipe: mustRecipe(t), Kernel: []byte(fakeKernel)})
	if err != nil {
		t.Fatal(err)
	}
	if last := res.Changes[len(res.Changes)-1].Path; last != headsModelPath {
		t.Errorf("patch writes %s last, want the model %s", last, headsModelPath)
	}
	rev, err := Revert(co.with(res.Changes), Options{Recipe: mustRecipe(t)})
	if err != nil {
		t.Fatal(err)
	}
	if first := rev.Changes[0].Path; first != headsModelPath {
		t.Errorf("revert writes %s first, want the model %s", first, headsModelPath)
	}
}

// Verify holds the model to the heads guard: gone, edited, or left where
// SGLang's code no longer pads in a shape mlagen knows, each is a problem
// that names the model's line.
func TestVerifyHeadsGuard(t *testing.T) {
	guard := "            elif (\n                envs.SGLANG_SM120_MMA_FLASHMLA.get()\n                and torch.cuda.get_device_capability()[0] == 12\n            ):\n                padded_num_heads = self.n_local_heads\n"
	for _, c := range []struct {
		name, problem string
		edit          func(string) string
	}{
		{"gone", "MQALayer.forward has no mlagen heads block", func(s string) string {
			b := strings.Index(s, "            # >>> mlagen:sm120_mma heads")
			e := strings.Index(s, "# <<< mlagen:sm120_mma heads\n") + len("# <<< mlagen:sm120_mma heads\n")
			return s[:b] + s[e:]
		}},
		{"edited", "deepseek_v4.py:12: the mlagen heads guard block was edited by hand", func(s string) string {
			return strings.Replace(s, "[0] == 12\n", "[0] >= 12\n", 1)
		}},
		{"shape changed", "deepseek_v4.py:12: this mlagen heads guard is at no place that pads", func(s string) string {
			return strings.Replace(s, "new_zeros(padded_num_heads)", "new_zeros(64)", 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := patchedWithHeads(t)
			p := filepath.Join(root, headsModelPath)
			before := readFile(t, p)
			if !strings.Contains(before, guard) {
				t.Fatalf("the heads guard is not as this test expects:\n%s", before)
			}
			writeFiles(t, root, map[string]string{headsModelPath: c.edit(before)})
			rep, err := Check(root, Options{Recipe: mustRecipe(t)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), c.problem) {
				t.Errorf("verify does not report %q:\n%s", c.problem, rep)
			}
		})
	}
}

// A model function that binds envs or torch itself (a local import, an
// assignment, a parameter) makes the name local to the whole function: a
// guard at its top reading the module's would raise UnboundLocalError on
// every call, gate set or not. That place is left padded, and the route
// says why.
func TestHeadsGuardLocalName(t *testing.T) {
	for _, c := range []struct{ name, local string }{
		{"envs imported", "        from sglang.srt.environ import envs\n"},
		{"torch imported", "        import torch\n"},
		{"envs assigned", "        envs = None\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			const at = "        q_padded = None\n"
			if !strings.Contains(headsModel, at) {
				t.Fatal("the model is not as this test expects")
			}
			files := upstreamFiles()
			files[headsModelPath] = strings.Replace(headsModel, at, at+c.local, 1)
			root := t.TempDir()
			writeFiles(t, root, files)
			rep := runOK(t, patchJob(t, root))
			if len(rep.Route.Heads) != 1 {
				t.Fatalf("want one heads place, got %d:\n%s", len(rep.Route.Heads), rep)
			}
			if h := rep.Route.Heads[0]; h.Wired || !strings.Contains(h.How, "UnboundLocalError") {
				t.Errorf("a function that binds the guard's name itself got the guard, or no reason:\n%s", rep)
			}
			if got := readFile(t, filepath.Join(root, headsModelPath)); got != files[headsModelPath] {
				t.Errorf("the model was changed:\n%s", got)
			}
		})
	}
}

// A release that pads a rank's heads in a shape mlagen does not know (the
// padded count renamed here) gets no heads guard, and the route says so
// of the model file instead of listing nothing; the stock shape gets no
// such note.
func TestHeadsUnknownShapeNoted(t *testing.T) {
	const note = "deepseek_v4.py: no place that sets a rank's query heads in a shape mlagen knows"
	for _, c := range []struct {
		name  string
		model string
		noted bool
	}{
		{"stock", headsModel, false},
		{"renamed", strings.ReplaceAll(headsModel, "padded_num_heads", "num_heads_padded"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := upstreamFiles()
			files[headsModelPath] = c.model
			root := t.TempDir()
			writeFiles(t, root, files)
			rep := runOK(t, patchJob(t, root))
			notes := strings.Join(rep.Route.Notes, "\n")
			if strings.Contains(notes, note) != c.noted {
				t.Errorf("note %q: want %v, got the route:\n%s", note, c.noted, rep)
			}
			if c.noted && len(rep.Route.Heads) != 0 {
				t.Errorf("a heads place was found in the renamed model:\n%s", rep)
			}
		})
	}
}
