#!/usr/bin/env bash
# test_diagnose_advice.sh - what `perfkit diagnose` advises on the real
# captures of tests/data: PyTorch programs get each change in PyTorch terms
# too and other programs do not; runs of GEMMs are batched only as a
# condition when the trace cannot tell independent products from a chain of
# layers; low occupancy leaves out launches that recorded no registers; a
# capture without access counters says access efficiency is unknown; the
# new thresholds are settings that refuse bad values.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# json FILE [ARGS]: diagnose --format=json into $TMP/out.
json() {
	run diagnose --format=json "$@"
	[ "$status" -eq 0 ] || fail "diagnose $* exits 0"
}

# ---- PyTorch terms --------------------------------------------------------
# the PyTorch loop under the earlier default (every API call) and today's
for name in torch_train torch_train_default; do
	json "$D/$name.sqlite"
	python3 - "$TMP/out" <<'PY' && pass "$name: a PyTorch program, every change says how in PyTorch" ||
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pytorch"] is True
assert len(d["findings"]) >= 3
for f in d["findings"]:
    assert f["change"].count("In PyTorch") == 1, f["rule"]
pinned = [f for f in d["findings"] if f["rule"] == "pageable_async_copy"][0]
assert "pin_memory=True" in pinned["change"]
PY
		fail "$name: a PyTorch program, every change says how in PyTorch"
done

for capture in "$D"/*.sqlite; do
	name=$(basename "$capture" .sqlite)
	case $name in torch_train | torch_train_default) continue ;; esac
	json "$capture"
	python3 - "$TMP/out" <<'PY' && pass "$name: no PyTorch sentence" || fail "$name: no PyTorch sentence"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pytorch"] is False
for f in d["findings"]:
    assert "PyTorch" not in f["change"] and "torch." not in f["change"], f["rule"]
PY
done

# ---- GEMM runs --------------------------------------------------------------
# transformer_naive runs its attention heads one cublasSgemm each, back to
# back (each cutlass GEMM followed by cuBLAS's split-K reduction): the trace
# cannot tell them from layers, so batching is a condition; every launch of
# those GEMMs in the window is in a run.
json "$D/transformer_naive.sqlite"
python3 - "$TMP/out" "$D/transformer_naive.sqlite" <<'PY' && pass "transformer_naive: batched GEMM as a condition, split-K part of its GEMM" ||
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
rules = [f["rule"] for f in d["findings"]]
assert "gemm_chain" not in rules, rules
f = [f for f in d["findings"] if f["rule"] == "batched_gemm"][0]
assert "If these GEMMs are independent" in f["change"]
assert "the trace cannot tell which" in f["evidence"]
assert all(t["name"].endswith(": back to back on one stream") for t in f["top"])
names = [t["name"].rsplit(": ", 1)[0] for t in f["top"]]
w = d["window"]
db = sqlite3.connect(sys.argv[2])
launches = sum(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
                          " ON s.id = k.demangledName WHERE s.value = ? AND k.start >= ? AND k.start < ?",
                          (n, w["start_ns"], w["end_ns"])).fetchone()[0] for n in names)
print(names, launches, sum(t["count"] for t in f["top"]))
assert not any("splitKreduce" in n for n in names)
assert launches == sum(t["count"] for t in f["top"])
PY
	fail "transformer_naive: batched GEMM as a condition, split-K part of its GEMM"

# The same capture damaged on purpose: the split-K reduction renamed to an
# ordinary kernel, so that each cutlass GEMM alternates with another kernel,
# as the layers of an MLP do with their bias+ReLU: a chain, not batched.
cp "$D/transformer_naive.sqlite" "$TMP/chain.sqlite"
sqlite3 "$TMP/chain.sqlite" "UPDATE StringIds SET value = 'void bias_relu(float*, float const*, int, int)'
	WHERE value LIKE '%splitKreduce%'"
json "$TMP/chain.sqlite"
python3 - "$TMP/out" <<'PY' && pass "GEMMs alternating with another kernel: a chain, not batched" ||
import json, sys
d = json.load(open(sys.argv[1]))
chain = [f for f in d["findings"] if f["rule"] == "gemm_chain"][0]
assert all("cutlass" in t["name"] for t in chain["top"]), chain["top"]
assert "cannot become one batched GEMM" in chain["evidence"]
assert chain["change"].startswith("Cut the launches, not the chain")
batched = [f for f in d["findings"] if f["rule"] == "batched_gemm"][0]
assert not any("cutlass" in t["name"] for t in batched["top"])
PY
	fail "GEMMs alternating with another kernel: a chain, not batched"

# ---- occupancy and older --metrics captures --------------------------------
# rollout_naive_memory's kernel rows were rebuilt by an older collector with
# 0 registers per thread: no occupancy is computed from them, and it says so.
json "$D/rollout_naive_memory.sqlite"
python3 - "$TMP/out" "$D/rollout_naive_memory.sqlite" <<'PY' && pass "rollout_naive_memory: launches with 0 registers left out, access unknown" ||
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
db = sqlite3.connect(sys.argv[2])
n = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE registersPerThread = 0"
               " AND start >= ? AND start < ?", (w["start_ns"], w["end_ns"])).fetchone()[0]
skips = {s["rule"]: s["reason"] for s in d["not_run"]}
assert "low_occupancy" not in [f["rule"] for f in d["findings"]]
assert skips["low_occupancy"].startswith("%d launches of " % n), skips["low_occupancy"]
assert "0 registers per thread" in skips["low_occupancy"]
assert "no access counters" in skips["uncoalesced_access"]
fp32 = [f for f in d["findings"] if f["rule"] == "fp32_memory_bound"][0]
assert "access efficiency is unknown" in fp32["evidence"]
PY
	fail "rollout_naive_memory: launches with 0 registers left out, access unknown"

# ---- settings ----------------------------------------------------------------
run diagnose --set access.max_overfetch=2,access.min_kernel_share=0.05,repeat.max_between=1 "$D/transformer_naive.sqlite"
expect_status "the new thresholds are settings" 0
run diagnose --set repeat.max_between=0 --format=json "$D/transformer_naive.sqlite"
expect_status "repeat.max_between=0" 0
run diagnose --set access.max_overfetch=0.5 "$D/transformer_naive.sqlite"
expect_status "access.max_overfetch below 1" 2
expect_err_line "access.max_overfetch below 1" "perfkit: setting 'access.max_overfetch' needs a number >= 1"
run diagnose --set repeat.max_between=-1 "$D/transformer_naive.sqlite"
expect_status "negative repeat.max_between" 2
expect_one_error_line "negative repeat.max_between" "repeat.max_between' needs a number >= 0"
printf '{"access.max_overfetch": 0.9}\n' >"$TMP/t.json"
run diagnose --thresholds "$TMP/t.json" "$D/transformer_naive.sqlite"
expect_status "thresholds file with access.max_overfetch below 1" 2
expect_one_error_line "thresholds file with access.max_overfetch below 1" "needs a number >= 1"
finish
