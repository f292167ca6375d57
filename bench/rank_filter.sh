#!/usr/bin/env bash
# rank_filter.sh - what `--rank` costs: the reports, the diagnosis and the
# exports of one rank read through the temporary views named like the
# tables (report/model/rank_filter.c), against the same rank's rows in a
# capture of their own, and against the whole job.
#
# bench_finish writes synthetic captures the collector's way (tiny kernel
# launches with their runtime and driver calls, an NVTX range every 1,000
# launches; bench/bench_finish.c): a job of two processes of N/2 launches
# each, and one process of N/2 launches alone. Columns: seconds (median of
# 3 runs) for that process alone, for its rank picked out of the job with
# --rank=0, for the whole job, and the ratio of the second to the first.
#
#   bench/rank_filter.sh [BUILD] [LAUNCHES]      (defaults: build, 1000000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
N=${2:-1000000}
PERFKIT=$BUILD/cli/perfkit
[ -x "$BUILD/bench/bench_finish" ] || { echo "rank_filter: no $BUILD/bench/bench_finish" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/rank_filter.XXXXXX")
trap 'rm -rf "$W"' EXIT

mkdir -p "$W/job" "$W/one"
"$BUILD/bench/bench_finish" write --launches "$N" --procs 2 "$W/job" >/dev/null
"$BUILD/bench/bench_finish" finish "$W/job" "$W/job.sqlite" >/dev/null
"$BUILD/bench/bench_finish" write --launches $((N / 2)) --procs 1 "$W/one" >/dev/null
"$BUILD/bench/bench_finish" finish "$W/one" "$W/one.sqlite" >/dev/null

# seconds of the median of three runs of perfkit ARGS
median3() {
	local t=()
	for _ in 1 2 3; do
		local s e
		s=$(date +%s.%N)
		"$PERFKIT" "$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		t+=("$(echo "$e - $s" | bc)")
	done
	printf '%s\n' "${t[@]}" | sort -n | sed -n 2p
}

printf '%d launches in two processes; one process of %d launches alone\n' "$N" $((N / 2))
printf '| command | rank alone | --rank=0 of the job | whole job | --rank=0 / alone |\n|---|---|---|---|---|\n'
while IFS='|' read -r name args; do
	read -r -a a <<<"$args"
	alone=$(median3 "${a[@]}" "$W/one.sqlite")
	ranked=$(median3 "${a[@]}" --rank=0 "$W/job.sqlite")
	whole=$(median3 "${a[@]}" "$W/job.sqlite")
	printf '| %s | %.2f | %.2f | %.2f | %.2f |\n' "$name" "$alone" "$ranked" "$whole" \
		"$(echo "$ranked / $alone" | bc -l)"
done <<'EOF'
report (overview)|report
cuda_gpu_kern_sum|report --report=cuda_gpu_kern_sum
cuda_api_sum|report --report=cuda_api_sum
nvtx_kern_sum|report --report=nvtx_kern_sum
cuda_gpu_trace|report --report=cuda_gpu_trace --format=csv
diagnose|diagnose
chrome trace|report --format=chrome
folded stacks|report --format=folded
EOF
