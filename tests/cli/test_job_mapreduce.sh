#!/usr/bin/env bash
# test_job_mapreduce.sh - a job's overview, kernel summary, rank_sum and
# nccl_sum by map and reduce: per capture a summary, summaries merged. What
# it prints is what the same reports print of the job's merged capture (but
# for the File row, which names the job), in every format; on one thread or
# all; and under MPI (mpirun --oversubscribe -n 3) byte for byte what one
# process prints, diagnose of the job of two hosts too (its plan read in
# shares and gathered), and a failure in two processes' shares is said by
# every process as one process says it; and what is not map and reduce
# (other reports, --rank, diagnose of no job's ranks, merge) runs on MPI
# rank 0 alone, printing once.
# Two jobs: real captures of perfkit and of Nsight Systems, with two
# captures of one program whose kernels share names, so that groups merge,
# and none numbered by a launcher (ranks by pid across the captures); and
# the per-rank captures of a real two-GPU DDP job with copies of them as
# ranks 2 and 3, rank 3 on another host whose clocks drift 50 ppm (its
# times move by a rate: read from a moved copy); and nccl_sum of that job
# with ranks 2 and 3 on a host whose clocks are only offset (its calls'
# arrivals, which the waits compare across captures, moved by the shift).
# The five programs' captures are of runs one after the other, no one
# job's: read as one with --force (test_job_refuses_same_capture_or_two_jobs.sh).
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/../tools/job_captures.sh"
D=$PERFKIT_TEST_DATA
REPORTS=overview,cuda_gpu_kern_sum,rank_sum,nccl_sum
export TMPDIR="$TMP/tmpdir"
mkdir "$TMPDIR"
job="$TMP/job"
mkdir "$job"
cp "$D/torch_train.sqlite" "$job/rank-0.sqlite"
cp "$D/clean_loop.sqlite" "$job/rank-1.sqlite"
cp "$D/hash_embedding_optimized.sqlite" "$job/rank-2.sqlite"
cp "$D/hash_embedding_optimized_2.sqlite" "$job/rank-3.sqlite"
cp "$D/nsys/cloverleaf-cuda.sqlite" "$job/rank-10.sqlite"
"$PERFKIT" merge --force -o "$TMP/merged.sqlite" "$job" >/dev/null || { echo "FAIL: merge" >&2; exit 1; }
ddp="$TMP/ddp"
mkdir "$ddp"
cp "$D/ddp/two_gpus/ddp2_rank0.sqlite" "$ddp/ddp-0.sqlite"
cp "$D/ddp/two_gpus/ddp2_rank1.sqlite" "$ddp/ddp-1.sqlite"
rank_copy "$D/ddp/two_gpus/ddp2_rank0.sqlite" "$ddp/ddp-2.sqlite" 2
rank_copy "$D/ddp/two_gpus/ddp2_rank1.sqlite" "$TMP/ddp-3.sqlite" 3
as_other_host "$TMP/ddp-3.sqlite" "$ddp/ddp-3.sqlite" 3700000000 2000000 50
"$PERFKIT" merge -o "$TMP/ddp-merged.sqlite" "$ddp" >"$TMP/ddp-merge.out" ||
	{ echo "FAIL: merge of the DDP job" >&2; exit 1; }
expect_that "the DDP job's other host moves by a rate" grep -Eq "moved .*, [+-][0-9.]*[1-9][0-9.]* ppm" \
	"$TMP/ddp-merge.out"

