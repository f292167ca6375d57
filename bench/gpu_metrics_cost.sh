#!/usr/bin/env bash
# gpu_metrics_cost.sh - what sampled GPU metrics cost: each bundled workload
# (naive and optimized) under `perfkit run` with and without --gpu-metrics
# (10,000 samples a second), the two runs of a workload interleaved, ROUNDS
# rounds; the table holds each median ms/step with the rounds' range
# (min-max), the difference of the medians, the median of each round's
# ratio of its two runs (made side by side) with a 95% confidence interval
# (order statistics, from 6 rounds on) and the samples the runs with
# --gpu-metrics lost (the capture's gpu_metric_buffer_overflows and
# gpu_metric_samples_dropped). Raw values, a run a line (workload, variant,
# config, ms/step, overflows, dropped, round), in $OUT/pm_cost_raw.tsv, the table
# also in $OUT/pm_cost.txt. Each workload times at least a second of steps
# (rollout and transformer: the median of 20 timed runs of many steps), so
# that a run's ms/step averages more than launch noise.
#
#   bench/gpu_metrics_cost.sh [BUILD]   BUILD as for tests/gpu/run.sh
#   ROUNDS=5
#   CONFIGS="trace gpu_metrics"   gpu_metrics@MS: sampling with the sampler
#                                 decoding every MS ms (PERFKIT_GPU_METRICS_DECODE_MS)
#   ONLY="transformer:naive ..."  only these workload:variant pairs
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d)
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# ms/step of one workload run: the first JSON line's step_ms.
step_ms() { grep -h '^{' "$1" | head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["step_ms"])' 2>/dev/null; }
# A counter of a capture (PERFKIT_COUNTERS), 0 when it has none.
counter() { # FILE NAME
	python3 - "$1" "$2" <<'PY' 2>/dev/null || echo 0
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM PERFKIT_COUNTERS WHERE name = ?", (sys.argv[2],)).fetchone()
print(row[0] if row else 0)
PY
}

CONFIGS=${CONFIGS:-trace gpu_metrics}
ONLY=${ONLY:-}
WL=("hash_embedding --rows=1M --iters=500" "batched_forces --batch=16 --iters=600"
    "rollout --iters=20" "transformer --iters=20")
RAW=$OUT/pm_cost_raw.tsv
: >"$RAW"
for r in $(seq "$ROUNDS"); do
	for spec in "${WL[@]}"; do
		set -- $spec
		bin=$BUILD/workloads/$1
		shift
		for variant in naive optimized; do
			[ -n "$ONLY" ] && [[ " $ONLY " != *" $(basename "$bin"):$variant "* ]] && continue
			for cfg in $CONFIGS; do
				opt=() decode=()
				[[ $cfg = gpu_metrics* ]] && opt=(--gpu-metrics)
				[[ $cfg = gpu_metrics@* ]] && decode=(PERFKIT_GPU_METRICS_DECODE_MS=${cfg#gpu_metrics@})
				rm -f "$W/cost.sqlite"
				env "${decode[@]}" timeout -k 5 300 "$PERFKIT" run "${opt[@]}" -f -o "$W/cost.sqlite" -- \
					"$bin" --variant=$variant --json "$@" >"$W/cost.log" 2>&1
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$bin")" $variant $cfg \
					"$(step_ms "$W/cost.log")" \
					"$(counter "$W/cost.sqlite" gpu_metric_buffer_overflows)" \
					"$(counter "$W/cost.sqlite" gpu_metric_samples_dropped)" "$r" >>"$RAW"
			done
		done
	done
done
python3 - "$RAW" >"$OUT/pm_cost.txt" <<'PY'
import sys, statistics
from math import comb
rows, lost, by_round = {}, {}, {}
for line in open(sys.argv[1]):
    w, v, c, ms, overflows, dropped, rnd = line.rstrip("\n").split("\t")
    if ms:
        rows.setdefault((w, v, c), []).append(float(ms))
        by_round[(w, v, c, rnd)] = float(ms)
    if c != "trace":
        o, d = lost.get((w, v, c), (0, 0))
        lost[(w, v, c)] = (o + int(overflows or 0), d + int(dropped or 0))

def median_ci(xs):
    """The median of xs and a distribution-free confidence interval of at
    least 95% for it (order statistics, binomial): None where there are too
    few values for one (fewer than 6)."""
    xs = sorted(xs)
    n = len(xs)
    k = 0
    while 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n <= 0.05:
        k += 1
    return statistics.median(xs), ((xs[k - 1], xs[n - k]) if k else None)

print("%-16s %-10s %-16s %12s %17s %14s %17s %8s %17s %6s %9s %7s" % (
    "workload", "variant", "config", "trace ms", "(min-max)", "+metrics ms", "(min-max)", "cost",
    "paired (95% CI)", "runs", "overflows", "dropped"))
for (w, v, c) in sorted(k for k in rows if k[2] != "trace"):
    t = rows.get((w, v, "trace"), [])
    g = rows[(w, v, c)]
    if t and g:
        mt, mg = statistics.median(t), statistics.median(g)
        # each round's ratio of the two runs made side by side
        ratios = [by_round[(w, v, c, r)] / by_round[(w, v, "trace", r)] - 1
                  for (ww, vv, cc, r) in by_round if (ww, vv, cc) == (w, v, c)
                  and (w, v, "trace", r) in by_round]
        mr, ci = median_ci(ratios) if ratios else (0, None)
        paired = "%+.1f%% (%+.1f,%+.1f)" % (mr * 100, ci[0] * 100, ci[1] * 100) if ci else \
                 "%+.1f%%" % (mr * 100)
        print("%-16s %-10s %-16s %12.4f %17s %14.4f %17s %+7.1f%% %17s %6d %9d %7d" % (
            w, v, c, mt, "(%.4f-%.4f)" % (min(t), max(t)), mg, "(%.4f-%.4f)" % (min(g), max(g)),
            (mg / mt - 1) * 100, paired, min(len(t), len(g)), *lost.get((w, v, c), (0, 0))))
PY
cat "$OUT/pm_cost.txt"
