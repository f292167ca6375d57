# capture_zero.py - the capture's start computed with SQL from the capture itself,
# for test_times_count_from_capture_start.sh: every output must count from
# it. A perfkit capture starts at its run's start (PERFKIT_META start_ns)
# unless a record is earlier; an nsys export (no PERFKIT_META) at its
# session's start, which its times count from (0); a job of several files at the earliest of its
# captures' starts (captures of one host are not moved). A record is a row
# of the GPU work, the API calls or NVTX with a start above 0 and a sound
# span, an NVTX domain's creation (eventType 75) left out.
import sqlite3

GPU = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
API = ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER")


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def real_rows(db, table):
    """(start, end) of table's rows with a real time."""
    if table not in tables(db):
        return []
    where = "start > 0 AND (end IS NULL OR end >= start)"
    if table == "NVTX_EVENTS":
        where += " AND eventType != 75"
    else:
        where += " AND end IS NOT NULL"
    return db.execute("SELECT start, coalesce(end, start) FROM %s WHERE %s" % (table, where)).fetchall()


def extent(db):
    """The first record's start and the last one's end; 0, 0 without any."""
    rows = [r for t in GPU + API + ("NVTX_EVENTS",) for r in real_rows(db, t)]
    return (min(r[0] for r in rows), max(r[1] for r in rows)) if rows else (0, 0)


def session_utc(db):
    if "TARGET_INFO_SESSION_START_TIME" not in tables(db):
        return None
    r = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()
    return r[0] if r else None


def zero(path):
    """(zero on the capture's clock, the zero as a UTC time)."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    first, _ = extent(db)
    r = None
    if "PERFKIT_META" in tables(db):
        r = db.execute("SELECT value FROM PERFKIT_META WHERE key = 'start_ns'").fetchone()
    if r:
        start = int(r[0])
        return (start, start) if 0 < start and (start <= first or not first) else (first, first)
    utc = session_utc(db)
    if utc is not None:
        assert first < utc, "an nsys export whose times count from its session"
        return 0, utc
    return first, first


def job_zero(paths):
    return min(zero(p) for p in paths)


def gpu_rows(paths):
    """(start, end) of every sound GPU row of the captures."""
    out = []
    for p in paths:
        db = sqlite3.connect("file:%s?mode=ro" % p, uri=True)
        for t in GPU:
            out += real_rows(db, t)
    return out


def last_end(paths):
    return max(extent(sqlite3.connect("file:%s?mode=ro" % p, uri=True))[1] for p in paths)
