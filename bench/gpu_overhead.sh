#!/usr/bin/env bash
# gpu_overhead.sh - what tracing costs, on the GPU machine, as one table.
#
# Programs: bench/gpu/launch_loop (20k empty launches: per_launch_us), a tiny
# PyTorch op (x.add_(1) x 20k: per_op_us) and a PyTorch training step
# (tests/gpu/torch_train.py: step_ms). Each runs
#   untraced;
#   under the three counting-only CUPTI consumers of
#   bench/gpu/libcount_consumer.so (records counted, nothing converted or
#   stored), the floors: kernels only; kernels, copies, memsets, sync and the
#   selected API calls (`--trace=api`'s set); everything `--trace=api-all`
#   records;
#   under `perfkit run` with its default trace, with --trace=cuda,nvtx,memory,api
#   (selected API calls) and with --trace=cuda;
#   the PyTorch programs also under torch.profiler.
# Every configuration runs once per round, all configurations of a program
# in turn within the round (interleaved, so drift of the machine hits all of
# them alike), ROUNDS rounds; the table holds the medians, the time each
# adds over untraced, and that added time as a multiple of the matching
# floor's (perfkit default and api-all against "all", api against
# "selected", cuda against "kernels").
#
#   bench/gpu_overhead.sh [BUILD] [PROGRAM...]   PROGRAM: launch tiny torch
#   ROUNDS=5 (default)
# BUILD as for tests/gpu/run.sh. Raw values go to $OUT/overhead_raw.tsv.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
shift || true
PROGRAMS=${*:-launch tiny torch}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-5}
LOOP=$BUILD/bench/gpu/launch_loop
FLOOR=$BUILD/bench/gpu/libcount_consumer.so
PERFKIT=$BUILD/cli/perfkit
TORCH=$ROOT/tests/gpu/torch_train.py
W=$(mktemp -d)
RAW=${OUT:-$W}/overhead_raw.tsv
LOG=${OUT:-$W}/bench.log
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1

# The command line of a program: its key, then the command.
program() {
	case $1 in
	launch) echo "per_launch_us $LOOP empty 20000" ;;
	tiny) echo "per_op_us python3 $TORCH tiny 20000" ;;
	torch) echo "step_ms python3 $TORCH plain 50" ;;
	esac
}
configs() {
	echo untraced floor_kernels floor_selected floor_all perfkit perfkit_api perfkit_cuda
	[ "$1" = launch ] || echo profiler
}

# once CONFIG KEY CMD...: one run; prints the number after KEY.
once() {
	local config=$1 key=$2
	shift 2
	case $config in
	untraced) "$@" ;;
	floor_kernels) COUNT_CONSUMER_FLOOR=kernels CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	floor_selected) COUNT_CONSUMER_FLOOR=selected CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	floor_all) COUNT_CONSUMER_FLOOR=all CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	perfkit) "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_api) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace=cuda,nvtx,memory,api -- "$@" ;;
	perfkit_cuda) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace=cuda -- "$@" ;;
	profiler) set -- "${@/plain/profiler}"; "${@/%tiny/tiny_profiler}" ;;
	esac 2>>"$LOG" | tee -a "$LOG" | awk -v k="$key" '$1 == k { print $2 }'
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" |
	tee -a "$LOG"
printf 'program\tconfig\tround\tvalue\n' >"$RAW"
for round in $(seq "$ROUNDS"); do
	for p in $PROGRAMS; do
		read -r key cmd <<<"$(program "$p")"
		for c in $(configs "$p"); do
			# shellcheck disable=SC2086 # cmd is a word list
			v=$(once "$c" "$key" $cmd)
			printf '%s\t%s\t%s\t%s\n' "$p" "$c" "$round" "${v:-nan}" >>"$RAW"
		done
	done
done

python3 - "$RAW" <<'PY'
import statistics, sys
vals = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p, c, _, v = line.split("\t")
    if v != "nan":
        vals.setdefault((p, c), []).append(float(v))
units = {"launch": "us/launch", "tiny": "us/op", "torch": "ms/step"}
floor_of = {"perfkit": "floor_all", "perfkit_api": "floor_selected", "perfkit_cuda": "floor_kernels"}
print("\n%-7s %-9s %-15s %10s %10s %8s %14s" % ("program", "unit", "config", "median", "added", "+%", "vs floor"))
for p in ("launch", "tiny", "torch"):
    if (p, "untraced") not in vals:
        continue
    base = statistics.median(vals[(p, "untraced")])
    med = {c: statistics.median(v) for (q, c), v in vals.items() if q == p}
    for c in ("untraced", "floor_kernels", "floor_selected", "floor_all", "perfkit", "perfkit_api",
              "perfkit_cuda", "profiler"):
        if c not in med:
            continue
        added = med[c] - base
        ratio = "-"
        f = floor_of.get(c)
        if f in med and med[f] - base > 0:
            ratio = "%.2fx %s" % (added / (med[f] - base), f.replace("floor_", ""))
        print("%-7s %-9s %-15s %10.3f %+10.3f %7.1f%% %14s" % (p, units[p], c, med[c], added,
              100 * added / base, ratio))
if not vals:
    sys.exit("gpu_overhead: no run printed a figure (see bench.log)")
print("n = %d rounds, interleaved; 'vs floor': perfkit's added time over the matching floor's" %
      min(len(v) for v in vals.values()))
PY
rm -rf "$W"
