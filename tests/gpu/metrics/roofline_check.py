#!/usr/bin/env python3
"""roofline_check.py - compares perfkit's per-launch metrics (a capture made
with --metrics=roofline) with ncu's raw CSV for the same program, launch by
launch in order: FLOPs and DRAM bytes must agree within 2%.

With --metrics=roofline, DRAM bytes written are compared apart: the set
needs several replay passes, and before each pass after the first CUPTI
restores the kernel's memory, which leaves dirty lines in the L2 that the
measured pass then writes back (and takes longer: ~6 us). perfkit then
counts about all a kernel wrote (a GEMM's whole output) where ncu counts
what was evicted before the kernel ended (0 for a GEMM whose output stays
in L2). There perfkit's writes must be at least ncu's and at most ncu's
plus the L2 size.

A capture with --metrics=memory (--memory: duration, DRAM and L2 in one
pass, no FLOPs) is free of the replay's restores: reads must agree within
2%, durations within DURATION_SLACK_NS or 5%; writes within 2% or WRITE_SLACK, what was measured to stay
apart (perfkit 1.2-2.5 MB below ncu on the streaming kernels, 0 on both for
the GEMMs).

usage: roofline_check.py CAPTURE.sqlite NCU.csv [--memory]"""
import csv
import sqlite3
import sys

TOL = 0.02
# metrics_probe's cache-cleaning kernel between the measured ones
CLEANER = "l2_clean"
# H100's L2: the most that can still be dirty when a kernel ends
L2_BYTES = 50 << 20
# --memory: the most perfkit's one-pass writes were seen to differ from ncu's
WRITE_SLACK = 3 << 20
# --memory: durations of two separate runs (clocks not locked) were seen up
# to 1.8 us apart; the roofline set's replay adds ~6 us
DURATION_SLACK_NS = 2500


def perfkit_rows(path):
    db = sqlite3.connect(path)
    q = ("SELECT s.value, m.durationNs, m.flopsF64, m.flopsF32, m.flopsF16, m.dramReadBytes,"
         " m.dramWriteBytes, m.l2Bytes, m.tensorInst"
         " FROM PERFKIT_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
         " ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
         " JOIN StringIds s ON s.id = k.shortName ORDER BY k.start")
    rows = measured([(r[0], r) for r in db.execute(q).fetchall()])
    total = db.execute("SELECT count(*) FROM PERFKIT_KERNEL_METRICS").fetchone()[0]
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    return rows, total, kernels


def measured(named):
    """The rows after the first cleaning kernel, cleaners left out: what
    comes before it is cuBLAS's first calls, outside every range."""
    first = next((i for i, (name, _) in enumerate(named) if name.startswith(CLEANER)), len(named))
    return [row for name, row in named[first:] if not name.startswith(CLEANER)]


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


def ncu_rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    rd = list(csv.reader(lines))
    head, body = rd[0], rd[2:]  # row 1 holds the units
    col = {name: i for i, name in enumerate(head)}
    rows = measured([(r[col["Kernel Name"]], r) for r in body])
    out = []
    for r in rows:
        g = lambda m: num(r[col[m]]) if m in col else 0.0
        p = "sm__sass_thread_inst_executed_op_"
        f64 = 2 * g(p + "dfma_pred_on.sum") + g(p + "dadd_pred_on.sum") + g(p + "dmul_pred_on.sum")
        f32 = 2 * g(p + "ffma_pred_on.sum") + g(p + "fadd_pred_on.sum") + g(p + "fmul_pred_on.sum")
        f16 = 2 * g(p + "hfma_pred_on.sum") + g(p + "hadd_pred_on.sum") + g(p + "hmul_pred_on.sum")
        out.append((r[col["Kernel Name"]], g("gpu__time_duration.sum"), f64, f32, f16,
                    g("dram__bytes_read.sum"), g("dram__bytes_write.sum"), g("lts__t_bytes.sum")))
    return out


def close(a, b, floor):
    if a < floor and b < floor:
        return True
    return abs(a - b) <= TOL * max(a, b)


def main():
    pk, total, kernels = perfkit_rows(sys.argv[1])
    nc = ncu_rows(sys.argv[2])
    memory = "--memory" in sys.argv[3:]
    print(f"perfkit: {total} metric rows, {len(pk)} joined to {kernels} kernels; ncu: {len(nc)} kernels")
    fails = 0
    print(f"{'kernel':28} {'FLOP pk':>12} {'FLOP ncu':>12} {'read pk':>12} {'read ncu':>12} {'write pk':>12} {'write ncu':>12} {'dur pk us':>10} {'dur ncu us':>10} ok")
    for a, b in zip(pk, nc):
        fl_a, fl_b = (a[2] or 0) + (a[3] or 0) + (a[4] or 0), b[2] + b[3] + b[4]
        # DRAM bytes of tiny kernels are a few KB of noise: judge them above 1 MB
        if memory:
            writes_ok = close(a[6], b[6], 1 << 20) or abs(a[6] - b[6]) <= WRITE_SLACK
        else:
            writes_ok = b[6] * (1 - TOL) <= a[6] <= b[6] + L2_BYTES
        if memory:  # no FLOPs measured; the duration is the kernel's own
            flops_ok = a[2] is None and (abs(a[1] - b[1]) <= DURATION_SLACK_NS or
                                         abs(a[1] - b[1]) <= 0.05 * b[1])
        else:
            flops_ok = close(fl_a, fl_b, 1)
        ok = flops_ok and close(a[5], b[5], 1 << 20) and writes_ok
        fails += not ok
        print(f"{a[0][:28]:28} {fl_a:12.4g} {fl_b:12.4g} {a[5]:12.4g} {b[5]:12.4g} {a[6]:12.4g} {b[6]:12.4g} {a[1]/1e3:10.1f} {b[1]/1e3:10.1f} {'PASS' if ok else 'FAIL'}")
    if len(pk) != len(nc) or len(pk) == 0:
        fails += 1
        print("FAIL: launch counts differ")
    print("RESULT", "PASS" if fails == 0 else f"FAIL ({fails})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
