#!/usr/bin/env bash
# test_diagnose_python_captures.sh - diagnose names where in the program, on
# the real PyTorch captures of tests/data/python/, against the lines found
# here from the captures' rows over diagnose's window:
# - cpu_bound's evidence names the line with the most samples outside CUDA
#   calls (states 0 and 2) on the threads that made CUDA calls in the window's
#   host side, perfkit's hook left out, as "file:line (function)" (an
#   installed package's file from the package, with " from" the program's
#   own line that called it) with its share of the window, and its change
#   starts with that line;
# - sync_api's evidence, where it fires, names the line whose
#   synchronisation calls take the most time by their recorded stacks;
# - launch_bound's, where it fires, the module and direction whose ranges
#   are innermost at the launch of the most kernels;
# - the folded stacks hang every call with a recorded stack under its
#   Python frames, outermost first, and the kernel time under Python frames
#   is that of the kernels whose launching call has a stack;
# - a copy of py_python_hotspots without the calls' stacks (the rows of
#   PERFKIT_PYTHON_CUDA_CALLS deleted, as a capture without
#   --python-backtrace=cuda has none): sync_api names the line the samples
#   taken inside the synchronisation calls find most, or none where no
#   sample falls inside them (its calls are shorter than the period), and no
#   folded stack holds a Python frame.
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
	run report --format=folded "$f"
	expect_status "$name folded" 0
	cp "$TMP/out" "$TMP/folded"
	if python3 - "$TMP/diag.json" "$TMP/folded" "$f" >"$TMP/check" 2>&1 <<'PY'; then pass "$name: diagnose and folded stacks name the lines the rows give"; else cat "$TMP/check" >&2; fail "$name: diagnose names where"; fi
import json, re, sqlite3, sys
from collections import Counter, defaultdict

diag = json.load(open(sys.argv[1]))
folded = open(sys.argv[2]).read().splitlines()
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[3], uri=True)
win = diag["window"]
lo, hi = win["start_ns"], win["host_end_ns"]
period = round(1e9 / float(db.execute(
    "SELECT value FROM PERFKIT_META WHERE key = 'python_sampling_hz'").fetchone()[0]))
names = dict(db.execute("SELECT id, value FROM StringIds"))
problems = []

def library(path):
    return ("/site-packages/" in path or "/dist-packages/" in path or "/lib/python3" in path
            or path.startswith("<") or path.endswith("/perfkit_hook.py"))

def short(path):
    m = re.search(r"/(site|dist)-packages/(.*)$", path)
    return m.group(2) if m else path

stacks = defaultdict(list)
for pid, st, depth, fn, fi, line, kind in db.execute(
        "SELECT globalPid, stackId, depth, functionId, fileId, line, kind FROM PERFKIT_PYTHON_FRAMES"):
    stacks[(pid, st)].append((depth, names.get(fn, "?"), names.get(fi, "?"), line, kind))
for v in stacks.values():
    v.sort()

def place(key):
    fr = [f for f in stacks[key] if f[4] == 0]
    if not fr:
        return None
    inner = fr[0]
    text = "%s:%d (%s)" % (short(inner[2]), inner[3], inner[1])
    if library(inner[2]):
        own = [f for f in fr if not library(f[2])]
        if own:
            text += " from %s:%d (%s)" % (own[0][2], own[0][3], own[0][1])
    return text

def finding(rule):
    for f in diag["findings"]:
        if f["rule"] == rule:
            return f
        for a in f.get("also") or []:
            if a["rule"] == rule:
                return a
    return None

# cpu_bound: samples outside CUDA calls (running Python, or in C code
# without the GIL) of the threads that call CUDA
threads = set()
for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    threads |= {r[0] for r in db.execute("SELECT DISTINCT globalTid FROM %s WHERE start >= ? AND start < ?" % t, (lo, hi))}
count = Counter()
for pid, tid, st in db.execute("SELECT globalPid, globalTid, stackId FROM PERFKIT_PYTHON_SAMPLES"
                               " WHERE start >= ? AND start < ? AND state <> 1", (lo, hi)):
    if tid not in threads or any(f[2].endswith("/perfkit_hook.py") for f in stacks[(pid, st)]):
        continue
    p = place((pid, st))
    if p:
        count[p] += 1
f = finding("cpu_bound")
if not f:
    problems.append("no cpu_bound finding")
