"""check_capture.py - checks a capture made by `perfkit run` against what the
test program (gpu_work.cu, torch_train.py) knows it did.

    python3 check_capture.py CAPTURE CHECK [ARGS...]

Prints one line per assertion, "PASS <name> <detail>" or "FAIL <name> <detail>",
and exits 1 if any failed. Expected numbers come from the program's
arguments, never from the capture."""
import os
import re
import sqlite3
import sys

MIB = 1 << 20
PAGEABLE, PINNED, DEVICE = 0, 1, 2
HTOD, DTOH = 1, 2
PUSHPOP, STARTEND, MARK = 59, 60, 34

failed = 0


def report(name, ok, detail):
    global failed
    print("%s %s %s" % ("PASS" if ok else "FAIL", name, detail))
    if not ok:
        failed += 1


def eq(name, got, want):
    report(name, got == want, "got %r want %r" % (got, want))


def has_table(db, table):
    return db.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('table','view') "
                      "AND name = ?", (table,)).fetchone()[0] > 0


def scalar(db, sql, args=(), table=None):
    if table and not has_table(db, table):
        return 0
    return db.execute(sql, args).fetchone()[0]


def meta(db, key):
    row = db.execute("SELECT value FROM PERFKIT_META WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def counter(db, name):
    if not has_table(db, "PERFKIT_COUNTERS"):
        return 0
    row = db.execute("SELECT value FROM PERFKIT_COUNTERS WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def selected_prefixes():
    """The name prefixes of the API calls `--trace=api` records, read from
    libprof's own list (prof/api_select.h) so the check and the collector
    cannot drift apart."""
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "..", "libprof", "include", "prof", "api_select.h")).read()
    body = text[text.index("prof_api_select_prefixes[]"):]
    body = body[:body.index("};")]
    return re.findall(r'"([^"]+)"', body)


def selected(name, prefixes):
    """prof_api_select__wanted in Python: a prefix up to a word boundary."""
    for p in prefixes:
        if name.startswith(p):
            rest = name[len(p):]
            if not rest or rest[0] == "_" or rest[0].isupper() or rest[0].isdigit():
                return True
    return False


def api_names(db, table):
    if not has_table(db, table):
        return []
    return [r[0] for r in db.execute("SELECT s.value FROM %s a JOIN StringIds s ON s.id = a.nameId"
                                     % table)]


def kernels_named(db, short):
    return scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                  "ON s.id = k.shortName WHERE s.value = ?", (short,),
                  table="CUPTI_ACTIVITY_KIND_KERNEL")


