"""What a windowed capture holds, one line of key=value for windows.sh:
the windows (opened/closed by, length), the steps whose kernels it holds
(window_steps: step i runs on a grid of i blocks), the NVTX "step" ranges,
and the kernels that lie outside every window."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])


def has(table):
    return db.execute("SELECT 1 FROM sqlite_master WHERE name=?", (table,)).fetchone()


wins = []
if has("PERFKIT_CAPTURE_WINDOWS"):
    wins = db.execute(
        "SELECT start, end, openedBy, closedBy FROM PERFKIT_CAPTURE_WINDOWS ORDER BY start"
    ).fetchall()
kernels = []
if has("CUPTI_ACTIVITY_KIND_KERNEL"):
    kernels = db.execute(
        "SELECT start, end, gridX, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.shortName"
    ).fetchall()
steps = sorted({g for _, _, g, name in kernels if "step_kernel" in name})
api = db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] if has(
    "CUPTI_ACTIVITY_KIND_RUNTIME") else 0
last = max([k[1] for k in kernels] or [0])
# the "step" ranges that overlap a window (all of them without windows)
nvtx = 0
if has("NVTX_EVENTS"):
    ranges = db.execute(
        "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
        "WHERE (e.text = 'step' OR s.value = 'step') AND e.end IS NOT NULL"
    ).fetchall()
    nvtx = sum(
        1
        for s, e in ranges
        if not wins or any(e >= w[0] and s <= (w[1] if w[1] is not None else last) for w in wins)
    )
outside = sum(
    1
    for s, e, _, _ in kernels
    if not any(s >= w[0] and s <= (w[1] if w[1] is not None else last) for w in wins)
)
print(
    "windows=%d opened=%s closed=%s lengths_ms=%s kernels=%d steps=%s nvtx_steps=%d outside=%d api=%d"
    % (
        len(wins),
        "|".join(w[2] or "" for w in wins).replace(" ", "_"),
        "|".join(w[3] or "-" for w in wins).replace(" ", "_"),
        ",".join("%.1f" % (((w[1] or last) - w[0]) / 1e6) for w in wins),
        len(kernels),
        ",".join(map(str, steps)) if len(steps) < 40 else "%d..%d(%d)" % (steps[0], steps[-1], len(steps)),
        nvtx,
        outside,
        api,
    )
)
