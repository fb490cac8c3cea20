#!/usr/bin/env bash
# Real SGLang releases against a built mlagen. For each release (0.5.14,
# 0.5.16, 0.5.23 and, when PyPI has a newer one, the newest), with the wheel
# downloaded by pip (no dependencies) and cached, and unpacked as
# site-packages lays it out (sglang/ beside sglang-V.dist-info/):
#
#   patch     wires it; the route goes through the release's own backend
#             choice (SGLANG_SM120_TRITON_FLASHMLA up to 0.5.14,
#             SGLANG_SM120_FLASHMLA_BACKEND since 0.5.15); every edited file
#             parses as Python; RECORD lists the kernel module
#   verify    exit 0, 0 missed, the same route, and the Triton installed
#             beside SGLang named (a triton dist-info of the release the
#             wheel's torch pin brings is added beside it) as one the
#             modules are checked under; in the pip venv a release they are
#             not checked under is named as such, and verify still passes
#   repatch   a second patch changes nothing
#   revert    diff -r against a pristine copy: byte-identical, RECORD included
#   pip       installed with pip into a scratch venv and patched there, then
#             reinstalled: pip removes the kernel module (RECORD listed it)
#             and verify fails on the upstream files; patched, compiled and
#             reverted: pip uninstall leaves no sglang/ folder
#   callers   the route names the DeepSeek-V4 backend's call of the entry and
#             its test of the GPU, reached on TARGET's GPUs (for a target
#             that is not 12.x: not reached, wired with --allow-unreached)
#   sm_89     (a 12.x TARGET) patch --target sm_89 exits 1, says the server
#             never calls the entry there and writes nothing;
#             --allow-unreached wires it with every caller not reached
#   heads     the release's DeepSeek-V4 model, run with stubs
#             (.ci/sglang_heads.py): unpatched it pads a rank's heads to 64
#             under tensor parallelism; patched, with the gate set on a 12.x
#             GPU, it passes the rank's own, and the route lists each place
#             of the model that pads as wired and the DSpark draft model
#             (0.5.16 on) as left padded (0.5.14 to 0.5.23 must; a newer
#             release that does not pad is reported)
#   logs      the startup lines the release's own sources log (weights,
#             graph capture, ready, capture failures), rendered by
#             .ci/sglang_log_lines.py, read by watch's phase rules and
#             failure signatures as what they are (watch/sglanglog's
#             TestReleaseLogLines; needs Go)
#
# One line per release; any failure prints the step and its output and exits 1.
#
# Usage: .ci/sglang-releases.sh BIN [TARGET]
#   BIN     the mlagen binary (e.g. bin/mlagen)
#   TARGET  the GPU target the kernel module is rendered for (default sm_120)
# Environment: MLAGEN_KERNELS=DIR installs DIR/sparse_mla_mma.py instead of the
# module BIN renders; MLAGEN_RELEASES="0.5.14 ..." replaces the fixed list.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 BIN [TARGET]   (BIN: a built mlagen, e.g. bin/mlagen)" >&2
  exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TARGET=${2:-sm_120}
read -r -a RELEASES <<< "${MLAGEN_RELEASES:-0.5.14 0.5.16 0.5.23}"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/mlagen/wheels
PY=${PYTHON:-python3}
# The wheels are for CPython 3.11 on manylinux 2.34; pip picks them whatever
# this machine runs, and installs nothing else.
PIPSEL=(--no-deps --only-binary=:all: --python-version 3.11 --platform manylinux_2_34_x86_64)
KARGS=(--target "$TARGET")
if [ -n "${MLAGEN_KERNELS:-}" ]; then KARGS+=(--kernels "$MLAGEN_KERNELS"); fi
# SGLang's DeepSeek-V4 backend calls the sm_120 entry on 12.x GPUs only.
VARGS=()
case "$TARGET" in
  sm_12*) REACH=yes ;;
  *) REACH=no KARGS+=(--allow-unreached) VARGS=(--allow-unreached) ;;
esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mlagen-releases.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$CACHE"

fail() { # step, log file
  echo "FAIL sglang $REL: $1" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/  | /' "$2" >&2
  exit 1
}

