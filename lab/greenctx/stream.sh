#!/usr/bin/env bash
# lab/greenctx, second call: gpu/splits.py on both shipped modules with
# only a green context's stream current (the primary context stays
# current), as SGLang's PD multiplexing runs decode: 72 multiprocessors.
# From the repository root:  OUT=$OUT bash lab/greenctx/stream.sh
mkdir -p "${OUT:?}"
timeout 170 python3 gpu/splits.py sm90 "$OUT/sm90-g72-stream.json" --sms 72 --stream-only > "$OUT/sm90-g72-stream.txt" 2>&1
DISABLE_MMA_V3=1 timeout 170 python3 gpu/splits.py sm120 "$OUT/sm120-g72-stream.json" --sms 72 --stream-only > "$OUT/sm120-g72-stream.txt" 2>&1
grep -h -E '^(device_sms|calibration|FAIL|sm)' "$OUT"/*-stream.txt
grep -h -c 'told' "$OUT"/*-stream.txt
