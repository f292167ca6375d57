#!/usr/bin/env bash
# test_times_count_from_capture_start.sh - every output counts from one
# zero, the capture's start, computed here with SQL from the capture
# (tests/tools/capture_zero.py): diagnose's window line, its "+x s" and its
# JSON zero_ns; cuda_gpu_trace, gpu_idle_sum and critical_path; the Chrome
# trace's baseTimeNanoseconds and timestamps; where the Perfetto trace
# starts; the HTML report's time axes; diff's wall time;
# and --from/--to select the rows diagnose's times name. On a real DDP
# capture whose two NVTX domain registrations have start 0 (they used to
# put the start in 1970), a job of two such captures, and an nsys export
# (its session's start). Diagnose counted from the first CUDA call, the
# reports from the run's start or 1970, cuda_gpu_trace and a job's
# gpu_idle_sum and critical_path printed the clock.
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_SOURCE:?}" "${PERFKIT_TEST_DATA:?}"
export PYTHONPATH="$PERFKIT_SOURCE/tests/tools"

ddp="$PERFKIT_TEST_DATA/ddp/ddp2_rank0.sqlite"
ddp1="$PERFKIT_TEST_DATA/ddp/ddp2_rank1.sqlite"
nsys="$PERFKIT_TEST_DATA/nsys/cloverleaf-cuda.sqlite"
[ "$(sqlite3 "file:$ddp?mode=ro" "SELECT count(*) FROM NVTX_EVENTS WHERE start = 0")" -gt 0 ] ||
	{ echo "FAIL: $ddp holds the NVTX rows with start 0 this test is about" >&2; exit 1; }

# py NAME [ARGS...] < SCRIPT: a check in Python, passed or failed by its exit.
py() {
	local name=$1
	shift
	if python3 - "$@" >"$TMP/py.out" 2>&1; then pass "$name"; else fail "$name: $(tail -3 "$TMP/py.out")"; fi
}

# ---- diagnose: the window line, zero_ns, and the gaps' "+x s" -------------
for cap in "$ddp" "$nsys"; do
	n=$(basename "$cap")
	run diagnose --set gpu_gaps.min_gap_ms=0.5 --format=json "$cap"
	cp "$TMP/out" "$TMP/$n.diag.json"
	run diagnose --set gpu_gaps.min_gap_ms=0.5 "$cap"
	expect_status "diagnose $n" 0
	cp "$TMP/out" "$TMP/$n.diag.txt"
	py "$n: diagnose's zero_ns is the capture's start, and its window line counts from it" \
		"$cap" "$TMP/$n.diag.json" "$TMP/$n.diag.txt" <<'PY'
import json, re, sys, capture_zero
cap, js, txt = sys.argv[1:]
z, _ = capture_zero.zero(cap)
w = json.load(open(js))["window"]
assert w["zero_ns"] == z, (w["zero_ns"], z)
text = open(txt).read()
m = re.search(r"^window: .* \(([0-9.]+ [mun]?s) from \+([0-9.]+) s, of ([0-9.]+) (m?s) captured\)", text, re.M)
assert m, text[:400]
assert m.group(2) == "%.3f" % ((w["start_ns"] - z) / 1e9), (m.group(2), w["start_ns"] - z)
captured = float(m.group(3)) * (1e6 if m.group(4) == "ms" else 1e9)
want = capture_zero.last_end([cap]) - z
assert abs(captured - want) <= 0.0011 * want, (captured, want)
PY
	# every "gap at +X s" names a time at which some GPU work of the capture
	# ended (within the 0.5 ms X is rounded to), counted from the zero
	py "$n: diagnose's gaps are at the times the capture's GPU work ends" \
		"$cap" "$TMP/$n.diag.json" <<'PY'
import json, re, sys, capture_zero
cap, js = sys.argv[1:]
z, _ = capture_zero.zero(cap)
d = json.load(open(js))
gaps = [float(m.group(1)) for f in d["findings"] if f["rule"] == "gpu_gaps"
        for t in f["top"] for m in [re.match(r"gap at \+([0-9.]+) s$", t["name"])] if m]
