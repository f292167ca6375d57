#!/usr/bin/env bash
# test_job_mpi_same_output.sh - a job's diagnosis and its reports by map
# and reduce print the same bytes from one process without a launcher,
# from `mpirun -n 1` and from `mpirun -n 2`, whose processes each read
# their share of the captures for the plan (each capture's probe and, the
# job being of two hosts, its NCCL collectives for the time base) and for
# the map, and gather them. The job: the per-rank captures of a real
# two-GPU DDP run copied as 5 ranks, ranks 3 and 4 on another host whose
# clocks are offset and drift 50 ppm (the time base is fitted over the
# collectives both shares read), 5 so that the shares are uneven. A
# damaged capture in each share fails every process with what one process
# says: the first damaged capture in the job's order, whichever process
# read it. Skipped, saying so, without MPI or without mpirun.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/../tools/job_captures.sh"
D=$PERFKIT_TEST_DATA/ddp/two_gpus

if [ "${PERFKIT_BUILT_WITH_MPI:-OFF}" != ON ]; then
	skip "the MPI runs of a job" "this perfkit was built without MPI (-DPERFKIT_MPI=ON)"
	finish
	exit 0
fi
mpirun=${PERFKIT_MPIEXEC:-mpirun}
if ! command -v "$mpirun" >/dev/null; then
	skip "the MPI runs of a job" "no ${mpirun:-mpirun} on this machine"
	finish
	exit 0
fi
# Open MPI refuses root without being told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TMPDIR="$TMP/tmpdir"
mkdir "$TMPDIR"

job="$TMP/job"
mkdir "$job"
for r in 0 1 2 3 4; do
	rank_copy "$D/ddp2_rank$((r % 2)).sqlite" "$TMP/rank-$r.sqlite" "$r"
	if [ $r -lt 3 ]; then
		mv "$TMP/rank-$r.sqlite" "$job/ddp-$r.sqlite"
	else
		as_other_host "$TMP/rank-$r.sqlite" "$job/ddp-$r.sqlite" 3700000000 2000000 50
	fi
done

# what the job holds, read from its captures: its ranks' processes and
# hosts, and that both hosts ran NCCL's kernels
pids=$(for f in "$job"/*.sqlite; do sqlite3 "$f" "SELECT pid FROM PROCESSES"; done | sort -u | wc -l)
hosts=$(for f in "$job"/*.sqlite; do sqlite3 "$f" "SELECT value FROM PERFKIT_META WHERE key = 'host'"; done |
	sort -u | wc -l)
nccl_hosts=$(for f in "$job"/*.sqlite; do
	[ "$(sqlite3 "$f" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
		ON s.id = k.shortName WHERE s.value LIKE 'nccl%'")" -gt 0 ] &&
		sqlite3 "$f" "SELECT value FROM PERFKIT_META WHERE key = 'host'"
done | sort -u | wc -l)
expect_that "the job: 5 ranks' processes on 2 hosts, both with NCCL kernels" \
	[ "$pids $hosts $nccl_hosts" = "5 2 2" ]

# same NAME ARGS...: perfkit ARGS from one process, then under mpirun -n 1
# and -n 2: exit 0 and the one process's bytes
same() {
	local name=$1 k
	shift
	"$PERFKIT" "$@" >"$TMP/single" 2>"$TMP/err"
	status=$?
	expect_status "$name, one process" 0
	for k in 1 2; do
		"$mpirun" --oversubscribe -n $k "$PERFKIT" "$@" >"$TMP/mpi" 2>"$TMP/err"
		status=$?
		expect_status "$name, mpirun -n $k" 0
		expect_that "$name, mpirun -n $k: the one process's bytes" cmp -s "$TMP/mpi" "$TMP/single"
	done
}

same "report --format=json" report --format=json "$job/"
same "report --format=json, rank_sum and nccl_sum" report --format=json --report=rank_sum,nccl_sum "$job/"
# rank_sum has a row for each rank's process, of both hosts
expect_that "rank_sum has a row a rank" [ "$(grep -c '^{"Rank":' "$TMP/single")" = "$pids" ]
same "diagnose" diagnose "$job/"
expect_that "the diagnosis aligns the hosts by their collectives" grep -qi "collectives" "$TMP/single"
same "diagnose --format=json" diagnose --format=json "$job/"

# a damaged capture in each process's share (ranks 1 and 4; ddp-1 is the
# first in the job's order, read by MPI process 1)
damaged="$TMP/damaged"
mkdir "$damaged"
cp "$job"/*.sqlite "$damaged/"
for r in 1 4; do
	head -c 20000 "$job/ddp-$r.sqlite" >"$damaged/ddp-$r.sqlite"
done
run report --format=json "$damaged/"
expect_status "a job with two damaged captures, one process" 2
expect_one_error_line "a job with two damaged captures, one process" "ddp-1\.sqlite"
cp "$TMP/err" "$TMP/single-err"
mkdir "$TMP/each"
# each process's messages and status in files of its own
EACH="$TMP/each" "$mpirun" --oversubscribe -n 2 -x EACH sh -c \
	'"$@" >"$EACH/$OMPI_COMM_WORLD_RANK.out" 2>"$EACH/$OMPI_COMM_WORLD_RANK.err"
	echo $? >"$EACH/$OMPI_COMM_WORLD_RANK.status"' sh "$PERFKIT" report --format=json "$damaged/" \
	>/dev/null 2>&1
for r in 0 1; do
	expect_that "mpirun -n 2, two damaged captures: process $r says what one process says" \
		cmp -s "$TMP/each/$r.err" "$TMP/single-err"
	expect_that "mpirun -n 2, two damaged captures: process $r ends with status 2" \
		[ "$(cat "$TMP/each/$r.status" 2>/dev/null)" = 2 ]
done
finish
