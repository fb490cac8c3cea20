package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/fakesglang"
	"github.com/mlagen/mlagen/watch/source"
)

func expectKernel(c *Config) {
	c.ExpectKernel, c.ExpectKernelWhy = true, "the server was started with SGLANG_SM120_MMA_FLASHMLA=1"
}

// The kernel line is in the log: READY, and the report says which kernel
// served, on which ranks.
func TestKernelLinePresentIsReady(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.KernelStart(), cfg: expectKernel, stop: true})
	if o.rep.Outcome != Ready || o.src.stopped != 0 {
		t.Fatalf("outcome %s, Stop called %d times; want ready and the server left running; output:\n%s", o.rep.Outcome, o.src.stopped, o.out)
	}
	want := &KernelReport{Required: true, RequiredBecause: "the server was started with SGLANG_SM120_MMA_FLASHMLA=1", Served: "mma"}
	got := *o.rep.Kernel
	got.Lines = nil
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("kernel report (-want +got):\n%s", diff)
	}
	if len(o.rep.Kernel.Lines) != 1 || !cmp.Equal(o.rep.Kernel.Lines[0].Ranks, []string{"TP0", "TP3"}) || o.rep.Kernel.Lines[0].Config != fakesglang.Config {
		t.Errorf("kernel lines = %+v, want one, from TP0 and TP3", o.rep.Kernel.Lines)
	}
	for _, want := range []string{
		"the MMA kernel must serve decode (the server was started with SGLANG_SM120_MMA_FLASHMLA=1)",
		"kernel: decode on the MMA kernel (whole call, target sm_120, config ws_h64_t64_k2_w8_s2, 16 heads)  (TP0 log 22:07:08)",
		"READY after 1m08s: the server is up (startup 68.0s) and answered correctly; decode ran on the MMA kernel (whole call, target sm_120, config ws_h64_t64_k2_w8_s2, 16 heads).",
	} {
		if !strings.Contains(o.out, want) {
			t.Errorf("output lacks %q:\n%s", want, o.out)
		}
	}
	if strings.Contains(o.out, "waiting up to") {
		t.Errorf("the line was there before the answer; nothing to wait for:\n%s", o.out)
	}
}

// Only fallback lines: the server answered, but the failure names the
// module's reasons, and the started server is stopped.
func TestKernelFallbackOnlyFails(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.FallbackStart(), cfg: expectKernel, stop: true, hang: time.Hour})
	want := "FAILED after 1m18s: the server answered, but the MMA kernel never ran: whole call: " + fakesglang.FallbackReason +
		"; per cache: supports() refused: 20 heads is not a multiple of 16."
	if o.rep.Outcome != Failed || o.rep.ExitCode != 1 || o.rep.Verdict != want {
		t.Fatalf("outcome %s (exit %d), verdict\n%q\nwant\n%q\noutput:\n%s", o.rep.Outcome, o.rep.ExitCode, o.rep.Verdict, want, o.out)
	}
	if o.rep.Kernel.Served != "sglang" || len(o.rep.Kernel.Lines) != 2 {
		t.Errorf("kernel report = %+v", o.rep.Kernel)
	}
	if o.src.stopped != 1 {
		t.Errorf("Stop called %d times, want 1", o.src.stopped)
	}
	if !strings.Contains(o.out, "waiting up to 10.0s for the kernel module's line") || !strings.Contains(o.out, "kernel: decode NOT on the MMA kernel (whole call: "+fakesglang.FallbackReason+"); SGLang's kernel runs") {
		t.Errorf("output:\n%s", o.out)
	}
}

// No line of the module at all (an unpatched tree, a backend choice that
// never reaches it, a GPU the model backend never calls the entry on): a
// failure that says so.
func TestKernelNoLineFails(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: expectKernel, hang: time.Hour})
	if o.rep.ExitCode != 1 || o.rep.Verdict != "FAILED after 1m18s: the server answered, but the MMA kernel never ran: no mlagen line in the log." {
		t.Fatalf("exit %d, verdict %q; output:\n%s", o.rep.ExitCode, o.rep.Verdict, o.out)
	}
	// It points at the two ways that happens: an unpatched tree, or a GPU
	// whose model backend never calls the route's entry.
	if o.rep.Kernel.Served != "unknown" || !strings.Contains(o.out, "no line of mlagen's kernel module came") || !strings.Contains(o.out, "the GPUs they run on") {
		t.Errorf("served %q; output:\n%s", o.rep.Kernel.Served, o.out)
	}
	// The smoke request had succeeded: the failure is the kernel's alone.
	if o.rep.Smoke == nil || !o.rep.Smoke.OK {
		t.Errorf("smoke = %+v", o.rep.Smoke)
	}
	// A log that ends while the line is awaited ends the wait: nothing
	// more can come.
	o = watchReplay(t, fixture{steps: fakesglang.CleanStart(), cfg: expectKernel})
	if o.rep.ExitCode != 1 || !strings.HasPrefix(o.rep.Verdict, "FAILED after 1m08s: the server answered, but the MMA kernel never ran: no mlagen line") {
		t.Errorf("log ended: exit %d, verdict %q", o.rep.ExitCode, o.rep.Verdict)
	}
}

// The module logs at first use; when that is the smoke request itself, the
// line comes after the answer, and the watch waits for it.
func TestKernelLineAfterTheAnswer(t *testing.T) {
	steps := append(fakesglang.CleanStart(),
		fakesglang.Step{At: 70 * time.Second, Line: fakesglang.KernelRanLine("TP0", "per cache", "sm_120", "h16_t32_k1_w4_s2")})
	o := watchReplay(t, fixture{steps: steps, cfg: expectKernel, hang: time.Hour})
	if o.rep.Outcome != Ready || o.rep.ElapsedS != 70 {
		t.Fatalf("outcome %s after %.1fs, want ready at 70s; output:\n%s", o.rep.Outcome, o.rep.ElapsedS, o.out)
	}
	if !strings.Contains(o.out, "waiting up to 10.0s for the kernel module's line") {
		t.Errorf("output:\n%s", o.out)
	}
}

