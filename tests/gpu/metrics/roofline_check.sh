#!/usr/bin/env bash
# roofline_check.sh - on the GPU machine: `perfkit peaks`, a
# `perfkit run --metrics=roofline` capture of metrics_probe checked launch
# by launch against ncu (--clock-control none), sampling, then `perfkit
# roofline` and `perfkit diagnose` on the capture. Logs go to $OUT.
#
#   tests/gpu/metrics/roofline_check.sh DIR
#
# DIR holds perfkit, perfkit-peaks, libperfkit-inject.so, metrics_probe and
# libcjson.so.1 (copied from a build: cli/, collectors/, tests/gpu/).
set -u
D=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
export LD_LIBRARY_PATH=$D:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export HOME=$OUT/home
mkdir -p "$HOME"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
P=sm__sass_thread_inst_executed_op_
METRICS=gpu__time_duration.sum,${P}dfma_pred_on.sum,${P}dadd_pred_on.sum,${P}dmul_pred_on.sum
METRICS=$METRICS,${P}ffma_pred_on.sum,${P}fadd_pred_on.sum,${P}fmul_pred_on.sum
METRICS=$METRICS,${P}hfma_pred_on.sum,${P}hadd_pred_on.sum,${P}hmul_pred_on.sum
METRICS=$METRICS,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum

nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv
echo "== perfkit peaks"
/usr/bin/time -f "peaks took %e s" "$D/perfkit" peaks 2>&1 | tee "$OUT/peaks.txt"
"$D/perfkit" peaks --format=json > "$OUT/peaks.json" 2>&1
echo "== perfkit run --metrics=roofline"
/usr/bin/time -f "untraced probe %e s" "$D/metrics_probe" > /dev/null
/usr/bin/time -f "metrics run %e s" "$D/perfkit" run -f --metrics=roofline -o "$OUT/probe.sqlite" -- "$D/metrics_probe" 2>&1 | tail -8
"$D/perfkit" run -f --metrics=memory -o "$OUT/probe_memory.sqlite" -- "$D/metrics_probe" 2>&1 | grep -i "launches"
"$D/perfkit" run -f --metrics=roofline --metrics-sample=2 -o "$OUT/probe2.sqlite" -- "$D/metrics_probe" 2>&1 | grep -i "metrics\|launches"
echo "== ncu"
"$NCU" --metrics "$METRICS" --clock-control none --csv --page raw "$D/metrics_probe" > "$OUT/ncu.csv" 2> "$OUT/ncu.err" || tail -5 "$OUT/ncu.err"
# ncu flushes the caches before each kernel by default; perfkit does not
# touch them (the program's own cache state), so compare with both
"$NCU" --metrics "$METRICS" --clock-control none --cache-control none --csv --page raw "$D/metrics_probe" > "$OUT/ncu_nocache.csv" 2>> "$OUT/ncu.err"
echo "== roofline"
"$D/perfkit" roofline "$OUT/probe.sqlite" 2>&1 | cut -c1-220
echo "== diagnose"
"$D/perfkit" diagnose "$OUT/probe.sqlite" 2>&1 | head -40
echo "== sampled run (every 2nd launch of each kernel)"
python3 - "$OUT/probe2.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("metric rows", db.execute("SELECT count(*) FROM PERFKIT_KERNEL_METRICS").fetchone()[0],
      "kernel rows", db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])
PY
echo "== check against ncu --cache-control all (default)"
python3 "$SRC/roofline_check.py" "$OUT/probe.sqlite" "$OUT/ncu.csv" 2>&1 | tee "$OUT/check.txt"
echo "== check against ncu --cache-control none"
python3 "$SRC/roofline_check.py" "$OUT/probe.sqlite" "$OUT/ncu_nocache.csv" 2>&1 | tee -a "$OUT/check.txt"
echo "== memory set (one pass) against ncu --cache-control all"
python3 "$SRC/roofline_check.py" "$OUT/probe_memory.sqlite" "$OUT/ncu.csv" --memory 2>&1 | tee -a "$OUT/check.txt"
echo "== roofline of the memory-set capture"
"$D/perfkit" roofline "$OUT/probe_memory.sqlite" 2>&1 | cut -c1-220
