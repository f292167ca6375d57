#!/usr/bin/env bash
# job_bench.sh - a job's reports by map and reduce (perfkit report
# --format=json DIR/: the overview, or JOB_REPORTS=overview,rank_sum,...)
# at 2, 16 and 128 ranks: wall time and peak memory of one process on one
# thread, of one process on every local core, and of 4 MPI processes (the
# largest resident set of one of them, and of all four together), with
# `perfkit merge` of the same job beside (the exact way the other reports
# read a job).
#
# The ranks are copies of one real rank's capture (default
# tests/data/torch_train.sqlite; JOB_RANK=FILE for another), each with its
# process renumbered as another rank's (pid, globalPid, globalTid; the
# rank in PERFKIT_PROCESS_INFO where it has one): made here, in a
# temporary folder, never committed. JOB_HOSTS=K puts K ranks on each host
# (hosts renamed node-0, node-1, ...), so that the plan fits the time base
# from the collectives of a rank that has NCCL's (every MPI process reads
# its share's and fits them all).
#
#   bench/job_bench.sh [BUILD] [RANKS...]      (defaults: build, 2 16 128)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(2 16 128)
PERFKIT=$BUILD/cli/perfkit
RANK=${JOB_RANK:-$ROOT/tests/data/torch_train.sqlite}
HOSTS=${JOB_HOSTS:-0}
REPORTS=${JOB_REPORTS:-overview}
[ -x "$PERFKIT" ] || { echo "job_bench: no $PERFKIT" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "job_bench: needs the sqlite3 shell" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "job_bench: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
mpi=$(grep -q "PERFKIT_MPI:BOOL=ON" "$BUILD/CMakeCache.txt" && command -v mpirun || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=$(mktemp -d "${TMPDIR:-/tmp}/job_bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# rank_copy, as_other_host: a rank's capture as another rank's, another host's
. "$ROOT/tests/tools/job_captures.sh"

# measure CMD...: "SECONDS MAX_RSS_MIB" of the command
measure() {
	/usr/bin/time -f "%e %M" -o "$W/time" "$@" >"$W/out" 2>"$W/err" ||
		{ echo "job_bench: failed: $* ($(head -c 300 "$W/err"))" >&2; exit 1; }
	awk '{ printf "%.2f %.0f", $1, $2 / 1024 }' "$W/time"
}

# measure_mpi K CMD...: "SECONDS MAX_RSS_MIB_OF_ONE SUM_MIB" over K processes
measure_mpi() {
	local k=$1
	shift
	rm -f "$W"/rss.*
	/usr/bin/time -f "%e" -o "$W/time" mpirun --oversubscribe -n "$k" \
		bash -c '/usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"' "$W" "$@" \
		>"$W/out" 2>"$W/err" || { echo "job_bench: failed: mpirun $* ($(head -c 300 "$W/err"))" >&2; exit 1; }
	printf "%.2f %s" "$(cat "$W/time")" \
		"$(cat "$W"/rss.* | awk '{ m = $1 > m ? $1 : m; s += $1 } END { printf "%.0f %.0f", m / 1024, s / 1024 }')"
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "rank capture: $RANK ($(du -k "$RANK" | cut -f1) KiB," \
	"$(sqlite3 "$RANK" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") kernels)"
echo "reports: $REPORTS; hosts: $([ "$HOSTS" -gt 0 ] && echo "$HOSTS ranks each" || echo one)"
echo
printf "| ranks | 1 process, 1 thread | 1 process, %d threads | 4 MPI processes (largest, all) | perfkit merge |\n" "$(nproc)"
echo "|---|---|---|---|---|"
bases=""
for n in "${SIZES[@]}"; do
	rm -rf "$W/job" "$W/merged.sqlite"
	mkdir "$W/job"
	for ((r = 0; r < n; r++)); do
		rank_copy "$RANK" "$W/job/rank-$r.sqlite" "$r"
		[ "$HOSTS" -le 0 ] || sqlite3 "$W/job/rank-$r.sqlite" "
			UPDATE PERFKIT_META SET value = 'node-$((r / HOSTS))' WHERE key = 'host';
			UPDATE PERFKIT_PROCESS_INFO SET host = 'node-$((r / HOSTS))';
			UPDATE PERFKIT_CLOCKS SET host = 'node-$((r / HOSTS))'"
	done
	sync
	read -r t1 m1 <<<"$(PERFKIT_THREADS=1 measure "$PERFKIT" report --format=json --report="$REPORTS" "$W/job/")"
	cp "$W/out" "$W/one.json"
	read -r tn mn <<<"$(measure "$PERFKIT" report --format=json --report="$REPORTS" "$W/job/")"
	cmp -s "$W/out" "$W/one.json" || { echo "job_bench: threads changed the output" >&2; exit 1; }
	if [ -n "$mpi" ]; then
		read -r tm mm ms <<<"$(measure_mpi 4 "$PERFKIT" report --format=json --report="$REPORTS" "$W/job/")"
		cmp -s "$W/out" "$W/one.json" || { echo "job_bench: MPI changed the output" >&2; exit 1; }
		mpi_cell="$tm s, $mm MiB, $ms MiB"
	else
		mpi_cell="(built without MPI)"
	fi
	read -r tg mg <<<"$(measure "$PERFKIT" merge -o "$W/merged.sqlite" "$W/job/")"
	base=$(grep '^time base' "$W/out" || true)
	printf "| %d | %s s, %s MiB | %s s, %s MiB | %s | %s s, %s MiB |\n" \
		"$n" "$t1" "$m1" "$tn" "$mn" "$mpi_cell" "$tg" "$mg"
	bases="$bases${bases:+; }$n: ${base#time base: }"
done
if [ "$HOSTS" -gt 0 ]; then
	echo
	echo "time base of the merges: $bases"
fi
