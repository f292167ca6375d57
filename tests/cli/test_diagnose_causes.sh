#!/usr/bin/env bash
# test_diagnose_causes.sh - findings as causes on the real captures:
#   - the critical path goes through the kernels a synchronous cudaMemcpy
#     waits for (a small pageable upload returns before its own copy runs):
#     on a capture whose step the GPU keeps busy, the path is GPU work;
#   - the critical path is a description, not a cause: where a finding
#     names the cause of its longest part outside GPU work it is that
#     finding's evidence, and alone it leads (medium or high) only when a
#     fifth of the step lies outside GPU work;
#   - a step the GPU sets is GPU memory or GPU compute as the sampled DRAM
#     throughput says, and says it cannot tell without metrics;
#   - the advice to load batches in DataLoader workers is given where the
#     step waits for its input (the host's time before its uploads is a
#     quarter of its host work or more, worked out here from the capture)
#     and not where a loader is merely there.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# ---- the path through a synchronous copy's wait -------------------------
# phases_no_nvtx: each step's 256-byte pageable cudaMemcpy waits on the
# legacy stream for the last step's kernels, then returns; its copy runs
# after. What share of the window the GPU computes, from the rows:
C=$D/corpus/phases_no_nvtx.sqlite
run diagnose -F json "$C"
cp "$TMP/out" "$TMP/phases.json"
run report --report=critical_path -F csv "$C"
python3 - "$TMP/phases.json" "$TMP/out" "$C" <<'PY' && pass "phases_no_nvtx: a synchronous copy's wait goes through the kernels it waited for" ||
import csv, json, sqlite3, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
busy = db.execute("SELECT sum(min(end, ?2) - max(start, ?1)) FROM CUPTI_ACTIVITY_KIND_KERNEL"
                  " WHERE end > ?1 AND start < ?2", (w["start_ns"], w["end_ns"])).fetchone()[0]
share_busy = busy / (w["end_ns"] - w["start_ns"])
assert share_busy >= 0.9, share_busy  # the premise: a GPU-bound loop
# the second table: the parts of the path
rows = list(csv.DictReader(open(sys.argv[2]).read().split("\n\n")[1].splitlines()))
gpu = sum(float(r["Span (%)"]) for r in rows if r["Kind"] in ("kernel", "copy", "memset"))
assert gpu >= 80, (gpu, rows)
PY
	fail "phases_no_nvtx: a synchronous copy's wait goes through the kernels it waited for"

# ---- the critical path as a description ---------------------------------
# rollout_naive: cudaFree and cudaMalloc are the path's longest parts
# outside GPU work, and alloc_churn fires: the path is its evidence.
run diagnose -F json "$D/rollout_naive.sqlite"
python3 - "$TMP/out" <<'PY' && pass "rollout_naive: the critical path is alloc_churn's evidence" ||
import json, sys
d = json.load(open(sys.argv[1]))
rules = [f["rule"] for f in d["findings"]]
assert "critical_path" not in rules, rules
churn = [f for f in d["findings"] if f["rule"] == "alloc_churn"][0]
assert "critical_path" in [a["rule"] for a in churn["also"]], churn["also"]
PY
	fail "rollout_naive: the critical path is alloc_churn's evidence"

# every capture: a critical path standing alone at medium or high has a
# fifth of the step or more outside GPU work
for capture in "$D"/*.sqlite "$D"/corpus/*.sqlite "$D"/nsys/cloverleaf-cuda.sqlite; do
	name=$(basename "$capture" .sqlite)
	run diagnose -F json "$capture"
	[ "$status" -eq 0 ] || { fail "$name: diagnose exits 0"; continue; }
	python3 - "$TMP/out" <<'PY' || fail "$name: a critical path leads only with a fifth of the step outside GPU work"
import json, sys
d = json.load(open(sys.argv[1]))
high = 0.20  # diagnose's severity.high, which the test leaves at its default
for f in d["findings"]:
    if f["rule"] == "critical_path" and f["severity"] in ("high", "medium"):
        assert f["share"] >= high - 1e-9, (f["severity"], f["share"])
PY
done
pass "a critical path standing alone leads only with a fifth of the step outside GPU work"

# ---- GPU compute or GPU memory --------------------------------------------
# With sampled DRAM throughput the verdict tells them apart: the triad of
# dram_stream streams 3 GiB (81% of the DRAM peak by ncu, tests/data/
# gpu_metrics/README.md) and small_grid spins 4 blocks without memory
# traffic. Without hardware metrics a step the GPU sets is named GPU
# compute and the summary says memory looks the same.
for pair in "gpu_metrics/dram_stream:GPU memory" "gpu_metrics/small_grid:GPU compute"; do
	run diagnose -F json "$D/${pair%%:*}.sqlite"
	python3 - "$TMP/out" "${pair#*:}" <<'PY' && pass "${pair%%:*}: sampled metrics say ${pair#*:}" ||
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
assert v["bound"] == sys.argv[2], v["bound"]
assert "look alike" not in v["summary"], v["summary"]
PY
		fail "${pair%%:*}: sampled metrics say ${pair#*:}"
done
run diagnose -F json "$D/corpus/phases_no_nvtx.sqlite"
python3 - "$TMP/out" <<'PY' && pass "phases_no_nvtx: without metrics GPU compute says memory looks the same" ||
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["has_metrics"]
v = d["verdict"]
assert v["bound"] == "GPU compute" and "or GPU memory" in v["summary"], v
PY
	fail "phases_no_nvtx: without metrics GPU compute says memory looks the same"

# ---- DataLoader workers where the step waits for input -------------------
WORKERS="DataLoader workers (num_workers)"
NEW_WORKERS="DataLoader(..., num_workers=N"
for capture in "$D"/corpus/timm_resnet_dataloader.sqlite "$D"/threads/torch_dataloader_backward.sqlite \
	"$D"/corpus/pageable_sync_copies.sqlite "$D"/torch_train.sqlite; do
	name=$(basename "$capture" .sqlite)
	run diagnose -F json "$capture"
	python3 - "$TMP/out" "$capture" "$WORKERS" "$NEW_WORKERS" <<'PY' && pass "$name: DataLoader workers advised exactly where the step waits for its input" ||
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
w, v = d["window"], d["verdict"]
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
calls = " UNION ALL ".join(
    "SELECT start, end, globalTid, correlationId FROM %s" % t
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER")
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (t,)).fetchone())
# each call's wait since its thread's previous call, for the calls that
# made the window's uploads
rows = db.execute(
    "SELECT start, end, globalTid, correlationId FROM (%s) WHERE start >= ? AND start < ?"
    " ORDER BY globalTid, start" % calls, (w["start_ns"], w["end_ns"])).fetchall()
uploads = {r[0] for r in db.execute(
    "SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND start >= ? AND start < ?",
    (w["start_ns"], w["end_ns"]))}
gap, last = 0, {}
for start, end, tid, corr in rows:
    if tid in last and corr in uploads:
        gap += max(0, start - last[tid])
    last[tid] = end
host = [p["ns"] for p in v["budget"] if p["part"] == "host_work"][0]
waits = host > 0 and len(uploads) >= w["iterations"] and gap / w["iterations"] >= 0.25 * host
said = any(sys.argv[3] in f["change"] or sys.argv[4] in f["change"]
           for f in d["findings"] if f["rule"] in ("cpu_bound", "critical_path"))
assert said == waits, (said, waits, gap / w["iterations"], host)
PY
		fail "$name: DataLoader workers advised exactly where the step waits for its input"
done
finish
