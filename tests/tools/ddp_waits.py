#!/usr/bin/env python3
"""ddp_waits.py - what the other rank waited for a 2-rank job's straggler,
from the capture's rows alone, against `perfkit diagnose`'s straggler
finding; for tests/cli/test_diagnose_ddp_captures.sh (the captures of
tests/data/ddp, both ranks on one GPU) and tests/gpu/ranks_reports.sh (one
GPU a rank).

    ddp_waits.py CAPTURE DIAGNOSIS.json STRAGGLER [TOLERANCE]

The k-th NCCL kernel of each rank is the same collective (DDP launches them
in one order on every rank). A collective ends on both ranks together, so
the time the other rank's kernel runs longer than the straggler's is the
time it waited for the straggler to join: summed over the collectives whose
kernel starts in the waiting rank's window (the window diagnose reports for
it) and divided by its steps (its train_step ranges, the first left out).
Start times are not used: ranks that share a GPU are time-sliced, and one's
kernel starts ~2 ms after the other's even when neither is late.

Prints both figures; exits 1 when the finding is missing, names another
rank, or is off by more than TOLERANCE (default 0.1) of the rows' figure.
Tests that weigh another finding against the rows import waited_per_step."""
import json
import sqlite3
import sys


def nccl_kernels(db, global_pid):
    """A process's NCCL kernels as (start, end), in start order."""
    return db.execute("SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
                      " ON s.id = k.demangledName WHERE s.value GLOB 'ncclDevKernel*'"
                      " AND k.globalPid = ? ORDER BY k.start", (global_pid,)).fetchall()


def waited_per_step(capture, diagnosis, waiter=0, other=1):
    """What rank `waiter` waited for rank `other` per step of its window (the
    one `perfkit diagnose` reports in DIAGNOSIS.json), by the rows: the time
    its NCCL kernel runs longer than the other's of the same collective,
    where it does."""
    d = json.load(open(diagnosis))
    db = sqlite3.connect(capture)
    pid = dict(db.execute("SELECT rank, globalPid FROM PERFKIT_PROCESS_INFO WHERE rank IS NOT NULL"))
    w = {r["rank"]: r["window"] for r in d["ranks"]}[waiter]
    kw, ko = nccl_kernels(db, pid[waiter]), nccl_kernels(db, pid[other])
    assert len(kw) == len(ko), (len(kw), len(ko))
    waited = sum(max(0, (e0 - a0) - (e1 - a1)) for (a0, e0), (a1, e1) in zip(kw, ko)
                 if w["start_ns"] <= a0 < w["end_ns"])
    return waited / w["iterations"]


def main():
    capture, diagnosis, straggler = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tolerance = float(sys.argv[4]) if len(sys.argv) > 4 else 0.1
    d = json.load(open(diagnosis))
    db = sqlite3.connect(capture)
    found = [f for f in d["findings"] if f["rule"] == "straggler"]
    if len(found) != 1 or [x["rank"] for x in found[0]["ranks"]] != [straggler]:
        print("no straggler finding naming rank %d: %s" % (straggler, [f["rule"] for f in d["findings"]]))
        return 1
    f = found[0]
    waiter = f["share_rank"]
    pid = dict(db.execute("SELECT rank, globalPid FROM PERFKIT_PROCESS_INFO WHERE rank IS NOT NULL"))

    steps = db.execute("SELECT count(*) - 1 FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                       " WHERE s.value = 'train_step' AND n.globalTid >> 24 = ? >> 24",
                       (pid[waiter],)).fetchone()[0]
    w = {r["rank"]: r["window"] for r in d["ranks"]}[waiter]
    if w["iterations"] != steps:
        print("rank %d: diagnose's window holds %d steps, its ranges %d" % (waiter, w["iterations"], steps))
        return 1
    kw, ks = nccl_kernels(db, pid[waiter]), nccl_kernels(db, pid[straggler])
    if len(kw) != len(ks):
        print("the ranks launched %d and %d NCCL kernels" % (len(kw), len(ks)))
        return 1
    waited = sum((e0 - a0) - (e1 - a1) for (a0, e0), (a1, e1) in zip(kw, ks)
                 if w["start_ns"] <= a0 < w["end_ns"])
    rows, finding = waited / steps, f["time_ns"] / steps
    print("rank %d waited for rank %d %.3f ms per step by its NCCL kernels' rows, %.3f ms by the finding"
          % (waiter, straggler, rows / 1e6, finding / 1e6))
    return 0 if rows > 0 and abs(finding - rows) <= tolerance * rows else 1


if __name__ == "__main__":
    sys.exit(main())
