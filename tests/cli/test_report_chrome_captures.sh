#!/usr/bin/env bash
# test_report_chrome_captures.sh - the Chrome trace of every real capture in
# tests/data: valid JSON; one event per kernel, copy, managed memory's
# migration, memset, API call and NVTX range of the capture in its category (counted from the capture with
# SQL); every flow start paired with one finish of the same id, from the
# launching call's thread to the GPU work; events ordered by time on every
# track; names for every process and thread; a device-memory counter where
# the capture has allocations.
. "$(dirname "$0")/cli_lib.sh"

for f in "$PERFKIT_TEST_DATA"/*.sqlite; do
	name=$(basename "$f" .sqlite)
	run report --format=chrome "$f" -o "$TMP/$name.json"
	expect_status "$name chrome export" 0
	if python3 - "$f" "$TMP/$name.json" <<'PY'
import collections, json, sqlite3, sys

db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
doc = json.load(open(sys.argv[2]))
events = doc["traceEvents"]
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

def rows(table, where="1"):
    return db.execute("SELECT count(*) FROM %s WHERE %s" % (table, where)).fetchone()[0] if table in tables else 0

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

cats = collections.Counter(e.get("cat") for e in events if e["ph"] == "X")
want = {
    "kernel": rows("CUPTI_ACTIVITY_KIND_KERNEL"),
    "gpu_memcpy": rows("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind NOT IN (11, 12, 13)"),
    "um_migration": rows("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind IN (11, 12, 13)"),
    "gpu_memset": rows("CUPTI_ACTIVITY_KIND_MEMSET"),
    "cuda_runtime": rows("CUPTI_ACTIVITY_KIND_RUNTIME"),
    "cuda_driver": rows("CUPTI_ACTIVITY_KIND_DRIVER"),
    "user_annotation": rows("NVTX_EVENTS", "eventType IN (59, 60) AND end IS NOT NULL"),
}
for cat, n in want.items():
    if cats[cat] != n:
        fail("%s: %d events, the capture has %d rows" % (cat, cats[cat], n))
if want["user_annotation"] and want["kernel"] and not cats["gpu_user_annotation"]:
    fail("NVTX ranges around kernels but no gpu_user_annotation projection")

starts = {e["id"]: e for e in events if e["ph"] == "s"}
finishes = [e for e in events if e["ph"] == "f"]
if len(finishes) != len(starts) or any(f["id"] not in starts for f in finishes):
    fail("flow starts and finishes do not pair one to one")
for f in finishes:
    s = starts[f["id"]]
    if f.get("cat") != "ac2g" or s.get("cat") != "ac2g" or f.get("bp") != "e" or f["ts"] < s["ts"]:
        fail("flow %s is not an ac2g start before its finish with bp=e" % f["id"])
if want["kernel"] and want["cuda_runtime"] + want["cuda_driver"] and not starts:
    fail("kernels and API calls but no flow events")

last = {}
for e in events:
    if e["ph"] not in ("X", "i", "C"):
        continue
    track = (e["pid"], e.get("tid"), e["ph"] == "C")
    if e["ts"] < last.get(track, float("-inf")):
        fail("events out of order on track %s" % (track,))
    last[track] = e["ts"]

named = {(e["pid"], e.get("tid")) for e in events if e["ph"] == "M"}
for e in events:
    if e["ph"] == "X" and (e["pid"], None) not in named and (e["pid"], e.get("tid")) not in named:
        fail("event on an unnamed track %s/%s" % (e["pid"], e.get("tid")))
if rows("CUDA_GPU_MEMORY_USAGE_EVENTS", "memKind = 2") and not any(e["ph"] == "C" for e in events):
    fail("device allocations but no memory counter")
if "baseTimeNanoseconds" not in doc:
    fail("no baseTimeNanoseconds")
PY
	then pass "$name chrome trace matches the capture"
	else fail "$name chrome trace matches the capture"; fi
done
finish