// The wait never goes past the time-out; the verdict is still the kernel's.
func TestKernelWaitBoundedByTimeout(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.CleanStart(), hang: time.Hour, cfg: func(c *Config) {
		expectKernel(c)
		c.Timeout = 70 * time.Second
	}})
	if o.rep.ExitCode != 1 || o.rep.ElapsedS != 70 || !strings.Contains(o.rep.Verdict, "the MMA kernel never ran") {
		t.Errorf("exit %d after %.1fs, verdict %q", o.rep.ExitCode, o.rep.ElapsedS, o.rep.Verdict)
	}
}

// A failure after the answer, while the line is awaited, is a failure.
func TestKernelWaitSeesAFailure(t *testing.T) {
	steps := fakesglang.CleanStart()
	for _, l := range fakesglang.FailureText("cuda") {
		steps = append(steps, fakesglang.Step{At: 69 * time.Second, Line: l})
	}
	o := watchReplay(t, fixture{steps: steps, cfg: expectKernel, hang: time.Hour})
	if o.rep.ExitCode != 1 || len(o.rep.Failures) != 1 || o.rep.Failures[0].Kind != "cuda" {
		t.Errorf("exit %d, failures %+v; output:\n%s", o.rep.ExitCode, o.rep.Failures, o.out)
	}
}

// Not required, the lines are still reported: a fallback is said, READY
// stays READY, and the JSON names the kernel that served.
func TestKernelNotRequiredIsReported(t *testing.T) {
	o := watchReplay(t, fixture{steps: fakesglang.FallbackStart()})
	if o.rep.Outcome != Ready || !strings.Contains(o.rep.Verdict, "the MMA kernel did not run (whole call: "+fakesglang.FallbackReason) {
		t.Fatalf("outcome %s, verdict %q", o.rep.Outcome, o.rep.Verdict)
	}
	data, err := json.Marshal(o.rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kernel":{"required":false,"served":"sglang","lines":[{"ran":false,"entry":"whole call","reason":"` + fakesglang.FallbackReason + `","ranks":["TP0","TP3"]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
	plain := watchReplay(t, fixture{steps: fakesglang.CleanStart()})
	if plain.rep.Kernel.Served != "unknown" || strings.Contains(plain.out, "kernel") {
		t.Errorf("a start without module lines: served %q; output:\n%s", plain.rep.Kernel.Served, plain.out)
	}
}

// Not required, the module's line still has a moment to arrive after the
// answer (KernelSettle): the module logs at first use, which without CUDA
// graphs is the smoke request, and the log is read in polls, so the line
// may be read just after the answer. Within the moment it is reported;
// past it the watch ends READY with what it knows ("unknown").
func TestKernelNotRequiredLineJustAfterTheAnswer(t *testing.T) {
	line := fakesglang.KernelRanLine("TP0", "per cache", "sm_120", "h16_t32_k1_w4_s2")
	soon := watchReplay(t, fixture{steps: append(fakesglang.CleanStart(), fakesglang.Step{At: 68600 * time.Millisecond, Line: line}), hang: time.Hour})
	if soon.rep.Outcome != Ready || soon.rep.Kernel.Served != "mma" || soon.rep.ElapsedS != 68.6 {
		t.Errorf("line 0.5s after the answer: outcome %s after %.2fs, served %q; want ready at 68.6s on the MMA kernel; output:\n%s", soon.rep.Outcome, soon.rep.ElapsedS, soon.rep.Kernel.Served, soon.out)
	}
	if !strings.Contains(soon.rep.Verdict, "; decode ran on the MMA kernel (per cache") {
		t.Errorf("verdict %q does not say which kernel served", soon.rep.Verdict)
	}
	late := watchReplay(t, fixture{steps: append(fakesglang.CleanStart(), fakesglang.Step{At: 70 * time.Second, Line: line}), hang: time.Hour})
	if late.rep.Outcome != Ready || late.rep.Kernel.Served != "unknown" || fmt.Sprintf("%.3f", late.rep.ElapsedS) != "69.100" {
		t.Errorf("line 2s after the answer: outcome %s after %.2fs, served %q; want ready at 69.1s, unknown; output:\n%s", late.rep.Outcome, late.rep.ElapsedS, late.rep.Kernel.Served, late.out)
	}
	if strings.Contains(soon.out+late.out, "waiting up to") {
		t.Errorf("a wait of a second is not announced:\n%s\n%s", soon.out, late.out)
	}
}

// A started server that exits while the watch reads on for the module's
// line answered and was then gone: not READY.
func TestKernelNotRequiredServerExitsJustAfterTheAnswer(t *testing.T) {
	steps := append(fakesglang.CleanStart(), fakesglang.Step{At: 68600 * time.Millisecond, Line: "[2026-06-17 22:07:39 TP0] Decode batch. #running-req: 1, #token: 20, token usage: 0.00, gen throughput (token/s): 12.34, #queue-req: 0"})
	o := watchReplay(t, fixture{steps: steps, stop: true, end: &source.ExitError{Pid: 31337, Err: errors.New("exit status 1")}})
	if o.rep.Outcome != Failed || !strings.Contains(o.rep.Verdict, "the server answered the smoke request, but ") {
		t.Errorf("outcome %s, verdict %q; output:\n%s", o.rep.Outcome, o.rep.Verdict, o.out)
	}
}
