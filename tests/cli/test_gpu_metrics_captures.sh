#!/usr/bin/env bash
# test_gpu_metrics_captures.sh - the sampled GPU metrics on real captures:
# `perfkit report --report=gpu_metrics_sum` in every format, the HTML
# report's plots and section, `perfkit diagnose`'s rules on them and
# `perfkit top` replaying them.
#
# On every capture of tests/data (its cases, jobs, Nsight Systems exports
# too) without GPU metrics (the DDP jobs have an empty GPU_METRICS table):
# each format exits 0 and says how to collect them, the HTML report says so
# where the plots would be, and diagnose lists the four rules as not run
# with that advice. On every capture with GPU_METRICS rows
# (tests/data/gpu_metrics/, H100 captures of `perfkit run --gpu-metrics`),
# what must hold of any such capture, checked against the file itself with
# sqlite3: each device's whole-capture average equals the time-weighted mean
# of its samples computed here in SQL; every average of a kernel or range
# lies within the samples its instances overlap; Sampled and Coverage are
# shares; a metric the sampler lacks is null (N/A), one it has is never
# missing where the samples cover the time. Then what each of those programs
# is known to do (tests/data/gpu_metrics/README.md), and perfkit top.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

has_samples() {
	[ "$(sqlite3 -readonly "$1" "SELECT count(*) FROM sqlite_master WHERE name = 'GPU_METRICS'")" = 1 ] &&
		[ "$(sqlite3 -readonly "$1" "SELECT count(*) > 0 FROM (SELECT 1 FROM GPU_METRICS LIMIT 1)")" = 1 ]
}

