#!/usr/bin/env bash
# test_report_python_captures.sh - module_sum and python_sum on the real
# PyTorch captures of tests/data/python/ (made with --pytorch=modules
# --python-sampling --python-backtrace=cuda), against figures computed here
# from the captures' rows with SQL and a walk of their own, over the loop
# diagnose finds (its JSON's window):
# - module_sum: per module and direction the calls, host time, host self
#   time (the range less the union of the module ranges that start inside
#   it on its thread), and the GPU time of the kernels, copies and memsets
#   whose launching call starts while the range is open on the call's
#   thread, total and self (the innermost open range); the self times add
#   up to the GPU time launched inside any module range, and the root
#   module's forward and backward totals with the optimizer's to the same;
# - python_sum: per line the self samples (the stack's innermost frame),
#   the total samples (the line anywhere in the stack, once a sample) and
#   the share of those inside CUDA calls (a native frame is its library,
#   its function "(not exported)" where the library names none); the self
#   times add up to the samples in the window times the period, per step;
# - with --from and --to naming the loop's host side (times after the
#   capture's start), both read that span: the same rows, calls and
#   samples, times no longer divided by the steps.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA/python

shopt -s nullglob
captures=("$D"/*.sqlite)
if [ ${#captures[@]} -eq 0 ]; then
	fail "no capture in $D (scripts/unpack-fixtures.sh unpacks them)"
fi
for f in "${captures[@]}"; do
	name=$(basename "$f" .sqlite)
	run diagnose --format=json "$f"
	expect_status "$name diagnose" 0
	cp "$TMP/out" "$TMP/diag.json"
	run report --report=module_sum,python_sum --format=json "$f"
	expect_status "$name module_sum, python_sum" 0
	cp "$TMP/out" "$TMP/py.json"
	span=$(python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["window"]; print("--from=%d --to=%d" % (w["start_ns"] - w["zero_ns"], w["host_end_ns"] - w["zero_ns"]))' "$TMP/diag.json")
	# shellcheck disable=SC2086
	run report --report=module_sum,python_sum --format=json $span "$f"
	expect_status "$name module_sum, python_sum $span" 0
	cp "$TMP/out" "$TMP/span.json"
	if python3 - "$TMP/py.json" "$TMP/span.json" "$f" >"$TMP/check" 2>&1 <<'PY'; then pass "$name: --from/--to read the span"; else cat "$TMP/check" >&2; fail "$name: --from/--to"; fi
import json, sqlite3, sys
loop = {t["name"]: t for t in json.load(open(sys.argv[1]))["reports"]}
span = {t["name"]: t for t in json.load(open(sys.argv[2]))["reports"]}
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
period = round(1e9 / float(db.execute("SELECT value FROM PERFKIT_META WHERE key = 'python_sampling_hz'").fetchone()[0]))
problems = []
for key in ("module_sum", "python_sum"):
    if "from +" not in span[key]["title"]:
        problems.append("%s title %r does not say the span" % (key, span[key]["title"]))
strip = lambda rows, cols: sorted(tuple(r[c] for c in cols) for r in rows)
mcols = ("Module", "Class", "Direction", "Calls", "Host Total (ns)", "Host Self (ns)", "GPU Total (ns)", "GPU Self (ns)")
if strip(loop["module_sum"]["rows"], mcols) != strip(span["module_sum"]["rows"], mcols):
    problems.append("module_sum over the span differs from the loop's")
pcols = ("Location", "Function", "Self Samples", "Total Samples")
if strip(loop["python_sum"]["rows"], pcols) != strip(span["python_sum"]["rows"], pcols):
    problems.append("python_sum's samples over the span differ from the loop's")
for r in span["python_sum"]["rows"]:
    if r["Self Time (ns)"] != r["Self Samples"] * period or r["Total Time (ns)"] != r["Total Samples"] * period:
        problems.append("%s: times %d, %d against samples x period" % (r["Location"], r["Self Time (ns)"], r["Total Time (ns)"]))
        break
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
	if python3 - "$TMP/diag.json" "$TMP/py.json" "$f" >"$TMP/check" 2>&1 <<'PY'; then pass "$name: module_sum and python_sum as the rows give them"; else cat "$TMP/check" >&2; fail "$name: module_sum and python_sum"; fi
import bisect, heapq, json, sqlite3, sys
from collections import defaultdict

win = json.load(open(sys.argv[1]))["window"]
doc = json.load(open(sys.argv[2]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
if win["iterations"] > 0:
    lo, hi, steps = win["start_ns"], win["host_end_ns"], win["iterations"]
else:
    lo, hi, steps = -2**63, 2**63 - 1, 1
problems = []

def report(key):
    for t in doc["reports"]:
        if t["name"] == key:
            return t
    sys.exit("no %s report" % key)

def close(a, b, what):
    if a != b:
        problems.append("%s: report %r, rows %r" % (what, a, b))

# ---- module_sum ----
domains = {(d, tid >> 24) for d, tid in db.execute(
    "SELECT n.domainId, n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
    " WHERE n.eventType = 75 AND coalesce(s.value, n.text) = 'perfkit.pytorch'")}
ranges = [r for r in db.execute(
    "SELECT n.rowid, n.globalTid, n.start, n.end, n.category, coalesce(s.value, n.text), n.domainId"
    " FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
    " WHERE n.eventType IN (59, 60) AND n.category IN (1, 2, 3) AND n.end >= n.start"
    " AND n.start >= ? AND n.start < ?", (lo, hi))
    if (r[6], r[1] >> 24) in domains]
if not ranges:
    sys.exit("the capture has no module ranges in its loop")
by_tid = defaultdict(list)
for r in ranges:
    by_tid[r[1]].append(r)
self_host = {}
for tid, rs in by_tid.items():
    rs.sort(key=lambda r: (r[2], -r[3]))
    for i, r in enumerate(rs):
        # the union of the later-starting ranges that start inside r, clipped to r
        covered, cur_s, cur_e = 0, None, None
        for o in rs[i + 1:]:
            if o[2] >= r[3]:
                break
            s, e = o[2], min(o[3], r[3])
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    covered += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            covered += cur_e - cur_s
        self_host[r[0]] = (r[3] - r[2]) - covered

# GPU work with the thread and start of the call that launched it
calls = {}
for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    if t in tables:
        for tid, start, corr in db.execute("SELECT globalTid, start, correlationId FROM %s" % t):
            calls[(tid >> 24, corr)] = (tid, start)
work = []
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
    if t in tables:
        for pid, corr, s, e in db.execute("SELECT globalPid, correlationId, start, end FROM %s"
                                          " WHERE end >= start" % t):
            c = calls.get((pid >> 24, corr))
            if c:
                work.append((c[0], c[1], e - s))
gpu_total, gpu_self = defaultdict(int), defaultdict(int)
inside = 0
starts = {tid: [r[2] for r in rs] for tid, rs in by_tid.items()}
for tid, t, d in work:
    rs = by_tid.get(tid)
    if not rs:
        continue
    open_ = [r for r in rs[:bisect.bisect_right(starts[tid], t)] if r[3] > t]
    if not open_:
        continue
    for r in open_:
        gpu_total[r[0]] += d
    inner = max(open_, key=lambda r: (r[2], -r[3], -r[0]))
    gpu_self[inner[0]] += d
    inside += d

want = defaultdict(lambda: [0, 0, 0, 0, 0])
dirs = {1: "forward", 2: "backward", 3: "optimizer"}
for r in ranges:
    w = want[(r[5], dirs[r[4]])]
    w[0] += 1
    w[1] += r[3] - r[2]
    w[2] += self_host[r[0]]
    w[3] += gpu_total[r[0]]
    w[4] += gpu_self[r[0]]
rows = report("module_sum")["rows"]
got = {}
for row in rows:
    name = row["Module"] if row["Class"] == "" else "%s (%s)" % (row["Module"], row["Class"])
    got[(name, row["Direction"])] = [row["Calls"], row["Host Total (ns)"], row["Host Self (ns)"],
                                     row["GPU Total (ns)"], row["GPU Self (ns)"]]
close(sorted(got), sorted(want), "module rows")
for k in want:
    if k in got:
        close(got[k], want[k], "module %s %s (calls, host, host self, GPU, GPU self)" % k)
close(sum(r["GPU Self (ns)"] for r in rows), inside, "module self GPU times against the GPU time inside modules")
# the root modules: the names of the outermost forward ranges
outer = set()
for tid, rs in by_tid.items():
    end = None
    for r in rs:
        if r[4] == 1 and (end is None or r[2] >= end):
            outer.add(r[5])
            end = r[3]
root_sum = sum(v[3] for k, v in want.items() if k[1] == "optimizer" or (k[0] in outer and k[1] in ("forward", "backward")))
close(root_sum, inside, "root forward + backward + optimizer totals against the GPU time inside modules")
if inside <= 0:
    problems.append("no GPU work inside module ranges")

# ---- python_sum ----
hz = db.execute("SELECT value FROM PERFKIT_META WHERE key = 'python_sampling_hz'").fetchone()
period = round(1e9 / float(hz[0]))
frames = defaultdict(list)
names = dict(db.execute("SELECT id, value FROM StringIds"))
for pid, stack, depth, fn, fi, line, kind in db.execute(
        "SELECT globalPid, stackId, depth, functionId, fileId, line, kind FROM PERFKIT_PYTHON_FRAMES"):
    where = "%s:%d" % (names.get(fi), line) if kind == 0 else names.get(fi)
    fname = names.get(fn)
    # a native function its library does not export (named by its offset):
    # one row a library
    if kind == 1 and fname.startswith("+0x"):
        fname = "(not exported)"
    frames[(pid, stack)].append((depth, where, fname))
self_n, total_n, cuda_n = defaultdict(int), defaultdict(int), defaultdict(int)
nsamples = 0
for pid, stack, state in db.execute("SELECT globalPid, stackId, state FROM PERFKIT_PYTHON_SAMPLES"
                                    " WHERE start >= ? AND start < ? AND state BETWEEN 0 AND 2", (lo, hi)):
    nsamples += 1
    fr = sorted(frames.get((pid, stack), []))
    if not fr:
        continue
    self_n[fr[0][1:]] += 1
    for key in {f[1:] for f in fr}:
        total_n[key] += 1
        cuda_n[key] += state == 1
if nsamples == 0:
    sys.exit("no Python sample in the loop")
prows = report("python_sum")["rows"]
pgot = {(r["Location"], r["Function"]): r for r in prows}
close(sorted(pgot), sorted(total_n), "python_sum lines")
for k, r in pgot.items():
    close((r["Self Samples"], r["Total Samples"]), (self_n[k], total_n[k]), "line %s %s samples" % k)
    close(r["Self Time (ns)"], self_n[k] * period // steps, "line %s %s self time" % k)
    if abs(r["In CUDA (%)"] - 100.0 * cuda_n[k] / total_n[k]) > 0.051:
        problems.append("line %s %s in CUDA %r against %r" % (k + (r["In CUDA (%)"], 100.0 * cuda_n[k] / total_n[k])))
selfs = [r["Self Samples"] for r in prows]
if selfs != sorted(selfs, reverse=True):
    problems.append("python_sum is not sorted by self time")
# every sample has a stack: the self times add up to the samples times the period
close(sum(selfs), nsamples, "self samples against the samples in the loop")
if abs(sum(r["Self Time (ns)"] for r in prows) - nsamples * period / steps) > len(prows):
    problems.append("self times %d against samples x period per step %d" % (
        sum(r["Self Time (ns)"] for r in prows), nsamples * period / steps))
for p in problems[:20]:
    print(p)
sys.exit(1 if problems else 0)
PY
	# The HTML report gives the same two tables a section of their own.
	run report --format=html -o "$TMP/page.html" -f "$f"
	expect_status "$name html" 0
	expect_that "$name: the HTML page has the Python section with both tables" \
		grep -q '<section id="python"' "$TMP/page.html"
	expect_that "$name: its tables are module_sum's and python_sum's" \
		test "$(grep -c 'nn.Module Summary\|Python Line Summary' "$TMP/page.html")" -ge 2
done
# A capture without Python's rows has no such section.
run report --format=html -o "$TMP/plain.html" -f "$PERFKIT_TEST_DATA/torch_train.sqlite"
expect_status "torch_train html" 0
expect_that "torch_train: no Python section" sh -c "! grep -q '<section id=\"python\"' '$TMP/plain.html'"
exit $((failures > 0))
