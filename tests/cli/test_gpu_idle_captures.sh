#!/usr/bin/env bash
# test_gpu_idle_captures.sh - `perfkit report --report=gpu_idle_sum,critical_path`
# on every real capture in tests/data/ (the cases of tests/data/cases/ too)
# and the two Nsight Systems exports of tests/data/nsys/:
# properties that must hold whatever the numbers (the causes add up to the
# idle time, busy plus idle is the window, the busy time is the union of the
# GPU rows in the window computed here from the file itself, the critical
# path's parts tile its step), and what the workloads are known to do (the
# naive transformer's optimized variant idles less, the clean loop hardly
# idles, a stream-wait cause needs stream waits in the capture; its path
# through its allocations and blocking copies is test_gpu_idle_cases.sh's).
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
export PYTHONPATH="$PERFKIT_SOURCE/tests/tools"

captures=("$D"/*.sqlite "$D"/cases/*.sqlite "$D"/nsys/*.sqlite)

# ---- invariants on every capture ----------------------------------------
for f in "${captures[@]}"; do
	name=$(basename "$f" .sqlite)
	run report --report=gpu_idle_sum,critical_path --format=json "$f"
	if [ "$status" -ne 0 ]; then fail "$name: report gpu_idle_sum,critical_path exits 0"; continue; fi
	cp "$TMP/out" "$TMP/$name.json"
	run diagnose --format=json "$f"
	[ "$status" -eq 0 ] || { fail "$name: diagnose exits 0"; continue; }
	if python3 - "$TMP/$name.json" "$TMP/out" "$f" >"$TMP/why" 2>&1 <<'PY'
import json, sqlite3, sys, capture_zero
rep = {r["name"]: r["rows"] for r in json.load(open(sys.argv[1]))["reports"]}
win = json.load(open(sys.argv[2]))["window"]
db = sqlite3.connect(sys.argv[3])
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
start, end = win["start_ns"], win["end_ns"]
tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
# start times count from the capture's start (docs/time-base.md): the
# run's (PERFKIT_META), an nsys export's session's, or its first record
origin, _ = capture_zero.zero(sys.argv[3])
gpu = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                   "CUPTI_ACTIVITY_KIND_MEMSET") if t in tables]
for w in rep["gpu_idle_window"]:
    dev = w["Device"]
    check(w["Window Start (ns)"] == start - origin and w["Window (ns)"] == end - start,
          "device %s: the window is diagnose's, from the capture's start" % dev)
    check(w["Busy (ns)"] + w["Idle (ns)"] == w["Window (ns)"], "device %s: busy + idle = window" % dev)
    check(w["Steps"] == win["iterations"], "device %s: one step per iteration" % dev)
    causes = [r for r in rep["gpu_idle_sum"] if r["Device"] == dev]
    check(sum(r["Time (ns)"] for r in causes) == w["Idle (ns)"], "device %s: causes add up to the idle time" % dev)
    check(all(r["Time (ns)"] > 0 for r in causes), "device %s: only causes with time are listed" % dev)
    steps = [r for r in rep["gpu_idle_steps"] if r["Device"] == dev]
    check(len(steps) == w["Steps"], "device %s: a row per step" % dev)
    check(sum(r["Idle (ns)"] for r in steps) <= w["Idle (ns)"], "device %s: the steps' idle time is within the idle time" % dev)
    # busy: the union of the device's GPU rows clipped to the window, computed here
    rows = sorted(r for t in gpu for r in db.execute(
        "SELECT max(start, ?1), min(end, ?2) FROM %s WHERE end > ?1 AND start < ?2 AND coalesce(deviceId, 0) = ?3" % t,
        (start, end, dev)))
    busy, cur_s, cur_e = 0, None, None
    for s, e in rows:
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            busy += (cur_e - cur_s) if cur_e is not None else 0
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    busy += (cur_e - cur_s) if cur_e is not None else 0
    check(busy == w["Busy (ns)"], "device %s: busy %d is the union of its GPU rows (%d)" % (dev, w["Busy (ns)"], busy))
top = rep["gpu_idle_top"]
check(all(a["Duration (ns)"] >= b["Duration (ns)"] for a, b in zip(top, top[1:])), "longest stretches come longest first")
check(all(start <= origin + t["Start (ns)"] and origin + t["Start (ns)"] + t["Duration (ns)"] <= end for t in top),
      "the longest stretches lie in the window")
check(all(t["Evidence"] for t in top), "each long stretch has its evidence")
if gpu:
    cp = rep["critical_path"][0]
    parts = rep["critical_path_parts"]
    if cp["Step"] is not None:
        check(sum(p["Time (ns)"] for p in parts) == cp["Span (ns)"], "the path's parts tile the step (%d of %d ns)"
              % (sum(p["Time (ns)"] for p in parts), cp["Span (ns)"]))
        check(1 <= cp["Step"] <= cp["Steps"], "the path's step is one of the steps")
    else:
        check(cp["Note"] and not parts, "a capture without a step says why and lists no parts")
# a stream-wait cause or a held stream needs cudaStreamWaitEvent rows
waits = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables and db.execute(
    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 2").fetchone()[0] > 0
if not waits:
    check(not any(r["Cause"] == "stream_wait" for r in rep["gpu_idle_sum"]), "no stream waits, no stream_wait cause")
    check(not rep["gpu_idle_stream_waits"], "no stream waits, no held streams")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	then pass "$name: idle attribution and critical path hold together"
	else fail "$name: $(tr '\n' ';' <"$TMP/why")"; fi
done

# ---- what the workloads are known to do -----------------------------------
# idle_share NAME: the first device's idle share of the window.
idle_share() {
	python3 -c 'import json, sys
print([r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "gpu_idle_window"][0]["rows"][0]["Idle (%)"])' "$TMP/$1.json"
}
naive=$(idle_share transformer_naive)
optimized=$(idle_share transformer_optimized)
expect_that "transformer: the optimized variant idles less ($optimized% < $naive%)" \
	python3 -c "import sys; sys.exit(0 if $optimized < $naive else 1)"
clean=$(idle_share clean_loop)
expect_that "clean loop: the GPU idles under 5% of the window ($clean%)" \
	python3 -c "import sys; sys.exit(0 if $clean < 5 else 1)"

# diagnose names the path's longest parts, and for the naive transformer its
# allocations are among them.
run diagnose --format=json "$D/transformer_naive.sqlite"
python3 - "$TMP/out" <<'PY' && pass "diagnose: the naive transformer's critical path finding names its allocations" || fail "diagnose: the naive transformer's critical path finding names its allocations"
import json, sys
# the critical path is its own finding, or the evidence of the finding of
# its cause (diagnose folds the signs of one cause into one)
fs = json.load(open(sys.argv[1]))["findings"]
own = [f for f in fs if f["rule"] == "critical_path"]
held = [(f, a) for f in fs for a in f.get("also", []) if a["rule"] == "critical_path"]
if own:
    ok = any("cudaMalloc" in o["name"] for o in own[0]["top"]) and own[0]["severity"] == "high"
else:
    ok = bool(held) and "cudaMalloc" in held[0][1]["evidence"] and held[0][0]["severity"] == "high"
sys.exit(0 if ok else 1)
PY

# How a cross-stream wait was inferred is said where the path has one, and
# only there: the naive transformer's path has none, the two-stream case's
# has two.
for c in "transformer_naive:0" "cases/case_cross_stream:1"; do
	run diagnose --format=json "$D/${c%:*}.sqlite"
	python3 - "$TMP/out" "${c#*:}" <<'PY' && pass "diagnose ${c%:*}: the inference of cross-stream waits said only with waits" || fail "diagnose ${c%:*}: the inference of cross-stream waits said only with waits"
import json, re, sys
fs = json.load(open(sys.argv[1]))["findings"]
f = ([f for f in fs if f["rule"] == "critical_path"] +
     [a for f in fs for a in f.get("also", []) if a["rule"] == "critical_path"])[0]
waits = int(re.search(r"(\d+) cross-stream wait", f["evidence"]).group(1))
said = "(inferred: a cudaStreamWaitEvent" in f["evidence"]
sys.exit(0 if (waits > 0) == (sys.argv[2] == "1") and said == (waits > 0) else 1)
PY
done

# Where diagnose finds the host busy outside CUDA while the GPU waits
# (cpu_bound, over every thread), the submitting thread's own work is the
# largest cause of idle time: two computations that must agree.
for name in torch_train; do
	run diagnose --format=json "$D/$name.sqlite"
	if python3 -c 'import json, sys
sys.exit(0 if any(f["rule"] == "cpu_bound" for f in json.load(open(sys.argv[1]))["findings"]) else 1)' "$TMP/out"; then
		python3 - "$TMP/$name.json" <<'PY' && pass "$name: host work is the largest idle cause, as cpu_bound says" || fail "$name: host work is the largest idle cause, as cpu_bound says"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "gpu_idle_sum"][0]["rows"]
sys.exit(0 if rows and rows[0]["Cause"] == "host_work" else 1)
PY
	else
		fail "$name: diagnose reports cpu_bound"
	fi
done

# hash_embedding_optimized orders its streams with cudaStreamWaitEvent: the
# streams held by those waits are listed.
python3 -c 'import json, sys
r = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "gpu_idle_stream_waits"][0]["rows"]
sys.exit(0 if r and all(x["Held"] > 0 and x["Wait (ns)"] > 0 for x in r) else 1)' "$TMP/hash_embedding_optimized.json" &&
	pass "hash_embedding optimized: streams held by event waits are listed" ||
	fail "hash_embedding optimized: streams held by event waits are listed"

# The start times count from where the Chrome trace's do: a stretch of
# gpu_idle_top ends where the work that ended it starts in the trace.
run report --format=chrome -o "$TMP/cross.json" "$D/cases/case_cross_stream.sqlite"
expect_status "chrome trace of case_cross_stream" 0
python3 - "$TMP/case_cross_stream.json" "$TMP/cross.json" <<'PY' && pass "gpu_idle_top's start times are the Chrome trace's" || fail "gpu_idle_top's start times are the Chrome trace's"
import json, sys
top = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "gpu_idle_top"][0]["rows"]
starts = [e["ts"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
ended = [t for t in top if t["Ended By"]]
# the trace's microseconds have three decimals: within a nanosecond
sys.exit(0 if ended and all(any(abs(s * 1000 - (t["Start (ns)"] + t["Duration (ns)"])) <= 1 for s in starts)
                            for t in ended) else 1)
PY

# ---- formats and bad input ------------------------------------------------
run report --report=gpu_idle_sum,critical_path --format=csv "$D/transformer_optimized.sqlite"
expect_status "gpu_idle_sum csv" 0
python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if any(r[:2] == ["Device", "Cause"] for r in rows) and any(r[:2] == ["Span (%)", "Time (ns)"] for r in rows) else 1)' "$TMP/out" &&
	pass "gpu_idle_sum csv has the cause and path tables" || fail "gpu_idle_sum csv has the cause and path tables"
run report --report=gpu_idle_sum "$D/transformer_optimized.sqlite"
expect_status "gpu_idle_sum text" 0
expect_out "gpu_idle_sum text" "GPU Idle Time by Cause \\(gpu_idle_sum\\)"
run report --list
expect_out "report --list names gpu_idle_sum" "^gpu_idle_sum +GPU Idle Time by Cause"
expect_out "report --list names critical_path" "^critical_path +Critical Path"
run report --format=html -o "$TMP/page.html" "$D/hash_embedding_optimized.sqlite"
expect_status "html report" 0
expect_that "html report has the idle section with its tables" \
	grep -q 'id="gpu-idle"' "$TMP/page.html"
expect_that "html report's idle section holds the cause table" grep -q 'GPU Idle Time by Cause' "$TMP/page.html"
printf 'not a capture\n' >"$TMP/bad.sqlite"
run report --report=gpu_idle_sum "$TMP/bad.sqlite"
expect_status "gpu_idle_sum on a file that is no capture" 2
expect_one_error_line "gpu_idle_sum on a file that is no capture" "bad.sqlite"
finish
