// Package fakesglang is a stand-in for an SGLang server in tests: log
// excerpts in the server's real format (prefixes, phase lines, the failure
// texts seen in practice), a writer that replays them with compressed timing,
// and an HTTP handler that answers /health, /generate and /v1/completions.
// It is test support, kept out of _test files so that the watch package, its
// sources and the CLI's script tests can all share one copy of the facts.
package fakesglang

import (
	"strings"
	"time"
)

// Step is one log line and when, after the server started, it is written.
type Step struct {
	At   time.Duration
	Line string
}

func s(sec float64, line string) Step {
	return Step{At: time.Duration(sec * float64(time.Second)), Line: line}
}

// startStamp is 22:06:31 on the day of the seed log; lines below carry
// stamps consistent with their offsets from it.
const modelLine = `[2026-06-17 22:06:31] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V4-Flash', tp_size=4, cuda_graph_max_bs=64, host='127.0.0.1', port=30000)`

// Head is the part of every start up to the end of weight loading.
func Head() []Step {
	return []Step{
		s(0, modelLine),
		s(0.1, `[2026-06-17 22:06:31] Using default HuggingFace chat template with detected content format: string`),
		s(0.3, `[2026-06-17 22:06:31 TP0] Attention backend not explicitly specified. Use flashmla backend by default.`),
		s(0.3, `[2026-06-17 22:06:31 TP0] Init torch distributed begin.`),
		s(0.4, `[2026-06-17 22:06:31 TP3] Init torch distributed begin.`),
		s(0.5, `[2026-06-17 22:06:31 TP0] sglang is using nccl==2.27.3`),
		s(0.5, `[2026-06-17 22:06:31 TP0] Init torch distributed ends. mem usage=0.52 GB`),
		s(0.6, `[2026-06-17 22:06:31 TP0] Load weight begin. avail mem=93.71 GB`),
		s(0.7, `[2026-06-17 22:06:31 TP3] Load weight begin. avail mem=93.71 GB`),
		s(34.2, `[2026-06-17 22:07:05 TP0] Load weight end. elapsed=33.84 s, type=DeepseekV4ForCausalLM, quant=fp8, quant_algo=MIXED_PRECISION, fmt=e4m3, avail mem=52.30 GB, mem usage=41.41 GB.`),
		s(34.3, `[2026-06-17 22:07:05 TP3] Load weight end. elapsed=33.90 s, type=DeepseekV4ForCausalLM, quant=fp8, quant_algo=MIXED_PRECISION, fmt=e4m3, avail mem=52.30 GB, mem usage=41.41 GB.`),
		s(34.5, `[2026-06-17 22:07:05 TP0] Using KV cache dtype: torch.float8_e4m3fn`),
		s(34.6, `[2026-06-17 22:07:05 TP0] Memory pool end. avail mem=37.20 GB`),
		s(34.7, `[2026-06-17 22:07:05 TP3] Memory pool end. avail mem=37.20 GB`),
		s(35.0, `[2026-06-17 22:07:06 TP0] KV Cache is allocated. #tokens: 1048576, KV size: 12.50 GB`),
		s(35.1, `[2026-06-17 22:07:06 TP3] KV Cache is allocated. #tokens: 1048576, KV size: 12.50 GB`),
	}
}

// Capture is CUDA graph capture, ending at about 62 s.
func Capture() []Step {
	return []Step{
		s(36.0, `[2026-06-17 22:07:07 TP3] Capture cuda graph begin. This can take up to several minutes. avail mem=37.09 GB`),
		s(36.1, `[2026-06-17 22:07:07 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=37.09 GB`),
		s(36.2, `[2026-06-17 22:07:07 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64]`),
		s(62.3, `[2026-06-17 22:07:33 TP0] Capture cuda graph end. Time elapsed: 26.12 s. mem usage=1.85 GB. avail mem=35.24 GB.`),
	}
}

// NamedCapture is graph capture as the releases with DeepSeek-V4 log it
// (0.5.23's wording): each capture named, the prefill graph first, then the
// decode graph with its batch list on the end line; the same 26 s of decode
// capture, ending at about 62 s.
func NamedCapture() []Step {
	return []Step{
		s(35.5, `[2026-06-17 22:07:06 TP0] Capture target prefill CUDA graph begin. backend=piecewise, num_tokens=[4, 8, 16, 32], avail mem=37.20 GB`),
		s(35.9, `[2026-06-17 22:07:07 TP0] Capture target prefill CUDA graph end. elapsed=0.42 s, mem usage=0.11 GB, avail mem=37.09 GB.`),
		s(36.0, `[2026-06-17 22:07:07 TP3] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=37.09 GB`),
		s(36.1, `[2026-06-17 22:07:07 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=37.09 GB`),
		s(62.3, `[2026-06-17 22:07:33 TP0] Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64], elapsed=26.12 s, mem usage=1.85 GB, avail mem=35.24 GB.`),
	}
}

