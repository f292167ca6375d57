#!/usr/bin/env bash
# test_diagnose_workload_captures.sh - on real H100 captures of the reference
# workloads (tests/data/), `perfkit diagnose` reports each seed's problem on
# the naive variant and not on the optimized one, and a well-behaved loop
# (gpu_work clean) gets nothing above low severity.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# rules FILE: the rule ids diagnose reports, one per line, as SEVERITY:ID.
rules() {
	run diagnose --format=json "$D/$1.sqlite"
	[ "$status" -eq 0 ] || { fail "diagnose $1 exits 0"; return; }
	python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print("%s:%s" % (f["severity"], f["rule"]))' "$TMP/out"
}

# seed_problem WORKLOAD RULE...: each RULE fires on the naive capture and not
# on the optimized one.
seed_problem() {
	local w=$1 rule naive optimized
	shift
	naive=$(rules "${w}_naive")
	optimized=$(rules "${w}_optimized")
	for rule in "$@"; do
		if grep -q ":$rule\$" <<<"$naive"; then pass "$w naive reports $rule"
		else fail "$w naive reports $rule (got: $(echo $naive))"; fi
		if grep -q ":$rule\$" <<<"$optimized"; then fail "$w optimized does not report $rule (got: $(echo $optimized))"
		else pass "$w optimized does not report $rule"; fi
	done
}

seed_problem hash_embedding small_htod_copies repeated_kernel
seed_problem rollout fp32_memory_bound
seed_problem batched_forces launch_bound
seed_problem transformer sync_memcpy alloc_churn batched_gemm launch_bound

clean=$(rules clean_loop)
if grep -qE '^(medium|high):' <<<"$clean"; then fail "clean loop has nothing above low (got: $(echo $clean))"
else pass "clean loop has nothing above low severity"; fi

# The window is the GPU time the loop's steps launched, not the host's
# enqueueing time: the clean loop's steps return at once, its kernels run on.
run diagnose --format=json "$D/clean_loop.sqlite"
python3 - "$TMP/out" "$D/clean_loop.sqlite" <<'PY' && pass "clean loop window covers its kernels" || fail "clean loop window covers its kernels"
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
last = db.execute("SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
sys.exit(0 if w["end_ns"] >= last and w["iterations"] > 0 else 1)
PY

# The loop is the range that repeats once per step, not a phase repeated
# inside it: batched_forces_naive wraps each of its systems' uploads in
# "load/transfer" (many per "step", 70% of its time). Per-iteration figures
# are then per step: the number of load/transfer ranges per step, counted
# from the capture itself.
run diagnose --format=json "$D/batched_forces_naive.sqlite"
python3 - "$TMP/out" "$D/batched_forces_naive.sqlite" <<'PY' && pass "forces loop is the step range, its figures per step" || fail "forces loop is the step range, its figures per step"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
count = lambda name: db.execute("SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                                " WHERE s.value = ? AND n.eventType IN (59, 60)", (name,)).fetchone()[0]
per_step = count("load/transfer") / count("step")
w = d["window"]
sync = [f for f in d["findings"] if f["rule"] == "sync_memcpy"][0]
print(w["source"], w["iterations"], sync["evidence"][:80], per_step)
ok = w["source"].startswith('NVTX range "step"') and w["iterations"] == count("step") - 1
ok = ok and ("%.1f per iteration" % per_step) in sync["evidence"]
sys.exit(0 if ok else 1)
PY

# The same with a name longer than any fixed buffer: the phase test looks the
# whole name up again.
cp "$D/batched_forces_naive.sqlite" "$TMP/long_names.sqlite"
python3 -c 'import sqlite3,sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE StringIds SET value = ? WHERE value = ?", ("load/transfer " + "x" * 300, "load/transfer"))
db.commit()' "$TMP/long_names.sqlite"
run diagnose --format=json "$TMP/long_names.sqlite"
python3 -c 'import json,sys
sys.exit(0 if json.load(open(sys.argv[1]))["window"]["source"].startswith("NVTX range \"step\"") else 1)' "$TMP/out" &&
	pass "a long phase name is still a phase" || fail "a long phase name is still a phase"

# Launch calls are runtime and driver calls alike: transformer_naive's cuBLAS
# launches through cuLaunchKernel (the driver table). The launch cost in the
# evidence is the mean over both, in the window's host span.
run diagnose --format=json "$D/transformer_naive.sqlite"
python3 - "$TMP/out" "$D/transformer_naive.sqlite" <<'PY' && pass "launch cost counts driver launches" || fail "launch cost counts driver launches"
import json, re, sqlite3, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
db = sqlite3.connect(sys.argv[2])
n = ns = 0
for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    c, s = db.execute("SELECT count(*), coalesce(sum(r.end - r.start), 0) FROM %s r JOIN StringIds s ON s.id = r.nameId"
                      " WHERE r.start >= ? AND r.start < ? AND (s.value LIKE '%%LaunchKernel%%' OR s.value LIKE 'cuLaunch%%')" % t,
                      (w["start_ns"], w["host_end_ns"])).fetchone()
    n, ns = n + c, ns + s
    assert c > 0, t
text = [f for f in d["findings"] if f["rule"] == "launch_bound"][0]["evidence"]
got = float(re.search(r"costs the host ([0-9.]+) us", text).group(1))
print(got, ns / n / 1e3)
sys.exit(0 if abs(got - ns / n / 1e3) < 0.006 else 1)
PY
finish