# same_as_merged NAME DIR MERGED: every format of the reports by map and
# reduce is the merged capture's but for the File row
same_as_merged() {
	local name=$1 dir=$2 merged=$3 fmt
	for fmt in json text csv; do
		"$PERFKIT" report --force --format=$fmt --report=$REPORTS "$dir" >"$TMP/mr.$fmt" 2>"$TMP/err"
		status=$?
		expect_status "$name: map and reduce, $fmt" 0
		"$PERFKIT" report --format=$fmt --report=$REPORTS "$merged" >"$TMP/merged.$fmt"
		# the File row names the job in one, the merged file in the other
		expect_that "$name: map and reduce prints what the merged capture prints ($fmt)" \
			cmp -s <(grep -v "File" "$TMP/mr.$fmt") <(grep -v "File" "$TMP/merged.$fmt")
		expect_that "$name: and only the File row differs ($fmt)" \
			[ "$(diff "$TMP/mr.$fmt" "$TMP/merged.$fmt" | grep -c '^[<>]')" = 2 ]
	done
}
same_as_merged "a job of five programs" "$job" "$TMP/merged.sqlite"
expect_that "the File row names the job" grep -q "^File  *$job\$" "$TMP/mr.text"
expect_that "the kernels of the two captures of one program are summed" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"]
kern = [r for r in rows if r["name"] == "cuda_gpu_kern_sum"][0]["rows"]
sys.exit(0 if len({r["Name"] for r in kern}) == len(kern) and len(kern) > 10 else 1)' "$TMP/mr.json"
expect_that "the programs' processes are ranks in pid order across the captures" python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "rank_sum"][0]["rows"]
sys.exit(0 if [r["Rank"] for r in rows] == list(range(len(rows))) and len(rows) >= 5 else 1)' "$TMP/mr.json"
cp "$TMP/mr.json" "$TMP/job-mr.json"
# by map and reduce no merged capture is written: with no TMPDIR to write
# one to, the reports of a job whose times move by no rate still print
TMPDIR="$TMP/no-such-dir" "$PERFKIT" report --force --format=json --report=$REPORTS "$job" >"$TMP/no-tmp.json" \
	2>"$TMP/err"
status=$?
expect_status "the reports of a job without TMPDIR" 0
expect_that "the reports of a job without TMPDIR are the same" cmp -s <(grep -v File "$TMP/no-tmp.json") \
	<(grep -v File "$TMP/job-mr.json")
# what each capture lost adds up, as the merge adds its counters: the
# overview's warnings of records dropped and of GPU metric samples dropped
lost="$TMP/lost"
mkdir "$lost"
cp "$job/rank-1.sqlite" "$job/rank-2.sqlite" "$lost/"
sqlite3 "$lost/rank-1.sqlite" "INSERT INTO PERFKIT_COUNTERS (name, value) VALUES
	('gpu_metric_samples_dropped', 37), ('dropped_records', 3)"
sqlite3 "$lost/rank-2.sqlite" "INSERT INTO PERFKIT_COUNTERS (name, value) VALUES
	('gpu_metric_samples_dropped', 5)"
"$PERFKIT" merge --force -o "$TMP/lost.sqlite" "$lost" >/dev/null || { echo "FAIL: merge" >&2; exit 1; }
run report --force "$lost"
expect_out "a job's overview: its captures' dropped GPU metric samples summed" \
	'^42 GPU metric samples were dropped during capture'
cp "$TMP/out" "$TMP/lost-mr.txt"
"$PERFKIT" report "$TMP/lost.sqlite" >"$TMP/lost-merged.txt"
expect_that "a job's overview of what its captures lost is its merged capture's" \
	cmp -s <(grep -v File "$TMP/lost-mr.txt") <(grep -v File "$TMP/lost-merged.txt")
same_as_merged "a DDP job of two hosts" "$ddp" "$TMP/ddp-merged.sqlite"
# a collective's waits compare its arrivals on every rank, across captures:
# each one's wait is known, found once all captures' calls are in
expect_that "the DDP job's four ranks and their collectives, each call's wait known" python3 -c '
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert [r["Rank"] for r in reps["rank_sum"]["rows"]] == [0, 1, 2, 3]
rows = reps["nccl_sum"]["rows"]
assert {r["Rank"] for r in rows} == {0, 1, 2, 3}
assert all(r["Wait (ns)"] is not None for r in rows), rows
assert reps["nccl_sum"]["waits_unknown"] == 0, reps["nccl_sum"]' "$TMP/mr.json"
# ranks 2 and 3 on a host whose clock is only offset: read as they lie, each
# call's arrival moved by the shift alone (no copy, so no TMPDIR), its waits
# the merged capture's; copies of ranks 0 and 1, they wait as those do
shifted="$TMP/shifted"
mkdir "$shifted"
cp "$ddp/ddp-0.sqlite" "$ddp/ddp-1.sqlite" "$shifted/"
as_other_host "$ddp/ddp-2.sqlite" "$shifted/ddp-2.sqlite" 3700000000 2000000
as_other_host "$TMP/ddp-3.sqlite" "$shifted/ddp-3.sqlite" 3700000000 2000000
"$PERFKIT" merge -o "$TMP/shifted.sqlite" "$shifted" >/dev/null || { echo "FAIL: merge" >&2; exit 1; }
TMPDIR="$TMP/no-such-dir" "$PERFKIT" report --format=json --report=nccl_sum "$shifted" \
	>"$TMP/shifted-mr.json" 2>"$TMP/err"
