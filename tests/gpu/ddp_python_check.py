"""ddp_python_check.py MODE CAPTURE... - what the captures of a 2-rank
torchrun job hold, per rank process (a process that ran kernels), for
tests/gpu/ddp_python.sh. Prints PASS/FAIL lines and a summary line last.

  modules CAPTURE...   --pytorch=modules --python-sampling: each rank has
                       forward and backward module ranges in perfkit's
                       domain, named by their place under DDP's root, and
                       Python samples of its own threads
  window SKIP COUNT CAPTURE...
                       --capture-range=nvtx:train_step,skip=SKIP,count=COUNT:
                       each rank has one window, no kernel outside it, and
                       the window holds train_step ranges SKIP+1..SKIP+COUNT
                       of that rank (the same steps on every rank)"""
import sqlite3
import sys

fails = 0


def say(ok, what):
    global fails
    fails += 0 if ok else 1
    print("%s %s" % ("PASS" if ok else "FAIL", what))


def ranks(db):
    """The processes that launched kernels: the ranks (torchrun's own
    process launches none)."""
    return [p for (p,) in db.execute(
        "SELECT DISTINCT globalTid >> 24 << 24 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%' ORDER BY 1")]


def modules(paths):
    pids = 0
    for path in paths:
        db = sqlite3.connect(path)
        for pid in ranks(db):
            # a domain's id is its process's own: its creation row names it
            dom = db.execute(
                "SELECT d.domainId FROM NVTX_EVENTS d LEFT JOIN StringIds s ON s.id = d.textId "
                "WHERE d.eventType = 75 AND coalesce(s.value, d.text) = 'perfkit.pytorch' "
                "AND d.globalTid >> 24 << 24 = ?", (pid,)).fetchone()
            dom = dom[0] if dom else -1
            pids += 1
            cats = dict(db.execute(
                "SELECT category, count(*) FROM NVTX_EVENTS WHERE domainId = ? AND eventType IN (59, 60) "
                "AND globalTid >> 24 << 24 = ? GROUP BY category", (dom, pid)).fetchall())
            names = [n for (n,) in db.execute(
                "SELECT DISTINCT coalesce(s.value, e.text) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
                "WHERE e.domainId = ? AND e.globalTid >> 24 << 24 = ?", (dom, pid))]
            samples = db.execute("SELECT count(*), count(DISTINCT stackId) FROM PERFKIT_PYTHON_SAMPLES WHERE globalPid = ?",
                                 (pid,)).fetchone()
            tag = "%s pid %d" % (path.split("/")[-1], pid >> 24)
            say(cats.get(1, 0) > 0 and cats.get(2, 0) > 0,
                "%s: module ranges fwd %d bwd %d opt %d" % (tag, cats.get(1, 0), cats.get(2, 0), cats.get(3, 0)))
            say(any(n.startswith("module.0 (Linear)") for n in names)
                and any("(DistributedDataParallel)" in n for n in names),
                "%s: named under DDP's root: %s" % (tag, ", ".join(sorted(names)[:4])))
            say(samples[0] > 0, "%s: %d Python samples, %d stacks" % (tag, samples[0], samples[1]))
    say(pids == 2, "%d rank processes with kernels" % pids)


def window(skip, count, paths):
    pids, firsts = 0, set()
    for path in paths:
        db = sqlite3.connect(path)
        for pid in ranks(db):
            pids += 1
            tag = "%s pid %d" % (path.split("/")[-1], pid >> 24)
            wins = db.execute("SELECT start, end, openedBy, closedBy FROM PERFKIT_CAPTURE_WINDOWS "
                              "WHERE globalPid = ? ORDER BY start", (pid,)).fetchall()
            steps = db.execute(
                "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
                "WHERE coalesce(s.value, e.text) = 'train_step' AND e.globalTid >> 24 << 24 = ? "
                "AND e.eventType = 59 ORDER BY e.start", (pid,)).fetchall()
            say(len(wins) == 1, "%s: %d windows %s" % (tag, len(wins), [w[2:] for w in wins]))
            if not wins:
                continue
            ws, we = wins[0][0], wins[0][1]
            # the window opens in the push of its first range, just after
            # that range's start: the ranges it holds are those it overlaps
            inside = [i + 1 for i, (s, e) in enumerate(steps) if e is not None and e > ws and s < we]
            say(inside == list(range(skip + 1, skip + count + 1)),
                "%s: train_step ranges inside the window: %s of %d" % (tag, inside, len(steps)))
            firsts.add(inside[0] if inside else None)
            out = db.execute(
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                "USING (correlationId) WHERE r.globalTid >> 24 << 24 = ? AND k.globalPid = ? "
                "AND (r.start < ? OR r.start > ?)", (pid, pid, ws, we)).fetchone()[0]
            total = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = ?",
                               (pid,)).fetchone()[0]
            say(total > 0 and out == 0, "%s: %d kernels, %d launched outside the window" % (tag, total, out))
    say(pids == 2 and len(firsts) == 1, "%d rank processes; first step in window %s" % (pids, sorted(firsts, key=str)))


if __name__ == "__main__":
    if sys.argv[1] == "modules":
        modules(sys.argv[2:])
    else:
        window(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    print("%s: %d failed" % ("PASS" if not fails else "FAIL", fails))
    sys.exit(1 if fails else 0)
