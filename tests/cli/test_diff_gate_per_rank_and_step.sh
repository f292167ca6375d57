#!/usr/bin/env bash
# test_diff_gate_per_rank_and_step.sh - issue 38, each defect from its
# reproducer on real captures (tests/data): a 2-rank DDP job is compared
# rank with rank, its iterations are one rank's steps and its verdict names
# the straggler; the verdict opens with the step's wall time; no label
# contradicts its row; the gate's allowance is printed as terms that add
# up; a kernel 6x slower per launch fails under the floor (an edited copy
# of a real capture: no real pair has one); another program is refused
# unless --program=any; text lines fit 200 columns.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
J=$D/ddp/two_gpus

# ---- a job: per rank, per step, the straggler named --------------------
run diff --format=json "$J/ddp2_even.sqlite" "$J/ddp2_straggler.sqlite"
expect_status "diff of two 2-rank jobs" 0
# each rank's train_step instances less its warm-up, counted in SQL
steps_of_rank() { # FILE RANK
	sqlite3 -readonly "$1" "SELECT count(*) - 1 FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId
		JOIN PERFKIT_PROCESS_INFO p ON p.globalPid = (e.globalTid >> 24) << 24
		WHERE s.value = 'train_step' AND e.end IS NOT NULL AND p.rank = $2"
}
if python3 - "$TMP/out" "$(steps_of_rank "$J/ddp2_even.sqlite" 0)" "$(steps_of_rank "$J/ddp2_even.sqlite" 1)" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rep = {r["name"]: r["rows"] for r in doc["reports"]}
loops = [l for l in rep["diff_loops"] if l["Capture"] == "BASE"]
want = {"rank 0": int(sys.argv[2]), "rank 1": int(sys.argv[3])}
got = {l["Rank"]: l["Iterations"] for l in loops}
assert got == want, (got, want)
PY
then pass "a job's iterations are each rank's steps, not both ranks' together"
else fail "a job's iterations are each rank's steps, not both ranks' together"; fi
run diff "$J/ddp2_even.sqlite" "$J/ddp2_straggler.sqlite"
expect_out "the job's verdict takes the slowest rank's step" "^job of 2 ranks, compared rank with rank; the slowest rank is rank [01]: its step is [0-9.]+x slower"
expect_out "the straggler named, with what it does more" "in NEW rank 1 arrives last at [0-9]+ of [0-9]+ collectives .* what it does more: host work"

# ---- the verdict on the step, labels from their own figures ------------
run diff --format=json "$D/transformer_naive.sqlite" "$D/transformer_optimized.sqlite"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rep = {r["name"]: r["rows"] for r in doc["reports"]}
v = rep["diff_verdict"][0]["Verdict"]
assert v.startswith("NEW's step is ") and " faster: " in v and "GPU time per step" in v, v
for sec in ("diff_kernels", "diff_copies", "diff_ranges"):
    for row in rep[sec]:
        d, c = row["Delta/iter (ns)"], row["Change"]
        if c in ("slower", "more calls"):
            assert d > 0, row
        if c in ("faster", "fewer calls"):
            assert d < 0, row
step = [r for r in rep["diff_ranges"] if r["Name"] == "step"][0]
assert step["Change"] == "faster", step
PY
then pass "transformer: the step first, and every label agrees with its Delta/iter"
else fail "transformer: the step first, and every label agrees with its Delta/iter"; fi

# ---- the gate: terms that add up, the per-launch ratio -----------------
run baseline save -o "$TMP/opt.json" "$D/hash_embedding_optimized.sqlite"
expect_status "baseline of hash_embedding_optimized" 0
cp "$D/hash_embedding_optimized.sqlite" "$TMP/slow_hash.sqlite"
sqlite3 "$TMP/slow_hash.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start + 6 * (\"end\" - start)
	WHERE shortName IN (SELECT id FROM StringIds WHERE value = 'hash_basic')"
ratio=$(sqlite3 -readonly "$TMP/slow_hash.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
expect_that "the copy holds kernels ($ratio)" test "$ratio" -gt 0
run gate --baseline "$TMP/opt.json" "$TMP/slow_hash.sqlite"
expect_status "a kernel 6x slower per launch fails under the floor" 1
expect_out "its failure says the ratio and the limit" "^FAIL kernel:hash_basic: .* 6\.0x per launch \(limit 2x\)"
run gate --baseline "$TMP/opt.json" --max-launch-ratio=0 "$TMP/slow_hash.sqlite"
expect_status "--max-launch-ratio=0 turns the ratio rule off" 0
run gate --format=json --baseline "$TMP/opt.json" "$D/hash_embedding_optimized_2.sqlite"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for rep in doc["reports"] if rep["name"] == "gate" for r in rep["rows"]]
assert rows
for r in rows:
    if r["Base"] is None:
        continue
    total = r["Base"] + r["Budget"] + r["Noise"] + r["Floor Lift"]
    # each cell is rounded to 0.1
    assert abs(total - r["Allowed"]) <= 0.2 + 1e-9 * r["Allowed"], r
    if r["Result"] != "removed":
        assert "allowed " in r["Message"] and "% " in r["Message"] and "floor lift" in r["Message"], r
PY
then pass "allowed up to = base + budget + noise + floor lift, for every key"
else fail "allowed up to = base + budget + noise + floor lift, for every key"; fi

# ---- the program's identity --------------------------------------------
run baseline save -o "$TMP/train.json" "$D/torch_train.sqlite"
run gate --baseline "$TMP/train.json" "$D/cases/torch_mlp.sqlite"
expect_status "python3 torch_cases.py against python3 torch_train.py's baseline" 2
expect_one_error_line "another program refused, naming both" "'torch_cases.py \(run by python3\)' but the baseline .* is for 'torch_train.py \(run by python3\)'"
run gate --baseline "$TMP/train.json" --program=any "$D/cases/torch_mlp.sqlite"
if [ "$status" -ne 2 ]; then pass "--program=any compares it"; else fail "--program=any compares it"; fi
run baseline save -o "$TMP/ddp.json" "$D/ddp/ddp2_even.sqlite"
# the same job captured rank by rank, each rank run by python3: a folder of them is one job
mkdir "$TMP/per_rank"
cp "$D/ddp/ddp2_rank0.sqlite" "$D/ddp/ddp2_rank1.sqlite" "$TMP/per_rank/"
run gate --baseline "$TMP/ddp.json" "$TMP/per_rank"
if [ "$status" -ne 2 ]; then pass "torchrun's baseline takes the same script run by python3"
else fail "torchrun's baseline takes the same script run by python3"; fi

# ---- readable in a log -------------------------------------------------
run gate --baseline "$TMP/train.json" --junit="$TMP/train.xml" "$D/torch_train_default.sqlite"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/out")
expect_that "gate text lines fit 200 columns (longest $longest)" test "$longest" -le 200
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$TMP/train.xml")
expect_that "JUnit lines fit 200 columns (longest $longest)" test "$longest" -le 200
finish
