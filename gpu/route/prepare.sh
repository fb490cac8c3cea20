#!/usr/bin/env bash
# Prepares the GPU route check (gpu/route/check.py) on this machine, no GPU
# needed: takes SGLang 0.5.23's sm_120 entry module, its SIMT module and
# environ.py out of the release wheel (downloaded with pip, no dependencies,
# into the cache .ci/sglang-releases.sh uses), adds the few stubs they need to
# import (package __init__ files, sglang/srt/utils.py with is_hip), and patches
# one copy for each target:
#
#   gpu/route/work/sm90/   patched with BIN patch --target sm_90
#   gpu/route/work/sm120/  patched with BIN patch --target sm_120
#
# gpu/route/work is ignored by git (SGLang's code is never committed); carry
# it to the device with the run tool's carry list. Then, on the GPU, from the
# repository root: python3 gpu/route/check.py gpu/route/work/sm90
#
# Usage: gpu/route/prepare.sh [BIN]   (BIN: a built mlagen, default bin/mlagen)
# MLAGEN_KERNELS=DIR patches with DIR/sparse_mla_mma.py instead of the module
# BIN renders (for example a module with the whole-call entry points).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-bin/mlagen}
[ -x "$BIN" ] || { echo "prepare.sh: $BIN is not an executable mlagen (go build -o $BIN ./cmd/mlagen)" >&2; exit 2; }
VERSION=0.5.23
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mlagen/wheels
WORK=gpu/route/work
PY=${PYTHON:-python3}

mkdir -p "$CACHE"
wheel=$(ls "$CACHE"/sglang-$VERSION-*.whl 2> /dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  "$PY" -m pip download -q --progress-bar off --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_34_x86_64 -d "$CACHE" "sglang==$VERSION"
  wheel=$(ls "$CACHE"/sglang-$VERSION-*.whl | head -n 1)
fi

rm -rf "$WORK"
mkdir -p "$WORK/upstream"
"$PY" - "$wheel" "$WORK/upstream" << 'PYEOF'
import sys
import zipfile

wanted = [
    "sglang/kernels/ops/attention/flash_mla_sm120.py",
    "sglang/kernels/ops/attention/flash_mla_sm120_triton.py",
    "sglang/srt/environ.py",
]
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in wanted:
        z.extract(name, sys.argv[2])
PYEOF
# Stubs: empty packages (the real __init__ files import half of SGLang), and
# the one helper the entry module imports at module level.
for d in sglang sglang/srt sglang/kernels sglang/kernels/ops sglang/kernels/ops/attention; do
  : > "$WORK/upstream/$d/__init__.py"
done
cat > "$WORK/upstream/sglang/srt/utils.py" << 'PYEOF'
"""Stub of sglang.srt.utils for the route check: only what the entry module imports."""


def is_hip():
    return False
PYEOF

for t in sm90:sm_90 sm120:sm_120; do
  dir=$WORK/${t%%:*}
  cp -a "$WORK/upstream" "$dir"
  kargs=(--target "${t##*:}")
  if [ -n "${MLAGEN_KERNELS:-}" ]; then kargs+=(--kernels "$MLAGEN_KERNELS"); fi
  "$BIN" patch "${kargs[@]}" "$dir" > "$dir.patch.log" || { cat "$dir.patch.log" >&2; exit 1; }
  grep -E '^(set |[0-9]+ references? wired)' "$dir.patch.log" | sed "s|^|${t##*:}: |"
done
echo "ready: carry $WORK to the device, then run: python3 gpu/route/check.py $WORK/sm90 [$WORK/sm120]"