assert gaps, "no gpu_gaps finding with offenders"
ends = sorted(e for _, e in capture_zero.gpu_rows([cap]))
for x in gaps:
    at = z + round(x * 1e9)
    assert any(abs(e - at) <= 500000 for e in ends), (x, z)
PY
done

# ---- --from/--to select what diagnose's times name ---------------------------
# Inside a gap diagnose names (longer than its rounding), the Chrome trace
# narrowed by --from/--to holds no GPU work; around it, the work on both sides.
read -r gap_x gap_ns <<<"$(python3 - "$TMP/$(basename "$ddp").diag.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    for t in f["top"] if f["rule"] == "gpu_gaps" else []:
        m = re.match(r"gap at \+([0-9.]+) s$", t["name"])
        if m and t["time_ns"] > 2000000:
            print(round(float(m.group(1)) * 1e9), t["time_ns"])
            sys.exit(0)
PY
)"
if [ -z "$gap_x" ]; then
	fail "ddp2_rank0 has a gap longer than 2 ms"
else
	run report --format=chrome --from=$((gap_x + 600000)) --to=$((gap_x + gap_ns - 600000)) "$ddp"
	expect_status "chrome --from/--to inside a gap" 0
	py "--from/--to inside a gap diagnose names export no GPU work" "$TMP/out" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
assert not gpu, gpu[:2]
assert any(e.get("ph") == "X" for e in ev), "the window holds the host's work"
PY
	run report --format=chrome --from=$((gap_x - 600000)) --to=$((gap_x + gap_ns + 600000)) "$ddp"
	py "--from/--to around it export the GPU work that ends and starts it" "$TMP/out" "$ddp" "$gap_x" "$gap_ns" <<'PY'
import json, sys, capture_zero
trace, cap, x, gap = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
z, _ = capture_zero.zero(cap)
ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
ends = [round((e["ts"] + e["dur"]) * 1000) for e in ev]
starts = [round(e["ts"] * 1000) for e in ev]
assert any(abs(e - x) <= 500000 for e in ends), (x, ends[:5])
assert any(abs(s - (x + gap)) <= 500000 for s in starts), (x + gap, starts[-5:])
PY
fi
# The window diagnose found, given back to --from/--to, exports the
# kernels the capture ran in it.
py "--from/--to of diagnose's window export the capture's kernels in it" \
	"$PERFKIT" "$ddp" "$TMP/$(basename "$ddp").diag.json" "$TMP/win.json" <<'PY'
import json, sqlite3, subprocess, sys, capture_zero
pk, cap, js, out = sys.argv[1:]
z, _ = capture_zero.zero(cap)
w = json.load(open(js))["window"]
subprocess.run([pk, "report", "--format=chrome", "--from=%d" % (w["start_ns"] - z),
                "--to=%d" % (w["end_ns"] - z), "-o", out, cap], check=True)
got = sorted(round(e["ts"] * 1000) + z for e in json.load(open(out))["traceEvents"] if e.get("cat") == "kernel")
db = sqlite3.connect("file:%s?mode=ro" % cap, uri=True)
want = sorted(r[0] for r in db.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end > ? AND start < ?",
                                        (w["start_ns"], w["end_ns"])))
assert got == want and want, (len(got), len(want))
PY