def check_work(db, n, k):
    n, k = int(n), int(k)
    eq("kernels", kernels_named(db, "tick_kernel"), 4 * n)
    eq("kernel_names", db.execute(
        "SELECT d.value, s.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds d ON d.id = k.demangledName JOIN StringIds s ON s.id = k.shortName "
        "JOIN StringIds m ON m.id = k.mangledName LIMIT 1").fetchone(),
        ("tick_kernel(int*, int)", "tick_kernel", "_Z11tick_kernelPii"))
    eq("kernel_streams", scalar(db, "SELECT count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'tick_kernel' "
                                "AND k.gridX = 1 AND k.blockX = 32"), 4)
    eq("launch_threads", scalar(
        db, "SELECT count(DISTINCT r.globalTid) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'tick_kernel'"), 2)
    copies = db.execute("SELECT copyKind, srcKind, dstKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                        "ORDER BY start").fetchall()
    eq("copies", copies, [(HTOD, PAGEABLE, DEVICE, 3 * MIB), (HTOD, PINNED, DEVICE, 5 * MIB),
                          (DTOH, DEVICE, PINNED, 1 * MIB)])
    eq("memsets", db.execute("SELECT value, bytes, memKind FROM CUPTI_ACTIVITY_KIND_MEMSET "
                             "ORDER BY start").fetchall(),
       [(0, 5 * MIB, DEVICE), (7, 1 * MIB, DEVICE)])
    sizes = tuple(MIB + i * 4096 for i in range(k))
    marks = ",".join("?" * len(sizes))
    eq("allocations", scalar(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                             "memoryOperationType = 0 AND memKind = 2 AND bytes IN (%s)" % marks,
                             sizes), k)
    eq("frees", scalar(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS f WHERE "
                       "memoryOperationType = 1 AND bytes IN (%s) AND EXISTS (SELECT 1 FROM "
                       "CUDA_GPU_MEMORY_USAGE_EVENTS a WHERE a.memoryOperationType = 0 AND "
                       "a.address = f.address AND a.start <= f.start)" % marks, sizes), k)
    eq("pinned_allocation", scalar(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE "
                                   "memoryOperationType = 0 AND memKind = 1 AND bytes = ?",
                                   (5 * MIB,)), 1)
    ranges = db.execute("SELECT coalesce(s.value, n.text), n.eventType, n.start, n.end "
                        "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                        "WHERE n.eventType IN (34, 59, 60) ORDER BY n.start").fetchall()
    eq("nvtx_rows", [(r[0], r[1]) for r in ranges],
       [("outer", PUSHPOP), ("copies", PUSHPOP), ("allocs", STARTEND), ("done", MARK)])
    if len(ranges) == 4:
        outer, copies_r, allocs, done = ranges
        report("nvtx_nesting", outer[2] <= copies_r[2] and copies_r[3] <= allocs[2]
               and allocs[3] <= done[2] and done[3] is None and done[2] <= outer[3],
               "outer %s copies %s allocs %s done %s" % (outer[2:], copies_r[2:], allocs[2:], done[2:]))
    gpu = db.execute("SELECT name, smCount, computeMajor, totalMemory FROM TARGET_INFO_GPU").fetchall()
    report("gpu_info", len(gpu) >= 1 and gpu[0][1] > 0 and gpu[0][2] >= 7 and gpu[0][3] > 0, repr(gpu))
    report("runtime_api", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                                 "ON s.id = r.nameId WHERE s.value LIKE 'cudaMemcpy%'") == 3,
           "cudaMemcpy* calls (want 3)")
    # The default records only the calls a report or rule reads: none of
    # the device queries and error checks, none of the driver calls CUDA's
    # runtime makes for the program (this program makes none itself).
    prefixes = selected_prefixes()
    others = sorted({n for t in ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER")
                     for n in api_names(db, t) if not selected(n, prefixes)})
    eq("api_selected_only", others, [])
    report("sync_rows", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE "
                               "syncType = 3 AND globalTid & 16777215 != 0",
                               table="CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") >= 4,
           "stream syncs with a thread (want >= 4)")
    eq("dropped_records", counter(db, "dropped_records"), 0)
    eq("exit_status_meta", meta(db, "exit_status"), "0")
    report("run_meta", all(meta(db, key) for key in ("command", "host", "gpu", "start_ns",
                                                        "duration_ns", "perfkit_version")),
           repr([meta(db, key) for key in ("command", "gpu", "duration_ns", "perfkit_version")]))


def check_crash(db, m, status):
    eq("kernels", kernels_named(db, "tick_kernel"), int(m))
    eq("exit_status_meta", meta(db, "exit_status"), status)


def check_running(db, m, status):
    """SIGTERM while spin_kernel runs: the ticks and the exit status are kept,
    and the spinning kernel is either stored with a real duration or counted
    as incomplete, never stored with a zero or missing end."""
    check_crash(db, m, status)
    stored = scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                    "WHERE s.value = 'spin_kernel' AND k.end > k.start", table="CUPTI_ACTIVITY_KIND_KERNEL")
    incomplete = scalar(db, "SELECT coalesce(sum(value), 0) FROM PERFKIT_COUNTERS WHERE name = 'incomplete_kernels'",
                        table="PERFKIT_COUNTERS")
    eq("spin_kernel_stored_or_counted", stored + incomplete, 1)
    eq("no_zero_length_kernels", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end <= start",
                                        table="CUPTI_ACTIVITY_KIND_KERNEL"), 0)
    report("incomplete_reported", True, "spin_kernel stored %d, counted incomplete %d" % (stored, incomplete))


def check_kernels(db, m):
    eq("kernels", kernels_named(db, "tick_kernel"), int(m))