else:
    top, n = max(count.items(), key=lambda kv: (kv[1], kv[0]))
    share = 100.0 * n * period / (win["end_ns"] - win["start_ns"])
    want = "%s %.0f%%" % (top, share)
    if want not in f["evidence"]:
        problems.append("cpu_bound evidence lacks %r: %s" % (want, f["evidence"][-600:]))
    # the change names the line, unless the host's work is what launching
    # costs (dispatch), where the change is the graph or compile instead
    change = f.get("change") or ""
    if "start with " + top + ", the line" not in change and \
            "The host's work here is what launching the step's kernels costs" not in change:
        problems.append("cpu_bound change neither starts with %r nor is dispatch's" % top)

# sync_api and alloc_churn: their calls by their recorded stacks
def calling_line(rule, pattern):
    f = finding(rule)
    if not f:
        return
    weight, calls = Counter(), Counter()
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        for tid, corr, s, e, nid in db.execute("SELECT globalTid, correlationId, start, end, nameId FROM %s"
                                               " WHERE start >= ? AND start < ?" % t, (lo, hi)):
            if not pattern.match(names.get(nid, "")):
                continue
            for pid, st in db.execute("SELECT globalPid, stackId FROM PERFKIT_PYTHON_CUDA_CALLS"
                                      " WHERE globalTid = ? AND correlationId = ?", (tid, corr)):
                p = place((pid, st))
                if p:
                    weight[p] += e - s
                    calls[p] += 1
    if weight:
        top = max(weight.items(), key=lambda kv: (kv[1], kv[0]))[0]
        want = "The line that calls them most: %s, %d calls" % (top, calls[top])
        if want not in f["evidence"]:
            problems.append("%s evidence lacks %r: %s" % (rule, want, f["evidence"][-400:]))
        if "Start at " + top not in (f.get("change") or ""):
            problems.append("%s change does not start at %r" % (rule, top))
    elif "The line that calls them most" in f["evidence"]:
        problems.append("%s names a line though none of its calls has a stack" % rule)

calling_line("sync_api", re.compile(r"^(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize"
                                    r"|cuCtxSynchronize|cuStreamSynchronize|cuEventSynchronize)"))
calling_line("alloc_churn", re.compile(r"^(?!.*Async)(cudaMalloc|cudaFree|cudaHostAlloc|cuMemAlloc|cuMemFree"
                                       r"|cuMemHostAlloc)"))

# launch_bound: kernels by the innermost module range open at their call
f = finding("launch_bound")
if f:
    domains = {(d, tid >> 24) for d, tid in db.execute(
        "SELECT n.domainId, n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
        " WHERE n.eventType = 75 AND coalesce(s.value, n.text) = 'perfkit.pytorch'")}
    ranges = defaultdict(list)
    for tid, s, e, cat, nm, dom in db.execute(
            "SELECT n.globalTid, n.start, n.end, n.category, coalesce(s.value, n.text), n.domainId"
            " FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60)"
            " AND n.category IN (1, 2, 3) AND n.start >= ? AND n.start < ? AND n.end >= n.start", (lo, hi)):
        if (dom, tid >> 24) in domains:
            ranges[tid].append((s, -e, nm, cat))
    calls = {}
    for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
        for tid, s, corr in db.execute("SELECT globalTid, start, correlationId FROM %s" % t):
            calls[(tid >> 24, corr)] = (tid, s)
    per = Counter()
    for pid, corr in db.execute("SELECT globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end >= start"):
        c = calls.get((pid >> 24, corr))
        if not c:
            continue
        open_ = [r for r in ranges.get(c[0], []) if r[0] <= c[1] < -r[1]]
        if open_:
            inner = max(open_)
            per[(inner[2], inner[3])] += 1
    if per:
        # any of the modules tied for the most launches may be named
        most = max(per.values())
        wants = []
        for (nm, cat), n in per.items():
            if n != most:
                continue
            m = re.match(r"^(.*) \((.*)\)$", nm)
            text = m.group(1) if m and m.group(1) == m.group(2) else nm
            wants.append("The module that launches the most kernels of its own: %s, %s, %.1f kernels per iteration" % (
                text, {1: "forward", 2: "backward", 3: "optimizer"}[cat], n / win["iterations"]))
        if not any(w in f["evidence"] for w in wants):
            problems.append("launch_bound evidence lacks any of %r: %s" % (wants[:3], f["evidence"][-300:]))

