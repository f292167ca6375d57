#!/usr/bin/env bash
# test_diagnose_managed_memory.sh - the managed_memory rule on real
# captures of managed memory (tests/gpu/programs/managed_memory.cu and
# gpu_work managed): where pages move on demand it is the first finding,
# and its time is the union, in the window, of the migrations no prefetch
# asked for, the GPU fault groups and the runs of CPU faults, computed here
# from the capture's rows with SQL; the prefetched twin never gets it, nor
# advice to prefetch; an nsys export of the same rows (the fault tables
# with nsys's full column set) reads the same.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

# check NAME CAPTURE: diagnose's managed_memory finding against the rows
check() {
	run diagnose --format=json "$2"
	expect_status "$1 diagnose" 0
	if python3 - "$TMP/out" "$2" <<'PY'; then pass "$1: first finding, its time from the rows"; else fail "$1: managed_memory finding"; fi
import json, sqlite3, sys

doc = json.load(open(sys.argv[1]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
lo, hi = doc["window"]["start_ns"], doc["window"]["end_ns"]
GAP = 1000000  # um.cpu_fault_gap_ms

iv = db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (11, 12, 13)"
                " AND migrationCause <> 1 AND start >= ? AND start < ?", (lo, hi)).fetchall()
iv += db.execute("SELECT start, end FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS WHERE start >= ? AND start < ?",
                 (lo, hi)).fetchall()
faults = [r[0] for r in db.execute("SELECT start FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS"
                                   " WHERE start >= ? AND start < ? ORDER BY start", (lo, hi))]
run = None
for t in faults:
    if run and t - run[1] <= GAP:
        run[1] = t
    else:
        if run:
            iv.append(tuple(run))
        run = [t, t]
if run:
    iv.append(tuple(run))
total, cur = 0, None
for s, e in sorted((max(s, lo), min(e, hi)) for s, e in iv if e > s):
    if cur and s <= cur[1]:
        cur[1] = max(cur[1], e)
    else:
        if cur:
            total += cur[1] - cur[0]
        cur = [s, e]
if cur:
    total += cur[1] - cur[0]

serious = [f for f in doc["findings"] if f["severity"] in ("medium", "high")]
if not serious or serious[0]["rule"] != "managed_memory":
    sys.exit("first finding: %s" % (serious[0]["rule"] if serious else "none"))
f = serious[0]
if f["time_ns"] != total:
    sys.exit("time %d ns, the rows give %d" % (f["time_ns"], total))
if abs(f["share"] - total / (hi - lo)) > 1e-6:
    sys.exit("share %f, the rows give %f" % (f["share"], total / (hi - lo)))
change = f["change"].lower()
if "cudamemprefetchasync" not in change or "cudamemadvise" not in change:
    sys.exit("change names neither prefetch nor advice: " + change)
cpu = db.execute("SELECT count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS WHERE start >= ? AND start < ?",
                 (lo, hi)).fetchone()[0]
if "%.0f CPU page faults" % (cpu / doc["window"]["iterations"]) not in f["evidence"]:
    sys.exit("evidence does not count %d CPU faults: %s" % (cpu, f["evidence"]))
PY
}

check managed_memory "$D/corpus/managed_memory.sqlite"
check um_faults "$D/um_faults.sqlite"

# The prefetched twin: its migrations were asked for (cause 1), so no
# finding on managed memory and no advice to prefetch.
run diagnose --format=json "$D/corpus/managed_prefetch.sqlite"
expect_status "managed_prefetch diagnose" 0
if python3 - "$TMP/out" "$D/corpus/managed_prefetch.sqlite" <<'PY'; then pass "managed_prefetch: no managed_memory finding, no prefetch advice"; else fail "managed_prefetch"; fi
import json, sqlite3, sys
doc = json.load(open(sys.argv[1]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
asked = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN (11, 12)"
                   " AND migrationCause = 1").fetchone()[0]
if not asked:
    sys.exit("the capture holds no prefetches: not the twin this test needs")
if any(f["rule"] == "managed_memory" for f in doc["findings"]):
    sys.exit("managed_memory found")
for f in doc["findings"]:
    if "prefetch" in f["change"].lower():
        sys.exit("%s advises prefetching" % f["rule"])
PY

# nsys's fault tables carry more columns (CPU faults: NOT NULL function
# and module ids, source file and line; GPU faults as here): a copy made
# in nsys's shape reads the same.
cp "$D/um_faults.sqlite" "$TMP/nsys_shape.sqlite"
sqlite3 "$TMP/nsys_shape.sqlite" "ALTER TABLE CUDA_UM_CPU_PAGE_FAULT_EVENTS RENAME TO old;
CREATE TABLE CUDA_UM_CPU_PAGE_FAULT_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL,
  address INTEGER NOT NULL, originalFaultPc INTEGER, CpuInstruction INTEGER NOT NULL,
  module INTEGER NOT NULL, unresolvedFaultPc INTEGER, sourceFile INTEGER, sourceLine INTEGER);
INSERT INTO CUDA_UM_CPU_PAGE_FAULT_EVENTS SELECT * FROM old; DROP TABLE old;
DROP TABLE PERFKIT_META;"
run diagnose --format=json "$D/um_faults.sqlite"
cp "$TMP/out" "$TMP/perfkit.json"
run diagnose --format=json "$TMP/nsys_shape.sqlite"
expect_status "nsys-shaped copy diagnose" 0
if python3 - "$TMP/perfkit.json" "$TMP/out" <<'PY'; then pass "nsys-shaped copy: the same managed_memory finding"; else fail "nsys-shaped copy"; fi
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = [f for f in a["findings"] if f["rule"] == "managed_memory"]
fb = [f for f in b["findings"] if f["rule"] == "managed_memory"]
if not fa or not fb or fa[0]["time_ns"] != fb[0]["time_ns"] or fa[0]["evidence"] != fb[0]["evidence"]:
    sys.exit("differs: %s / %s" % (fa, fb))
PY

finish