def check_clean(db, steps):
    eq("kernels", kernels_named(db, "fma_kernel"), int(steps))
    eq("pinned_copies", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE "
                               "(copyKind = 1 AND srcKind = 1) OR (copyKind = 2 AND dstKind = 1)",
                               table="CUPTI_ACTIVITY_KIND_MEMCPY"), 2 * int(steps))
    eq("step_ranges", scalar(db, "SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                             "WHERE coalesce(s.value, n.text) = 'step'", table="NVTX_EVENTS"), int(steps))


def check_peer(db, n):
    per_device = db.execute("SELECT k.deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                            "ON s.id = k.shortName WHERE s.value = 'tick_kernel' GROUP BY k.deviceId "
                            "ORDER BY k.deviceId").fetchall()
    eq("kernels_per_device", [row[1] for row in per_device], [int(n), int(n)])
    eq("peer_copy", db.execute("SELECT copyKind, srcDeviceId != dstDeviceId, bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                               "WHERE copyKind = 10").fetchall(), [(10, 1, 1 << 20)])
    report("gpu_info", scalar(db, "SELECT count(*) FROM TARGET_INFO_GPU", table="TARGET_INFO_GPU") >= 2,
           "TARGET_INFO_GPU rows for both GPUs")


def check_fork(db, p, c):
    per_pid = db.execute("SELECT globalPid, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY globalPid "
                         "ORDER BY min(start)").fetchall()
    eq("kernels_per_process", [row[1] for row in per_pid], [int(p), int(c)])
    pids = set(row[0] >> 24 for row in per_pid)
    procs = set(row[0] for row in db.execute("SELECT pid FROM PROCESSES"))
    report("processes", pids <= procs and len(procs) >= 2, "kernel pids %s PROCESSES %s" % (pids, procs))


def launched_through(db, table, name_like):
    return scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN %s a "
                  "ON a.correlationId = k.correlationId JOIN StringIds s ON s.id = a.nameId "
                  "WHERE s.value LIKE ?" % table, (name_like,), table=table)


def check_driver(db, n, trace="default"):
    """gpu_work driver N: N launches through cuLaunchKernel, N through the
    runtime. The program's own driver calls are kept under every trace;
    under the default only selected calls are, under api-all every call."""
    n = int(n)
    eq("kernels", kernels_named(db, "tick_kernel"), 2 * n)
    eq("driver_launches", launched_through(db, "CUPTI_ACTIVITY_KIND_DRIVER", "cuLaunchKernel%"), n)
    eq("runtime_launches", launched_through(db, "CUPTI_ACTIVITY_KIND_RUNTIME", "%cudaLaunchKernel%"), n)
    prefixes = selected_prefixes()
    names = api_names(db, "CUPTI_ACTIVITY_KIND_RUNTIME") + api_names(db, "CUPTI_ACTIVITY_KIND_DRIVER")
    others = sorted({x for x in names if not selected(x, prefixes)})
    if trace == "api-all":
        report("api_all_records_more", len(others) > 0, "calls outside the selection: %s" % others[:8])
    else:
        eq("api_selected_only", others, [])


def check_trace_cuda(db, n):
    eq("kernels", kernels_named(db, "tick_kernel"), 4 * int(n))
    eq("runtime_rows", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
                              table="CUPTI_ACTIVITY_KIND_RUNTIME"), 0)
    eq("nvtx_rows", scalar(db, "SELECT count(*) FROM NVTX_EVENTS", table="NVTX_EVENTS"), 0)
    eq("memory_rows", scalar(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS",
                             table="CUDA_GPU_MEMORY_USAGE_EVENTS"), 0)


def check_torch(db, profiler_kernels, ranges):
    got = scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", table="CUPTI_ACTIVITY_KIND_KERNEL")
    want = int(profiler_kernels)
    report("torch_kernels_vs_profiler", want > 0 and abs(got - want) <= max(2, want // 100),
           "perfkit %d torch.profiler %d" % (got, want))
    nvtx = scalar(db, "SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                  "WHERE coalesce(s.value, n.text) = 'train_step'", table="NVTX_EVENTS")
    eq("torch_nvtx_ranges", nvtx, int(ranges))


def check_empty(db):
    eq("kernels", scalar(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                         table="CUPTI_ACTIVITY_KIND_KERNEL"), 0)
    report("process_row", scalar(db, "SELECT count(*) FROM PROCESSES", table="PROCESSES") >= 1, "PROCESSES")


def check_streams(db, count, n):
    eq("kernels", kernels_named(db, "tick_kernel"), int(count) * int(n))
    eq("streams", scalar(db, "SELECT count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                         table="CUPTI_ACTIVITY_KIND_KERNEL"), int(count))


def check_contexts(db, count, n):
    per_ctx = db.execute("SELECT contextId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY contextId "
                         "ORDER BY min(start)").fetchall()
    eq("kernels_per_context", [row[1] for row in per_ctx], [int(n)] * int(count))


def check_procs(db, count, n):
    per_pid = db.execute("SELECT globalPid, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY globalPid").fetchall()
    eq("processes_with_kernels", len(per_pid), int(count))
    eq("kernels_per_process", sorted(set(row[1] for row in per_pid)), [int(n)])


def check_partial(db, at_most):
    """A capture cut short by a fault: readable, fewer kernels than the
    program launched (never more), and it says it is incomplete."""
    got = kernels_named(db, "tick_kernel")
    report("kernels_at_most", 0 <= got <= int(at_most), "got %d of at most %s" % (got, at_most))
    said = [k for k in ("recovered", "incomplete", "write_error") if meta(db, k)]
    said += [c for c in ("dropped_records", "write_errors", "rows_not_written") if counter(db, c)]
    report("says_incomplete", got == int(at_most) or bool(said), "markers %s" % said)


def check_job(db, rank, world, local, launcher):
    """What the process recorded of its place in a job: its rank from the
    environment the test gave it, its host, the GPUs it saw by UUID (the
    same as TARGET_INFO_GPU's) and a clock pair at start and end whose
    clocks agree to a millisecond (CUPTI's timestamps are realtime-based)."""
    row = db.execute("SELECT rank, worldSize, localRank, launcher, host FROM PERFKIT_PROCESS_INFO "
                     "WHERE globalPid IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)").fetchone()
    eq("job_rank", row[:4] if row else None, (int(rank), int(world), int(local), launcher))
    report("job_host", bool(row and row[4]), "host %r" % (row[4] if row else None))
    pairs = db.execute("SELECT at, realtimeNs - timestampNs FROM PERFKIT_CLOCKS ORDER BY at").fetchall()
    report("clock_pairs", sorted(p[0] for p in pairs) == ["end", "start"] and
           all(abs(p[1]) < 1000000 for p in pairs), "pairs %r" % pairs)
    eq("gpu_uuids", scalar(db, "SELECT count(*) FROM PERFKIT_PROCESS_GPUS p JOIN TARGET_INFO_GPU g "
                               "ON g.id = p.deviceId AND g.uuid = p.uuid"),
       scalar(db, "SELECT count(*) FROM TARGET_INFO_GPU"))


def check_gpu_metrics(db, m, status):
    """A program that ended its own way (exit status, signal) under
    --gpu-metrics: its kernels and status kept as without, and the samples
    of its run stored, SMs Active among them."""
    check_crash(db, m, status)
    n = scalar(db, "SELECT count(*) FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS t USING (typeId, metricId) "
                   "WHERE t.metricName = 'SMs Active [Throughput %]'", table="GPU_METRICS")
    report("gpu_metric_samples", n > 0, "%d SMs Active samples" % n)


def check_fault(db, before, at_least):
    """A context that failed at launch `before`+1: the launches before it
    synchronised and each got a flush, so `at_least` of them keep their GPU
    times; what has none is counted, none stored without times; the first
    failing call's error is in the API table."""
    kept = kernels_named(db, "tick_kernel")
    report("kernels_kept", int(at_least) <= kept <= int(before), "got %d of %s (at least %s)" % (kept, before, at_least))
    untimed = counter(db, "incomplete_kernels")
    report("untimed_counted", kept + untimed >= int(before), "stored %d, counted without times %d" % (kept, untimed))
    zero = 0
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        zero += scalar(db, "SELECT count(*) FROM %s WHERE start = 0 OR end < start" % t, table=t) or 0
    eq("no_rows_without_times", zero, 0)
    eq("first_error", scalar(db, "SELECT returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE returnValue IN "
                                 "(700, 719) ORDER BY start LIMIT 1", table="CUPTI_ACTIVITY_KIND_RUNTIME"), 700)


CHECKS = {"fault": check_fault, "work": check_work, "job": check_job, "gpu_metrics": check_gpu_metrics, "crash": check_crash, "kernels": check_kernels, "fork": check_fork,
          "trace_cuda": check_trace_cuda, "torch": check_torch, "empty": check_empty,
          "clean": check_clean, "peer": check_peer, "driver": check_driver,
          "running": check_running, "streams": check_streams, "contexts": check_contexts,
          "procs": check_procs, "partial": check_partial}


def main():
    path, check = sys.argv[1], sys.argv[2]
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        report("open", False, "%s: %s" % (path, e))
        return 1
    try:
        CHECKS[check](db, *sys.argv[3:])
    except sqlite3.Error as e:
        report(check, False, "SQL error: %s" % e)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
