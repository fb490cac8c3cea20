#!/usr/bin/env bash
# Pack a Triton release small enough for a device call to carry (64 MiB in
# all), for timing the shipped modules under the Triton that newer SGLang
# releases install (docs/targets.md, "Triton versions"). The lent GPU has
# Triton 3.6.0 and no network, so the release travels with the call.
#
# Downloads the CPython 3.12 wheel (the device's Python) of triton==VERSION
# from PyPI (no dependencies), keeps what compiling and launching for an
# sm_90 GPU needs (the Python package, libtriton.so stripped of its
# symbols, the ptxas it runs for sm_90, libdevice, and the dist-info whose
# entry points Triton finds its backends by, the NVIDIA one only), and
# writes gpu/triton/pack/triton-VERSION.tar.xz and its two halves,
# .part-00 and .part-01 (git-ignored). gpu/triton/run.sh unpacks it on the
# device.
#
# Usage: bash gpu/triton/pack.sh VERSION     (e.g. 3.8.0)
set -euo pipefail
cd "$(dirname "$0")/../.."
V=${1:?usage: $0 VERSION (e.g. 3.8.0)}
PY=${PYTHON:-python3}
W=$(mktemp -d "${TMPDIR:-/tmp}/mlagen-triton-pack.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
  "triton==$V" -d "$W/wheel"
"$PY" -m zipfile -e "$W"/wheel/triton-*.whl "$W/site"
T=$W/site/triton
# Not needed to compile and launch on an H200: the profiler's library, the
# AMD backend, the disassemblers, CUPTI, and the one of its two ptxas that
# the release does not run for sm_90 (get_ptxas: ptxas up to 3.8,
# ptxas-blackwell, CUDA 13, from 3.9).
get_ptxas=$(sed -n '/^def get_ptxas(/,/^$/p' "$T/backends/nvidia/compiler.py")
unused=
if grep -q 'arch >= 100 else knobs.nvidia.ptxas' <<<"$get_ptxas"; then
  unused=ptxas-blackwell
elif grep -q 'if arch < 90:' <<<"$get_ptxas"; then
  unused=ptxas
else
  echo "triton $V: which ptxas it runs for sm_90 is not known here; both kept" >&2
fi
rm -rf "$T/_C/libproton.so" "$T/backends/amd" \
  "$T/backends/nvidia/bin/cuobjdump" "$T/backends/nvidia/bin/nvdisasm" \
  "$T"/backends/nvidia/lib/cupti*
[ -z "$unused" ] || rm -f "$T/backends/nvidia/bin/$unused"
strip --strip-unneeded "$T/_C/libtriton.so"
chmod +x "$T"/backends/nvidia/bin/* # zipfile drops the wheel's modes
# Triton finds its backends through the entry points of its dist-info: keep
# the one that is packed.
sed -i '/^amd = triton\.backends\.amd$/d' "$W"/site/triton-*.dist-info/entry_points.txt
mkdir -p gpu/triton/pack
out=gpu/triton/pack/triton-$V.tar.xz
tar -C "$W/site" -cf - triton "triton-$V.dist-info" | xz -T0 -6 > "$out.partial"
mv "$out.partial" "$out"
echo "$out: $(du -m "$out" | cut -f1) MB"
# A device call carries at most 64 MiB with the working tree (about 27 MiB
# of tracked files), so the pack also goes as two halves, carried by two
# calls made while the machine is warm (it keeps ignored files between
# calls); run.sh joins them.
rm -f "$out".part-*
split -n 2 -d "$out" "$out.part-"
ls -l "$out".part-* | awk '{print $NF ": " int($5 / 1048576) " MiB"}'