# ---- the reports -------------------------------------------------------------
# check_reports NAME CAPTURES...: cuda_gpu_trace's starts are the GPU rows'
# from the zero; gpu_idle_sum's longest stretches start where diagnose's
# gaps do, and its window and critical_path's step where diagnose's window
# and an instance of its NVTX range begin, per rank.
check_reports() {
	local name=$1
	shift
	run report --format=json --report=cuda_gpu_trace,gpu_idle_sum,critical_path "$@"
	expect_status "report $name" 0
	cp "$TMP/out" "$TMP/rep.json"
	run diagnose --format=json "$@"
	cp "$TMP/out" "$TMP/diag.json"
	py "$name: cuda_gpu_trace, gpu_idle_sum and critical_path count from the capture's start" \
		"$TMP/rep.json" "$TMP/diag.json" "$@" <<'PY'
import json, sqlite3, sys, capture_zero
rep, diag, caps = sys.argv[1], sys.argv[2], sys.argv[3:]
z, _ = capture_zero.job_zero(caps)
t = {r["name"]: r for r in json.load(open(rep))["reports"]}
got = sorted(r["Start (ns)"] for r in t["cuda_gpu_trace"]["rows"])
want = sorted(s - z for s, _ in capture_zero.gpu_rows(caps))
assert got == want, (got[:3], want[:3])
d = json.load(open(diag))
windows = {r["rank"]: r["window"] for r in d.get("ranks") or []} or {None: d["window"]}
rank = lambda row: row.get("Rank")
for row in t["gpu_idle_window"]["rows"]:
    w = windows[rank(row)] if rank(row) in windows else d["window"]
    assert row["Window Start (ns)"] == w["start_ns"] - z, (row, w["start_ns"] - z)
ends = [e for _, e in capture_zero.gpu_rows(caps)]
for row in t["gpu_idle_top"]["rows"]:
    assert row["Start (ns)"] + z in ends, row
# a step's span starts at its NVTX range, or where the GPU work of the
# step before it ended
starts = {e for _, e in capture_zero.gpu_rows(caps)}
for c in caps:
    db = sqlite3.connect("file:%s?mode=ro" % c, uri=True)
    starts |= {r[0] for r in db.execute("SELECT start FROM NVTX_EVENTS WHERE start > 0")}
for row in t["critical_path"]["rows"]:
    assert row["Start (ns)"] + z in starts, row
PY
}
check_reports ddp2_rank0 "$ddp"
check_reports "the job of ddp2_rank0 and ddp2_rank1" "$ddp" "$ddp1"

