#!/usr/bin/env bash
# gpu_metrics_cost.sh - what sampled GPU metrics cost: each bundled workload
# (naive and optimized) under `perfkit run` with and without --gpu-metrics
# (10,000 samples a second), the two runs of a workload interleaved, ROUNDS
# rounds; the table holds each median ms/step and the difference. Raw
# values in $OUT/pm_cost_raw.tsv, the table also in $OUT/pm_cost.txt.
#
#   bench/gpu_metrics_cost.sh [BUILD]   BUILD as for tests/gpu/run.sh
#   ROUNDS=5
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d)
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ms/step of one workload run: the first JSON line's step_ms.
step_ms() { grep -h '^{' "$1" | head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["step_ms"])' 2>/dev/null; }

WL=("hash_embedding --rows=1M --iters=50" "batched_forces --batch=16 --iters=200"
    "rollout --iters=5" "transformer --iters=3")
RAW=$OUT/pm_cost_raw.tsv
: >"$RAW"
for r in $(seq "$ROUNDS"); do
	for spec in "${WL[@]}"; do
		set -- $spec
		bin=$BUILD/workloads/$1
		shift
		for variant in naive optimized; do
			for cfg in trace gpu_metrics; do
				opt=()
				[ $cfg = gpu_metrics ] && opt=(--gpu-metrics)
				timeout -k 5 300 "$PERFKIT" run "${opt[@]}" -f -o "$W/cost.sqlite" -- \
					"$bin" --variant=$variant --json "$@" >"$W/cost.log" 2>&1
				printf '%s\t%s\t%s\t%s\n' "$(basename "$bin")" $variant $cfg \
					"$(step_ms "$W/cost.log")" >>"$RAW"
			done
		done
	done
done
python3 - "$RAW" >"$OUT/pm_cost.txt" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    w, v, c, ms = line.rstrip("\n").split("\t")
    if ms:
        rows.setdefault((w, v, c), []).append(float(ms))
print("%-16s %-10s %12s %14s %8s %6s" % ("workload", "variant", "trace ms", "+metrics ms", "cost", "runs"))
for (w, v) in sorted({(k[0], k[1]) for k in rows}):
    t = rows.get((w, v, "trace"), [])
    g = rows.get((w, v, "gpu_metrics"), [])
    if t and g:
        mt, mg = statistics.median(t), statistics.median(g)
        print("%-16s %-10s %12.4f %14.4f %+7.1f%% %6d" % (w, v, mt, mg, (mg / mt - 1) * 100, min(len(t), len(g))))
PY
cat "$OUT/pm_cost.txt"
