# The set-up every lab device call shares; source it from the repository
# root as `source lab/prologue.sh NAME`: OUT (what comes back, /tmp/NAME
# unless set), a fresh work folder W=/tmp/NAME-work, log (a timed line in
# W/steps.txt), bg NAME CMD... (CMD in the background, output in
# W/NAME.log, its exit in W/exits.txt), and the GPU and versions in
# W/gpu.txt.
OUT=${OUT:-/tmp/$1}
W=/tmp/$1-work
rm -rf "$W"; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
START=$(date +%s)
log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$W/steps.txt"; }
bg() { local n=$1; shift; ("$@" >"$W/$n.log" 2>&1; echo "$n exit $?" >>"$W/exits.txt") & }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u
} | tee "$W/gpu.txt"
