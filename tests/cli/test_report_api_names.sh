#!/usr/bin/env bash
# test_report_api_names.sh - CUDA API calls are shown and summed under their
# names without CUPTI's version suffix ("cudaMemcpy", not
# "cudaMemcpy_v3020"), in the summaries, diagnose's offenders and the
# folded stacks; and a call recorded twice under one correlation id counts
# once. tests/data/nsys/saxpy-mpi-cuda-rank0.sqlite (an Nsight Systems
# export captured with CUDA backtraces) holds 38 such calls: a "cudaMemcpy"
# row around the runtime's "cudaMemcpy_v3020". The expected figures are
# computed here from the file with Python's sqlite3.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
saxpy="$D/nsys/saxpy-mpi-cuda-rank0.sqlite"
torch="$D/torch_train.sqlite"

# check_api_sum FILE: names without a version suffix, each once, and each
# name's calls and time those of the file, counting a correlation once
check_api_sum() {
	local name="cuda_api_sum $(basename "$1"): names without version, each call once"
	run report --format=json --report=cuda_api_sum "$1"
	[ "$status" -eq 0 ] || { fail "$name (exit $status)"; return; }
	python3 - "$TMP/out" "$1" <<'PY' && pass "$name" || fail "$name"
import json, re, sqlite3, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
db = sqlite3.connect(sys.argv[2])
calls = {}
for table in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
        continue
    for tid, corr, start, end, name in db.execute(
            "SELECT a.globalTid, a.correlationId, a.start, a.end, s.value FROM %s a "
            "JOIN StringIds s ON s.id = a.nameId" % table):
        key = (table, tid, corr) if corr else (table, start, end, name)
        if key not in calls or start > calls[key][0]:   # the innermost row
            calls[key] = (start, end - start, re.sub(r"_v[0-9]+$", "", name))
want = {}
for _, dur, name in calls.values():
    n, t = want.get(name, (0, 0))
    want[name] = (n + 1, t + dur)
names = [r["Name"] for r in rows]
assert len(names) == len(set(names)), names
assert not [n for n in names if re.search(r"_v[0-9]+$", n)], names
got = {r["Name"]: (r["Num Calls"], r["Total Time (ns)"]) for r in rows}
assert got == want, (got, want)
PY
}
check_api_sum "$saxpy"
check_api_sum "$torch"

# the export really holds calls recorded twice: the check above saw them
dups=$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY globalTid, correlationId HAVING count(*) > 1)").fetchone()[0])' "$saxpy")
[ "$dups" -eq 38 ] && pass "saxpy export: 38 calls recorded twice" || fail "saxpy export: 38 calls recorded twice (got $dups)"

# a kernel launched by a call recorded twice is attributed once
run report --format=json --report=nvtx_kern_sum "$saxpy"
python3 - "$TMP/out" "$saxpy" <<'PY' && pass "nvtx_kern_sum: each kernel once" || fail "nvtx_kern_sum: each kernel once"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
kernels = sqlite3.connect(sys.argv[2]).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
assert rows and sum(r["Instances"] for r in rows) == kernels, (rows, kernels)
PY

# folded stacks weigh each call and each kernel once, as the summaries do
run report --format=json --report=cuda_api_sum,cuda_gpu_kern_sum "$saxpy"
cp "$TMP/out" "$TMP/sums.json"
run report --format=folded --weight=api "$saxpy"
cp "$TMP/out" "$TMP/api.folded"
run report --format=folded "$saxpy"
python3 - "$TMP/sums.json" "$TMP/api.folded" "$TMP/out" <<'PY' && pass "folded stacks: API and GPU weights are the summaries' totals" || fail "folded stacks: API and GPU weights are the summaries' totals"
import json, re, sys
api, kern = json.load(open(sys.argv[1]))["reports"]
total = lambda rep: sum(r["Total Time (ns)"] for r in rep["rows"])
weight = lambda path: sum(int(l.rsplit(" ", 1)[1]) for l in open(path) if l.strip())
assert weight(sys.argv[2]) == total(api), (weight(sys.argv[2]), total(api))
assert weight(sys.argv[3]) == total(kern), (weight(sys.argv[3]), total(kern))
assert not re.search(r"_v[0-9]+ ", open(sys.argv[2]).read())
PY

# diagnose's offenders: names without version, a call once
for f in "$saxpy" "$torch"; do
	run diagnose --format=json "$f"
	python3 - "$TMP/out" <<'PY' && pass "diagnose $(basename "$f"): offenders without version" || fail "diagnose $(basename "$f"): offenders without version"
import json, re, sys
d = json.load(open(sys.argv[1]))
names = [t["name"] for f in d["findings"] for t in f["top"]]
assert names and not [n for n in names if re.search(r"_v[0-9]+\b", n)], names
for f in d["findings"]:
    top = [t["name"] for t in f["top"]]
    assert len(top) == len(set(top)), top
PY
done
run diagnose "$torch"
expect_out "diagnose text names the call as written" "  cudaStreamSynchronize$"

finish
