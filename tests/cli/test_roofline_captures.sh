#!/usr/bin/env bash
# test_roofline_captures.sh - `perfkit roofline` and `perfkit diagnose` on
# real H100 captures made with hardware metrics (tests/data/rollout_*_roofline
# with --metrics=roofline, rollout_naive_memory with --metrics=memory):
# the roofline's rates and intensities are the capture's own sums, recomputed
# here with SQL; a memory-set capture has no FLOP figures; the seed's problem
# (memory-bound FP32 storage) is found from the metrics on the naive variant
# and not on the optimized one; rules that judge host time do not run on a
# kernel-replay capture.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# check_rates CAPTURE FLOPS(yes|no): every roofline row against SQL sums.
check_rates() {
	run roofline --format=json "$D/$1.sqlite"
	[ "$status" -eq 0 ] || { fail "roofline $1 exits 0"; return; }
	python3 - "$TMP/out" "$D/$1.sqlite" "$2" <<'PY' && pass "roofline $1: rates are the capture's sums" || fail "roofline $1: rates are the capture's sums"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
db = sqlite3.connect(sys.argv[2])
flops = sys.argv[3] == "yes"
sums = {name: (t, f, b) for name, t, f, b in db.execute(
    "SELECT s.value, sum(m.durationNs), sum(m.flopsF64 + m.flopsF32 + m.flopsF16),"
    " sum(m.dramReadBytes + m.dramWriteBytes) FROM PERFKIT_KERNEL_METRICS m"
    " JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
    " JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")}
assert rows and len(rows) == len(sums), (len(rows), len(sums))
near = lambda a, b, digits: abs(a - b) <= 0.6 * 10 ** -digits + 1e-9 * abs(b)
for r in rows:
    t, f, b = sums[r["Kernel"]]
    assert near(r["DRAM GB/s"], b / t, 1), (r["Kernel"], r["DRAM GB/s"], b / t)
    if flops:
        assert near(r["GFLOP/s"], f / t, 1), (r["Kernel"], r["GFLOP/s"], f / t)
        if b > 0:
            assert near(r["AI DRAM (FLOP/B)"], f / b, 3), (r["Kernel"], r["AI DRAM (FLOP/B)"], f / b)
    else:
        assert f is None and r["GFLOP/s"] is None and r["AI DRAM (FLOP/B)"] is None, r
    assert r["Class"] in ("memory-bound", "compute-bound", "latency-bound", "launch-bound"), r
PY
}
check_rates rollout_naive_roofline yes
check_rates rollout_optimized_roofline yes
check_rates rollout_naive_memory no

run roofline "$D/rollout_naive_memory.sqlite"
expect_out "memory-set roofline says FLOPs are not counted" "No FLOP counts \(captured with --metrics=memory\)"

# findings FILE: SEVERITY:RULE lines, then SKIPPED:RULE lines, into
# $TMP/FILE.rules (a failure here must count, so not in a subshell)
findings() {
	run diagnose --format=json "$D/$1.sqlite"
	if [ "$status" -ne 0 ]; then fail "diagnose $1 exits 0"; return; fi
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["kernel_replay"] is True
for f in d["findings"]: print("%s:%s" % (f["severity"], f["rule"]))
for s in d["not_run"]: print("skipped:%s" % s["rule"])' "$TMP/out" >"$TMP/$1.rules" ||
		fail "diagnose $1: a kernel-replay report"
}

findings rollout_naive_roofline
findings rollout_optimized_roofline
findings rollout_naive_memory
naive=$(cat "$TMP/rollout_naive_roofline.rules")
optimized=$(cat "$TMP/rollout_optimized_roofline.rules")
memory=$(cat "$TMP/rollout_naive_memory.rules")
grep -qE '^(medium|high):fp32_memory_bound$' <<<"$naive" && pass "roofline naive: FP32 storage found from metrics" ||
	fail "roofline naive: FP32 storage found from metrics (got: $(echo $naive))"
grep -q ':fp32_memory_bound$' <<<"$optimized" && fail "optimized keeps 16-bit storage: no FP32 finding (got: $(echo $optimized))" ||
	pass "optimized keeps 16-bit storage: no FP32 finding"
grep -qE '^(medium|high):fp32_memory_bound$' <<<"$memory" && pass "memory set: FP32 storage found without FLOP counts" ||
	fail "memory set: FP32 storage found without FLOP counts (got: $(echo $memory))"
# without FLOP counts the evidence shows no intensity
run diagnose --format=json "$D/rollout_naive_memory.sqlite"
python3 - "$TMP/out" <<'PY' && pass "memory set: offenders without FLOP/B" || fail "memory set: offenders without FLOP/B"
import json, sys
f = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "fp32_memory_bound"][0]
names = [t["name"] for t in f["top"]]
sys.exit(0 if names and all("GB/s" in n and "FLOP/B" not in n for n in names) else 1)
PY
for rule in gpu_util gpu_gaps cpu_bound launch_bound sync_api alloc_churn; do
	if grep -q "^skipped:$rule\$" <<<"$naive" && ! grep -qE "^[a-z]+:$rule\$" <<<"$(grep -v '^skipped:' <<<"$naive")"; then
		pass "kernel replay: $rule not judged"
	else
		fail "kernel replay: $rule not judged (got: $(echo $naive))"
	fi
done
finish
