package sglanglog

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/fakesglang"
)

func TestParsePrefix(t *testing.T) {
	tests := []struct {
		line string
		want Record
	}{
		{"[2026-06-17 22:07:05 TP0] Load weight end.", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 5, 0, time.UTC), Rank: "TP0", Text: "Load weight end.", Prefixed: true}},
		{"[2026-06-17 22:07:39] The server is fired up and ready to roll!", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 0, time.UTC), Text: "The server is fired up and ready to roll!", Prefixed: true}},
		{"[2026-06-17 22:07:39 DP1 TP3] x", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 0, time.UTC), Rank: "DP1 TP3", Text: "x", Prefixed: true}},
		// SGLANG_LOG_MS=1, and a scheduler's tags with attention context
		// and MoE data parallelism (0.5.23).
		{"[2026-06-17 22:07:05.123 TP0] Load weight end.", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 5, 123e6, time.UTC), Rank: "TP0", Text: "Load weight end.", Prefixed: true}},
		{"[2026-06-17 22:07:39 DP0 ATTN_CP1 MOE_DP0 TP3 EP3] x", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 0, time.UTC), Rank: "DP0 ATTN_CP1 MOE_DP0 TP3 EP3", Text: "x", Prefixed: true}},
		{"[2026-06-17 22:07:39.5] x", Record{Stamp: time.Date(2026, 6, 17, 22, 7, 39, 5e8, time.UTC), Text: "x", Prefixed: true}},
		{`  File "x.py", line 1`, Record{Text: `  File "x.py", line 1`}},
		{"[not a stamp] x", Record{Text: "[not a stamp] x"}},
		{"Capturing batches (bs=1):  10%|#\rCapturing batches (bs=64): 100%|###", Record{Text: "Capturing batches (bs=64): 100%|###"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Parse(tt.line)); diff != "" {
			t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestMatchPhaseOnCleanStart(t *testing.T) {
	var got []Phase
	for _, l := range fakesglang.Lines(fakesglang.CleanStart()) {
		if p, ok := MatchPhase(Parse(l).Text); ok {
			got = append(got, p)
		}
	}
	want := []Phase{
		{Kind: LoadBegin, AvailGB: 93.71},
		{Kind: LoadBegin, AvailGB: 93.71},
		{Kind: LoadEnd, ElapsedS: 33.84, AvailGB: 52.30, UsedGB: 41.41},
		{Kind: LoadEnd, ElapsedS: 33.90, AvailGB: 52.30, UsedGB: 41.41},
		{Kind: CaptureBegin, AvailGB: 37.09},
		{Kind: CaptureBegin, AvailGB: 37.09},
		{Kind: CaptureBatches, Batches: "1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64"},
		{Kind: CaptureEnd, ElapsedS: 26.12, UsedGB: 1.85, AvailGB: 35.24},
		{Kind: Ready},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phases mismatch (-want +got):\n%s", diff)
	}
}

func TestMatchPhasePiecewise(t *testing.T) {
	p, ok := MatchPhase("Capture piecewise CUDA graph end. Time elapsed: 5.21 s. mem usage=0.42 GB. avail mem=30.10 GB.")
	if !ok || p.Kind != PiecewiseEnd || p.ElapsedS != 5.21 || p.AvailGB != 30.10 {
		t.Errorf("piecewise end: got %+v, %v", p, ok)
	}
	p, ok = MatchPhase("Capture piecewise CUDA graph begin. avail mem=35.00 GB")
	if !ok || p.Kind != PiecewiseBegin {
		t.Errorf("piecewise begin: got %+v, %v", p, ok)
	}
	if _, ok := MatchPhase("Capture cuda graph failed: CUDA out of memory"); ok {
		t.Errorf("a capture failure must not read as a phase")
	}
}

// The releases with DeepSeek-V4 name each capture; the batch list is on the
// begin line (0.5.14, 0.5.16) or the end line (0.5.23). The draft model's
// captures, after the target's, are not phases.
func TestMatchPhaseNamedCaptures(t *testing.T) {
	tests := []struct {
		line string
		want Phase
		ok   bool
	}{
		{"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4], avail mem=37.09 GB", Phase{Kind: CaptureBegin, AvailGB: 37.09, Batches: "1, 2, 4"}, true},
		{"Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=37.09 GB", Phase{Kind: CaptureBegin, AvailGB: 37.09}, true},
		{"Capture target verify CUDA graph end. bs=[1, 2], elapsed=26.12 s, mem usage=1.85 GB, avail mem=35.24 GB.", Phase{Kind: CaptureEnd, ElapsedS: 26.12, UsedGB: 1.85, AvailGB: 35.24, Batches: "1, 2"}, true},
		{"Capture target prefill CUDA graph begin. backend=piecewise, num_tokens=[4, 8], avail mem=37.20 GB", Phase{Kind: PiecewiseBegin, AvailGB: 37.20}, true},
		{"Capture target prefill CUDA graph end. elapsed=0.42 s, mem usage=0.11 GB, avail mem=37.09 GB.", Phase{Kind: PiecewiseEnd, ElapsedS: 0.42, UsedGB: 0.11, AvailGB: 37.09}, true},
		{"Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=30.00 GB", Phase{}, false},
		{"Capture draft prefill CUDA graph end. elapsed=0.42 s, mem usage=0.11 GB, avail mem=37.09 GB.", Phase{}, false},
	}
	for _, tt := range tests {
		got, ok := MatchPhase(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("MatchPhase(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func feedAll(d *Detector, lines []string) []*Failure {
	var out []*Failure
	for _, l := range lines {
		if f := d.Feed(l); f != nil {
			out = append(out, f)
		}
	}
	if f := d.Flush(); f != nil {
		out = append(out, f)
	}
	return out
}

// Every signature of DESIGN.md, in the text it is met in, is exactly one
// failure of its own kind, and the normal start around it is none.
func TestEachSignatureIsOneFailure(t *testing.T) {
	for _, kind := range fakesglang.FailureKinds() {
		t.Run(kind, func(t *testing.T) {
			lines := fakesglang.Lines(fakesglang.FailingStart(kind))
			got := feedAll(&Detector{}, lines)
			wantN := 1
			if kind == "oom" {
				wantN = 2 // the OOM traceback, then the launcher's SIGQUIT line
			}
			if len(got) != wantN {
				for _, f := range got {
					t.Logf("failure %s at %d: %q", f.Kind, f.Line, f.Lines)
				}
				t.Fatalf("got %d failures, want %d", len(got), wantN)
			}
			f := got[0]
			if f.Kind != kind {
				t.Errorf("kind = %q, want %q", f.Kind, kind)
			}
			first := fakesglang.FailureText(kind)[0]
			if f.Lines[0] != first && !strings.Contains(first, "terminate called") {
				t.Errorf("failure starts at %q, want %q", f.Lines[0], first)
			}
			if len(f.Context) != 20 && f.Line > 20 {
				t.Errorf("context has %d lines, want 20", len(f.Context))
			}
			if f.Line-1 < 20 && len(f.Context) != f.Line-1 {
				t.Errorf("context has %d lines, want all %d before line %d", len(f.Context), f.Line-1, f.Line)
			}
		})
	}
}

func TestChainedTracebackSummaryIsOutermost(t *testing.T) {
	got := feedAll(&Detector{}, fakesglang.FailureText("compilation"))
	if len(got) != 1 {
		t.Fatalf("got %d failures, want 1 (a chained traceback is one failure)", len(got))
	}
	if want := "RuntimeError: Triton kernel _mma_sparse_decode failed to compile"; got[0].Summary != want {
		t.Errorf("summary = %q, want %q", got[0].Summary, want)
	}
	if n, want := len(got[0].Lines), len(fakesglang.FailureText("compilation")); n != want {
		t.Errorf("failure has %d lines, want all %d", n, want)
	}
}

// The summary is the exception line also for a class named by its module
// whose name says nothing of an error: Triton's shared-memory refusal.
func TestSummaryOfAQualifiedException(t *testing.T) {
	got := feedAll(&Detector{}, []string{
		`[2026-06-17 22:07:07 TP0] Scheduler hit an exception: Traceback (most recent call last):`,
		`  File "/usr/lib/python3/dist-packages/triton/compiler/compiler.py", line 300, in compile`,
		`    raise OutOfResources(self.shared, max_shared, "shared memory")`,
		`triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 233472, Hardware limit: 232448. Reducing block sizes or ` + "`num_stages`" + ` may help.`,
	})
	if len(got) != 1 || !strings.HasPrefix(got[0].Summary, "triton.runtime.errors.OutOfResources: out of resource: shared memory") {
		t.Fatalf("got %+v; want one failure summed up by the OutOfResources line", got)
	}
}

// Four ranks crashing one after the other are four failures, prefixed or
// not, and the launcher's SIGQUIT is a fifth.
func TestSeveralCrashesAreCountedApart(t *testing.T) {
	var lines []string
	for _, rank := range []string{"TP0", "TP1", "TP2", "TP3"} {
		for _, l := range fakesglang.FailureText("oom")[:6] {
			lines = append(lines, strings.Replace(l, "TP0", rank, 1))
		}
	}
	lines = append(lines, fakesglang.FailureText("sigquit")...)
	got := feedAll(&Detector{}, lines)
	var kinds []string
	for _, f := range got {
		kinds = append(kinds, f.Kind+"/"+f.Rank)
	}
	if diff := cmp.Diff([]string{"oom/TP0", "oom/TP1", "oom/TP2", "oom/TP3", "sigquit/"}, kinds); diff != "" {
		t.Errorf("failures mismatch (-want +got):\n%s", diff)
	}

	// The same tracebacks written raw to stderr, without prefixes.
	var raw []string
	for i := 0; i < 3; i++ {
		raw = append(raw, "Traceback (most recent call last):", `  File "x.py", line 1, in <module>`, "ValueError: boom")
	}
	if n := len(feedAll(&Detector{}, raw)); n != 3 {
		t.Errorf("three raw tracebacks gave %d failures, want 3", n)
	}
}

func TestCleanStartHasNoFailure(t *testing.T) {
	if got := feedAll(&Detector{}, fakesglang.Lines(fakesglang.CleanStart())); len(got) != 0 {
		t.Errorf("clean start gave failures: %+v", got)
	}
}

func TestMaxLinesClosesRunawayIncident(t *testing.T) {
	d := &Detector{MaxLines: 5}
	lines := []string{"Traceback (most recent call last):"}
	for i := 0; i < 20; i++ {
		lines = append(lines, "  more")
	}
	got := feedAll(d, lines)
	if len(got) != 1 || len(got[0].Lines) != 5 {
		t.Fatalf("got %d failures (first %d lines), want 1 of 5 lines", len(got), len(got[0].Lines))
	}
}

// Lines that SGLang logs on healthy starts and that mention failure words
// in prose. The first two are SGLang's context-length override warning, as
// it logs it (a user's --context-length, a draft model's); the request log
// quotes a prompt; the kernel module's fallback quotes the reason it
// declined. None of them is a failure.
var proseLines = []string{
	"[2026-06-17 22:06:31] Warning: User-specified context_length (1048576) is greater than the derived context_length (163840). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config.",
	"[2026-06-17 22:06:31] Warning: Target model's context_length (8192) is greater than the derived context_length (2048). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config.",
	`[2026-06-17 22:07:40] Receive: obj=GenerateReqInput(text='Why does my job print "RuntimeError: CUDA error: an illegal memory access was encountered" and then Killed?', sampling_params={'max_new_tokens': 64})`,
	"[2026-06-17 22:07:40] Finish: obj=GenerateReqInput(text='Traceback (most recent call last):', rid='a1'), out={'text': ' Segmentation fault'}",
	"[2026-06-17 22:07:08 TP0] mlagen: sparse-MLA decode not on the MMA kernel (whole call): supports_full() refused: the kernel failed to build for this shape (triton.compiler.errors.CompilationError: at 12:8); SGLang's kernel runs",
	// Advice of the kind servers and their libraries log, each naming a
	// failure it is not.
	"[2026-06-17 22:06:31] Lower --mem-fraction-static to avoid CUDA out of memory errors during graph capture.",
	"[2026-06-17 22:06:31 TP0] NCCL errors are retried 3 times before the group is torn down.",
	"[2026-06-17 22:06:31] Aborted requests are not counted in the throughput.",
	"[2026-06-17 22:06:31] A scheduler that ignores SIGTERM is stopped with SIGKILL after 10 s.",
	"[2026-06-17 22:06:31] Killed processes leave their shared memory behind; see --enable-cleanup.",
	"[2026-06-17 22:06:31] faulthandler is enabled: a segmentation fault prints every thread's stack.",
	"[2026-06-17 22:06:31] Set CUDA_LAUNCH_BLOCKING=1 when debugging a CUDA error.",
}

func TestProseIsNotAFailure(t *testing.T) {
	for _, l := range proseLines {
		if got := feedAll(&Detector{}, []string{l}); len(got) != 0 {
			t.Errorf("prose reported as %q: %s", got[0].Title, l)
		}
	}
	// The whole clean start with the warning in it: still no failure.
	lines := fakesglang.Lines(fakesglang.CleanStart())
	lines = append(append([]string{lines[0]}, proseLines...), lines[1:]...)
	if got := feedAll(&Detector{}, lines); len(got) != 0 {
		t.Errorf("clean start with prose gave %d failures, first %q at line %d", len(got), got[0].Title, got[0].Line)
	}
}

// Real failures in the forms programs report them, beyond the excerpts of
// TestEachSignatureIsOneFailure: each is one failure of its kind.
func TestFailureForms(t *testing.T) {
	tests := []struct{ kind, line string }{
		{"cuda", "RuntimeError: CUDA error: device-side assert triggered"},
		{"cuda", "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"},
		{"cuda", "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered"},
		{"cuda", "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS"},
		{"oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."},
		{"oom", "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.35 GiB total capacity)"},
		{"compilation", "triton.compiler.errors.CompilationError: at 41:15:"},
		{"compilation", "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 135168, Hardware limit: 101376. Reducing block sizes or `num_stages` may help."},
		{"nccl", "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"},
		{"nccl", "[rank0]:[E617 22:07:09.123 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out."},
		{"segfault", "Fatal Python error: Segmentation fault"},
		{"segfault", "Segmentation fault (core dumped)"},
		{"segfault", "/root/launch.sh: line 12: 31337 Segmentation fault      (core dumped) python3 -m sglang.launch_server"},
		{"segfault", "*** SIGSEGV (@0x0) received by PID 31337 (TID 0x7f3a2c7fe640) from PID 0; stack trace: ***"},
		{"abort", "terminate called after throwing an instance of 'c10::Error'"},
		{"abort", "Aborted (core dumped)"},
		{"abort", "/root/launch.sh: line 12: 31337 Aborted                 (core dumped) python3 -m sglang.launch_server"},
		{"killed", "Killed"},
		{"killed", "[1]+  Killed                  python3 -m sglang.launch_server --tp 4"},
		{"killed", "torch.distributed.elastic.multiprocessing.api.SignalException: Process 31337 got signal: 9 (SIGKILL)"},
		{"killed", "Signal 9 (SIGKILL) received by PID 31337"},
		{"killed", "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly: <Signals.SIGKILL: 9>"},
		{"sigquit", "[2026-06-17 22:07:09] Received sigquit from a child process. It usually means the child failed."},
		{"cuda-graph-capture", "Exception: Capture cuda graph failed: CUDA out of memory."},
		{"cuda-graph-capture", "Exception: Capture prefill CUDA graph failed: CUDA out of memory."},
		{"cuda-graph-capture", "Exception: Capture frozen-KV MTP cuda graph failed: CUDA out of memory."},
		{"traceback", "Traceback (most recent call last):"},
	}
	for _, tt := range tests {
		got := feedAll(&Detector{}, []string{tt.line})
		if len(got) != 1 || got[0].Kind != tt.kind {
			var kinds []string
			for _, f := range got {
				kinds = append(kinds, f.Kind)
			}
			t.Errorf("%q gave failures %q, want one %q", tt.line, kinds, tt.kind)
		}
	}
}

// A coloured log (a formatter that colours the prefix and the level, a log
// captured through a terminal) reads exactly like a plain one.
func TestParseStripsEscapes(t *testing.T) {
	for _, l := range fakesglang.Lines(fakesglang.CleanStart()) {
		plain := Parse(l)
		if got := Parse(fakesglang.Colour(l)); got != plain {
			t.Errorf("Parse(coloured %q) = %+v, want %+v", l, got, plain)
		}
	}
	for raw, want := range map[string]string{
		"\x1b[1;32mINFO\x1b[0m:     ready":               "INFO:     ready",
		"\x1b]0;sglang\x07[2026-06-17 22:07:39] x":       "[2026-06-17 22:07:39] x",
		"\x1b]8;;http://h/\x1b\\link\x1b]8;;\x1b\\ done": "link done",
		"progress 10%\x1b[K\rprogress 100%\x1b[K":        "progress 10%\rprogress 100%",
		"no escapes [here]":                              "no escapes [here]",
		"\x1b(Bcharset and \x1b7saved cursor\x1b8":       "charset and saved cursor",
	} {
		if got := StripEscapes(raw); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestMatchKernel(t *testing.T) {
	tests := []struct {
		text string
		want KernelLine
		ok   bool
	}{
		{"mlagen: sparse-MLA decode on the MMA kernel (whole call, target sm_120, config pp_h16_t32_k4_w4_s1, 16 heads)",
			KernelLine{Ran: true, Entry: "whole call", Target: "sm_120", Config: "pp_h16_t32_k4_w4_s1", Heads: 16}, true},
		// A module emitted before the line said the heads.
		{"mlagen: sparse-MLA decode on the MMA kernel (whole call, target sm_90, config ws_h64_t64_k2_w8_s2)",
			KernelLine{Ran: true, Entry: "whole call", Target: "sm_90", Config: "ws_h64_t64_k2_w8_s2"}, true},
		{"mlagen: sparse-MLA decode on the MMA kernel (per cache, target sm_120, config h16_t32_k1_w4_s2)",
			KernelLine{Ran: true, Entry: "per cache", Target: "sm_120", Config: "h16_t32_k1_w4_s2"}, true},
		{"mlagen: sparse-MLA decode not on the MMA kernel (whole call): supports_full() refused: 20 heads is not a multiple of 16; SGLang's kernel runs",
			KernelLine{Entry: "whole call", Reason: "supports_full() refused: 20 heads is not a multiple of 16"}, true},
		{"mlagen: sparse-MLA decode not on the MMA kernel (per cache): supports() refused: page size 128; not 64 or 256; SGLang's kernel runs",
			KernelLine{Entry: "per cache", Reason: "supports() refused: page size 128; not 64 or 256"}, true},
		{"mlagen: sparse-MLA decode not on the MMA kernel (whole call): the selection gives this shape to flashinfer, measured faster on the GPU the selection was measured on; SGLang's backend choice runs",
			KernelLine{Entry: "whole call", Reason: "the selection gives this shape to flashinfer, measured faster on the GPU the selection was measured on", Deferred: true}, true},
		// A logging format of its own before the message.
		{"INFO:sglang.srt.layers.attention.flash_mla_sm120_mma:mlagen: sparse-MLA decode on the MMA kernel (whole call, target sm_120, config x)",
			KernelLine{Ran: true, Entry: "whole call", Target: "sm_120", Config: "x"}, true},
		{"mlagen: sparse-MLA decode on the MMA kernel", KernelLine{}, false},
		{"Load weight begin. avail mem=93.71 GB", KernelLine{}, false},
	}
	for _, tt := range tests {
		got, ok := MatchKernel(tt.text)
		if ok != tt.ok || got != tt.want {
			t.Errorf("MatchKernel(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
	// With SGLang's prefix, through Parse.
	l := fakesglang.KernelRanLine("TP0", "whole call", "sm_120", "ws_h64_t64_k2_w8_s2")
	if k, ok := MatchKernel(Parse(l).Text); !ok || !k.Ran || k.Config != "ws_h64_t64_k2_w8_s2" || k.Heads != fakesglang.Heads {
		t.Errorf("MatchKernel(Parse(%q)) = %+v, %v", l, k, ok)
	}
}

// A line too long to be read whole arrives in pieces; the pieces belong to
// the line's incident and are not lines of their own.
func TestContinuedPiecesJoinTheIncident(t *testing.T) {
	d := &Detector{}
	d.Feed("Traceback (most recent call last):")
	d.FeedContinued("... Traceback (most recent call last): repeated in the overlap")
	d.Feed(`  File "x.py", line 1, in <module>`)
	got := feedAll(d, []string{"ValueError: boom"})
	if len(got) != 1 || len(got[0].Lines) != 4 || got[0].Summary != "ValueError: boom" {
		t.Fatalf("got %+v, want one traceback of 4 pieces", got)
	}
	if d.Lines() != 3 {
		t.Errorf("Lines() = %d, want 3 (a piece is not a line)", d.Lines())
	}
	// A piece that names a failure, after a line that did not, starts one.
	d = &Detector{}
	d.Feed("[2026-06-17 22:07:09 TP0] " + strings.Repeat("x", 100))
	if got := feedAll(d, nil); len(got) != 0 {
		t.Fatalf("got %d failures before the piece", len(got))
	}
	d.FeedContinued("xxxx RuntimeError: CUDA error: an illegal memory access was encountered")
	if f := d.Flush(); f == nil || f.Kind != "cuda" || f.Line != 1 {
		t.Errorf("got %+v, want a CUDA error on line 1", f)
	}
}

// A handled traceback ends at its exception line: a process that aborts
// right after the fallback (a sticky CUDA error the fallback caught first)
// is a failure of its own, whatever unprefixed line reports it; and what
// chains to the handled exception stays part of it.
func TestHandledTracebackEndsAtItsException(t *testing.T) {
	handled := []string{
		"[2026-06-17 22:07:39 TP0] fused_hy4_ihc_head failed, disabling fused path",
		"Traceback (most recent call last):",
		`  File "/x/sglang/srt/layers/hy4.py", line 10, in head`,
		"RuntimeError: CUDA error: an illegal memory access was encountered",
	}
	for name, tt := range map[string]struct {
		after []string
		want  string
	}{
		"segfault": {[]string{"Fatal Python error: Segmentation fault", "", "Current thread 0x00007f (most recent call first):"}, "segfault"},
		"abort":    {[]string{"terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error: an illegal memory access was encountered"}, "cuda"},
		"nccl":     {[]string{"[rank1]:[E1204 10:00:00.000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"}, "nccl"},
		"killed":   {[]string{"Killed"}, "killed"},
		"chained":  {[]string{"", "During handling of the above exception, another exception occurred:", "", "Traceback (most recent call last):", `  File "x.py", line 2, in g`, "ValueError: fallback"}, ""},
	} {
		got := feedAll(&Detector{}, append(append([]string(nil), handled...), tt.after...))
		var kinds []string
		for _, f := range got {
			kinds = append(kinds, f.Kind)
		}
		want := []string{Handled}
		if tt.want != "" {
			want = append(want, tt.want)
		}
		if strings.Join(kinds, ",") != strings.Join(want, ",") {
			t.Errorf("%s: incidents %v, want %v", name, kinds, want)
		}
	}
}
