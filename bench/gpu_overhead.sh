#!/usr/bin/env bash
# gpu_overhead.sh - what tracing costs per kernel launch, on the GPU machine.
#
# Runs bench/gpu/launch_loop (20k empty launches; 2k heavy launches) and
# tests/gpu/torch_train.py untraced, under a counting-only CUPTI consumer
# (bench/gpu/libcount_consumer.so: the floor any CUPTI tracer pays) and
# under `perfkit run`; the PyTorch loop also under torch.profiler. The
# "+sub" rows use a bare consumer that also holds a CUPTI subscriber, as
# perfkit does. Each
# configuration runs REPS times and the median is kept. Prints a table:
# per-launch (or per-step) time, time added over untraced, and perfkit's
# added time as a multiple of the bare consumer's (goal <= 1.15).
#
#   bench/gpu_overhead.sh [BUILD]   BUILD as for tests/gpu/run.sh
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-5}
LOOP=$BUILD/bench/gpu/launch_loop
BARE=$BUILD/bench/gpu/libcount_consumer.so
PERFKIT=$BUILD/cli/perfkit
TORCH=$ROOT/tests/gpu/torch_train.py
W=$(mktemp -d)
LOG=${OUT:-$W}/bench.log
# CUPTI: the toolkit folder, wherever this machine keeps it.
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure KEY MODE CMD...: the median of the number after KEY over REPS runs.
measure() {
	local key=$1 mode=$2 i
	shift 2
	for i in $(seq "$REPS"); do
		case $mode in
		untraced) "$@" ;;
		bare) CUDA_INJECTION64_PATH=$BARE "$@" ;;
		bare_sub) CUDA_INJECTION64_PATH=$BARE COUNT_CONSUMER_SUBSCRIBE=1 "$@" ;;
		perfkit) "$PERFKIT" run -o "$W/cap.sqlite" -f -- "$@" 2>>"$LOG" ;;
		esac 2>>"$LOG" | tee -a "$LOG" | awk -v k="$key" '$1 == k { print $2 }'
	done | median
}

row() { # NAME UNIT UNTRACED BARE PERFKIT [PROFILER]
	awk -v n="$1" -v u="$2" -v a="$3" -v b="$4" -v p="$5" -v t="${6:-}" 'BEGIN {
		ratio = (b - a) > 0 ? sprintf("%.2fx", (p - a) / (b - a)) : "n/a"
		prof = t == "" ? "-" : sprintf("%.3f (+%.3f)", t, t - a)
		printf "%-16s %-8s %10.3f %10.3f (+%.3f) %10.3f (+%.3f) %8s   %s\n",
		       n, u, a, b, b - a, p, p - a, ratio, prof }'
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)" | tee -a "$LOG"
for loop in "empty 20000" "heavy 2000"; do
	set -- $loop
	u=$(measure per_launch_us untraced "$LOOP" $1 $2)
	b=$(measure per_launch_us bare "$LOOP" $1 $2)
	bs=$(measure per_launch_us bare_sub "$LOOP" $1 $2)
	p=$(measure per_launch_us perfkit "$LOOP" $1 $2)
	ROWS+=("$(row "launch_$1" us/launch "$u" "$b" "$p")")
	ROWS+=("$(row "launch_$1+sub" us/launch "$u" "$bs" "$p")")
done
u=$(measure step_ms untraced python3 "$TORCH" plain 50)
b=$(measure step_ms bare python3 "$TORCH" plain 50)
p=$(measure step_ms perfkit python3 "$TORCH" plain 50)
t=$(measure step_ms untraced python3 "$TORCH" profiler 50)
ROWS+=("$(row torch_step ms/step "$u" "$b" "$p" "$t")")

printf '\n%-16s %-8s %10s %21s %21s %8s   %s\n' loop unit untraced "bare CUPTI (+added)" \
	"perfkit (+added)" "pk/bare" "torch.profiler (+added)" | tee -a "$LOG"
printf '%s\n' "${ROWS[@]}" | tee -a "$LOG"
echo "pk/bare: perfkit's added time over the bare consumer's added time (goal <= 1.15x)" | tee -a "$LOG"
rm -rf "$W"
