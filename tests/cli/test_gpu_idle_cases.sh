#!/usr/bin/env bash
# test_gpu_idle_cases.sh - the idle attribution, the critical path and the
# diagnosis on captures of programs that each idle the GPU for one known
# reason: host_gaps and cross_stream of tests/gpu/cases/diag_cases.cu
# (captured on an H100 into tests/data/cases/) and the naive transformer
# (workloads/transformer_main.c). Each threshold follows from what the
# program does, as the comment above its check says.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# The reports and the diagnosis of one capture, as JSON in $TMP/NAME.json
# and $TMP/NAME.diag.json.
load() {
	run report --report=gpu_idle_sum,critical_path --format=json "$2"
	[ "$status" -eq 0 ] || fail "$1: report gpu_idle_sum,critical_path exits 0"
	cp "$TMP/out" "$TMP/$1.json"
	run diagnose --format=json "$2"
	[ "$status" -eq 0 ] || fail "$1: diagnose exits 0"
	cp "$TMP/out" "$TMP/$1.diag.json"
}

# What the checks read, loaded once per check.
cat >"$TMP/idle.py" <<'PY'
import json, os, sys
TMP = os.path.dirname(os.path.abspath(__file__))
def reports(name):
    return {r["name"]: r["rows"] for r in json.load(open(os.path.join(TMP, name + ".json")))["reports"]}
def findings(name):
    return json.load(open(os.path.join(TMP, name + ".diag.json")))["findings"]
def causes(rep):
    """Device 0's causes by id, and its idle time."""
    rows = {r["Cause"]: r for r in rep["gpu_idle_sum"] if r["Device"] == 0}
    idle = [w for w in rep["gpu_idle_window"] if w["Device"] == 0][0]["Idle (ns)"]
    return rows, idle
def expect(ok, why):
    if not ok:
        print(why)
        sys.exit(1)
