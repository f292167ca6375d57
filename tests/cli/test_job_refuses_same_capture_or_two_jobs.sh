#!/usr/bin/env bash
# test_job_refuses_same_capture_or_two_jobs.sh - what is given as a job is
# one job's captures, each once. One capture twice (the same file by one
# name or two, or a copy of it: the same host, program pid and start) is
# refused by merge and every reader, with one line and status 2: `report
# a.sqlite a.sqlite` counted 80 kernels for 40. A directory's earlier
# `perfkit merge` output is left out, said on stderr, instead of counted a
# second time beside the captures it holds. Captures that are not one
# job's are refused unless --force: a perfkit capture and an unrelated
# nsys export (merged, a span of 57 years), two runs of one DDP job (both
# with torchrun's ranks 0 and 1: merged, ranks 0-3), ranks of launchers or
# world sizes that differ, runs that do not overlap in time; each refusal
# names two of the files and the fact. The per-rank captures of one real
# DDP run are one job. Expected counts come from the captures (SQL).
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
a=$D/clean_loop.sqlite
r0=$D/ddp/ddp2_rank0.sqlite
r1=$D/ddp/ddp2_rank1.sqlite
even=$D/ddp/ddp2_even.sqlite
straggler=$D/ddp/ddp2_straggler.sqlite
nsys=$D/nsys/cloverleaf-cuda.sqlite
export TMPDIR=$TMP/tmpdir
mkdir "$TMPDIR"

kernels() { sqlite3 "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"; }
# instances JSON: the kernels cuda_gpu_kern_sum counted
instances() {
	python3 -c 'import json, sys
print(sum(r["Instances"] for r in json.load(open(sys.argv[1]))["reports"][0]["rows"]))' "$1"
}
# refused NAME PATTERN ARGS...: exit 2, one line matching PATTERN
refused() {
	local name=$1 pattern=$2
	shift 2
	run "$@" </dev/null
	expect_status "$name" 2
	expect_one_error_line "$name" "$pattern"
}
run top
grep -q "built without ncurses" "$TMP/err" && have_top=false || have_top=true

# ---- one capture twice -----------------------------------------------------------------
cp "$a" "$TMP/a.sqlite"
cd "$TMP"
twice="a\.sqlite is given twice: its capture would count twice"
refused "report of one file twice" "$twice" report a.sqlite a.sqlite
refused "report of one file twice, by map and reduce" "$twice" report --report=cuda_gpu_kern_sum a.sqlite a.sqlite
refused "report --force of one file twice" "$twice" report --force a.sqlite a.sqlite
refused "diagnose of one file twice" "$twice" diagnose a.sqlite a.sqlite
refused "roofline of one file twice" "$twice" roofline a.sqlite a.sqlite
refused "merge of one file twice" "$twice" merge --force -o twice.sqlite a.sqlite a.sqlite
expect_that "a refused merge writes nothing" [ ! -e twice.sqlite ]
! $have_top || refused "top --replay of one file twice" "$twice" top --replay=1000 a.sqlite a.sqlite
refused "report of one file by two names" "a\.sqlite and \./a\.sqlite are the same file" \
	report a.sqlite ./a.sqlite
ln -s a.sqlite link.sqlite
refused "report of a file and a link to it" "a\.sqlite and link\.sqlite are the same file" \
	report a.sqlite link.sqlite
mkdir dir
cp a.sqlite dir/
refused "report of a file given and in a directory given" "same file|given twice" report dir dir/a.sqlite
cp a.sqlite copy.sqlite
same="a\.sqlite and copy\.sqlite are the same capture \(host $(meta a.sqlite host), pid $(meta a.sqlite pid), started [0-9-]+ [0-9:.]+ UTC\)"
refused "report of a capture and its copy" "$same" report a.sqlite copy.sqlite
refused "report --force of a capture and its copy" "$same" report --force a.sqlite copy.sqlite
refused "merge of a capture and its copy" "$same" merge -o copy-job.sqlite a.sqlite copy.sqlite
mkdir copies
cp a.sqlite copies/run-1.sqlite
cp a.sqlite copies/run-2.sqlite
refused "baseline save of a directory of a capture's copies" "the same capture" \
	baseline save -o b.json copies
cd - >/dev/null

# ---- the per-rank captures of one DDP run: one job --------------------------------------
run merge -o "$TMP/ranks.sqlite" "$r0" "$r1"
expect_status "merge of one run's per-rank captures" 0
expect_that "its merged capture holds both ranks' kernels" \
	[ "$(kernels "$TMP/ranks.sqlite")" = $(($(kernels "$r0") + $(kernels "$r1"))) ]
run report --format=json --report=rank_sum "$r0" "$r1"
expect_status "rank_sum of one run's per-rank captures" 0
expect_that "one run's per-rank captures are ranks 0 and 1" python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
sys.exit(0 if [r["Rank"] for r in rows] == [0, 1] else 1)' "$TMP/out"

# ---- a directory holding an earlier merge output ----------------------------------------
mkdir "$TMP/job"
cp "$r0" "$TMP/job/ddp-0.sqlite"
cp "$r1" "$TMP/job/ddp-1.sqlite"
"$PERFKIT" merge -o "$TMP/job/merged.sqlite" "$TMP/job" >/dev/null ||
	{ echo "FAIL: merge of the directory" >&2; exit 1; }
want=$(($(kernels "$r0") + $(kernels "$r1")))
skipped="^perfkit: warning: $TMP/job/merged\.sqlite: left out, an earlier perfkit merge's output"
for how in "by map and reduce:--report=cuda_gpu_kern_sum" "merged:--report=overview,cuda_gpu_kern_sum"; do
	run report --format=json "${how#*:}" "$TMP/job"
	expect_status "report of a directory with a merge output, ${how%%:*}" 0
	expect_one_error_line "report of a directory with a merge output, ${how%%:*}" "$skipped"
	python3 -c 'import json, sys
