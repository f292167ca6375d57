#!/usr/bin/env bash
# test_diff_per_iteration_captures.sh - `perfkit diff` and `perfkit gate` on
# real H100 captures (tests/data/) of different lengths: a capture against a
# copy of itself cut to its first half says no change per iteration, in every
# format, and the gate passes that copy against a baseline of the whole
# where the first steps ran as fast as the rest (and fails only the host-side
# keys where they did not); a naive/optimized pair still gives its speed-up
# per iteration, checked against the GPU time per step counted here straight
# from the capture.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# first_steps SRC DST RANGE KEEP: DST is SRC as if the program had stopped
# after KEEP instances of the NVTX range RANGE: the host-side rows (API
# calls, ranges, allocations, synchronisations) from the start of instance
# KEEP on are deleted, and so is the GPU work those calls launched. A real
# capture cut short is still real data; nothing is written into it.
first_steps() {
	cp "$1" "$2"
	local t
	t=$(sqlite3 "$2" "SELECT n.start FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
		WHERE s.value = '$3' ORDER BY n.start LIMIT 1 OFFSET $4")
	[ -n "$t" ] || { echo "FAIL: $1 has no instance $4 of '$3'" >&2; exit 1; }
	sqlite3 "$2" "CREATE TEMP TABLE late AS
		SELECT correlationId AS id FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start >= $t
		UNION SELECT correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER WHERE start >= $t;
	DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId IN (SELECT id FROM late);
	DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE correlationId IN (SELECT id FROM late);
	DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE correlationId IN (SELECT id FROM late);
	DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start >= $t;
	DELETE FROM CUPTI_ACTIVITY_KIND_DRIVER WHERE start >= $t;
	DELETE FROM NVTX_EVENTS WHERE start >= $t;
	DELETE FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE start >= $t;
	DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE start >= $t;"
}

# steps FILE RANGE: the instances of RANGE after the first (the warm-up).
steps() {
	echo $(($(sqlite3 "$1" "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
		WHERE s.value = '$2' AND n.end IS NOT NULL") - 1))
}

for spec in torch_train:train_step hash_embedding_optimized:step rollout_optimized:step clean_loop:step; do
	name=${spec%%:*} range=${spec#*:}
	whole=$D/$name.sqlite half=$TMP/$name.half.sqlite
	keep=$((($(steps "$whole" "$range") + 1) / 2))
	first_steps "$whole" "$half" "$range" "$keep"
	nb=$(steps "$whole" "$range") nn=$(steps "$half" "$range")
	expect_that "$name: the cut copy holds fewer steps ($nn of $nb)" test "$nn" -lt "$nb"

	run diff "$whole" "$half"
	expect_status "$name: diff with its first half" 0
	expect_out "$name: the same wall time per step" \
		"^NEW's step takes the same wall time as BASE's .*\(BASE $nb steps, NEW $nn\); GPU time per step"
	if grep -qE "NEW('s step)? is .* (faster|slower)" "$TMP/out"
	then fail "$name: its first half is called faster or slower"; else pass "$name: no faster or slower"; fi

	run diff --format=json "$whole" "$half"
	if python3 - "$TMP/out" "$nb" "$nn" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rep = {r["name"]: r["rows"] for r in doc["reports"]}
assert "step takes the same wall time" in rep["diff_verdict"][0]["Verdict"], rep["diff_verdict"]
assert [l["Iterations"] for l in rep["diff_loops"]] == [int(sys.argv[2]), int(sys.argv[3])]
# Kernels launched in the loop run as often per iteration in both halves.
for k in rep["diff_kernels"]:
    if k["Base Count/iter"]:
        assert k["Change"] not in ("more calls", "fewer calls"), k
        assert k["Delta/iter (ns)"] is not None, k
PY
	then pass "$name: json carries the loops and the per-iteration columns"
	else fail "$name: json carries the loops and the per-iteration columns"; fi

	run diff --format=html -o "$TMP/$name.html" "$whole" "$half"
	expect_status "$name: diff html" 0
	expect_that "$name: html carries the per-iteration verdict" \
		grep -q "step takes the same wall time" "$TMP/$name.html"
	expect_that "$name: html carries the loops" grep -q "Loops (the per-iteration basis)" "$TMP/$name.html"

	run baseline save -o "$TMP/$name.json" "$whole"
	expect_status "$name: baseline of the whole capture" 0
done

# The gate, where the first half's steps took as long as the whole's.
for spec in rollout_optimized:step clean_loop:step; do
	name=${spec%%:*} range=${spec#*:}
	nb=$(steps "$D/$name.sqlite" "$range") nn=$(steps "$TMP/$name.half.sqlite" "$range")
	run gate --baseline "$TMP/$name.json" "$TMP/$name.half.sqlite"
	expect_status "$name: the first half passes the gate" 0
	expect_out "$name: the gate compares per iteration" "per iteration of NVTX range \"$range\" \(baseline $nb iterations, new $nn\)"
done

# torch_train's first steps ran slower on the host than the rest (counted
# here from its ranges): the gate fails those host-side keys, and only them.
median_step() { # FILE: the median train_step after the first, in ns
	sqlite3 "$1" "SELECT n.end - n.start FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
		WHERE s.value = 'train_step' AND n.end IS NOT NULL ORDER BY n.start LIMIT -1 OFFSET 1" |
		sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
whole_step=$(median_step "$D/torch_train.sqlite") half_step=$(median_step "$TMP/torch_train.half.sqlite")
expect_that "torch_train: its first half's steps are over 5% slower ($half_step vs $whole_step ns)" \
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) > 1.05 * float(sys.argv[2]))" "$half_step" "$whole_step"
run gate --baseline "$TMP/torch_train.json" --format=json "$TMP/torch_train.half.sqlite"
expect_status "torch_train: the gate fails its slower first half" 1
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for rep in doc["reports"] if rep["name"] == "gate" for r in rep["rows"]]
failed = {r["Key"] for r in rows if r["Result"] == "FAIL"}
assert "nvtx:train_step" in failed, failed
assert all(k == "wall_time" or k.startswith("nvtx:") for k in failed), failed
gpu = {r["Key"]: r for r in rows}
assert gpu["gpu_time"]["Result"] == "pass" and gpu["gpu_time"]["Per"] == "iteration", gpu["gpu_time"]
PY
then pass "torch_train: only host-side keys fail, GPU time per iteration passes"
else fail "torch_train: only host-side keys fail, GPU time per iteration passes"; fi

# A naive/optimized pair: the verdict's ratio per iteration against the GPU
# time of the work launched inside the steps, per step, counted here.
per_step_ratio() { # NAIVE OPTIMIZED: naive's GPU time per step over optimized's
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
def per_step(path):
    db = sqlite3.connect(path)
    steps = db.execute("SELECT n.start, n.end FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                       " WHERE s.value = 'step' AND n.end IS NOT NULL ORDER BY n.start").fetchall()[1:]
    inside = {c for t, c in db.execute("SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                                       " UNION ALL SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER")
              if any(a <= t < b for a, b in steps)}
    gpu = sum(d for table in ("KERNEL", "MEMCPY", "MEMSET")
              for c, d in db.execute(f'SELECT correlationId, "end" - start FROM CUPTI_ACTIVITY_KIND_{table}')
              if c in inside)
    return gpu / len(steps)
print(per_step(sys.argv[1]) / per_step(sys.argv[2]))
PY
}
for w in hash_embedding rollout transformer batched_forces; do
	run diff "$D/${w}_naive.sqlite" "$D/${w}_optimized.sqlite"
	expect_out "$w: optimized's step is faster" "^NEW's step is [0-9.]+x faster: "
	got=$(grep -oE "GPU time per step [^;:(]*\([0-9.]+x less\)" "$TMP/out" | grep -oE "[0-9.]+x less" | grep -oE "^[0-9.]+")
	want=$(per_step_ratio "$D/${w}_naive.sqlite" "$D/${w}_optimized.sqlite")
	# Within 12 %: the window counts GPU work by when it ran, the count here by
	# which step launched it (a copy issued between two steps differs).
	if python3 -c "import sys; g, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g / w - 1) > 0.12)" "$got" "$want"
	then pass "$w: ${got}x per iteration, ${want}x counted per step"
	else fail "$w: ${got}x per iteration, but ${want}x counted per step"; fi
done
finish