// Tail is the HTTP server coming up and the ready line at 68 s.
func Tail() []Step {
	return []Step{
		s(63.0, `[2026-06-17 22:07:34 TP0] max_total_num_tokens=1048576, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=64, context_len=1048576, available_gpu_mem=35.24 GB`),
		s(64.0, `[2026-06-17 22:07:35] INFO:     Started server process [31337]`),
		s(64.1, `[2026-06-17 22:07:35] INFO:     Waiting for application startup.`),
		s(64.2, `[2026-06-17 22:07:35] INFO:     Application startup complete.`),
		s(64.3, `[2026-06-17 22:07:35] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)`),
		s(65.0, `[2026-06-17 22:07:36] INFO:     127.0.0.1:51234 - "GET /get_model_info HTTP/1.1" 200 OK`),
		s(65.5, `[2026-06-17 22:07:36 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0`),
		s(68.0, `[2026-06-17 22:07:39] INFO:     127.0.0.1:51240 - "POST /generate HTTP/1.1" 200 OK`),
		s(68.1, `[2026-06-17 22:07:39] The server is fired up and ready to roll!`),
	}
}

// CleanStart is a whole good start: 34 s of weights, 26 s of graph capture,
// ready at 68 s.
func CleanStart() []Step { return concat(Head(), Capture(), Tail()) }

// NamedStart is CleanStart as the releases with DeepSeek-V4 log it
// (NamedCapture): the same 34 s of weights and 26 s of decode graph
// capture, ready at 68 s.
func NamedStart() []Step { return concat(Head(), NamedCapture(), Tail()) }

// Stalled is a start that reaches graph capture and then says nothing more.
func Stalled() []Step {
	return concat(Head(), Capture()[:3])
}

// Failure texts, one per signature kind, each placed where it is met in
// practice. Unprefixed lines are what a crashing child writes to stderr.
var failureTexts = map[string]string{
	"oom": `[2026-06-17 22:07:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2811, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 412, in init_memory_pool
    self.token_to_kv_pool = MLATokenToKVPool(...)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 95.00 GiB of which 1.12 GiB is free.

[2026-06-17 22:07:09] Received sigquit from a child process. It usually means the child failed.`,

	"sigquit": `[2026-06-17 22:07:09] SIGQUIT received. signum=None, frame=None. It usually means one child failed.`,

	"compilation": `[2026-06-17 22:07:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/triton/compiler/code_generator.py", line 1302, in ast_to_ttir
    generator.visit(fn.parse())
triton.compiler.errors.CompilationError: at 41:15:
        acc = tl.dot(q_nope, k_nope, acc)
               ^
ValueError('Cannot make_shape_compatible: incompatible dimensions at index 1: 448 and 512')

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/flash_mla_sm120_triton.py", line 310, in _run_sparse_decode
    return _run_mma_sparse_decode(q, kv, indices, sm_scale)
RuntimeError: Triton kernel _mma_sparse_decode failed to compile`,

	"traceback": `[2026-06-17 22:07:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/layers/attention/flash_mla_sm120_triton.py", line 298, in _run_sparse_decode
    assert q.shape[-1] == 512, q.shape
AssertionError: torch.Size([1, 64, 576])`,

	"cuda": `[2026-06-17 22:07:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 1502, in forward_decode
    return self.model.forward(...)
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with ` + "`TORCH_USE_CUDA_DSA`" + ` to enable device-side assertions.`,

	"segfault": `Fatal Python error: Segmentation fault

Thread 0x00007f3a2c7fe640 (most recent call first):
  File "/usr/local/lib/python3.12/dist-packages/triton/backends/nvidia/driver.py", line 444 in __call__`,

	"abort": `terminate called after throwing an instance of 'std::runtime_error'
  what():  invalid device pointer
Fatal Python error: Aborted`,

	"killed": `/root/launch_dsv4_mma.sh: line 12: 31337 Killed                  python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 4`,

	"cuda-graph-capture": `[2026-06-17 22:07:20 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 380, in __init__
    self.capture()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 382, in __init__
    raise Exception(
Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 512.00 MiB.
Possible solutions:
1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)
2. set --cuda-graph-max-bs to a smaller value (e.g., 16)
3. disable torch compile by not using --enable-torch-compile
4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)`,

	"nccl": `[2026-06-17 22:06:33 TP2] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2806, in all_reduce
    work = group.allreduce([tensor], opts)
torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3
ncclUnhandledCudaError: Call to CUDA function failed.`,
}

// FailureKinds lists the kinds FailureText knows, in a fixed order.
func FailureKinds() []string {
	return []string{"oom", "sigquit", "compilation", "traceback", "cuda", "segfault", "abort", "killed", "cuda-graph-capture", "nccl"}
}

// FailureText is the log excerpt of one failure kind, as lines.
func FailureText(kind string) []string {
	t, ok := failureTexts[kind]
	if !ok {
		panic("fakesglang: no failure text for " + kind)
	}
	return strings.Split(t, "\n")
}

// FailingStart is a start that fails with kind: the failure lines follow the
// head (and graph capture begin, for failures met during capture), then the
// log goes quiet as a dead server's does.
func FailingStart(kind string) []Step {
	steps := Head()
	if kind == "cuda-graph-capture" || kind == "cuda" || kind == "compilation" {
		steps = concat(steps, Capture()[:3])
	}
	at := steps[len(steps)-1].At + 2*time.Second
	for _, l := range FailureText(kind) {
		steps = append(steps, Step{At: at, Line: l})
	}
	return steps
}

// Text joins steps as the log file would hold them.
func Text(steps []Step) string {
	var b strings.Builder
	for _, st := range steps {
		b.WriteString(st.Line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Lines returns just the lines of steps.
func Lines(steps []Step) []string {
	out := make([]string, len(steps))
	for i, st := range steps {
		out[i] = st.Line
	}
	return out
}

func concat(parts ...[]Step) []Step {
	var out []Step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