status=$?
expect_status "nccl_sum of a job of an offset host without TMPDIR" 0
"$PERFKIT" report --format=json --report=nccl_sum "$TMP/shifted.sqlite" >"$TMP/shifted-merged.json"
expect_that "nccl_sum of a job of an offset host is its merged capture's" \
	cmp -s "$TMP/shifted-mr.json" "$TMP/shifted-merged.json"
expect_that "ranks 2 and 3 moved by an offset wait as ranks 0 and 1" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
by = {(r["Kind"], r["Message Size"], r["Rank"]): r["Wait (ns)"] for r in rows}
assert all(by[k[:2] + (k[2] - 2,)] == w for k, w in by.items() if k[2] >= 2), by
assert any(w > 0 for w in by.values()), by' "$TMP/shifted-mr.json"
expect_that "nothing of the moved copies is left in TMPDIR" [ -z "$(ls -A "$TMPDIR")" ]

for dir in "$job" "$ddp"; do
	PERFKIT_THREADS=1 "$PERFKIT" report --force --format=json --report=$REPORTS "$dir" >"$TMP/one-thread.json"
	"$PERFKIT" report --force --format=json --report=$REPORTS "$dir" >"$TMP/threads.json"
	expect_that "$(basename "$dir"): one thread and all print the same" \
		cmp -s "$TMP/one-thread.json" "$TMP/threads.json"
done

run report --force --format=json "$job" "$TMP/missing.sqlite"
expect_status "a job with a missing capture" 2
expect_one_error_line "a job with a missing capture" "missing.sqlite: no such file"

if [ "${PERFKIT_BUILT_WITH_MPI:-OFF}" != ON ]; then
	skip "mpirun -n 3" "this perfkit was built without MPI (-DPERFKIT_MPI=ON)"
elif mpirun=${PERFKIT_MPIEXEC:-mpirun} && ! command -v "$mpirun" >/dev/null; then
	skip "mpirun -n 3" "no ${mpirun:-mpirun} on this machine"
