"""ddp_check.py - what a capture of tests/gpu/ddp_train.py holds, per rank,
for tests/gpu/ddp_job.sh: one line per rank, then PASS/FAIL lines.

    ddp_check.py DB [PROFILE_DIR] [--ranks N] [--gpu-time]

Per rank (PERFKIT_PROCESS_INFO): the kernels launched inside the "train"
NVTX range (by the start of the API call that launched them, any thread of
the process), their GPU time, the NCCL kernels, NVTX events with an
extended payload and payload schemas. With PROFILE_DIR (torch.profiler's
rank<R>.json of the same program), the kernel counts must be equal; with
--gpu-time each rank's GPU time of its kernels but NCCL's must also be
within 5% of torch.profiler's (for runs whose kernels never share a GPU
with a spinning NCCL kernel, ddp_train.py --no-overlap: otherwise how much
that slows them differs run to run, and the figures are printed only).
--ranks N: the ranks the capture must hold (default 2; 1 for one rank's
file)."""
import json
import os
import sqlite3
import sys

argv = sys.argv[1:]
gpu_time = "--gpu-time" in argv
want_ranks = 2
if "--ranks" in argv:
    want_ranks = int(argv[argv.index("--ranks") + 1])
    del argv[argv.index("--ranks"):argv.index("--ranks") + 2]
argv = [a for a in argv if a != "--gpu-time"]
db = sqlite3.connect(argv[0])
prof_dir = argv[1] if len(argv) > 1 else None
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def one(sql, *a):
    r = db.execute(sql, a).fetchone()
    return r[0] if r else None


ranks = list(db.execute("SELECT globalPid, rank, worldSize, localRank, host, launcher FROM PERFKIT_PROCESS_INFO"
                        " ORDER BY rank IS NULL, rank")) if "PERFKIT_PROCESS_INFO" in tables else []
ok = True
lines = []
print("%-6s %-10s %8s %14s %6s %8s" % ("rank", "pid", "kernels", "gpu_ns", "nccl", "payloads"))
for gpid, rank, world, local, host, launcher in ranks:
    pid = gpid >> 24
    rng = db.execute(
        "SELECT n.start, n.\"end\" FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
        " WHERE s.value = 'train' AND n.globalTid >> 24 = ? AND n.\"end\" IS NOT NULL", (pid,)).fetchone()
    if rank is None:
        lines.append("INFO  process %d (%s): not a rank" % (pid, launcher))
        continue
    if not rng:
        lines.append("FAIL  rank %s: no 'train' range" % rank)
        ok = False
        continue
    k = db.execute(
        "SELECT count(*), sum(k.\"end\" - k.start), sum(s.value LIKE '%nccl%') FROM CUPTI_ACTIVITY_KIND_KERNEL k"
        " JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName)"
        " WHERE k.globalPid = ? AND EXISTS (SELECT 1 FROM (SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        "  UNION ALL SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER) a"
        "  WHERE a.correlationId = k.correlationId AND a.globalTid >> 24 = ? AND a.start BETWEEN ? AND ?)",
        (gpid, pid, rng[0], rng[1])).fetchone()
    payloads = one("SELECT count(*) FROM NVTX_EVENTS WHERE binaryData IS NOT NULL AND globalTid >> 24 = ?", pid) \
        if "binaryData" in [c[1] for c in db.execute("PRAGMA table_info(NVTX_EVENTS)")] else 0
    print("%-6s %-10d %8d %14d %6d %8d" % (rank, pid, k[0], k[1] or 0, k[2] or 0, payloads))
    if prof_dir:
        path = os.path.join(prof_dir, "rank%d.json" % rank)
        if os.path.exists(path):
            p = json.load(open(path))
            same = p["kernels"] == k[0]
            lines.append("%s  rank %s kernels %d = torch.profiler %d; gpu %.3f ms vs %.3f ms" % (
                "PASS" if same else "FAIL", rank, k[0], p["kernels"], (k[1] or 0) / 1e6, p["gpu_ns"] / 1e6))
            ok &= same
            if "compute_gpu_ns" in p:
                mine = one("SELECT sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
                           " ON s.id = coalesce(k.demangledName, k.shortName) WHERE k.globalPid = ?"
                           " AND s.value NOT LIKE '%nccl%' AND k.start BETWEEN ? AND ?", gpid, rng[0], rng[1]) or 0
                near = abs(mine - p["compute_gpu_ns"]) <= 0.05 * p["compute_gpu_ns"]
                verdict = ("PASS" if near else "FAIL") if gpu_time else "INFO"
                lines.append("%s  rank %s GPU time of its kernels but NCCL's %.3f ms vs torch.profiler %.3f ms"
                             " (%+.1f%%%s)" % (verdict, rank, mine / 1e6, p["compute_gpu_ns"] / 1e6,
                                              100.0 * (mine - p["compute_gpu_ns"]) / p["compute_gpu_ns"],
                                              ", within 5%" if gpu_time else ", another run"))
                ok &= near or not gpu_time
    if not payloads:
        lines.append("FAIL  rank %s: no NVTX extended payloads" % rank)
        ok = False
schemas = one("SELECT count(*) FROM NVTX_PAYLOAD_SCHEMAS") if "NVTX_PAYLOAD_SCHEMAS" in tables else 0
entries = list(db.execute("SELECT DISTINCT name FROM NVTX_PAYLOAD_SCHEMA_ENTRIES")) if schemas else []
lines.append("INFO  %d payload schemas; entry names: %s" % (schemas, ", ".join(sorted(str(e[0]) for e in entries))))
nranks = sum(1 for r in ranks if r[1] is not None)
lines.append("%s  %d ranks of world size %s (want %d)" % ("PASS" if nranks == want_ranks else "FAIL", nranks,
                                                           ranks[0][2] if ranks else "?", want_ranks))
ok &= nranks == want_ranks
for line in lines:
    print(line)
print("PASS all" if ok else "FAIL some")
