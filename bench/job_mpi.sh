#!/usr/bin/env bash
# job_mpi.sh - a job's diagnosis and its reports by map and reduce
# (`perfkit diagnose JOB/`, `perfkit report --format=json JOB/`) under
# `mpirun -n K`, one thread a process, over rounds that interleave every
# K: each run's wall time (mpirun's, Open MPI's start included) and CPU
# time (user + system: of every process together, and of the busiest),
# their medians over the rounds, the ratio of each K's medians to K = 1's,
# and every run's output compared byte for byte with the first one's (and
# with a build without MPI, when one is given). From the busiest
# process's CPU time at K = 1 and the largest K it splits the time as
# serial + shared / K and says what K processes of a core each would take
# at other K (wall time on a machine shared with other work is not that).
#
# The job: bench/scale_captures.sh's, N real per-rank captures (copies
# with their processes renumbered, 8 ranks a host, so the plan fits the
# time base over every host's collectives), made in a temporary folder
# unless JOB_MPI_DIR names one already made.
#
#   bench/job_mpi.sh [BUILD]            (default build: -DPERFKIT_MPI=ON)
#   JOB_MPI_RANKS=N      the job's ranks (default 1000: 2.4 GB of disk)
#   JOB_MPI_K="1 2"      the process counts (the first must be 1)
#   JOB_MPI_ROUNDS=3     the rounds
#   JOB_MPI_DIR=DIR      a job made before (kept)
#   JOB_MPI_PLAIN=BUILD  a build without MPI, run once a round beside
#   JOB_MPI_BEFORE=BUILD another build with MPI (the one before a change),
#     run at the largest K once a round beside
#   JOB_MPI_CAPTURES="A B"  the per-rank captures (default the two ranks of
#     tests/data/ddp/ddp2_rank{0,1}.sqlite)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
PERFKIT=$BUILD/cli/perfkit
N=${JOB_MPI_RANKS:-1000}
ROUNDS=${JOB_MPI_ROUNDS:-3}
read -r -a KS <<<"${JOB_MPI_K:-1 2}"
read -r -a CAPTURES <<<"${JOB_MPI_CAPTURES:-$ROOT/tests/data/ddp/ddp2_rank0.sqlite $ROOT/tests/data/ddp/ddp2_rank1.sqlite}"
PLAIN=${JOB_MPI_PLAIN:+$(cd "$JOB_MPI_PLAIN" && pwd)/cli/perfkit}
BEFORE=${JOB_MPI_BEFORE:+$(cd "$JOB_MPI_BEFORE" && pwd)/cli/perfkit}
[ -x "$PERFKIT" ] || { echo "job_mpi: no $PERFKIT" >&2; exit 2; }
grep -q '^PERFKIT_MPI:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null ||
	{ echo "job_mpi: $BUILD was built without MPI (-DPERFKIT_MPI=ON)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "job_mpi: needs mpirun" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "job_mpi: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
[ "${KS[0]}" = 1 ] && [ ${#KS[@]} -ge 2 ] || { echo "job_mpi: JOB_MPI_K starts with 1 and has another K" >&2; exit 2; }
for b in "$PLAIN" "$BEFORE"; do
	[ -z "$b" ] || [ -x "$b" ] || { echo "job_mpi: no $b" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/job_mpi.XXXXXX")
trap 'rm -rf "$W"' EXIT
export W # each MPI process writes its CPU time there
export PERFKIT_THREADS=1
# Open MPI refuses root without being told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

. "$ROOT/tests/tools/job_captures.sh"
. "$ROOT/bench/scale_captures.sh"

DIR=${JOB_MPI_DIR:-}
if [ -z "$DIR" ]; then
	DIR=$W/job
	echo "job_mpi: making a job of $N ranks in $DIR" >&2
	job "$DIR" "$N" 8 "${CAPTURES[@]}"
fi
N=$(find "$DIR" -maxdepth 1 -name '*.sqlite' | wc -l)
COMMANDS=("diagnose" "report --format=json")
declare -A WALL CPU BUSY # "command|K|round": seconds

# run NAME K ROUND CMD...: one timed run; its output kept for the comparison
run() {
	local name=$1 k=$2 round=$3
	shift 3
	rm -f "$W"/cpu.*
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$W/out.$name.$k.$round" 2>"$W/err" || { echo "job_mpi: $name, K=$k failed: $(head -c 300 "$W/err")" >&2; exit 1; }
	t1=$(date +%s.%N)
	WALL["$name|$k|$round"]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	CPU["$name|$k|$round"]=$(cat "$W"/cpu.* | awk '{ s += $1 + $2 } END { printf "%.2f", s }')
	BUSY["$name|$k|$round"]=$(cat "$W"/cpu.* | awk '{ c = $1 + $2; if (c > m) m = c } END { printf "%.2f", m }')
	cmp -s "$W/out.$name.$k.$round" "$W/out.$name.1.1" ||
		{ echo "job_mpi: $name, K=$k, round $round prints other bytes than K=1's" >&2; exit 1; }
}

LABELS=("${KS[@]}" ${BEFORE:+before} ${PLAIN:+plain})
for ((round = 1; round <= ROUNDS; round++)); do
	for cmd in "${COMMANDS[@]}"; do
		name=${cmd%% *}
		for k in "${KS[@]}"; do
			# shellcheck disable=SC2086 # the command and its option
			run "$name" "$k" "$round" mpirun --oversubscribe -n "$k" -x W sh -c \
				'exec /usr/bin/time -f "%U %S" -o "$W/cpu.$OMPI_COMM_WORLD_RANK" "$@"' sh "$PERFKIT" $cmd "$DIR/"
		done
		if [ -n "$BEFORE" ]; then
			# shellcheck disable=SC2086
			run "$name" before "$round" mpirun --oversubscribe -n "${KS[-1]}" -x W sh -c \
				'exec /usr/bin/time -f "%U %S" -o "$W/cpu.$OMPI_COMM_WORLD_RANK" "$@"' sh "$BEFORE" $cmd "$DIR/"
		fi
		if [ -n "$PLAIN" ]; then
			# shellcheck disable=SC2086
			run "$name" plain "$round" /usr/bin/time -f "%U %S" -o "$W/cpu.0" "$PLAIN" $cmd "$DIR/"
		fi
		echo "job_mpi: round $round, $name (load $(cut -d" " -f1-3 /proc/loadavg)):$(for k in "${LABELS[@]}"; do
			printf ' %s: %s s (CPU %s s, busiest %s s);' "$k" "${WALL[$name|$k|$round]}" \
				"${CPU[$name|$k|$round]}" "${BUSY[$name|$k|$round]}"; done)" >&2
	done
done

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# of NAME K ARRAY: the median over the rounds
of() {
	local -n a=$3
	for ((round = 1; round <= ROUNDS; round++)); do printf '%s ' "${a[$1|$2|$round]}"; done | median
}

echo "Job of $N ranks ($(for f in "${CAPTURES[@]}"; do basename "$f"; done | tr '\n' ' ')copies), one thread a process," \
	"$ROUNDS rounds interleaved, medians (every run's output the same bytes)"
echo
echo "| command | K | wall s (rounds) | wall, of K = 1 | CPU s, all processes | CPU s, busiest process | busiest, of K = 1 |"
echo "|---|---|---|---|---|---|---|"
last=${KS[-1]}
for cmd in "${COMMANDS[@]}"; do
	name=${cmd%% *}
	w1=$(of "$name" 1 WALL) b1=$(of "$name" 1 BUSY)
	for k in "${LABELS[@]}"; do
		w=$(of "$name" "$k" WALL) b=$(of "$name" "$k" BUSY)
		rounds=$(for ((round = 1; round <= ROUNDS; round++)); do printf '%s ' "${WALL[$name|$k|$round]}"; done)
		awk -v name="$name" -v k="$k" -v w="$w" -v r="${rounds% }" -v c="$(of "$name" "$k" CPU)" -v b="$b" \
			-v w1="$w1" -v b1="$b1" -v last="$last" 'BEGIN {
			printf "| %s | %s | %.2f (%s) | %.2f | %.2f | %.2f | %.2f |\n", name, (k == "plain" ? "1, no MPI" : k == "before" ? last ", before" : k),
				w, r, w / w1, c, b, b / b1 }'
	done
done
echo
# The busiest process's CPU time as serial + shared / K, through K = 1 and
# the largest K: what K processes take where each has a core of its own
# (wall time on a machine shared with other work is not that)
for cmd in "${COMMANDS[@]}"; do
	name=${cmd%% *}
	awk -v name="$name" -v n="$N" -v k="$last" -v t1="$(of "$name" 1 BUSY)" -v tk="$(of "$name" "$last" BUSY)" 'BEGIN {
		shared = (t1 - tk) * k / (k - 1); serial = t1 - shared
		printf "%s: the busiest process %.2f s + %.2f s / K of CPU (%.1f ms a capture shared);", name, serial, shared,
			1000 * shared / n
		split("2 4 8 16 32 125", ks, " ")
		for (i = 1; i <= 6; i++) printf " K = %d: %.1f s;", ks[i], serial + shared / ks[i]
		printf "\n" }'
done