else
	# Open MPI refuses root without being told
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	"$mpirun" --oversubscribe -n 3 "$PERFKIT" report --force --format=json "$job/" >"$TMP/mpi.json" 2>"$TMP/err"
	status=$?
	expect_status "mpirun -n 3 perfkit report" 0
	"$PERFKIT" report --force --format=json "$job/" >"$TMP/single.json"
	expect_that "mpirun -n 3 prints byte for byte what one process prints" \
		cmp -s "$TMP/mpi.json" "$TMP/single.json"
	"$mpirun" --oversubscribe -n 3 "$PERFKIT" report --force --report=cuda_gpu_kern_sum "$job/" \
		>"$TMP/mpi.txt" 2>"$TMP/err"
	"$PERFKIT" report --force --report=cuda_gpu_kern_sum "$job/" >"$TMP/single.txt"
	expect_that "mpirun -n 3: text too" cmp -s "$TMP/mpi.txt" "$TMP/single.txt"
	for dir in "$job" "$ddp"; do
		"$mpirun" --oversubscribe -n 3 "$PERFKIT" report --force --format=json --report=$REPORTS "$dir/" \
			>"$TMP/mpi-all.json" 2>"$TMP/err"
		"$PERFKIT" report --force --format=json --report=$REPORTS "$dir/" >"$TMP/single-all.json"
		expect_that "mpirun -n 3: $(basename "$dir")'s $REPORTS byte for byte" \
			cmp -s "$TMP/mpi-all.json" "$TMP/single-all.json"
	done
	# the plan is read in shares too: each process probes its share of the
	# captures and reads its share's collectives, which every process
	# gathers to fit the time base of the DDP job of two hosts (rank 3's
	# drifting); diagnose of that job, whose every rank is diagnosed alone,
	# prints byte for byte what one process prints
	for k in 2 3; do
		for fmt in text json; do
			"$mpirun" --oversubscribe -n $k "$PERFKIT" diagnose --format=$fmt "$ddp/" >"$TMP/mpi-diag" \
				2>"$TMP/err"
			status=$?
			expect_status "mpirun -n $k perfkit diagnose of the DDP job of two hosts ($fmt)" 0
			"$PERFKIT" diagnose --format=$fmt "$ddp/" >"$TMP/single-diag"
			expect_that "mpirun -n $k: diagnose of the DDP job of two hosts byte for byte ($fmt)" \
				cmp -s "$TMP/mpi-diag" "$TMP/single-diag"
		done
	done
	# a damaged capture in each of two processes' shares: every process
	# says what one process says, the first of them in the job's order, and
	# ends itself (none is ended by the launcher before it says it)
	damaged="$TMP/damaged"
	mkdir "$damaged"
	cp "$ddp"/ddp-*.sqlite "$damaged/"
	head -c 20000 "$ddp/ddp-2.sqlite" >"$damaged/ddp-2.sqlite"
	head -c 20000 "$ddp/ddp-1.sqlite" >"$damaged/ddp-1.sqlite"
	run report --format=json "$damaged/"
	expect_status "a job with damaged captures" 2
	cp "$TMP/err" "$TMP/single-err"
	expect_that "one process names the first damaged capture" grep -q "ddp-1.sqlite" "$TMP/single-err"
	mkdir "$TMP/each"
	# each process's messages and status in files of its own
	EACH="$TMP/each" "$mpirun" --oversubscribe -n 3 -x EACH sh -c \
		'"$@" >"$EACH/$OMPI_COMM_WORLD_RANK.out" 2>"$EACH/$OMPI_COMM_WORLD_RANK.err"
		echo $? >"$EACH/$OMPI_COMM_WORLD_RANK.status"' sh "$PERFKIT" report --format=json "$damaged/" \
		>/dev/null 2>&1
	for r in 0 1 2; do
		expect_that "mpirun -n 3, a job with damaged captures: process $r says what one process says" \
			cmp -s "$TMP/each/$r.err" "$TMP/single-err"
		expect_that "mpirun -n 3, a job with damaged captures: process $r ends with status 2" \
			[ "$(cat "$TMP/each/$r.status")" = 2 ]
	done
	# more processes than captures: some map nothing
	"$mpirun" --oversubscribe -n 7 "$PERFKIT" report --force --format=json "$job/" >"$TMP/mpi7.json" 2>"$TMP/err"
	expect_that "mpirun -n 7 over 5 captures" cmp -s "$TMP/mpi7.json" "$TMP/single.json"
	# What does not share its work among the MPI processes runs on rank 0
	# alone and prints once: a report read from the merged capture, one
	# narrowed by --rank, a directory of one capture, diagnose; a merge
	# writes its output once.
	mkdir "$TMP/one"
	cp "$D/torch_train.sqlite" "$TMP/one/rank-0.sqlite"
	once() { # NAME ARGS...: mpirun -n 2 prints what one process prints
		local name=$1
		shift
		"$mpirun" --oversubscribe -n 2 "$PERFKIT" "$@" >"$TMP/mpi.out" 2>"$TMP/err"
		status=$?
		expect_status "mpirun -n 2 perfkit $name" 0
		"$PERFKIT" "$@" >"$TMP/single.out" 2>/dev/null
		expect_that "mpirun -n 2 perfkit $name prints what one process prints, once" \
			cmp -s "$TMP/mpi.out" "$TMP/single.out"
	}
	once "report --report=cuda_api_sum" report --force --report=cuda_api_sum "$job/"
	once "report --rank=0" report --force --rank=0 --format=json "$job/"
	once "report of a directory of one capture" report --format=json "$TMP/one/"
	once "diagnose" diagnose --force "$job/"
	"$mpirun" --oversubscribe -n 2 "$PERFKIT" merge --force -o "$TMP/mpi-merged.sqlite" "$job/" >"$TMP/out" 2>"$TMP/err"
	status=$?
	expect_status "mpirun -n 2 perfkit merge" 0
	expect_that "mpirun -n 2 perfkit merge merges once" [ "$(grep -c "captures of" "$TMP/out")" = 1 ]
	expect_that "and its capture is the one-process merge's" [ "$(sqlite3 "$TMP/mpi-merged.sqlite" \
		"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" = "$(sqlite3 "$TMP/merged.sqlite" \
		"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" ]
fi
finish
