"""python_check.py CAPTURE - what a capture made with --pytorch=modules,
--python-sampling and --python-backtrace=cuda holds, checked against the
capture's own rows: module ranges by kind, samples and their stacks, and
the share of CUDA launches whose Python stack was taken, the native frames
under the Python ones. Prints one line of
facts and a few top rows; exits 1 when a kind asked for is missing."""
import sqlite3
import sys


def main(path, native_expected):
    db = sqlite3.connect(path)
    q = lambda sql, *a: db.execute(sql, a).fetchall()
    ok = True
    dom = q("SELECT id FROM StringIds WHERE value = 'perfkit.pytorch'")
    dom = dom[0][0] if dom else -1
    cats = dict(q("SELECT category, count(*) FROM NVTX_EVENTS WHERE domainId = ? AND eventType IN (59, 60) GROUP BY category", dom))
    samples = q("SELECT count(*), count(DISTINCT globalTid), count(DISTINCT stackId), sum(state = 1), sum(state = 2) FROM PERFKIT_PYTHON_SAMPLES")[0]
    frames = q("SELECT count(*), max(depth) FROM PERFKIT_PYTHON_FRAMES")[0]
    calls = q("SELECT count(*) FROM PERFKIT_PYTHON_CUDA_CALLS")[0][0]
    launches = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'")[0][0]
    launch_stacks = q("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId JOIN PERFKIT_PYTHON_CUDA_CALLS c ON c.globalTid = r.globalTid AND c.correlationId = r.correlationId WHERE s.value LIKE 'cudaLaunchKernel%'")[0][0]
    hz = q("SELECT value FROM PERFKIT_META WHERE key = 'python_sampling_hz'")
    print("%s: modules fwd %d bwd %d opt %d | samples %d threads %d stacks %d in_cuda %s without_gil %s | frames %d maxdepth %s | cuda_calls %d launches %d with_stack %d | hz %s" % (
        path, cats.get(1, 0), cats.get(2, 0), cats.get(3, 0), samples[0], samples[1], samples[2], samples[3], samples[4],
        frames[0], frames[1], calls, launches, launch_stacks, hz[0][0] if hz else None))
    print("  top module ranges (name, category, calls, ms):")
    for row in q("""SELECT coalesce(s.value, e.text), e.category, count(*), round(sum(e.end - e.start) / 1e6, 3)
                    FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId
                    WHERE e.domainId = ? AND e.eventType IN (59, 60)
                    GROUP BY 1, 2 ORDER BY 4 DESC LIMIT 8""", dom):
        print("   ", row)
    print("  top innermost lines (file:line function, samples, without the GIL):")
    for row in q("""SELECT fs.value || ':' || f.line || ' ' || fn.value, count(*), sum(p.state = 2) FROM PERFKIT_PYTHON_SAMPLES p
                    JOIN PERFKIT_PYTHON_FRAMES f ON f.globalPid = p.globalPid AND f.stackId = p.stackId AND f.depth = 0
                    JOIN StringIds fs ON fs.id = f.fileId JOIN StringIds fn ON fn.id = f.functionId
                    GROUP BY 1 ORDER BY 2 DESC LIMIT 8"""):
        print("   ", row)
    # native frames (kind 1): the C code under the innermost Python frame
    native = q("""SELECT count(DISTINCT p.rowid), count(DISTINCT f.fileId) FROM PERFKIT_PYTHON_SAMPLES p
                  JOIN PERFKIT_PYTHON_FRAMES f ON f.globalPid = p.globalPid AND f.stackId = p.stackId
                  WHERE f.kind = 1""")[0]
    print("  native: %d of %d samples have native frames, %d libraries; innermost libraries (samples):" % (
        native[0], samples[0], native[1]))
    for row in q("""SELECT fs.value, count(*) FROM PERFKIT_PYTHON_SAMPLES p
                    JOIN PERFKIT_PYTHON_FRAMES f ON f.globalPid = p.globalPid AND f.stackId = p.stackId AND f.depth = 0
                    JOIN StringIds fs ON fs.id = f.fileId WHERE f.kind = 1 GROUP BY 1 ORDER BY 2 DESC LIMIT 6"""):
        print("   ", row)
    print("  the native frame nearest the Python one, by function (samples):")
    for row in q("""WITH o AS (SELECT globalPid, stackId, max(depth) AS d FROM PERFKIT_PYTHON_FRAMES WHERE kind = 1
                               GROUP BY 1, 2)
                    SELECT fn.value || ' [' || fs.value || ']', count(*) FROM PERFKIT_PYTHON_SAMPLES p
                    JOIN o ON o.globalPid = p.globalPid AND o.stackId = p.stackId
                    JOIN PERFKIT_PYTHON_FRAMES f ON f.globalPid = o.globalPid AND f.stackId = o.stackId AND f.depth = o.d
                    JOIN StringIds fs ON fs.id = f.fileId JOIN StringIds fn ON fn.id = f.functionId
                    GROUP BY 1 ORDER BY 2 DESC LIMIT 6"""):
        print("   ", row)
    if samples[0] == 0 or frames[0] == 0 or (native_expected and native[0] == 0):
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    # --no-native: a capture made with --python-native-frames=off
    sys.exit(main(sys.argv[1], "--no-native" not in sys.argv[2:]))
