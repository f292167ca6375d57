"""pm_check.py - reads a capture made with `perfkit run --gpu-metrics` for
tests/gpu/pm_sampling.sh and prints one line: PASS or FAIL, then details.

    pm_check.py DB LIKE NCU_CSV|- EXPECT...
        LIKE: kernels whose name matches this SQL LIKE pattern,
        range:NAME, the NVTX ranges of that name, or copies:KIND, the
        copies of that copyKind (1: host to device). Each metric is averaged
        over their time, every sample weighted by how much of its period
        they cover. EXPECT: dram_vs_ncu=PCT (DRAM read+write within PCT% of
        ncu's), tensor_above=X, tensor_below=X, sm_active_above=X,
        sm_active_below=X, pcie_rx_above=X, nvlink_tx_above=X,
        nvlink_rx_above=X; device=N reads GPU N's samples alone (sourceId),
        where the capture sampled several.
    pm_check.py DB --clock
        samples on the trace's clock: busy samples (SMs Active at least half
        its highest) fall
        where kernels ran, at least 95% of the kernels' time is sampled,
        timestamps increase, nothing overflowed or dropped.
    pm_check.py DB --devices N
        at least N GPUs sampled (by any process of the capture), each with
        SMs Active samples, nothing dropped."""
import csv
import io
import sqlite3
import sys

SM = "SMs Active [Throughput %]"
TENSOR = "Tensor Active [Throughput %]"
DRAM_R = "DRAM Read Bandwidth [Throughput %]"
DRAM_W = "DRAM Write Bandwidth [Throughput %]"


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(u, s, e):
    """How much of (s, e] the sorted disjoint intervals u cover."""
    total = 0
    for a, b in u:
        if b <= s:
            continue
        if a >= e:
            break
        total += min(b, e) - max(a, s)
    return total


def series(db, device=None):
    """{metric name: [(start, end, value)]} of every sampler, or of GPU
    `device`'s alone."""
    names = dict(((t, m), n) for t, m, n in db.execute(
        "SELECT typeId, metricId, metricName FROM TARGET_INFO_GPU_METRICS"))
    sources = dict(db.execute("SELECT DISTINCT typeId, sourceId FROM TARGET_INFO_GPU_METRICS"))
    out = {}
    prev = {}
    for ts, t, m, v in db.execute(
            "SELECT timestamp, typeId, metricId, value FROM GPU_METRICS ORDER BY typeId, metricId, timestamp"):
        if device is not None and sources.get(t) != device:
            continue
        key = (t, m)
        if key in prev:
            out.setdefault(names.get(key, str(key)), []).append((prev[key], ts, v))
        prev[key] = ts
    return out


def intervals(db, like):
    if like.startswith("copies:"):
        rows = db.execute("SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = ?",
                          (int(like[7:]),))
    elif like.startswith("range:"):
        rows = db.execute(
            "SELECT n.start, n.\"end\" FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId"
            " WHERE coalesce(s.value, n.text) = ? AND n.\"end\" IS NOT NULL", (like[6:],))
    else:
        rows = db.execute(
            "SELECT k.start, k.\"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k"
            " JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName) WHERE s.value LIKE ?",
            (like,))
    return union([(s, e) for s, e in rows])


def average(samples, u):
    num = den = 0.0
    for s, e, v in samples:
        w = covered(u, s, e)
        num += v * w
        den += w
    return num / den if den else None


def ncu_values(path):
    text = open(path, errors="replace").read()
    at = text.find('"ID"')
    if at < 0:
        return {}
    vals = {}
    for row in csv.DictReader(io.StringIO(text[at:])):
        name, value = row.get("Metric Name"), row.get("Metric Value")
        if name and value:
            try:
                vals.setdefault(name, float(value.replace(",", "")))
            except ValueError:
                pass
    return vals


