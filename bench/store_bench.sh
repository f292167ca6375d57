#!/usr/bin/env bash
# store_bench.sh - the store's two speed targets, on this machine, one table:
#
#   ingest   kernel rows per second through the writer on one core
#            (bench_ingest), at 1M and 10M rows; goal >= 2M rows/s.
#   report   `perfkit report --report=cuda_gpu_kern_sum` against the sqlite3
#            shell running the same two statements the report runs (counts
#            per name, then the values sorted per name for exact medians);
#            goal <= 1.2x sqlite3's time, peak memory flat from 1M to 10M.
#
#   bench/store_bench.sh [BUILD] [ROWS...]   (defaults: build, 1000000 10000000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000)
PERFKIT=$BUILD/cli/perfkit
INGEST=$BUILD/bench/bench_ingest
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
command -v sqlite3 >/dev/null || { echo "store_bench: needs the sqlite3 shell" >&2; exit 2; }

SRC="SELECT NULL AS l1, NULL AS l2, coalesce(demangledName, shortName) AS k, end - start AS v FROM CUPTI_ACTIVITY_KIND_KERNEL"
SQL="SELECT count(*) FROM ($SRC) GROUP BY l1, l2, k ORDER BY l1, l2, k;
SELECT l1, l2, k, v FROM ($SRC) ORDER BY l1, l2, k, v;"

# timed OUTFILE CMD...: "seconds peak_rss_kib" of the command (best of 3).
timed() {
	local best="" i line
	for i in 1 2 3; do
		/usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" >&2; exit 1; }
		line=$(tail -1 "$W/t")
		if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best=$line
		fi
	done
	echo "$best"
}

ingest_rows=()
report_rows=()
header=--header
for n in "${SIZES[@]}"; do
	f=$W/kern_$n.sqlite
	ingest_rows+=("$(taskset -c 0 "$INGEST" $header --rows "$n" "$f")")
	header=
	pk=$(timed "$PERFKIT" report --report=cuda_gpu_kern_sum "$f")
	sq=$(timed sqlite3 "$f" "$SQL")
	report_rows+=("$(awk -v n="$n" -v p="$pk" -v s="$sq" 'BEGIN {
		split(p, a, " "); split(s, b, " ")
		printf "%-10s %10.2f %10.2f %8.2fx %12.1f %12.1f\n", n, a[1], b[1], a[1] / b[1], a[2] / 1024, b[2] / 1024 }')")
	rm -f "$f"
done

echo "ingest (one core, bench_ingest; goal >= 2,000,000 rows/s)"
printf '%s\n' "${ingest_rows[@]}"
echo
echo "report cuda_gpu_kern_sum vs sqlite3 on the same SQL (goal <= 1.2x; memory flat)"
printf '%-10s %10s %10s %9s %12s %12s\n' rows perfkit_s sqlite3_s ratio perfkit_MiB sqlite3_MiB
printf '%s\n' "${report_rows[@]}"