reps = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "cuda_gpu_kern_sum"]
json.dump({"reports": reps}, open(sys.argv[2], "w"))' "$TMP/out" "$TMP/kern.json"
	expect_that "report of a directory with a merge output, ${how%%:*}: each kernel once ($want)" \
		[ "$(instances "$TMP/kern.json")" = "$want" ]
done
run merge -o "$TMP/again.sqlite" "$TMP/job"
expect_status "merge of a directory with a merge output" 0
expect_err "merge of a directory with a merge output" "$skipped"
expect_that "merge of a directory with a merge output: each kernel once" \
	[ "$(kernels "$TMP/again.sqlite")" = "$want" ]
expect_that "merge of a directory with a merge output: two captures" \
	[ "$(meta "$TMP/again.sqlite" job_captures)" = 2 ]
mkdir "$TMP/only-merged"
cp "$TMP/job/merged.sqlite" "$TMP/only-merged/"
run report --format=json --report=cuda_gpu_kern_sum "$TMP/only-merged"
expect_status "a directory holding only a merge output reads it" 0
expect_that "a directory holding only a merge output reads it, unannounced" [ ! -s "$TMP/err" ]

# ---- not one job's captures, unless --force ----------------------------------------------
# a perfkit capture and an unrelated nsys export: years apart
apart="ran from [0-9-]+ [0-9:.]+ UTC to [0-9-]+ [0-9:.]+ UTC, .* from [0-9-]+ [0-9:.]+ UTC: runs that do not overlap in time are not one job's captures \(--force takes them as one\)"
refused "merge of a perfkit capture and an nsys export" "cloverleaf-cuda\.sqlite $apart" \
	merge -o "$TMP/mixed.sqlite" "$a" "$nsys"
expect_that "a refused merge writes nothing" [ ! -e "$TMP/mixed.sqlite" ]
refused "report of a perfkit capture and an nsys export" "cloverleaf-cuda\.sqlite $apart" report "$a" "$nsys"
run merge --force -o "$TMP/mixed.sqlite" "$a" "$nsys"
expect_status "merge --force of a perfkit capture and an nsys export" 0
# two runs of one program, one after the other
refused "report of two runs of one program" "torch_train\.sqlite $apart|clean_loop\.sqlite $apart" \
	report "$a" "$D/torch_train.sqlite"
run report --force "$a" "$D/torch_train.sqlite"
expect_status "report --force of two runs of one program" 0

# two runs of one DDP job, each with torchrun's ranks 0 and 1
two_runs="ddp2_even\.sqlite and .*ddp2_straggler\.sqlite both hold rank 0 of torchrun: captures of two runs, not one job's \(--force takes them as one\)"
refused "merge of two runs of one job" "$two_runs" merge -o "$TMP/runs.sqlite" "$even" "$straggler"
refused "report of two runs of one job" "$two_runs" report "$even" "$straggler"
refused "rank_sum of two runs of one job" "$two_runs" report --report=rank_sum "$even" "$straggler"
refused "diagnose of two runs of one job" "$two_runs" diagnose "$even" "$straggler"
mkdir "$TMP/runs"
cp "$even" "$straggler" "$TMP/runs/"
refused "baseline save of a directory of two runs" "both hold rank 0 of torchrun" \
	baseline save -o "$TMP/runs.json" "$TMP/runs"
refused "diff of a directory of two runs" "both hold rank 0 of torchrun" diff "$even" "$TMP/runs"
! $have_top || refused "top --replay of two runs of one job" "$two_runs" \
	top --replay=1000 "$even" "$straggler"
refused "report of one run's per-rank captures and another run" \
	"ddp2_rank0\.sqlite and .*ddp2_even\.sqlite both hold rank 0 of torchrun" report "$r0" "$r1" "$even"
run merge --force -o "$TMP/runs.sqlite" "$even" "$straggler"
expect_status "merge --force of two runs of one job" 0
run report --force --format=json --report=rank_sum "$even" "$straggler"
expect_status "rank_sum --force of two runs of one job" 0

# ranks of launchers or world sizes that differ (rank 1's capture of the run,
# its launcher or world size rewritten)
cp "$r1" "$TMP/mpi-r1.sqlite"
sqlite3 "$TMP/mpi-r1.sqlite" "UPDATE PERFKIT_PROCESS_INFO SET launcher = 'openmpi' WHERE rank IS NOT NULL"
refused "report of ranks of two launchers" \
	"ddp2_rank0\.sqlite's ranks were numbered by torchrun, .*mpi-r1\.sqlite's by openmpi: not one job's captures" \
	report "$r0" "$TMP/mpi-r1.sqlite"
cp "$r1" "$TMP/w4-r1.sqlite"
sqlite3 "$TMP/w4-r1.sqlite" "UPDATE PERFKIT_PROCESS_INFO SET worldSize = 4 WHERE rank IS NOT NULL"
refused "report of ranks of two world sizes" \
	"ddp2_rank0\.sqlite and .*w4-r1\.sqlite are ranks of jobs of 2 and of 4: not one job's captures" \
	report "$r0" "$TMP/w4-r1.sqlite"
run report --force "$r0" "$TMP/w4-r1.sqlite"
expect_status "report --force of ranks of two world sizes" 0

expect_that "nothing is left in TMPDIR" [ -z "$(ls -A "$TMPDIR")" ]
finish
