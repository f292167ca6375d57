#!/usr/bin/env bash
# test_gate_job_per_rank.sh - baseline and gate of a job rank by rank, on
# the real 2-rank DDP captures (tests/data/ddp/two_gpus): each rank's keys
# from its own rows and loop (a figure per iteration is per step of that
# rank, not both ranks' sum, which made gpu_time 30.7 ms/iter on the
# straggler), the job's step (its slowest rank's), and the job's size:
# recorded, and another size refused in one line unless --ranks=common
# (two jobs only).
. "$(dirname "$0")/cli_lib.sh"
J=$PERFKIT_TEST_DATA/ddp/two_gpus

# GPU time (kernels, copies, memsets) per step of one rank, in SQL: its
# work that starts in its loop (from its second train_step, the first is
# warm-up, to the end of its train range) over its train_steps but one.
rank_gpu_per_step() { # FILE RANK
	sqlite3 -readonly "$1" "
	WITH p AS (SELECT globalPid AS gp FROM PERFKIT_PROCESS_INFO WHERE rank = $2),
	mine(id, start, \"end\") AS (SELECT e.textId, e.start, e.\"end\" FROM NVTX_EVENTS e
		WHERE ((e.globalTid >> 24) << 24) = (SELECT gp FROM p) AND e.\"end\" IS NOT NULL),
	st AS (SELECT start FROM mine WHERE id = (SELECT id FROM StringIds WHERE value = 'train_step')
		ORDER BY start),
	w AS (SELECT (SELECT start FROM st LIMIT 1 OFFSET 1) AS lo,
		(SELECT max(\"end\") FROM mine WHERE id = (SELECT id FROM StringIds WHERE value = 'train')) AS hi),
	g AS (SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = (SELECT gp FROM p)
		UNION ALL SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid = (SELECT gp FROM p)
		UNION ALL SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE globalPid = (SELECT gp FROM p))
	SELECT sum(g.\"end\" - g.start) / ((SELECT count(*) FROM st) - 1.0) FROM g, w
		WHERE g.start >= w.lo AND g.start < w.hi"
}
# The median of one rank's train_step ranges (host side), in SQL.
rank_step_median() { # FILE RANK
	sqlite3 -readonly "$1" "
	WITH d AS (SELECT e.\"end\" - e.start AS v FROM NVTX_EVENTS e
		JOIN StringIds s ON s.id = e.textId
		JOIN PERFKIT_PROCESS_INFO p ON p.globalPid = (e.globalTid >> 24) << 24
		WHERE s.value = 'train_step' AND e.\"end\" IS NOT NULL AND p.rank = $2)
	SELECT v FROM d ORDER BY v LIMIT 1 OFFSET (SELECT (count(*) - 1) / 2 FROM d)"
}

# ---- the baseline of a job: rank by rank, and its size ------------------
run baseline save -o "$TMP/even.json" "$J/ddp2_even.sqlite"
expect_status "baseline of a 2-rank job" 0
if python3 - "$TMP/even.json" "$(rank_gpu_per_step "$J/ddp2_even.sqlite" 0)" \
	"$(rank_gpu_per_step "$J/ddp2_even.sqlite" 1)" "$(rank_step_median "$J/ddp2_even.sqlite" 0)" \
	"$(rank_step_median "$J/ddp2_even.sqlite" 1)" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
want = {0: float(sys.argv[2]), 1: float(sys.argv[3])}
assert b["ranks"] == 2, b["ranks"]
keys = b["keys"]
# no key sums the ranks
assert not [k for k in keys if "/" not in k and k != "step"], [k for k in keys if "/" not in k]
for r, ns in want.items():
    got = keys["rank%d/gpu_time" % r]["per_iteration"]["median"]
    assert abs(got - ns) <= 1e-6 * ns, (r, got, ns)
    assert [k for k in keys if k.startswith("rank%d/kernel:ncclDevKernel_AllReduce" % r)], r
# the step: the slower rank's, not the ranks' sum (the steps run from one
# step's GPU work to the next one's, the ranges on the host: a few % apart)
slowest = max(float(sys.argv[4]), float(sys.argv[5]))
step = keys["step"]["median"]
assert abs(step - slowest) <= 0.05 * slowest, (step, slowest)
PY
then pass "a job's baseline: each rank's GPU time per its own step, the slowest rank's step, 2 ranks"
else fail "a job's baseline: each rank's GPU time per its own step, the slowest rank's step, 2 ranks"; fi

# ---- the gate: the straggler against the even run, rank by rank ---------
run gate --format=json --baseline "$TMP/even.json" "$J/ddp2_straggler.sqlite"
expect_status "the straggler against the even job's baseline" 1
if python3 - "$TMP/out" "$(rank_gpu_per_step "$J/ddp2_straggler.sqlite" 0)" \
	"$(rank_gpu_per_step "$J/ddp2_straggler.sqlite" 1)" "$(rank_step_median "$J/ddp2_straggler.sqlite" 0)" \
	"$(rank_step_median "$J/ddp2_straggler.sqlite" 1)" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["Key"]: r for rep in doc["reports"] if rep["name"] == "gate" for r in rep["rows"]}
for r, arg in ((0, 2), (1, 3)):
    row = rows["rank%d/gpu_time" % r]
    ns = float(sys.argv[arg])
    assert row["Per"] == "iteration" and abs(row["New"] - ns) <= 0.1 + 1e-6 * ns, (row, ns)
step = rows["step"]
slowest = max(float(sys.argv[4]), float(sys.argv[5]))
assert step["Result"] == "FAIL" and abs(step["New"] - slowest) <= 0.05 * slowest, (step, slowest)
PY
then pass "the gate compares each rank per its own step and fails the job's step"
else fail "the gate compares each rank per its own step and fails the job's step"; fi
run gate --baseline "$TMP/even.json" --junit="$TMP/job.xml" "$J/ddp2_straggler.sqlite"
expect_out "the step's failure first" "^FAIL step: [0-9.]+ ms/iter vs [0-9.]+ ms"
expect_that "JUnit classes name the rank" grep -q 'classname="perfkit.gate.rank1.kernel"' "$TMP/job.xml"
run gate --baseline "$TMP/even.json" "$J/ddp2_even.sqlite"
expect_status "the even job against its own baseline" 0

# ---- another job size: said in one line and refused ---------------------
run gate --baseline "$TMP/even.json" "$J/ddp2_rank0.sqlite"
expect_status "one process against a job's baseline" 2
expect_one_error_line "one process against a job's baseline" "ddp2_rank0.sqlite is one process but the baseline .*even.json is of a job of 2 ranks$"
run gate --baseline "$TMP/even.json" --ranks=common "$J/ddp2_rank0.sqlite"
expect_status "--ranks=common does not make one process a job" 2
sed 's/"ranks": 2/"ranks": 3/' "$TMP/even.json" >"$TMP/three.json"
expect_that "the edited baseline says 3 ranks" grep -q '"ranks": 3' "$TMP/three.json"
run gate --baseline "$TMP/three.json" "$J/ddp2_even.sqlite"
expect_status "a job of 2 ranks against a baseline of 3" 2
expect_one_error_line "a job of 2 ranks against a baseline of 3" "is a job of 2 ranks but the baseline .*three.json is of a job of 3 ranks \(--ranks=common"
run gate --baseline "$TMP/three.json" --ranks=common "$J/ddp2_even.sqlite"
expect_status "--ranks=common compares the ranks both have" 0
grep -v '"ranks"' "$TMP/even.json" >"$TMP/unsized.json"
run gate --baseline "$TMP/unsized.json" "$J/ddp2_even.sqlite"
expect_status "a job against a baseline that does not record its size" 2
expect_one_error_line "a job against a baseline without a size" "does not record a job's size .*save it again"
run baseline save -o "$TMP/mixed.json" "$J/ddp2_even.sqlite" "$J/ddp2_rank0.sqlite"
expect_status "a job and one process cannot form one baseline" 2
expect_one_error_line "a job and one process cannot form one baseline" "jobs of different sizes .* has 2 ranks, .*ddp2_rank0.sqlite has 1"
expect_that "nothing written" test ! -e "$TMP/mixed.json"
finish
