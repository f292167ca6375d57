#!/usr/bin/env bash
# test_report_unified_memory.sh - managed memory's migrations and page
# faults in the reports of real captures (um_faults, the corpus'
# managed_memory and managed_prefetch): cuda_gpu_mem_time_sum and
# cuda_gpu_mem_size_sum give each unified copy kind its own row, labelled
# as nsys labels it, with the count, time and bytes of the capture's rows;
# the overview counts the CPU and GPU page faults; the Chrome trace puts
# each migration in the um_migration category. Expected figures come from
# the captures with SQL.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA

for f in "$D/um_faults.sqlite" "$D/corpus/managed_memory.sqlite" "$D/corpus/managed_prefetch.sqlite"; do
	name=$(basename "$f" .sqlite)
	run report --report=cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,overview --format=json "$f"
	expect_status "$name reports" 0
	cp "$TMP/out" "$TMP/reports.json"
	run report --format=chrome -o "$TMP/$name.trace.json" "$f"
	expect_status "$name chrome" 0
	if python3 - "$TMP/reports.json" "$TMP/$name.trace.json" "$f" <<'PY'; then pass "$name: migrations and faults as the rows give them"; else fail "$name: unified memory in the reports"; fi
import json, sqlite3, sys

doc = json.load(open(sys.argv[1]))
trace = json.load(open(sys.argv[2]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
labels = {11: "[CUDA memcpy Unified Host-to-Device]", 12: "[CUDA memcpy Unified Device-to-Host]"}

def table(key):
    for t in doc["reports"]:
        if t["name"] == key:
            return t["rows"]
    sys.exit("no %s among %s" % (key, [t["name"] for t in doc["reports"]]))

want = {k: db.execute("SELECT count(*), sum(end - start), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                      " WHERE copyKind = ?", (k,)).fetchone() for k in labels}
if not any(n for n, _, _ in want.values()):
    sys.exit("the capture holds no migrations")
time_rows = {r["Operation"]: r for r in table("cuda_gpu_mem_time_sum")}
size_rows = {r["Operation"]: r for r in table("cuda_gpu_mem_size_sum")}
for k, (n, ns, b) in want.items():
    if not n:
        continue
    t, s = time_rows.get(labels[k]), size_rows.get(labels[k])
    if not t or t["Count"] != n or t["Total Time (ns)"] != ns:
        sys.exit("time sum %s: %s, want %d rows, %d ns" % (labels[k], t, n, ns))
    if not s or s["Count"] != n or abs(s["Total (MB)"] - b / 1e6) > 0.001:
        sys.exit("size sum %s: %s, want %d bytes" % (labels[k], s, b))

cpu = db.execute("SELECT count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS").fetchone()[0]
gpu = db.execute("SELECT count(*), coalesce(sum(numberOfPageFaults), 0)"
                 " FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS").fetchone()
faults = {r["Side"]: r for r in table("overview_um_faults")}
if faults["CPU"]["Events"] != cpu or faults["GPU"]["Events"] != gpu[0] or \
        faults["GPU"]["Page Faults"] != gpu[1]:
    sys.exit("overview faults %s, want CPU %d, GPU %s" % (faults, cpu, gpu))

migrations = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                        " WHERE copyKind IN (11, 12, 13)").fetchone()[0]
got = sum(1 for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "um_migration")
if got != migrations:
    sys.exit("trace: %d um_migration events, %d migrations" % (got, migrations))
PY
done

finish