# folded: calls with a stack hang under their Python frames
with_stack = 0
for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    with_stack += db.execute(
        "SELECT coalesce(sum(k.end - k.start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN %s a"
        " ON a.correlationId = k.correlationId AND (a.globalTid >> 24) = (k.globalPid >> 24)"
        " WHERE k.end >= k.start AND EXISTS (SELECT 1 FROM PERFKIT_PYTHON_CUDA_CALLS y"
        " WHERE y.globalTid = a.globalTid AND y.correlationId = a.correlationId)" % t).fetchone()[0]
frame = re.compile(r"^.+ \(.+:\d+\)$|^.+ \[.+\]$")
under = 0
for line in folded:
    stack, w = line.rsplit(" ", 1)
    parts = stack.split(";")
    if len(parts) > 3 and frame.match(parts[2]):
        under += int(w)
if under != with_stack or with_stack == 0:
    problems.append("kernel time under Python frames %d, of calls with a stack %d" % (under, with_stack))
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
done

f=$D/py_python_hotspots.sqlite
cp "$f" "$TMP/no_stacks.sqlite"
python3 -c "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('DELETE FROM PERFKIT_PYTHON_CUDA_CALLS'); db.commit()" "$TMP/no_stacks.sqlite"
run diagnose --format=json "$TMP/no_stacks.sqlite"
expect_status "without stacks: diagnose" 0
cp "$TMP/out" "$TMP/diag.json"
run report --format=folded "$TMP/no_stacks.sqlite"
expect_status "without stacks: folded" 0
if python3 - "$TMP/diag.json" "$TMP/out" "$TMP/no_stacks.sqlite" >"$TMP/check" 2>&1 <<'PY'; then pass "without stacks: sync_api names the line the samples find, or none"; else cat "$TMP/check" >&2; fail "without stacks: sync_api by the samples"; fi
import json, re, sqlite3, sys
from collections import Counter

diag = json.load(open(sys.argv[1]))
folded = open(sys.argv[2]).read()
db = sqlite3.connect(sys.argv[3])
win = diag["window"]
lo, hi = win["start_ns"], win["host_end_ns"]
names = dict(db.execute("SELECT id, value FROM StringIds"))
sync = re.compile(r"^(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cuCtxSynchronize|cuStreamSynchronize|cuEventSynchronize)")
calls = []
for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"):
    calls += [(tid, s, e) for tid, s, e, nid in db.execute(
        "SELECT globalTid, start, end, nameId FROM %s WHERE start >= ? AND start < ?" % t, (lo, hi))
        if sync.match(names.get(nid, ""))]
def library(path):
    return ("/site-packages/" in path or "/dist-packages/" in path or "/lib/python3" in path
            or path.startswith("<") or path.endswith("/perfkit_hook.py"))
def short(path):
    m = re.search(r"/(site|dist)-packages/(.*)$", path)
    return m.group(2) if m else path
count = Counter()
for tid, s, e in calls:
    for pid, st in db.execute("SELECT globalPid, stackId FROM PERFKIT_PYTHON_SAMPLES WHERE globalTid = ?"
                              " AND start >= ? AND start < ? AND state = 1", (tid, s, e)):
        fr = sorted(db.execute("SELECT depth, functionId, fileId, line FROM PERFKIT_PYTHON_FRAMES"
                               " WHERE globalPid = ? AND stackId = ? AND kind = 0", (pid, st)))
        if not fr:
            continue
        inner = fr[0]
        text = "%s:%d (%s)" % (short(names[inner[2]]), inner[3], names[inner[1]])
        if library(names[inner[2]]):
            own = [f for f in fr if not library(names[f[2]])]
            if own:
                text += " from %s:%d (%s)" % (names[own[0][2]], own[0][3], names[own[0][1]])
        count[text] += 1
problems = []
f = [x for x in diag["findings"] if x["rule"] == "sync_api"]
if not f:
    problems.append("no sync_api finding")
elif not count:
    # the calls are shorter than the samples' period: no line to name
    if "The line" in f[0]["evidence"] or (f[0].get("change") or "").startswith("Start at"):
        problems.append("sync_api names a line no sample found: %s" % f[0]["evidence"][-300:])
else:
    top, n = max(count.items(), key=lambda kv: (kv[1], kv[0]))
    want = "The line the samples find inside them most: %s (%.0f%% of the samples taken in them)" % (
        top, 100.0 * n / sum(count.values()))
    if want not in f[0]["evidence"]:
        problems.append("sync_api evidence lacks %r: %s" % (want, f[0]["evidence"][-400:]))
if ".py:" in folded:
    problems.append("a folded stack holds a Python frame without the calls' stacks")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
exit $((failures > 0))
