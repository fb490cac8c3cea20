#!/usr/bin/env bash
# install-torch.sh VENV PINS SHARED: the pinned torch (and numpy) in a venv
# of its own at VENV, with the least disk that allows.
#
# PyPI's torch brings the CUDA libraries it needs to import: about 2.7 GB of
# wheels that unpack to 3.9 GB. One `pip install torch` downloads every
# wheel before it unpacks any, so it needs both at once (a CI run once
# failed there with the disk full). Here pip resolves the whole set first
# without downloading it (--dry-run, from the index's metadata), then
# installs it one wheel at a time (--no-deps): the most it holds beside
# what is installed is the largest wheel, torch's own (about 0.55 GB).
# No wheel is cached and no bytecode compiled ahead of use.
#
# SHARED is the site-packages of the venv that already has the pinned
# Triton: its `triton` is linked in, not installed a second time (0.6 GB).
# A last pip install of the pins without the index proves the set is
# complete (it fails on anything missing), and `import torch` that it
# works. Then .ci/slim.py removes the CUDA libraries that nothing torch
# ships loads: 3.2 GB stay.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 VENV PINS SHARED_SITE_PACKAGES" >&2
	exit 2
fi
venv=$1 pins=$2 shared=$3

# The shared Triton must be the pinned one: pip would otherwise replace it,
# deleting .venv's files through the links.
want=$(sed -n 's/^triton==//p' "$pins")
dist=$shared/triton-$want.dist-info
if [ -z "$want" ] || [ ! -d "$shared/triton" ] || [ ! -d "$dist" ]; then
	echo "torch deps: no Triton ${want:-(no pin in $pins)} to share under $shared (wanted triton/ and $(basename "$dist")/)" >&2
	exit 1
fi

# What the set takes installed (3.9 GB) with the largest wheel beside it,
# and a margin; measured on torch 2.11.0 (update with the pins).
need_mb=4600
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
free_mb=$(df -Pk "$(dirname "$venv")" | awk 'NR == 2 { print int($4 / 1024) }')
echo "torch deps: $((free_mb / 1024)).$((free_mb % 1024 * 10 / 1024)) GB free where $venv goes, about 4.6 GB needed"
if [ "$free_mb" -lt "$need_mb" ]; then
	echo "torch deps: not enough disk: free at least 4.6 GB under $(dirname "$venv")," >&2
	echo "  or run 'make checks' (the checks that need torch are then skipped and say so)" >&2
	exit 1
fi

python3 -m venv "$venv"
pip=("$venv/bin/pip" --no-cache-dir)
"${pip[@]}" install -q -c "$pins" pip

site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -s "$(cd "$shared/triton" && pwd -P)" "$(cd "$dist" && pwd -P)" "$site/"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${pip[@]}" install -q --dry-run --report "$tmp/plan.json" -c "$pins" torch numpy
"$venv/bin/python3" - "$tmp/plan.json" > "$tmp/plan.txt" <<'EOF'
import json
import sys

with open(sys.argv[1]) as f:
    plan = json.load(f)
for item in plan["install"]:
    meta = item["metadata"]
    print(f"{meta['name']}=={meta['version']}")
EOF
n=$(wc -l < "$tmp/plan.txt")
i=0
while read -r req; do
	i=$((i + 1))
	"${pip[@]}" install -q --no-deps --no-compile --progress-bar off "$req" \
		|| { echo "torch deps: installing $req ($i of $n) failed; df says:" >&2; df -h "$venv" >&2; exit 1; }
done < "$tmp/plan.txt"

"${pip[@]}" install -q --no-index -c "$pins" torch triton numpy \
	|| { echo "torch deps: the wheels installed one at a time are not the whole set pip resolves" >&2; exit 1; }
v=$("$venv/bin/python3" -c 'import torch, triton; print(f"torch {torch.__version__}, Triton {triton.__version__}")')
echo "torch deps: $v ($n wheels, one at a time)"
# What the checks never load goes (0.76 GB of CUDA libraries); slim.py
# proves torch still imports and computes.
"$venv/bin/python3" "$(dirname "$0")/slim.py" torch