def check(db_path, like, ncu_path, expects):
    db = sqlite3.connect(db_path)
    u = intervals(db, like)
    if not u:
        return False, "no kernels or ranges match %s" % like
    device = None
    for e in expects:
        if e.startswith("device="):
            device = int(e[7:])
    sers = series(db, device)
    avg = {n: average(s, u) for n, s in sers.items()}
    busy = sum(b - a for a, b in u)
    parts = ["%s over %.1f ms%s:" % (like, busy / 1e6, "" if device is None else ", GPU %d" % device)]
    for n in (SM, TENSOR, DRAM_R, DRAM_W):
        if avg.get(n) is not None:
            parts.append("%s=%.1f" % (n.split(" [")[0].replace(" ", "_"), avg[n]))
    ok = True
    ncu = ncu_values(ncu_path) if ncu_path != "-" else {}
    for e in expects:
        key, _, val = e.partition("=")
        if key == "device":
            continue
        val = float(val)
        if key == "dram_vs_ncu":
            mine = (avg.get(DRAM_R) or 0) + (avg.get(DRAM_W) or 0)
            theirs = ncu.get("dram__bytes_read.sum.pct_of_peak_sustained_elapsed", 0) + \
                ncu.get("dram__bytes_write.sum.pct_of_peak_sustained_elapsed", 0)
            diff = abs(mine - theirs) / theirs * 100 if theirs else float("inf")
            parts.append("dram r+w %.1f vs ncu %.1f (%.1f%%)" % (mine, theirs, diff))
            ok &= diff <= val
        elif key in ("pcie_rx_above", "nvlink_tx_above", "nvlink_rx_above"):
            link = {"pcie_rx_above": "PCIe RX", "nvlink_tx_above": "NVLink TX",
                    "nvlink_rx_above": "NVLink RX"}[key]
            v = avg.get(link + " Throughput [Throughput %]")
            parts.append("%s %s above %g" % (link, "%.1f" % v if v is not None else "N/A", val))
            ok &= v is not None and v > val
        elif key in ("tensor_above", "tensor_below", "sm_active_above", "sm_active_below"):
            name = TENSOR if key.startswith("tensor") else SM
            v = avg.get(name)
            good = v is not None and (v > val if key.endswith("above") else v < val)
            parts.append("%s %s %g" % (name.split(" [")[0], key.split("_")[-1], val))
            ok &= good
    for k, v in sorted(ncu.items()):
        parts.append("ncu %s=%.1f" % (k.split("__")[1].split(".")[0], v))
    return ok, " ".join(parts)


def one_of(db, metric):
    r = db.execute("SELECT typeName FROM TARGET_INFO_GPU_METRICS WHERE metricName = ?", (metric,)).fetchone()
    return r[0] if r else "-"


def clock(db_path):
    db = sqlite3.connect(db_path)
    sers = series(db)
    sm = sers.get(SM, [])
    if not sm:
        return False, "no SMs Active samples"
    u = union([(s, e) for s, e in db.execute("SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL")])
    period = sorted(e - s for s, e, _ in sm)[len(sm) // 2]
    # busy: at least half the busiest sample (a kernel of 4 blocks keeps 3%
    # of an H100's SMs active, no more)
    top = max(v for _, _, v in sm)
    busy = [(s, e) for s, e, v in sm if v >= max(top / 2, 0.5)]
    near = sum(1 for s, e in busy if covered(u, s - period, e + period) > 0)
    increasing = all(sm[i][0] < sm[i][1] for i in range(len(sm)))
    counters = dict(db.execute("SELECT name, value FROM PERFKIT_COUNTERS"))
    overflows = counters.get("gpu_metric_buffer_overflows", 0)
    dropped = counters.get("gpu_metric_samples_dropped", 0)
    frac = near / len(busy) if busy else 0
    # the kernels' time the samples cover: none lost at either end either
    spans = union([(s, e) for s, e, _ in sm])
    kernel_ns = sum(b - a for a, b in u)
    cover = sum(covered(spans, a, b) for a, b in u) / kernel_ns if kernel_ns else 0
    ok = bool(busy) and frac >= 0.95 and cover >= 0.95 and increasing and not overflows and not dropped
    return ok, ("%d samples, period %.1f us, %d busy of which %.1f%% where kernels ran, "
                "%.1f%% of the kernels' time sampled, increasing=%s, overflows=%d, dropped=%d, "
                "metrics=%d, DRAM read from %s" % (
                    len(sm), period / 1e3, len(busy), frac * 100, cover * 100, increasing, overflows,
                    dropped, len(sers), one_of(db, DRAM_R)))


def devices(db_path, want):
    db = sqlite3.connect(db_path)
    counters = dict(db.execute("SELECT name, value FROM PERFKIT_COUNTERS"))
    dropped = counters.get("gpu_metric_samples_dropped", 0)
    rows = list(db.execute(
        "SELECT t.globalPid, t.sourceId, count(*), avg(g.value) FROM TARGET_INFO_GPU_METRICS t"
        " JOIN GPU_METRICS g ON g.typeId = t.typeId AND g.metricId = t.metricId"
        " WHERE t.metricName = ? GROUP BY t.globalPid, t.sourceId ORDER BY t.sourceId", (SM,)))
    gpus = {r[1] for r in rows}
    ok = len(gpus) >= want and all(r[2] > 0 for r in rows) and not dropped
    return ok, "%d GPUs sampled (want %d), dropped=%d: %s" % (len(gpus), want, dropped, "; ".join(
        "process %d GPU %d: %d samples, SMs Active mean %.1f" % (r[0] >> 24, r[1], r[2], r[3]) for r in rows))


def main():
    if len(sys.argv) >= 3 and sys.argv[2] == "--clock":
        ok, text = clock(sys.argv[1])
    elif len(sys.argv) >= 4 and sys.argv[2] == "--devices":
        ok, text = devices(sys.argv[1], int(sys.argv[3]))
    else:
        ok, text = check(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
    print(("PASS " if ok else "FAIL ") + text)


if __name__ == "__main__":
    main()