# wheel VERSION: the cached wheel's path, downloading it on first use.
wheel() {
  local w
  w=$(ls "$CACHE"/sglang-"$1"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$w" ]; then
    "$PY" -m pip download -q --progress-bar off "${PIPSEL[@]}" -d "$CACHE" "sglang==$1" > "$WORK/pip.log" 2>&1 \
      || { REL=$1; fail "pip download sglang==$1" "$WORK/pip.log"; }
    w=$(ls "$CACHE"/sglang-"$1"-*.whl | head -n 1)
  fi
  echo "$w"
}

# newest: the newest release on PyPI with a wheel for this platform, or ""
# when the index cannot be asked (reported, not a failure: the fixed list
# still runs).
newest() {
  "$PY" -m pip index versions sglang "${PIPSEL[@]:1}" 2> /dev/null | sed -n 's/^sglang (\(.*\))$/\1/p' | head -n 1 || true
}

# json FILE EXPR: evaluate a Python expression over the JSON report r; a
# report without what EXPR reads is a failure of the step that wrote it.
json() {
  "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2> "$WORK/json.err" \
    || { cat "$1" >> "$WORK/json.err"; fail "the report lacks $2" "$WORK/json.err"; }
}

# reaches FILE: the reach verdicts of the report's callers, sorted, joined.
reaches() {
  json "$1" '",".join(sorted({c["reach"] for e in r["route"]["entries"] for c in e["callers"]}))'
}

# check_route FILE VARIABLE: the report's route enters through the release's
# backend choice and is proven.
check_route() {
  local got
  got=$(json "$1" '",".join(e.get("variable","") for e in r["route"]["entries"])') || exit 1
  [ "$got" = "$2" ] || fail "route enters through '$got', want '$2'" "$1"
  [ "$(json "$1" 'len(r["missed"])')" = 0 ] || fail "references missed" "$1"
  [ "$(json "$1" 'len(r["problems"])')" = 0 ] || fail "problems reported" "$1"
  got=$(reaches "$1") || exit 1
  [ "$got" = "$REACH" ] || fail "the backend's calls of the entry are reached '$got' on $TARGET, want '$REACH'" "$1"
}

# unreached REL: the pristine tree of cycle patched for sm_89, whose GPUs the
# DeepSeek-V4 backend never calls the entry on: refused, nothing written;
# wired with --allow-unreached, every caller reported as not reached.
unreached() {
  local d=$WORK/$1
  mkdir -p "$d/s89"
  cp -a "$d/pristine/." "$d/s89/"
  if "$BIN" patch --target sm_89 "$d/s89/sglang" > "$d/s89.log" 2>&1; then
    fail "patch --target sm_89 passed on a tree whose backend calls the entry on 12.x GPUs only" "$d/s89.log"
  fi
  grep -q "on sm_89 the server never calls" "$d/s89.log" || fail "patch --target sm_89 refused without saying why" "$d/s89.log"
  diff -r "$d/pristine" "$d/s89" > "$d/s89.diff" 2>&1 || fail "the refused patch wrote something" "$d/s89.diff"
  "$BIN" patch --target sm_89 --allow-unreached --json "$d/s89/sglang" > "$d/s89.json" 2> "$d/s89.err" \
    || fail "patch --target sm_89 --allow-unreached (exit $?)" "$d/s89.err"
  [ "$(reaches "$d/s89.json")" = no ] \
    || fail "--allow-unreached: the callers are not all reported as not reached" "$d/s89.json"
  CALLER=$(json "$d/s89.json" '"; ".join(c["path"] + ":" + str(c["line"]) + " under " + c["test"] for e in r["route"]["entries"] for c in e["callers"])')
}

# cycle REL WHEEL VARIABLE: patch, verify, repatch, revert on the unpacked wheel.
cycle() {
  local d=$WORK/$1 root
  mkdir -p "$d/pristine" "$d/site"
  (cd "$d/pristine" && "$PY" -m zipfile -e "$2" .) > "$d/unzip.log" 2>&1 || fail "unpack $2" "$d/unzip.log"
  tritonmeta "$d/pristine" "$(triton "$1")"
  cp -a "$d/pristine/." "$d/site/"
  root=$d/site/sglang
  "$BIN" patch "${KARGS[@]}" --json "$root" > "$d/patch.json" 2> "$d/patch.err" || fail "patch (exit $?)" "$d/patch.err"
  check_route "$d/patch.json" "$3"
  json "$d/patch.json" '"\n".join(c["path"] for c in r["changes"] if c["path"].endswith(".py"))' > "$d/edited"
  (cd "$root" && "$PY" -c 'import ast,sys; [ast.parse(open(p, "rb").read(), p) for p in sys.argv[1:]]' $(cat "$d/edited")) \
    > "$d/parse.log" 2>&1 || fail "an edited file does not parse as Python" "$d/parse.log"
  grep -q '/flash_mla_sm120_mma.py,sha256=' "$d"/site/sglang-*.dist-info/RECORD || fail "RECORD does not list the kernel module"
  "$BIN" verify "${VARGS[@]}" --json "$root" > "$d/verify.json" 2> "$d/verify.err" || fail "verify (exit $?)" "$d/verify.json"
  check_route "$d/verify.json" "$3"
  heads "$1"
  [ "$(json "$d/verify.json" 'r["triton"]["version"] + " " + str(r["triton"]["checked"])')" = "$(triton "$1") True" ] \
    || fail "verify does not name Triton $(triton "$1") beside SGLang as checked" "$d/verify.json"
  "$BIN" patch "${KARGS[@]}" --json "$root" > "$d/again.json" 2>&1 || fail "second patch" "$d/again.json"
  [ "$(json "$d/again.json" 'r["nothing_to_do"]')" = True ] || fail "a second patch changed more" "$d/again.json"
  "$BIN" patch --revert "$root" > "$d/revert.log" 2>&1 || fail "revert" "$d/revert.log"
  diff -r "$d/pristine" "$d/site" > "$d/diff.log" 2>&1 || fail "revert is not byte-identical" "$d/diff.log"
  EDITS=$(json "$d/patch.json" 'len(r["changes"])')
  WHOLE=$(json "$d/patch.json" '"whole call guarded" if r["route"]["whole_call"]["wired"] else "whole call per cache (the kernel module has no whole-call entry)"')
}

# piptrip REL WHEEL: install with pip into a scratch venv and patch there;
# reinstall over the patched tree: pip removes what the old RECORD listed, so
# the kernel module must be gone, and verify must not call the tree wired.
piptrip() {
  local v=$WORK/venv sp
  [ -x "$v/bin/python" ] || "$PY" -m venv "$v" > "$WORK/venv.log" 2>&1 || fail "python3 -m venv" "$WORK/venv.log"
  sp=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$v/bin/python" -m pip install -q --no-deps --no-compile "$2" > "$WORK/pip.log" 2>&1 || fail "pip install" "$WORK/pip.log"
  "$BIN" patch "${KARGS[@]}" --json "$sp/sglang" > "$WORK/pip-patch.json" 2>&1 || fail "patch in site-packages" "$WORK/pip-patch.json"
  kp=$sp/sglang/$(json "$WORK/pip-patch.json" 'r["kernel_module"]')
  [ -f "$kp" ] || fail "no kernel module at $kp after patching" "$WORK/pip-patch.json"
  tritonmeta "$sp" 9.9.9
  "$BIN" verify "${VARGS[@]}" --json "$sp/sglang" > "$WORK/pip-verify.json" 2>&1 || fail "verify beside an unchecked Triton (exit $?)" "$WORK/pip-verify.json"
  [ "$(json "$WORK/pip-verify.json" 'r["triton"]["version"] + " " + str(r["triton"]["checked"])')" = "9.9.9 False" ] \
    || fail "verify does not name Triton 9.9.9 beside SGLang as unchecked" "$WORK/pip-verify.json"
  rm -rf "$sp/triton-9.9.9.dist-info"
  "$v/bin/python" -m pip install -q --no-deps --no-compile --force-reinstall "$2" > "$WORK/pip.log" 2>&1 || fail "pip reinstall" "$WORK/pip.log"
  [ ! -e "$kp" ] || fail "pip left the kernel module behind: RECORD did not list it"
  if "$BIN" verify "$sp/sglang" > "$WORK/pip-verify.log" 2>&1; then
    fail "verify passes on a tree pip reinstalled over the wiring" "$WORK/pip-verify.log"
  fi
  # Patched again and the kernel module compiled, as the server's import
  # does: --revert deletes its bytecode with it, so pip uninstall leaves no
  # sglang/ folder behind.
  "$BIN" patch "${KARGS[@]}" "$sp/sglang" > "$WORK/pip-patch.log" 2>&1 || fail "patch after the reinstall" "$WORK/pip-patch.log"
  "$v/bin/python" -c 'import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True)' "$kp" > "$WORK/pyc.log" 2>&1 || fail "compile the kernel module" "$WORK/pyc.log"
  ls "$(dirname "$kp")"/__pycache__/flash_mla_sm120_mma.*.pyc > /dev/null 2>&1 || fail "py_compile wrote no bytecode of the kernel module"
  "$BIN" patch --revert "$sp/sglang" > "$WORK/pip-revert.log" 2>&1 || fail "revert in site-packages" "$WORK/pip-revert.log"
  "$v/bin/python" -m pip uninstall -q -y sglang > "$WORK/pip.log" 2>&1 || fail "pip uninstall" "$WORK/pip.log"
  [ ! -e "$sp/sglang" ] || fail "pip uninstall after --revert left $(find "$sp/sglang" -type f | head -n 3 | tr '\n' ' ')"
}

# heads REL: the release's DeepSeek-V4 model, its padding code run with
# stubs by .ci/sglang_heads.py: unpatched it pads a rank's query heads to 64
# under tensor parallelism (FlashMLA's width); patched, with the gate set on
# a 12.x GPU, it passes the rank's own, and the route lists every place of
# the model that pads as wired (docs/sglang.md, "The heads a call gets under
# tensor parallelism"); a DSpark draft model, where the release has one, is
# listed as left padded. Called by cycle on the patched tree. A release of
# 0.5.14 to 0.5.23 must do all of it; a newer one that does not pad is
# reported.
heads() {
  local d=$WORK/$1 lo hi
  if ! "$PY" "$HERE/sglang_heads.py" "$d/pristine" --expect padded > "$d/heads-pristine.log" 2>&1; then
    lo=$(printf '%s\n%s\n' 0.5.14 "$1" | sort -V | head -n 1)
    hi=$(printf '%s\n%s\n' "$1" 0.5.23 | sort -V | tail -n 1)
    if [ "$lo" = 0.5.14 ] && [ "$hi" = 0.5.23 ]; then
      fail "docs/sglang.md says $1 pads a rank's heads to 64 under tensor parallelism (its model, and its DSpark draft where it has one); the log shows where it does not" "$d/heads-pristine.log"
    fi
    HEADS="no head padding found ($(tail -n 1 "$d/heads-pristine.log"))"
    return
  fi
  "$PY" "$HERE/sglang_heads.py" "$d/site" --expect native > "$d/heads.log" 2>&1 \
    || fail "patched, the model does not pass a rank's own heads with the gate set on a 12.x GPU, or the DSpark draft no longer pads (the log says which)" "$d/heads.log"
  local model='[h for h in r["route"]["heads"] if h["path"].endswith("/models/deepseek_v4.py")]'
  [ "$(json "$d/patch.json" "len($model) > 0 and all(h[\"wired\"] for h in $model)")" = True ] \
    || fail "the route does not list every place of deepseek_v4.py that pads a rank's heads as wired" "$d/patch.json"
  local draft='[h for h in r["route"]["heads"] if h["path"].endswith("/models/deepseek_v4_dspark.py")]'
  if [ -e "$d/pristine/sglang/srt/models/deepseek_v4_dspark.py" ]; then
    [ "$(json "$d/patch.json" "len($draft) > 0 and not any(h[\"wired\"] for h in $draft)")" = True ] \
      || fail "the route does not list the DSpark draft model as left padded" "$d/patch.json"
  fi
  HEADS="pads a rank's heads to 64 under TP, patched passes its own ($(json "$d/patch.json" '", ".join(h["function"] + ("" if h["wired"] else " left padded") for h in r["route"]["heads"])'))"
}

# loglines REL: the release's startup lines against watch's rules.
loglines() {
  local d=$WORK/$1
  "$PY" "$HERE/sglang_log_lines.py" "$d/pristine/sglang" > "$d/loglines.txt" 2> "$d/loglines.err" \
    || fail "rendering the release's startup lines" "$d/loglines.err"
  MLAGEN_SGLANG_LOG_LINES=$d/loglines.txt "$WORK/sglanglog.test" -test.run '^TestReleaseLogLines$' -test.v \
    > "$d/loglines.log" 2>&1 || fail "watch's rules on the release's startup lines" "$d/loglines.log"
  grep -q -- '--- PASS: TestReleaseLogLines' "$d/loglines.log" || fail "TestReleaseLogLines did not run" "$d/loglines.log"
  LOGLINES=$(wc -l < "$d/loglines.txt")
}

# triton REL: the Triton a release installs, through the torch its wheel
# pins (docs/targets.md, "Triton versions").
triton() {
  case "$1" in
    0.5.1[3-7] | 0.5.1[3-7].*) echo 3.6.0 ;;
    0.5.1[89] | 0.5.1[89].* | 0.5.2[01] | 0.5.2[01].*) echo 3.7.1 ;;
    *) echo 3.8.0 ;;
  esac
}

# tritonmeta DIR VERSION: a triton dist-info of VERSION in DIR (its METADATA
# only: what mlagen reads of an installed Triton).
tritonmeta() {
  mkdir -p "$1/triton-$2.dist-info"
  printf 'Metadata-Version: 2.1\nName: triton\nVersion: %s\n\n' "$2" > "$1/triton-$2.dist-info/METADATA"
}

# variable REL: the backend variable the release's entry point chooses by.
variable() {
  case "$1" in
    0.5.13* | 0.5.14*) echo SGLANG_SM120_TRITON_FLASHMLA ;;
    *) echo SGLANG_SM120_FLASHMLA_BACKEND ;;
  esac
}