def step_rows(capture, step, sql):
    """sql's rows for the window's step `step` (1-based) of an NVTX loop named
    "step": its range's start and end are ?1 and ?2. The window leaves out
    the first instance (the warm-up)."""
    import sqlite3
    db = sqlite3.connect(capture)
    ranges = db.execute("SELECT n.start, n.end FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                        " WHERE s.value = 'step' ORDER BY n.start").fetchall()
    return db.execute(sql, ranges[step]).fetchall()
def largest_cause(name, cause, fraction):
    """Device 0's largest idle cause is `cause`, with at least `fraction` of the idle time."""
    rows, total = causes(reports(name))
    top = max(rows.values(), key=lambda r: r["Time (ns)"])
    expect(top["Cause"] == cause, "largest cause %s" % top["Cause"])
    expect(top["Time (ns)"] >= fraction * total, "%s %d of %d ns" % (cause, top["Time (ns)"], total))
PY

# check NAME < PYTHON: the script (with idle.py importable) exits 0.
check() {
	if PYTHONPATH=$TMP python3 - >"$TMP/why" 2>&1; then pass "$1"
	else fail "$1: $(tail -n 3 "$TMP/why" | tr '\n' ' ')"; fi
}

# ---- host_gaps --------------------------------------------------------------
# Each step: one short kernel, cudaStreamSynchronize, then usleep(2000) with
# nothing queued. The GPU idles from the kernel's end through the 2 ms sleep
# to the next launch; the CUDA calls inside that stretch (the
# synchronisation returning, the next launch) take microseconds.
load host_gaps "$D/cases/case_host_gaps.sqlite"

# 2 ms of sleep against well under 0.2 ms of CUDA calls per stretch: at
# least 2/2.2 > 90% of the idle time is the host's own work.
check "host_gaps: host work is the largest idle cause, at least 90% of the idle time" <<'PY'
import idle
idle.largest_cause("host_gaps", "host_work", 0.9)
PY

# A stretch belongs to the step whose launch ends it, so step k (k >= 2)
# holds the sleep of step k - 1: usleep(2000) sleeps at least 2 ms. Step 1's
# sleep came after the warm-up step, before the window.
check "host_gaps: every step after the first idles at least 2 ms on host work" <<'PY'
import idle
steps = [r for r in idle.reports("host_gaps")["gpu_idle_steps"] if r["Device"] == 0]
idle.expect(len(steps) >= 3, "%d steps" % len(steps))
short = [r["Step"] for r in steps[1:] if r["host_work (ns)"] < 2000000]
idle.expect(not short, "steps under 2 ms of host work: %s" % short)
PY

check "host_gaps: the longest stretches end with the next kernel, launched after the host's work" <<'PY'
import idle
top = idle.reports("host_gaps")["gpu_idle_top"]
idle.expect(top and all(t["Cause"] == "host_work" for t in top), [t["Cause"] for t in top])
idle.expect(all(t["Ended By"].startswith("busy(") for t in top), [t["Ended By"] for t in top])
idle.expect(all("own work" in t["Evidence"] for t in top), top[0]["Evidence"])
PY

# The median step's path runs through the 2 ms sleep; its kernel and calls
# are tens of microseconds.
check "host_gaps: the critical path is host work, at least 90% of the step" <<'PY'
import idle
parts = idle.reports("host_gaps")["critical_path_parts"]
idle.expect(parts and parts[0]["Kind"] == "host work", parts[:1])
idle.expect(parts[0]["Span (%)"] >= 90, parts[0]["Span (%)"])
PY

# One synchronisation a step, returning microseconds after the kernel ends:
# the idle time is the host's sleep (cpu_bound), not the synchronisation's.
# Blocked in it with nothing queued for a few microseconds of each ~2.1 ms
# step, sync_api may claim well under 5% of the window.
check "host_gaps: diagnose blames the host's work (cpu_bound), not the synchronisation" <<'PY'
import idle
f = idle.findings("host_gaps")
rank = {x["rule"]: i for i, x in enumerate(f)}
idle.expect("cpu_bound" in rank and f[rank["cpu_bound"]]["severity"] == "high", "cpu_bound high")
if "sync_api" in rank:
    s = f[rank["sync_api"]]
    idle.expect(s["share"] < 0.05, "sync_api share %s" % s["share"])
    idle.expect(rank["cpu_bound"] < rank["sync_api"], "cpu_bound ranks above sync_api")
PY

# ---- cross_stream -------------------------------------------------------------
# Each step: forward_like on stream A, an event B waits on, update_like and
# busy on B, an event A waits on before the next step. The host enqueues
# every step without waiting (one synchronisation after the loop), so the
# GPU never waits for it; of the three hand-offs per step, two cross the
# streams through an event wait and one (update_like -> busy) is
# back-to-back on B.
load cross_stream "$D/cases/case_cross_stream.sqlite"

check "cross_stream: waiting on the other stream's event is the largest idle cause, at least half" <<'PY'
import idle
idle.largest_cause("cross_stream", "stream_wait", 0.5)
PY

check "cross_stream: two cross-stream waits a step, and the host never holds the GPU" <<'PY'
import idle
rep = idle.reports("cross_stream")
rows, total = idle.causes(rep)
steps = rep["gpu_idle_window"][0]["Steps"]
idle.expect(rows["stream_wait"]["Stretches"] >= 2 * (steps - 1),
            "%d stream_wait stretches in %d steps" % (rows["stream_wait"]["Stretches"], steps))
host = sum(r["Time (ns)"] for c, r in rows.items() if c.startswith("host_"))
idle.expect(host < 0.1 * total, "host causes %d of %d ns" % (host, total))
PY

# A waits on B and B on A once a step: both streams are held, each behind
# the other.
check "cross_stream: both streams are held by event waits, each behind the other" <<'PY'
import idle
rep = idle.reports("cross_stream")
waits = rep["gpu_idle_stream_waits"]
steps = rep["gpu_idle_window"][0]["Steps"]
idle.expect(len(waits) == 2, waits)
a, b = waits
idle.expect(a["Behind Stream"] == b["Stream"] and b["Behind Stream"] == a["Stream"], waits)
idle.expect(all(w["Held"] >= steps - 1 for w in waits), waits)
PY

# The host enqueues each step in about 20 us and the GPU takes about 135
# us a step: when a step's range begins, the GPU still works through the
# steps queued before it. The step's span starts where the previous step's
# work ends, so it holds its own kernels and their hand-offs (a few us),
# well under twice its kernels' time, not the backlog (about 1.1 ms in the
# middle of the loop).
check "cross_stream: the step's span is its own work, not the steps queued before it" <<'PY'
import idle, os
cp = idle.reports("cross_stream")["critical_path"][0]
own = idle.step_rows(os.environ["PERFKIT_TEST_DATA"] + "/cases/case_cross_stream.sqlite", cp["Step"],
                     "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
                     " ON r.correlationId = k.correlationId WHERE r.start >= ?1 AND r.start < ?2")
gpu = sum(d for (d,) in own)
idle.expect(len(own) == 3, "%d kernels launched in the step" % len(own))
idle.expect(cp["Span (ns)"] < 2 * gpu, "span %d ns, the step's kernels %d ns" % (cp["Span (ns)"], gpu))
idle.expect(cp["Span (ns)"] >= gpu, "span %d ns under the step's kernels' %d ns" % (cp["Span (ns)"], gpu))
PY

# The host is ahead: the step's path is the kernels and the hand-offs
# between the streams, which the path crosses through the (inferred) event.
check "cross_stream: the critical path is the kernels and the cross-stream waits" <<'PY'
import idle
rep = idle.reports("cross_stream")
cp, parts = rep["critical_path"][0], rep["critical_path_parts"]
idle.expect(cp["Cross-Stream (inferred)"] >= 1, cp)
idle.expect(any(p["Kind"] == "cross-stream wait" and p["Inferred"] == "yes" for p in parts), parts)
gpu = sum(p["Span (%)"] for p in parts if p["Kind"] == "kernel")
idle.expect(gpu >= 80, "kernels %.1f%% of the step" % gpu)
idle.expect(not any(p["Kind"] in ("host work", "queued before the step") for p in parts),
            [p["Kind"] for p in parts])
PY

check "cross_stream: diagnose blames neither the host nor synchronisation" <<'PY'
import idle
rules = {f["rule"] for f in idle.findings("cross_stream")}
idle.expect(not rules & {"cpu_bound", "sync_api"}, rules)
PY

# ---- the naive transformer ----------------------------------------------------
# Every step cudaMallocs and cudaFrees its temporaries (cudaFree waits for
# the device) and moves embeddings, targets and losses through blocking
# cudaMemcpy from pageable memory.
load transformer_naive "$D/transformer_naive.sqlite"

check "transformer naive: allocations and blocking copies hold the GPU idle, by name" <<'PY'
import idle
rows, total = idle.causes(idle.reports("transformer_naive"))
idle.expect("host_alloc" in rows and rows["host_alloc"]["Top Call"] in ("cudaMalloc", "cudaFree"),
            rows.get("host_alloc"))
idle.expect("host_copy" in rows and rows["host_copy"]["Top Call"] == "cudaMemcpy", rows.get("host_copy"))
PY

check "transformer naive: every step idles in allocations and in blocking copies" <<'PY'
import idle
steps = [r for r in idle.reports("transformer_naive")["gpu_idle_steps"] if r["Device"] == 0]
idle.expect(steps, "no steps")
idle.expect(all(r["host_alloc (ns)"] > 0 and r["host_copy (ns)"] > 0 for r in steps),
            [(r["Step"], r["host_alloc (ns)"], r["host_copy (ns)"]) for r in steps])
PY

# The host waits on every allocation, free and blocking copy: the step's
# path runs through them. Each step makes 58 cudaMalloc and 58 cudaFree
# calls of about 50 and 40 us, and 5 blocking cudaMemcpy to or from
# pageable memory, in an 18.5 ms step.
check "transformer naive: the critical path runs through the allocations (20% of the step or more)" <<'PY'
import idle
parts = idle.reports("transformer_naive")["critical_path_parts"]
alloc = sum(p["Span (%)"] for p in parts if p["Part"] in ("cudaMalloc", "cudaFree"))
idle.expect(alloc >= 20, "cudaMalloc and cudaFree %.1f%% of the step" % alloc)
PY

check "transformer naive: the critical path waits on every blocking pageable copy of its step" <<'PY'
import idle, os
rep = idle.reports("transformer_naive")
cp, parts = rep["critical_path"][0], rep["critical_path_parts"]
copies = idle.step_rows(os.environ["PERFKIT_TEST_DATA"] + "/transformer_naive.sqlite", cp["Step"],
                        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
                        " ON r.correlationId = m.correlationId JOIN StringIds s ON s.id = r.nameId"
                        " WHERE r.start >= ?1 AND r.start < ?2 AND s.value LIKE 'cudaMemcpy\\_%' ESCAPE '\\'"
                        " AND (m.srcKind = 0 OR m.dstKind = 0)")[0][0]
idle.expect(copies >= 1, "no blocking pageable copy in the step")
idle.expect(cp["Copy Waits"] >= copies, "%d copy waits for %d blocking pageable copies" % (cp["Copy Waits"], copies))
idle.expect(any(p["Kind"] == "CUDA call: copy" and p["Part"] == "cudaMemcpy" for p in parts), "no cudaMemcpy")
idle.expect(any(p["Kind"] == "copy" and "pageable" in p["Part"] for p in parts), "no pageable copy")
PY

# ---- text output: kernel names shortened, unless --full-names -------------------
run report --report=gpu_idle_sum "$D/cases/case_host_gaps.sqlite"
expect_status "gpu_idle_sum text" 0
expect_that "gpu_idle_sum text: the kernel that ends a stretch in its short form" \
	grep -qE 'host_work +busy +thread' "$TMP/out"
run report --report=gpu_idle_sum --full-names "$D/cases/case_host_gaps.sqlite"
expect_out "gpu_idle_sum --full-names: the kernel's whole name" \
	'host_work +busy\(float\*, unsigned long, int\) +thread'
finish
