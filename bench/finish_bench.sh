#!/usr/bin/env bash
# finish_bench.sh - the end of a `perfkit run` (issue 15): from the program's
# exit to a complete, indexed capture, on this machine, one table per size.
#
# bench_finish writes the process files of a run of N tiny kernel launches
# (synthetic rows, written through the writer the way the collector writes
# them: see bench/bench_finish.c), then does what `perfkit run` does when the
# program has ended (capture/run_finish.c): merge (or take over the one
# file), build the indexes, checkpoint. Columns: seconds per step, the total,
# seconds per million launches (goal <= 0.5), bytes of capture per launch,
# and per table (dbstat) the bytes per row with the table's indexes, of the
# pages and of what the pages hold (nsys: kernel 100, API call 41, NVTX 80).
#
#   bench/finish_bench.sh [BUILD] [SIZES...]       (defaults: build, 1000000)
#   BASELINE=OTHER_BUILD bench/finish_bench.sh ...  the same files finished by
#                                                   both builds, for ratios
#   PROCS=P   split the launches over P process files (default 1)
#   API_ALL=1 with a driver row for every runtime call, as --trace=api-all
#             records the driver call CUDA's runtime makes for each
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000)
PROCS=${PROCS:-1}
BUILDS=()
[ -n "${BASELINE:-}" ] && BUILDS+=("$(cd "$BASELINE" && pwd)")
BUILDS+=("$BUILD")
for b in "${BUILDS[@]}"; do
	[ -x "$b/bench/bench_finish" ] || { echo "finish_bench: no $b/bench/bench_finish" >&2; exit 2; }
done
command -v sqlite3 >/dev/null || { echo "finish_bench: needs the sqlite3 shell" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/finish_bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# Bytes per row of each table with 1,000 rows or more, its indexes included:
# of the pages it takes, and of those bytes what holds rows (a small table's
# last pages are part empty).
table_bytes() {
	sqlite3 "$1" "SELECT m.tbl_name, sum(d.pgsize), sum(d.pgsize - d.unused) FROM dbstat d
		JOIN sqlite_master m ON m.name = d.name GROUP BY m.tbl_name" |
	while IFS='|' read -r t bytes used; do
		rows=$(sqlite3 "$1" "SELECT count(*) FROM \"$t\"")
		[ "$rows" -ge 1000 ] || continue
		awk -v t="$t" -v r="$rows" -v b="$bytes" -v u="$used" \
			'BEGIN { printf "%-36s %10d rows %7.1f B/row (%5.1f used)\n", t, r, b / r, u / r }'
	done
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
for n in "${SIZES[@]}"; do
	mkdir -p "$W/live"
	"$BUILD/bench/bench_finish" write --launches "$n" --procs "$PROCS" \
		${API_ALL:+--api-all} "$W/live"
	echo
	echo "$n launches in $PROCS process file(s)"
	header=--header
	for b in "${BUILDS[@]}"; do
		rm -rf "$W/run" "$W/out.sqlite"
		cp -r "$W/live" "$W/run"
		sync
		echo "  build $b"
		"$b/bench/bench_finish" finish $header "$W/run" "$W/out.sqlite"
		header=
		table_bytes "$W/out.sqlite" | sed 's/^/    /'
	done
	rm -rf "$W/live" "$W/run" "$W/out.sqlite"
done
