#!/usr/bin/env bash
# lab/f16, second call: base against f16s (prepare.py) at 64 heads, as
# device.sh ran f16; f16s checked first. From the repository root after
# prepare.py, carrying lab/f16/base and lab/f16/f16s (git-ignored).
V=pp_h64_t32_k1_w8_s1,pp_h64_t32_k2_w8_s1,pp_h64_t32_k8_w8_s1 HEADS=64 \
  exec bash "$(dirname "$0")/../abtest.sh" f16s lab/f16 base f16s