START=$SECONDS
HERE=$(cd "$(dirname "$0")" && pwd)
(cd "$HERE/.." && go test -c -o "$WORK/sglanglog.test" ./watch/sglanglog) > "$WORK/gotest.log" 2>&1 \
  || { REL=-; fail "go test -c ./watch/sglanglog" "$WORK/gotest.log"; }
latest=$(newest)
if [ -z "$latest" ]; then
  echo "newest on PyPI: not checked (pip index versions failed; the fixed releases run)"
else
  last=$(printf '%s\n' "${RELEASES[@]}" | sort -V | tail -n 1)
  if [ "$(printf '%s\n%s\n' "$last" "$latest" | sort -V | tail -n 1)" != "$last" ]; then
    echo "newest on PyPI: $latest, newer than $last: added"
    RELEASES+=("$latest")
  else
    echo "newest on PyPI: $latest (in the list)"
  fi
fi
for REL in "${RELEASES[@]}"; do
  t0=$SECONDS
  w=$(wheel "$REL")
  t1=$SECONDS
  cycle "$REL" "$w" "$(variable "$REL")"
  loglines "$REL"
  piptrip "$REL" "$w"
  reach="caller not reached on $TARGET (wired with --allow-unreached)"
  if [ "$REACH" = yes ]; then
    unreached "$REL"
    reach="caller reached on $TARGET, sm_89 refused ($CALLER)"
  fi
  echo "sglang $REL: patch ok ($EDITS files, route through $(variable "$REL"), $WHOLE), verify ok (Triton $(triton "$REL") beside it named), repatch no-op, revert identical, pip removes the module, reinstall caught, uninstall after revert clean, $reach, $HEADS, watch reads its $LOGLINES startup lines ($((SECONDS - t0)) s, download $((t1 - t0)) s)"
  # Its copies go once it passed (three of 0.13 GB for 0.5.23): the disk CI runs on
  # is shared.
  rm -rf "${WORK:?}/$REL"
done
echo "all ${#RELEASES[@]} releases passed in $((SECONDS - START)) s (wheels cached in $CACHE)"
