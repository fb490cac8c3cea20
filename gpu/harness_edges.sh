#!/usr/bin/env bash
# The harness's GPU-only paths, on a GPU: what a card owner meets when
# torch sees no usable CUDA, and when a whole-call shape does not fit the
# card's memory (a process beside it holds all but 6 GiB, as another job on
# a shared card would), with the run going on to the next shape and its file
# marked complete. Run on the device after gpu/shipped.sh (it reuses that
# script's Triton cache for the sm_90 module), from the repository root:
#
#   OUT=$OUT bash gpu/harness_edges.sh
#
# Wanted: "rc=2" and one line naming torch's version and what to do, with no
# results file; then "rc=0", the batch-2048 shape declined for memory, batch
# 1 timed, and complete True.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/mlagen-edges}/edges
mkdir -p "$O"
echo "== no CUDA (CUDA_VISIBLE_DEVICES empty)"
CUDA_VISIBLE_DEVICES= timeout 120 python3 kernels/sm90/harness.py --variants selected \
  --out "$O/nocuda.json" >"$O/nocuda.log" 2>&1
echo "rc=$?"
tail -3 "$O/nocuda.log"
ls "$O/nocuda.json" 2>&1 | tail -1
echo "== out of memory: a hog leaves 6 GiB; whole call at H 64, B 2048 then B 1"
rm -f /tmp/mlagen-hog.ready
python3 - <<'PY' &
import time, torch
free, _ = torch.cuda.mem_get_info()
hog = torch.empty(max(free - (6 << 30), 0), dtype=torch.uint8, device="cuda")
with open("/tmp/mlagen-hog.ready", "w") as f:
    f.write(f"{free >> 20} MiB free, hog {hog.numel() >> 20} MiB\n")
time.sleep(300)
PY
HOG=$!
for _ in $(seq 60); do [ -f /tmp/mlagen-hog.ready ] && break; sleep 1; done
cat /tmp/mlagen-hog.ready
TRITON_CACHE_DIR=/tmp/mlagen-cache-sm90 timeout 200 python3 kernels/sm90/harness.py \
  --variants selected --no-check --batches '' --heads '' --whole-heads 64 \
  --whole-batches 2048,1 --extra-topks 2048 --peers none --out "$O/oom.json" >"$O/oom.log" 2>&1
echo "rc=$?"
kill "$HOG"
wait "$HOG" 2>/dev/null
grep -n "out of GPU memory\|Traceback\|Error" "$O/oom.log" | head
python3 - "$O/oom.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("complete", r.get("complete"), "declined", [(d["batch"], d["declined"]) for d in r["declined"]])
print("timed", sorted({(t["batch"], t["variant"]) for t in r["timing"]}))
PY
