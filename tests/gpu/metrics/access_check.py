#!/usr/bin/env python3
"""access_check.py - compares perfkit's access counters (a capture made with
--metrics=memory) with ncu's raw CSV for the same program, per kernel name:
global load and store sectors and requests must agree within 2% (they
count the program's own accesses, whatever the cache holds); the L1 and L2
sector hit rates depend on what the cache holds when each kernel starts, so
they are compared with ncu --cache-control none and must agree within 10
points.

usage: access_check.py CAPTURE.sqlite NCU.csv [--hit-rates]
Prints one line per kernel and metric, PASS or FAIL, and exits 1 on a FAIL."""
import csv
import sqlite3
import statistics
import sys

TOL = 0.02
HIT_POINTS = 10.0
COUNTS = {
    "ldSectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "ldRequests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "stSectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "stRequests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
}
RATES = {
    "l1HitPct": "l1tex__t_sector_hit_rate.pct",
    "l2HitPct": "lts__t_sector_hit_rate.pct",
}


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


def perfkit_medians(path, columns):
    db = sqlite3.connect(path)
    cols = ", ".join(f"m.{c}" for c in columns)
    q = (f"SELECT s.value, {cols} FROM PERFKIT_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
         " ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
         " JOIN StringIds s ON s.id = k.shortName")
    by_name = {}
    for row in db.execute(q):
        by_name.setdefault(row[0], []).append(row[1:])
    return {name: [statistics.median(r[i] for r in rows if r[i] is not None)
                   if any(r[i] is not None for r in rows) else None
                   for i in range(len(columns))]
            for name, rows in by_name.items()}


def ncu_medians(path, metrics):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # the program's own output and ncu's "==PROF==" lines come before the CSV
    start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if start is None:
        sys.exit(f"{path}: no ncu CSV header (a 'Kernel Name' column) in the file")
    rows = rows[start:]
    header = rows[0]
    name_col = header.index("Kernel Name")
    cols = [header.index(m) for m in metrics]
    by_name = {}
    for row in rows[2:]:  # the second line holds units
        short = row[name_col].split("(")[0].split("<")[0].split()[-1]
        by_name.setdefault(short, []).append([num(row[c]) for c in cols])
    return {name: [statistics.median(r[i] for r in vals) for i in range(len(metrics))]
            for name, vals in by_name.items()}


def main():
    capture, ncu_csv = sys.argv[1], sys.argv[2]
    table = RATES if "--hit-rates" in sys.argv[3:] else COUNTS
    pk = perfkit_medians(capture, list(table))
    nc = ncu_medians(ncu_csv, list(table.values()))
    failures = 0
    for name in sorted(pk):
        if name not in nc:
            continue
        for i, col in enumerate(table):
            a, b = pk[name][i], nc[name][i]
            if a is None or b is None:
                ok = False
            elif table is RATES:
                ok = abs(a - b) <= HIT_POINTS
            else:
                ok = abs(a - b) <= TOL * max(abs(b), 1.0)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name} {col}: perfkit {a} ncu {b}")
    matched = sum(1 for n in pk if n in nc)
    if matched == 0:
        print("FAIL no kernel in both the capture and the ncu report")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
