#!/usr/bin/env python3
"""roofline_check.py - compares perfkit's per-launch metrics (a capture made
with --metrics=roofline) with ncu's raw CSV for the same program, launch by
launch in order: FLOPs and DRAM bytes read must agree within 2%.

DRAM bytes written are compared apart: CUPTI's range profiler ends each
range by writing the L2's dirty lines back, so perfkit counts all a kernel
wrote, while ncu counts only what was evicted before the kernel ended (a
GEMM whose output still sits in L2 shows 0 there). perfkit's writes must be
at least ncu's and at most the kernel's writes plus the L2 size.

usage: roofline_check.py CAPTURE.sqlite NCU.csv"""
import csv
import sqlite3
import sys

TOL = 0.02
# metrics_probe's cache-cleaning kernel between the measured ones
CLEANER = "l2_clean"
# H100's L2: the most that can still be dirty when a kernel ends
L2_BYTES = 50 << 20


def perfkit_rows(path):
    db = sqlite3.connect(path)
    q = ("SELECT s.value, m.durationNs, m.flopsF64, m.flopsF32, m.flopsF16, m.dramReadBytes,"
         " m.dramWriteBytes, m.l2Bytes, m.tensorInst"
         " FROM PERFKIT_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
         " ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
         " JOIN StringIds s ON s.id = k.shortName ORDER BY k.start")
    rows = [r for r in db.execute(q).fetchall() if r[0] != CLEANER]
    total = db.execute("SELECT count(*) FROM PERFKIT_KERNEL_METRICS").fetchone()[0]
    kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    return rows, total, kernels


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
    out = []
    for r in body:
        if r[col["Kernel Name"]].startswith(CLEANER):
            continue
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
    print(f"perfkit: {total} metric rows, {len(pk)} joined to {kernels} kernels; ncu: {len(nc)} kernels")
    fails = 0
    print(f"{'kernel':28} {'FLOP pk':>12} {'FLOP ncu':>12} {'read pk':>12} {'read ncu':>12} {'write pk':>12} {'write ncu':>12} {'dur pk us':>10} {'dur ncu us':>10} ok")
    for a, b in zip(pk, nc):
        fl_a, fl_b = a[2] + a[3] + a[4], b[2] + b[3] + b[4]
        # DRAM bytes of tiny kernels are a few KB of noise: judge them above 1 MB
        ok = close(fl_a, fl_b, 1) and close(a[5], b[5], 1 << 20) and \
            b[6] * (1 - TOL) <= a[6] <= b[6] + L2_BYTES
        fails += not ok
        print(f"{a[0][:28]:28} {fl_a:12.4g} {fl_b:12.4g} {a[5]:12.4g} {b[5]:12.4g} {a[6]:12.4g} {b[6]:12.4g} {a[1]/1e3:10.1f} {b[1]/1e3:10.1f} {'PASS' if ok else 'FAIL'}")
    if len(pk) != len(nc) or len(pk) == 0:
        fails += 1
        print("FAIL: launch counts differ")
    print("RESULT", "PASS" if fails == 0 else f"FAIL ({fails})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