shopt -s nullglob
without=()
with=()
for f in "$D"/*.sqlite "$D"/cases/*.sqlite "$D"/nsys/*.sqlite "$D"/ddp/*.sqlite "$D"/gpu_metrics/*.sqlite; do
	if has_samples "$f"; then with+=("$f"); else without+=("$f"); fi
done

HOW='perfkit run --gpu-metrics'

# ---- captures without GPU metrics -----------------------------------------
for f in "${without[@]}"; do
	name=$(basename "$f" .sqlite)
	run report --report=gpu_metrics_sum "$f"
	if [ "$status" -eq 0 ] && grep -qF "no sampled GPU metrics" "$TMP/out" && grep -qF "$HOW" "$TMP/out" &&
		[ "$(grep -c '(no data)' "$TMP/out")" -eq 3 ]; then
		pass "$name: text has three empty tables and says how to collect the metrics"
	else
		fail "$name: text has three empty tables and says how to collect the metrics"
	fi
	run report --report=gpu_metrics_sum --format=csv "$f"
	if [ "$status" -eq 0 ] && grep -qF "$HOW" "$TMP/err" && head -1 "$TMP/out" | grep -q '^Device,PID,Samples'; then
		pass "$name: csv has the headers and the advice on stderr"
	else
		fail "$name: csv has the headers and the advice on stderr"
	fi
	run report --report=gpu_metrics_sum --format=json "$f"
	[ "$status" -eq 0 ] || { fail "$name: json exits 0"; continue; }
	cp "$TMP/out" "$TMP/$name.json"
	run diagnose --format=json "$f"
	[ "$status" -eq 0 ] || { fail "$name: diagnose exits 0"; continue; }
	if python3 - "$TMP/$name.json" "$TMP/out" >"$TMP/why" 2>&1 <<'PY'
import json, sys
reports = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert sorted(reports) == ["gpu_metrics_devices", "gpu_metrics_nvtx", "gpu_metrics_sum"], sorted(reports)
assert reports["gpu_metrics_devices"]["no_gpu_metrics"] == 1
assert all(not r["rows"] for r in reports.values())
d = json.load(open(sys.argv[2]))
rules = ["few_sms_busy", "tensor_cores_idle", "dram_roof", "link_saturated"]
# FP32 GEMMs on the CUDA cores are known by their names without samples
# (rules_precision.c): then tensor_cores_idle is found, not skipped, and
# every offender's name says FP32 on the CUDA cores
by_name = [f for f in d["findings"] if f["rule"] == "tensor_cores_idle"]
for f in by_name:
    assert "by their names" in f["evidence"], f["evidence"]
    assert all("sgemm" in t["name"] or "_ffma_" in t["name"] for t in f["top"]), f["top"]
if by_name:
    rules.remove("tensor_cores_idle")
assert not [f for f in d["findings"] if f["rule"] in rules]
reasons = {s["rule"]: s["reason"] for s in d["not_run"]}
for r in rules:
    # a capture without GPU work skips every rule at once
    reason = reasons.get(r, reasons.get("every rule", ""))
    assert "perfkit run --gpu-metrics" in reason or "no GPU activity" in reason, (r, reason)
PY
	then pass "$name: json and diagnose: no rows, no findings, the rules say how to collect the metrics"
	else fail "$name: json and diagnose: $(tail -n 3 "$TMP/why" | tr '\n' ' ')"; fi
done

run diagnose "$D/transformer_naive.sqlite"
expect_out "transformer_naive: diagnose's header says there are no metrics" '^metrics: none \(trace-only rules\); peaks: '

# The HTML report of a perfkit capture and of an nsys export: the place
# under the utilisation plot says how to collect the metrics; no section.
for f in "$D/transformer_naive.sqlite" "$D/nsys/cloverleaf-cuda.sqlite"; do
	name=$(basename "$f" .sqlite)
	run report --format=html -o "$TMP/$name.html" "$f"
	if [ "$status" -eq 0 ] && grep -qF "<h3>Sampled GPU metrics</h3>" "$TMP/$name.html" &&
		grep -qF "capture with $HOW to get them" "$TMP/$name.html" &&
		! grep -qF 'id="gpu-metrics"' "$TMP/$name.html"; then
		pass "$name: html says how to collect the metrics and has no metrics section"
	else
		fail "$name: html says how to collect the metrics and has no metrics section"
	fi
done

# ---- captures with GPU metrics ----------------------------------------------
if [ "${#with[@]}" -eq 0 ]; then
	skip "the checks on captures with GPU metrics" "no capture in tests/data has GPU_METRICS rows"
fi

# The checks on one capture's JSON against the file (argv: json, capture).
cat >"$TMP/check.py" <<'PY'
import bisect, json, math, sqlite3, sys
reports = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
db = sqlite3.connect(sys.argv[2])
bad = []
def check(ok, what):
    if not ok and len(bad) < 20:
        bad.append(what)
# the report's labels of nsys's names (docs/gpu-metrics.md)
LABELS = {
    "SMs Active [Throughput %]": "SM Active (%)", "SM Issue [Throughput %]": "SM Issue (%)",
    "Tensor Active [Throughput %]": "Tensor Active (%)",
    "Compute Warps in Flight [Throughput %]": "Warps in Flight (%)",
    "Unallocated Warps in Active SMs [Throughput %]": "Unallocated Warps in Active SMs (%)",
    "Unallocated Warps in Idle SMs [Throughput %]": "Unallocated Warps in Idle SMs (%)",
    "DRAM Read Bandwidth [Throughput %]": "DRAM Read (%)", "DRAM Write Bandwidth [Throughput %]": "DRAM Write (%)",
    "PCIe RX Throughput [Throughput %]": "PCIe RX (%)", "PCIe TX Throughput [Throughput %]": "PCIe TX (%)",
    "NVLink RX Throughput [Throughput %]": "NVLink RX (%)", "NVLink TX Throughput [Throughput %]": "NVLink TX (%)",
    "GR Active [Throughput %]": "GR Active (%)", "GPC Clock Frequency [MHz]": "GPC Clock (MHz)",
}
def label(name):
    for k, v in LABELS.items():
        if k.lower() == name.lower():
            return v
    return name
cols = [c for (c,) in db.execute("SELECT name FROM pragma_table_info('TARGET_INFO_GPU_METRICS')")]
has_pid = "globalPid" in cols
# samplers: typeId -> (device, pid or None, {metricId: column})
samplers = {}
for t, mid, mname, gp in db.execute("SELECT typeId, metricId, metricName, %s FROM TARGET_INFO_GPU_METRICS"
                                    % ("globalPid" if has_pid else "NULL")):
    s = samplers.setdefault(t, [t & 0xFF, None, {}])
    if gp is not None and s[1] is None:
        s[1] = (gp >> 24) & 0xFFFFFF
    s[2][mid] = label(mname)
def sampler_of(row):
    for t, (dev, pid, _) in samplers.items():
        if dev == row["Device"] and pid == row["PID"]:
            return t
    return None
def periods(t):
    """[(from, to, {column: value})] of sampler t in time order."""
    by_ts = {}
    for ts, mid, v in db.execute("SELECT timestamp, metricId, value FROM GPU_METRICS WHERE typeId = ?", (t,)):
        if mid in samplers[t][2] and v is not None:
            by_ts.setdefault(ts, {})[samplers[t][2][mid]] = v
    stamps = sorted(by_ts)
    return [(a, b, by_ts[b]) for a, b in zip(stamps, stamps[1:])]
def tol(col):
    """what the JSON's rounding allows: one decimal, none for MHz"""
    return 0.51 if col.endswith("(MHz)") else 0.051
devs = reports["gpu_metrics_devices"]["rows"]
check(len(devs) == len(samplers), "%d device rows for %d samplers" % (len(devs), len(samplers)))
P = {}
for row in devs:
    t = sampler_of(row)
    check(t is not None, "no sampler for device row %s" % row)
    if t is None:
        continue
    P[t] = periods(t)
    check(row["Samples"] == len(P[t]), "device %s: %s samples, %d periods" % (row["Device"], row["Samples"], len(P[t])))
    names = set(samplers[t][2].values())
    # the time-weighted mean of each metric, in SQL over the file's rows: a
    # sample's period runs from its sampler's previous timestamp
    for mid, col in samplers[t][2].items():
        (mean,) = db.execute(
            "WITH ts AS (SELECT DISTINCT timestamp FROM GPU_METRICS WHERE typeId = ?1),"
            " p AS (SELECT timestamp, lag(timestamp) OVER (ORDER BY timestamp) AS prev FROM ts)"
            " SELECT sum(g.value * (p.timestamp - p.prev)) / sum(p.timestamp - p.prev)"
            " FROM GPU_METRICS g JOIN p ON p.timestamp = g.timestamp"
            " WHERE g.typeId = ?1 AND g.metricId = ?2 AND p.prev IS NOT NULL AND g.value IS NOT NULL",
            (t, mid)).fetchone()
        got = row.get(col)
        if mean is None:
            check(got is None, "device %s %s: %s without samples" % (row["Device"], col, got))
        else:
            check(got is not None and abs(got - mean) <= tol(col),
                  "device %s %s: report %s, SQL %.3f" % (row["Device"], col, got, mean))
    for col in row:
        if col.endswith("(%)") or col.endswith("(MHz)"):
            check(col in names or row[col] is None, "device %s: %s given by no metric of its sampler" % (row["Device"], col))
def instances(kind, row):
    t = sampler_of(row)
    dev, pid = samplers[t][0], samplers[t][1]
    if kind == "kernel":
        sql = ("SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
               " ON s.id = coalesce(k.demangledName, k.shortName) WHERE s.value = ? AND k.deviceId = ? AND k.end >= k.start")
        args = [row["Name"], dev]
        if pid is not None:
            sql += " AND (k.globalPid IS NULL OR k.globalPid = 0 OR (k.globalPid >> 24) = ?)"
            args.append(pid)
    else:
        sql = ("SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
               " WHERE coalesce(s.value, n.text) = ? AND n.eventType IN (59, 60) AND n.end >= n.start")
        args = [row["Range"]]
        if pid is not None:
            sql += " AND (n.globalTid >> 24) = ?"
            args.append(pid)
    return t, db.execute(sql, args).fetchall()
for table, kind in (("gpu_metrics_sum", "kernel"), ("gpu_metrics_nvtx", "range")):
    for row in reports[table]["rows"]:
        who = "%s %s" % (kind, row.get("Name", row.get("Range")))
        check(0 <= row["Sampled (%)"] <= 100, "%s: Sampled %s" % (who, row["Sampled (%)"]))
        check(row["Coverage (%)"] is None or 0 <= row["Coverage (%)"] <= 100, "%s: Coverage %s" % (who, row["Coverage (%)"]))
        t, inst = instances(kind, row)
        check(len(inst) == row["Instances"], "%s: %d instances in the file, %s in the report" % (who, len(inst), row["Instances"]))
        p = P.get(t, [])
        ends = [b for (_, b, _) in p]
        lo, hi = {}, {}
        for s, e in inst:
            # the periods (a, b] that overlap [s, e)
            for a, b, vals in p[bisect.bisect_right(ends, s):]:
                if a >= e:
                    break
                for c, v in vals.items():
                    lo[c] = min(lo.get(c, v), v)
                    hi[c] = max(hi.get(c, v), v)
        for c in set(samplers[t][2].values()):
            got = row.get(c)
            if c not in lo:
                check(got is None, "%s: %s is %s without a sample" % (who, c, got))
            else:
                check(got is not None and lo[c] - tol(c) <= got <= hi[c] + tol(c),
                      "%s: %s %s outside [%s, %s]" % (who, c, got, lo[c], hi[c]))
        if row["Sampled (%)"] > 0:
            check(row["Coverage (%)"] is not None, "%s: sampled but no coverage" % who)
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

for f in "${with[@]}"; do
	name=$(basename "$f" .sqlite)
	for fmt in text csv; do
		run report --report=gpu_metrics_sum --format=$fmt "$f"
		if [ "$status" -eq 0 ] && grep -q "SM Active (%)" "$TMP/out" && ! grep -qF "no sampled GPU metrics" "$TMP/out" "$TMP/err"; then
			pass "$name: $fmt has the metric columns"
		else
			fail "$name: $fmt has the metric columns"
		fi
	done
	run report --report=gpu_metrics_sum --format=json "$f"
	[ "$status" -eq 0 ] || { fail "$name: json exits 0"; continue; }
	cp "$TMP/out" "$TMP/$name.json"
	if python3 "$TMP/check.py" "$TMP/$name.json" "$f" >"$TMP/why" 2>&1; then
		pass "$name: device averages equal SQL's; every average lies within the samples it covers; shares in [0, 100]"
	else
		fail "$name: $(head -n 5 "$TMP/why" | tr '\n' ' ')"
	fi
	run report --format=html -o "$TMP/$name.html" "$f"
	if [ "$status" -eq 0 ] && grep -qF 'id="gpu-metrics"' "$TMP/$name.html" &&
		grep -qF 'id="gpu_metrics_sum"' "$TMP/$name.html" &&
		{ ! command -v gnuplot >/dev/null || grep -qF "the SMs: SM Active" "$TMP/$name.html"; }; then
		pass "$name: html has the metrics' plots and section"
	else
		fail "$name: html has the metrics' plots and section"
	fi
	for fmt in text json csv; do
		run diagnose --format=$fmt "$f"
		[ "$status" -eq 0 ] && pass "$name: diagnose --format=$fmt exits 0" || fail "$name: diagnose --format=$fmt exits 0"
		[ "$fmt" = json ] && cp "$TMP/out" "$TMP/$name.diag.json"
	done
	run diagnose "$f"
	expect_out "$name: diagnose's header says the sampled metrics are there" '^metrics: sampled GPU metrics; peaks: '
	if python3 - "$TMP/$name.diag.json" >"$TMP/why" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rules = ["few_sms_busy", "tensor_cores_idle", "dram_roof", "link_saturated"]
assert not [s for s in d["not_run"] if "perfkit run --gpu-metrics" in s["reason"]], d["not_run"]
for f in d["findings"]:
    if f["rule"] in rules:
        assert 0 <= f["share"] <= 1 and f["evidence"] and f["change"] and f["top"], f
PY
	then pass "$name: diagnose runs the metrics rules; their findings have evidence, a change and offenders"
	else fail "$name: diagnose: $(tail -n 3 "$TMP/why" | tr '\n' ' ')"; fi
done

# ---- what the programs of tests/data/gpu_metrics/ do ------------------------
# Made by tests/gpu/pm_sampling.sh, which checked the triad against ncu;
# each check follows from what the program does (the folder's README).
case_check() { # FIXTURE CHECK < PYTHON (argv: report json, diagnose json, capture)
	local f="$D/gpu_metrics/$1.sqlite"
	if [ ! -f "$f" ]; then
		skip "$2" "tests/data/gpu_metrics/$1.sqlite is not there"
		return
	fi
	if python3 - "$TMP/$1.json" "$TMP/$1.diag.json" "$f" >"$TMP/why" 2>&1; then pass "$2"
	else fail "$2: $(tail -n 3 "$TMP/why" | tr '\n' ' ')"; fi
}
cat >"$TMP/cases.py" <<'PY'
import json, sqlite3, sys
reports = {r["name"]: r["rows"] for r in json.load(open(sys.argv[1]))["reports"]}
findings = {f["rule"]: f for f in json.load(open(sys.argv[2]))["findings"]}
db = sqlite3.connect(sys.argv[3])
def row(table, col, name):
    found = [r for r in reports[table] if r[col] == name]
    assert found, "no %s row %s" % (table, name)
    return found[0]
def offenders(rule):
    assert rule in findings, "no %s finding: %s" % (rule, sorted(findings))
    return [t["name"] for t in findings[rule]["top"]]
(sms,) = db.execute("SELECT smCount FROM TARGET_INFO_GPU ORDER BY id LIMIT 1").fetchone()
PY

# 4 blocks spinning 20 ms keep 4 of the SMs busy (3% of an H100's 132), and
# every launch has 4 blocks for all those SMs: a small grid.
case_check small_grid "small_grid: 4 blocks keep 4 SMs busy; few_sms_busy names the small grid" <<'PY'
import sys; sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0]); from cases import *
k = row("gpu_metrics_sum", "Name", "spin(unsigned long long, int*)")
assert k["SM Active (%)"] <= 100.0 * 4 / sms + 2, k
assert k["Coverage (%)"] >= 95, k
names = offenders("few_sms_busy")
assert names and names[0].startswith("spin(") and "at most 4 blocks for %d SMs" % sms in names[0], names
PY

# ncu's reading of the triad (tests/data/gpu_metrics/ncu_stream.csv, its
# run of the same program): the sampled DRAM read + write over the triad's
# kernels within 5% of it, by the comparison pm_sampling.sh makes on the GPU.
if line=$(python3 "$PERFKIT_SOURCE/tests/gpu/pm_check.py" "$D/gpu_metrics/dram_stream.sqlite" '%triad%' \
	"$D/gpu_metrics/ncu_stream.csv" dram_vs_ncu=5 2>&1) && [ "${line%% *}" = PASS ]; then
	pass "dram_stream: the sampled DRAM throughput of the triad is ncu's (${line##*dram r+w })"
else
	fail "dram_stream: the sampled DRAM throughput of the triad is ncu's: $line"
fi

# A grid-stride triad over 3 x 1 GiB, two reads and a write an element, at
# what the DRAM gives (ncu on the same kernel: read 54.2% + write 27.1% of
# peak), with every SM busy.
case_check dram_stream "dram_stream: the triad runs at the DRAM roof with every SM busy" <<'PY'
import sys; sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0]); from cases import *
k = [r for r in reports["gpu_metrics_sum"] if r["Name"].startswith("triad(")][0]
assert abs(k["DRAM Read (%)"] - 54.2) <= 2 and abs(k["DRAM Write (%)"] - 27.1) <= 2, k
assert k["SM Active (%)"] >= 90, k
assert any(n.startswith("triad(") for n in offenders("dram_roof")), offenders("dram_roof")
assert "few_sms_busy" not in findings, findings["few_sms_busy"]["top"]
PY

# PyTorch BF16 products in the NVTX range bf16_gemm keep the tensor pipe
# busy (sampled: 93.5%), FP32 products with TF32 off in fp32_gemm leave it
# idle (sampled: 0.0%; no tensor instructions): only FP32 GEMMs are
# flagged, with PyTorch's switch for TF32.
case_check torch_gemm_bf16_fp32 "torch_gemm_bf16_fp32: tensor pipe busy in BF16, idle in FP32; only FP32 GEMMs are flagged" <<'PY'
import sys; sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0]); from cases import *
bf16, fp32 = row("gpu_metrics_nvtx", "Range", "bf16_gemm"), row("gpu_metrics_nvtx", "Range", "fp32_gemm")
assert bf16["Tensor Active (%)"] >= 80 and fp32["Tensor Active (%)"] <= 2, (bf16, fp32)
idle = {r["Name"] for r in reports["gpu_metrics_sum"] if r["Tensor Active (%)"] is not None and r["Tensor Active (%)"] <= 2}
names = offenders("tensor_cores_idle")
assert names and all(n.split(": Tensor Active")[0] in idle for n in names), (names, idle)
assert "allow_tf32" in findings["tensor_cores_idle"]["change"], findings["tensor_cores_idle"]["change"]
PY

# 256 MiB copies from pinned host memory, back to back: the PCIe link busy
# (pm_sampling.sh read PCIe RX 91.3% over the copies); the copies are named
# as limited by the link.
case_check h2d_pinned_copies "h2d_pinned_copies: pinned host-to-device copies saturate PCIe; link_saturated names them" <<'PY'
import sys; sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0]); from cases import *
# PCIe RX over the copies' time, each sample weighted by its overlap, from the rows
copies = db.execute("SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 ORDER BY start").fetchall()
samples = db.execute("SELECT g.timestamp, g.value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS t"
                     " USING (typeId, metricId) WHERE t.metricName = 'PCIe RX Throughput [Throughput %]'"
                     " ORDER BY g.timestamp").fetchall()
num = den = 0.0
for (t0, _), (t1, v) in zip(samples, samples[1:]):
    w = sum(max(0, min(e, t1) - max(s, t0)) for s, e in copies)
    num += v * w
    den += w
assert den > 0 and num / den >= 80, num / den if den else None
names = offenders("link_saturated")
assert any("HtoD" in n for n in names), names
assert "PCIe" in findings["link_saturated"]["evidence"], findings["link_saturated"]["evidence"]
PY

# ---- samples dropped ------------------------------------------------------------
# The collector counts the samples its sampling buffer had no room for
# (PERFKIT_COUNTERS gpu_metric_samples_dropped; these captures lost none):
# the overview warns and gpu_metrics_sum notes how many, on a copy of a
# capture with the counter set, and neither says so of the capture itself.
f=$D/gpu_metrics/small_grid.sqlite
if [ -f "$f" ]; then
	run report "$f"
	if [ "$status" -eq 0 ] && ! grep -q "samples were dropped" "$TMP/out"; then
		pass "small_grid: the overview warns of no dropped samples"
	else
		fail "small_grid: the overview warns of no dropped samples"
	fi
	cp "$f" "$TMP/dropped.sqlite"
	sqlite3 "$TMP/dropped.sqlite" \
		"INSERT INTO PERFKIT_COUNTERS (name, value) VALUES ('gpu_metric_samples_dropped', 37)"
	run report "$TMP/dropped.sqlite"
	expect_out "dropped samples: the overview warns" \
		'^37 GPU metric samples were dropped during capture \(the sampler fell behind'
	cp "$f" "$TMP/ended.sqlite"
	sqlite3 "$TMP/ended.sqlite" \
		"INSERT INTO PERFKIT_COUNTERS (name, value) VALUES ('gpu_metric_samplers_ended_early', 1)"
	run report "$TMP/ended.sqlite"
	expect_out "a sampler that ended early: the overview warns" \
		'^GPU metric sampling of 1 GPU\(s\) ended before the program did'
	run report --report=gpu_metrics_sum "$TMP/dropped.sqlite"
	expect_out "dropped samples: gpu_metrics_sum notes them" '^note: 37 samples were dropped'
	run report --report=gpu_metrics_sum --format=json "$TMP/dropped.sqlite"
	if [ "$status" -eq 0 ] && python3 -c '
import json, sys
r = {x["name"]: x for x in json.load(open(sys.argv[1]))["reports"]}
assert r["gpu_metrics_devices"]["samples_dropped"] == 37
' "$TMP/out"; then pass "dropped samples: the JSON's samples_dropped is the counter"
	else fail "dropped samples: the JSON's samples_dropped is the counter"; fi
	run report --report=gpu_metrics_sum --format=json "$f"
	if [ "$status" -eq 0 ] && ! grep -q samples_dropped "$TMP/out"; then
		pass "small_grid: gpu_metrics_sum notes no dropped samples"
	else
		fail "small_grid: gpu_metrics_sum notes no dropped samples"
	fi
fi

# ---- a sampler opened again --------------------------------------------------------
# A device whose last context went is sampled again, by a sampler of its
# own (a new typeId, the device in its low 8 bits), when a later context
# opens it. On a copy of small_grid whose samples 1001 to 1999 are gone (the
# device closed) and whose later ones are a second sampler's, each sampler
# is a row of device 0 and the time closed is no sample period.
if [ -f "$f" ]; then
	cp "$f" "$TMP/reopened.sqlite"
	sqlite3 "$TMP/reopened.sqlite" "
		CREATE TEMP TABLE ts AS SELECT timestamp, row_number() OVER (ORDER BY timestamp) AS k
			FROM (SELECT DISTINCT timestamp FROM GPU_METRICS);
		DELETE FROM GPU_METRICS WHERE timestamp IN (SELECT timestamp FROM ts WHERE k > 1000 AND k < 2000);
		UPDATE GPU_METRICS SET typeId = 256 WHERE timestamp >= (SELECT timestamp FROM ts WHERE k = 2000);
		INSERT INTO TARGET_INFO_GPU_METRICS SELECT 256, sourceId, typeName, metricId, metricName, globalPid
			FROM TARGET_INFO_GPU_METRICS WHERE typeId = 0"
	run report --report=gpu_metrics_sum --format=json "$TMP/reopened.sqlite"
	if [ "$status" -eq 0 ] && python3 - "$TMP/out" "$TMP/reopened.sqlite" >"$TMP/why" 2>&1 <<'PY'
import json, sqlite3, sys
rows = {r["name"]: r["rows"] for r in json.load(open(sys.argv[1]))["reports"]}["gpu_metrics_devices"]
db = sqlite3.connect(sys.argv[2])
want = []
for t in (0, 256):
    ts = [x for (x,) in db.execute("SELECT DISTINCT timestamp FROM GPU_METRICS WHERE typeId = ? ORDER BY 1", (t,))]
    want.append((len(ts) - 1, ts[-1] - ts[0]))
got = sorted((r["Samples"], r["Sampled (ns)"]) for r in rows)
assert [r["Device"] for r in rows] == [0, 0], rows
assert got == sorted(want), (got, want)
PY
	then pass "a sampler opened again: a row of its own, the time closed in neither"
	else fail "a sampler opened again: $(tail -n 3 "$TMP/why" | tr '\n' ' ')"; fi
fi

# ---- perfkit top --------------------------------------------------------------
# A replay shows the metrics' rows under the rates when the capture has
# samples, and none when it has not.
if ! command -v tmux >/dev/null; then
	skip "perfkit top's rows" "tmux is not installed"
	finish
fi
. "$(dirname "$0")/tmux_lib.sh"
replay() { # FILE
	local cmd
	rm -f "$TMP/status"
	printf -v cmd 'env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q top --replay=1000000000 %q; echo $? >%q; sleep 60' \
		"$PERFKIT" "$1" "$TMP/status"
	tm kill-session -t top >/dev/null 2>&1
	tm new-session -d -s top -x 160 -y 45 "$cmd"
}
# The screen stays on the capture's last second (that of its last row, a
# sample's timestamp included): SM active there is the period-weighted mean
# of the samples that end in it, computed here from the file.
cat >"$TMP/last_second.py" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
last = max(v for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                       "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", "NVTX_EVENTS",
                       "CUDA_GPU_MEMORY_USAGE_EVENTS", "GPU_METRICS") if t in tables
           for (v,) in db.execute("SELECT max(%s) FROM %s" % (
               "timestamp" if t == "GPU_METRICS" else "start" if t == "CUDA_GPU_MEMORY_USAGE_EVENTS"
               else "coalesce(end, start)", t)) if v is not None)
sm = db.execute("SELECT g.timestamp, g.value FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS t USING (typeId, metricId)"
                " WHERE t.metricName = 'SMs Active [Throughput %]' ORDER BY 1").fetchall()
weighted = covered = 0
for (t0, _), (t1, v) in zip(sm, sm[1:]):
    if t1 // 10**9 == last // 10**9:
        weighted += round(v * 100) * (t1 - t0)
        covered += t1 - t0
shown = float(sys.argv[2])
want = weighted // covered / 100 if covered else None
print("screen %s%%, the samples of the last second %s%%" % (shown, want))
sys.exit(0 if want is not None and abs(shown - want) <= 0.1 else 1)
PY
for f in "${with[@]}"; do
	name=$(basename "$f" .sqlite)
	replay "$f"
	wait_for "$name: top replays to the end" "replay finished" 20 &&
		wait_for "$name: top shows SM active under the rates" "SM active" &&
		if shown=$(grep -oE 'SM active +[0-9]+\.[0-9]%' "$TMP/screen" | grep -oE '[0-9]+\.[0-9]') &&
			python3 "$TMP/last_second.py" "$f" "$shown" >"$TMP/why" 2>&1; then
			pass "$name: top's SM active is the last second's samples ($(cat "$TMP/why"))"
		else
			fail "$name: top's SM active is the last second's samples ($(cat "$TMP/why" 2>/dev/null))"
			sed 's/^/    | /' "$TMP/screen" >&2
		fi
	tm send-keys -t top:0 q
done
replay "$D/gpu_work.sqlite"
if wait_for "gpu_work: top replays to the end" "replay finished" 20; then
	if grep -qF "SM active" "$TMP/screen"; then fail "gpu_work: no GPU metrics rows without samples"
	else pass "gpu_work: no GPU metrics rows without samples"; fi
fi
tm send-keys -t top:0 q

finish
