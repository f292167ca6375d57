#!/usr/bin/env bash
# python_attribution.sh - issue 37 on the GPU: the corpus' PyTorch programs
# captured with --pytorch=modules --python-sampling --python-backtrace=cuda
# (fixtures, checked by python_check.py), then the cost of each mode:
# ROUNDS interleaved rounds of untraced, perfkit's default, and each mode
# added alone, step_ms medians per program. Prints a table last; captures
# and logs go to $OUT.
#
#   tests/gpu/run.sh --stage BUILD .gpu/collector   (CPU machine, a CUDA build)
#   tests/gpu/python_attribution.sh [BUILD]         (GPU machine, repo root)
#   PROGRAMS="python_hotspots hf_gpt2_train" (captured), COST_PROGRAMS (timed),
#   CONFIGS=${CONFIGS:-untraced default modules sampling backtrace} (timed, in turn
#   within each round; sampling_py: --python-sampling without native frames),
#   ROUNDS=7, CAPTURE=0 to skip the captures, COST=0 to skip the costs,
#   PIN="taskset -c 2-9" (every timed run on the same CPUs), STEPS (the timed
#   steps of a run, for the programs that read it; longer runs, steadier figures)
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd) || exit 2
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PROGRAMS=${PROGRAMS:-python_hotspots hf_gpt2_train timm_resnet_dataloader}
COST_PROGRAMS=${COST_PROGRAMS:-python_hotspots hf_gpt2_train}
ROUNDS=${ROUNDS:-7}
COST=${COST:-1}
CAPTURE=${CAPTURE:-1}
PIN=${PIN:-taskset -c 2-9}
W=$(mktemp -d)
LOG=$OUT/python_attribution.log
: >"$LOG"
cd "$SRC/programs" || exit 2

[ "$CAPTURE" = 1 ] || PROGRAMS=""
for p in $PROGRAMS; do
	echo "=== capture $p" >>"$LOG"
	timeout -k 5 300 "$PERFKIT" run -f -o "$W/py_$p.sqlite" --pytorch=modules --python-sampling \
		--python-backtrace=cuda -- python3 "$p.py" >>"$LOG" 2>&1
	echo "--- exit $?" >>"$LOG"
	python3 "$SRC/python_check.py" "$W/py_$p.sqlite" >>"$LOG" 2>&1
	echo "--- check exit $?" >>"$LOG"
done
[ -z "$PROGRAMS" ] || (cd "$W" && tar -cJf "$OUT/python_captures.tar.xz" py_*.sqlite) 2>>"$LOG"

[ "$COST" = 1 ] || { grep -E "^/|modules fwd|exit" "$LOG"; exit 0; }
# step_ms of one run of program p under config c
run_config() {
	local p=$1 c=$2 out
	case $c in
	untraced) out=$($PIN python3 "$p.py" 2>&1) ;;
	default) out=$($PIN "$PERFKIT" run -f -o "$W/cost.sqlite" -- python3 "$p.py" 2>&1) ;;
	modules) out=$($PIN "$PERFKIT" run -f -o "$W/cost.sqlite" --pytorch=modules -- python3 "$p.py" 2>&1) ;;
	sampling) out=$($PIN "$PERFKIT" run -f -o "$W/cost.sqlite" --python-sampling -- python3 "$p.py" 2>&1) ;;
	sampling_py) out=$($PIN "$PERFKIT" run -f -o "$W/cost.sqlite" --python-sampling --python-native-frames=off \
		-- python3 "$p.py" 2>&1) ;;
	backtrace) out=$($PIN "$PERFKIT" run -f -o "$W/cost.sqlite" --python-backtrace=cuda -- python3 "$p.py" 2>&1) ;;
	esac
	echo "$out" >>"$LOG"
	echo "$out" | awk '/^step_ms/ {print $2}' | tail -1
}
CONFIGS=${CONFIGS:-untraced default modules sampling backtrace}
declare -A V
for r in $(seq "$ROUNDS"); do
	for p in $COST_PROGRAMS; do
		for c in $CONFIGS; do
			v=$(run_config "$p" "$c")
			V[$p,$c]="${V[$p,$c]:-} $v"
			echo "round $r $p $c $v" >>"$LOG"
		done
	done
done
python3 - "$ROUNDS" "$COST_PROGRAMS" "$CONFIGS" >"$OUT/python_cost.txt" <<PY
import statistics, sys
rounds, progs, configs = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3].split()
vals = {}
$(for p in $COST_PROGRAMS; do for c in $CONFIGS; do echo "vals[('$p','$c')] = [float(x) for x in '${V[$p,$c]}'.split()]"; done; done)
from math import comb
# each round's ratio to the default capture of the same round (paired), its
# median and an interval of order statistics around it: the k-th smallest
# to the k-th largest, k the largest whose interval holds the median with
# at least 95% confidence (binomial), or the range where none does
def interval(r):
    r, n = sorted(r), len(r)
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n >= 0.95:
        k += 1
    conf = 1 - 2 * sum(comb(n, i) for i in range(k)) / 2 ** n
    return r[k - 1], r[n - k], conf
print("program            config     n  median_ms  min_ms  max_ms  paired_vs_default: median (interval, confidence)")
for p in progs:
    dflt = vals.get((p, 'default'), [])
    for c in configs:
        v = vals[(p, c)]
        if not v:
            print("%-18s %-9s  0" % (p, c)); continue
        m = statistics.median(v)
        r = [a / b for a, b in zip(v, dflt)] if len(dflt) == len(v) else []
        pr = "%.3f (%.3f-%.3f, %.1f%%)" % ((statistics.median(r),) + tuple(x * (100 if i == 2 else 1) for i, x in enumerate(interval(r)))) if r else "-"
        print("%-18s %-9s %2d  %9.3f %7.3f %7.3f  %s" % (p, c, len(v), m, min(v), max(v), pr))
PY
grep -E "^/|exit" "$LOG" | head -20
cat "$OUT/python_cost.txt"
