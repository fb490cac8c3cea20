package sglanglog

import (
	"regexp"
	"strings"
)

// startRE is the line a server logs once as it starts, before any phase:
// "server_args=ServerArgs(...)" (0.5.14-0.5.23, from the launching process
// alone). A second one in the same log is another run of the server.
var startRE = regexp.MustCompile(`^server_args=`)

// MatchStart reports whether a record's text is a server's start.
func MatchStart(text string) bool { return startRE.MatchString(text) }

// StartsRun is MatchStart for a raw line of the log, prefix and colours
// included (source.File's StartsRun).
func StartsRun(line string) bool { return MatchStart(Parse(StripEscapes(line)).Text) }

// handledMessages are the messages SGLang (0.5.14-0.5.23) logs below an
// error's level with the traceback of an exception it handled:
// logger.warning("...", exc_info=True) writes the message, then the
// traceback, and the server goes on. Each `{}` is a field of the message.
// .ci/sglang_log_lines.py lists them from a release's own sources, and
// TestReleaseLogLines fails for one this list does not cover.
var handledMessages = []string{
	`Cosmos3 FA4 unavailable; falling back to Triton: {}`,
	`Could not unmount Cache-DiT after a failed mount; leaving MiniMax-H3 input preservation on`,
	`DSpark sampling-accept graph capture failed for {}; sampling steps take the eager accept from now on.`,
	`Detection rule '{}' for {} raised an exception: {}. Skipping.`,
	`DiffGenerator.shutdown failed`,
	`Direct CUDA video save failure`,
	`Draft L3 read failed (best-effort), skipping.`,
	`Draft L3 write failed (best-effort), skipping.`,
	`Error extracting audio from video`,
	`FPM publisher send failed`,
	`Failed to apply AITer GroupNorm to VAE.`,
	`Failed to apply CUDA VAE optimizations; using the unmodified VAE.`,
	`Failed to clean up model-owned video request resources`,
	`Failed to close a malformed multimodal SHM handle`,
	`Failed to close a multimodal SHM handle`,
	`Failed to download overlay metadata for {}`,
	`Failed to parse arguments: {}`,
	`Failed to prefetch checkpoint file {}.`,
	`Failed to preserve CUDA IPC features on the copy stream; falling back to the generic offload path`,
	`Failed to release a borrowed CUDA IPC feature after materialization failed`,
	`Failed to release a copied CUDA IPC feature; retaining its lease until request cleanup`,
	`Failed to release an abandoned multimodal transport proxy`,
	`Failed to release an unused multimodal feature transport`,
	`Failed to remove rejected video output {}`,
	`Failed to render {} (kaleido missing?); skipping plot.`,
	`Failed to reopen a multimodal SHM segment for cleanup`,
	`Failed to resolve model info from registry`,
	`Failed to shut down a broken multimodal CPU preprocess pool`,
	`Failed to terminate SGLD worker {}`,
	`Failed to unlink NIXL L3 file {}`,
	`Failed to unlink a multimodal SHM segment`,
	`IPC all-to-all (multi-rank) initialization failed`,
	`IPC all-to-all initialization failed`,
	`Image writer warmup failed`,
	`Load batch POST /generate failed (expected on abort for some server versions).`,
	`Metadata glue-graph capture failed for key {}; falling back to eager metadata prep permanently.`,
	`NIXL L3 cleaner failed to scan {}`,
	`NIXL L3 cleaner skipped bucket {}`,
	`NIXL L3 cleaner tick failed`,
	`NVIDIA KDA prefill failed (T={} sequences={}); restored states and fell back to Triton for this batch`,
	`POST /flush_cache failed; continuing.`,
	`PTX KDA prefill failed (T={}); restored state and fell back to Triton for this batch`,
	`Parallel CUDA video save failure`,
	`Pipeline import failure details for {}`,
	`Polling /server_info failed; retrying.`,
	`Residency hint unavailable`,
	`Route model prebuild failed`,
	`Streamed video encode failure`,
	`Synthetic server warmup failed; continuing startup`,
	`Unable to clone the multimodal processor for concurrent workers; falling back to synchronous processing.`,
	`Unable to inspect the checkpoint wo_a dtype`,
	`Unable to query free device memory`,
	`VLA denoise CUDA graph disabled for signature {}`,
	`VLA prefix CUDA graph disabled for signature {}`,
	`VLA {} CUDA graph disabled for signature {}`,
	`Warmup round failed; continuing.`,
	`[MmItemMemoryPool] recycle loop error: {}`,
	`[streaming_asr] chunk {} failed`,
	`cleanup_stale_shm: sweep failed, continuing startup`,
	`fused_causal_conv3d_cat_pad_cuda failed, falling back to Triton`,
	`fused_hy4_ihc_head failed, disabling fused path`,
	`fused_hy4_ihc_post failed, disabling fused path`,
	`fused_hy4_ihc_post_pre failed, disabling fused path`,
	`fused_hy4_ihc_pre failed, disabling fused path`,
	`get_device_sm: NVML query failed, using torch.cuda`,
	`get_device_sm: torch.cuda._get_nvml_device_index(0) failed, using torch.cuda`,
	`invalid MiniMax M3 tool call returned as content: {}`,
	`load-publisher disabled: failed to bind the load socket at {}; /server_info advertises this range but nothing is listening on it`,
	`load-publisher: publish failed; routers fall back to their in-flight load signal`,
	`post-warmup freeze_gc failed`,
	`register() failed for {}: {}`,
	`sglang.test.dump_metric: failed to dump metric '{}': {}`,
	`{} multimodal pool recycle failed`,
}

var handledRE = handledPattern(handledMessages)

// handledPattern is one anchored pattern for the messages, each `{}` any
// text.
func handledPattern(messages []string) *regexp.Regexp {
	alts := make([]string, len(messages))
	for i, m := range messages {
		parts := strings.Split(m, "{}")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		alts[i] = strings.Join(parts, ".*")
	}
	return regexp.MustCompile(`^(?:` + strings.Join(alts, "|") + `)\s*$`)
}

// MatchHandled reports whether a record's text is one of the messages that
// SGLang logs with the traceback of an exception it handled.
func MatchHandled(text string) bool { return handledRE.MatchString(text) }