# ---- the Chrome trace ----------------------------------------------------------
check_chrome() {
	local name=$1
	shift
	run report --format=chrome "$@"
	expect_status "chrome $name" 0
	py "$name: the Chrome trace's base is the capture's start and its times count from it" "$TMP/out" "$@" <<'PY'
import json, sys, capture_zero
trace, caps = sys.argv[1], sys.argv[2:]
z, utc = capture_zero.job_zero(caps)
d = json.load(open(trace))
assert d["baseTimeNanoseconds"] == utc, (d["baseTimeNanoseconds"], utc)
got = sorted(round(e["ts"] * 1000) for e in d["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
want = sorted(s - z for s, _ in capture_zero.gpu_rows(caps))
assert got == want, (got[:3], want[:3])
PY
}
check_chrome ddp2_rank0 "$ddp"
check_chrome cloverleaf-cuda "$nsys"
check_chrome "the job of ddp2_rank0 and ddp2_rank1" "$ddp" "$ddp1"

# ---- the Perfetto trace ----------------------------------------------------------
# Its timestamps are the capture's clock; its clock snapshot and "capture"
# instant, where ui.perfetto.dev starts the time line, are at the zero.
run report --format=perfetto -o "$TMP/t.pftrace" "$ddp"
if [ "$status" -ne 0 ] && grep -q "unavailable" "$TMP/err"; then
	echo "skip: a build without protobuf-c writes no Perfetto trace"
elif ! command -v protoc >/dev/null; then
	echo "skip: no protoc to decode the Perfetto trace"
else
	expect_status "perfetto ddp2_rank0" 0
	protoc --proto_path="$PERFKIT_SOURCE/report/export/perfetto" --decode=perfetto.protos.Trace \
		perfetto_subset.proto <"$TMP/t.pftrace" >"$TMP/t.txt" 2>"$TMP/err"
	py "ddp2_rank0: the Perfetto trace starts at the capture's start" "$TMP/t.txt" "$ddp" <<'PY'
import re, sys, capture_zero
text, cap = sys.argv[1:]
z, _ = capture_zero.zero(cap)
stamps = [int(t) for t in re.findall(r"^\s*timestamp: (\d+)$", open(text).read(), re.M)]
# the snapshot's two clocks, then the first packet's absolute timestamp
assert stamps[:3] == [z, z, z], (stamps[:3], z)
PY
fi

# ---- the HTML report's time axes ------------------------------------------------
if command -v gnuplot >/dev/null; then
	run report --format=html -o "$TMP/page.html" "$ddp" "$ddp1"
	expect_status "html of the job" 0
	run diagnose --format=json "$ddp" "$ddp1"
	cp "$TMP/out" "$TMP/job.diag.json"
	# The plots over time cover the loop diagnose found (issue: a run whose
	# start-up is most of it left the loop a sliver), labelled in time since
	# the capture's start like every other time perfkit prints.
	py "the HTML report's plots over time cover the loop, counted from the capture's start" \
		"$TMP/page.html" "$TMP/job.diag.json" "$ddp" "$ddp1" <<'PY'
import json, re, sys, capture_zero
page, diag, caps = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3:]
z, _ = capture_zero.job_zero(caps)
w = diag["window"]
lo, hi = (w["start_ns"] - z) / 1e6, (w["end_ns"] - z) / 1e6
assert 0 <= lo < hi, (lo, hi)
plots = [f for f in re.findall(r'<figure class="plot"[^>]*>(.*?)</figure>', open(page).read(), re.S)
         if "time since capture start" in f]
assert len(plots) >= 2, len(plots)
slack = 0.25 * (hi - lo)
for f in plots:
    # the x axis' tick labels: gnuplot centres them, and ends the y axis' at
    # the axis (labels such as "1.8e+12" fail float() as well as the bounds)
    labels = re.findall(r'<g [^>]*text-anchor="middle">\s*<text>\s*([^<]*?)\s*</text>', f)
    ticks = [float(t) for t in labels if t[:1].isdigit() or t[:1] == "-"]
    assert ticks and lo - slack <= min(ticks) and max(ticks) <= hi + slack, (labels, lo, hi)
    assert max(ticks) - min(ticks) >= 0.5 * (hi - lo), (labels, lo, hi)
PY
else
	echo "skip: no gnuplot, no plots to check"
fi

# ---- diff's wall time without the run's duration -------------------------------
# A capture that does not say how long its run took (cut short, or an nsys
# export) has the span of its records as wall time: the registrations at 0
# made it 57 years.
cp "$ddp" "$TMP/nodur.sqlite"
sqlite3 "$TMP/nodur.sqlite" "DELETE FROM PERFKIT_META WHERE key = 'duration_ns'"
run diff --format=json "$TMP/nodur.sqlite" "$TMP/nodur.sqlite"
expect_status "diff of a capture without its run's duration" 0
py "diff's wall time without the run's duration is its records' span" "$TMP/out" "$TMP/nodur.sqlite" <<'PY'
import json, sqlite3, sys, capture_zero
out, cap = sys.argv[1:]
first, last = capture_zero.extent(sqlite3.connect(cap))
rows = [r for t in json.load(open(out))["reports"] for r in t["rows"] if r.get("Metric") == "Wall time (ns)"]
assert rows and rows[0]["Base"] == last - first, (rows, last - first)
PY

# ---- a context that failed ------------------------------------------------------
cap="$PERFKIT_TEST_DATA/faults/context_failed.sqlite"
run diagnose "$cap"
py "the failed context's \"+x s\" counts from the capture's start" "$TMP/out" "$cap" <<'PY'
import re, sqlite3, sys, capture_zero
out, cap = sys.argv[1:]
z, _ = capture_zero.zero(cap)
db = sqlite3.connect("file:%s?mode=ro" % cap, uri=True)
at = db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE returnValue = 700").fetchone()[0]
m = re.search(r"failed at \+([0-9.]+) s", open(out).read())
assert m and m.group(1) == "%.3f" % ((at - z) / 1e9), (m and m.group(1), (at - z) / 1e9)
PY
finish
