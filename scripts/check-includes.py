#!/usr/bin/env python3
"""Checks that #include lines follow the module rules of docs/ARCHITECTURE.md.

  report/sink                      may use libprof only
  report/model                     may use sink (the read model: SQL, sums,
                   groups, the overview's parts, ranks, the time base, the loop)
  report/summary                   may use model, sink
  report/analysis/core             may use summary, model, sink
  report/analysis/kernel_metrics   may use analysis/core, summary, model, sink
  report/analysis/gpu_metrics      may use analysis/core, kernel_metrics, summary, model, sink
  report/analysis/ranks            may use analysis/core, summary, model, sink
  report/analysis/diagnose         may use analysis/core, ranks, summary, model, sink
  report/analysis/timeline         may use analysis/core, diagnose, summary, model, sink
  report/analysis/rules            may use every analysis/ folder above, summary, model, sink
  report/analysis (its own files: the face analysis.h and diagnose's
                   engine) may use every analysis/ folder, summary, model, sink
  report/registry                  may use summary, analysis/timeline, analysis/ranks,
                   analysis/gpu_metrics (the folders whose reports it lists), model, sink
  report/compare                   may use analysis/core, analysis/ranks, summary, model, sink
  report/export                    may use registry, summary, analysis, model, sink
  report/job                       may use registry, summary, analysis, model, sink
  other report/ folders reach report/summary through summary/summary.h
                   only (summary_impl.h is the folder's own), and report/model
                   through its headers but window_impl.h and rank_choice.h
  cli/, tui/, bench/, capture/, fuzz/ reach a report/ folder through its face
                   header only (report/X/X.h; sink/sink.h for sink), and
                   report/model through summary/summary.h
  collectors/      does not use capture/ or cli/ (the injection library
                   shares only libprof with the launcher)
  capture/         does not use cli/
  no file outside libprof/ includes <sqlite3.h>
  no "../" includes outside tests/ (a module is reached by its include path)
  no include circle in report/ or libprof/: a file and its header (and its
                   X_impl.h) are one module, and no module includes, through
                   others, one that includes it

Prints one line per broken rule and exits 1 when there is any.
Usage: check-includes.py [SOURCE_ROOT]"""
import os
import re
import sys

ANALYSIS_ALL = {"analysis/core", "analysis/kernel_metrics", "analysis/gpu_metrics",
                "analysis/ranks", "analysis/diagnose", "analysis/timeline", "analysis/rules"}
BELOW = {"model", "sink"}  # what every folder above the read model may use
REPORT_MAY_USE = {
    "sink": set(),
    "model": {"sink"},
    "summary": BELOW,
    "analysis/core": {"summary"} | BELOW,
    "analysis/kernel_metrics": {"analysis/core", "summary"} | BELOW,
    "analysis/gpu_metrics": {"analysis/core", "analysis/kernel_metrics", "summary"} | BELOW,
    "analysis/ranks": {"analysis/core", "summary"} | BELOW,
    "analysis/diagnose": {"analysis/core", "analysis/ranks", "summary"} | BELOW,
    "analysis/timeline": {"analysis/core", "analysis/diagnose", "summary"} | BELOW,
    "analysis/rules": (ANALYSIS_ALL - {"analysis/rules"}) | {"summary"} | BELOW,
    "analysis": ANALYSIS_ALL | {"summary"} | BELOW,
    "registry": {"summary", "analysis/timeline", "analysis/ranks", "analysis/gpu_metrics"} | BELOW,
    "compare": {"analysis/core", "analysis/ranks", "summary"} | BELOW,
    "export": {"registry", "summary", "analysis"} | BELOW,
    "job": {"registry", "summary", "analysis"} | BELOW,
}
FACE = {folder: f"{folder}/{folder}.h" for folder in REPORT_MAY_USE if "/" not in folder}
# The read model has no face of its own outside report/: summary's face
# lends what cli/ and tui/ need of it (a thread's label, --rank, --window).
FACE["model"] = "summary/summary.h"
# Folders whose internals stay inside: the headers they lend to the rest of report/.
LENT = {"summary": {"summary/summary.h"},
        "model": {"model/call_census.h", "model/call_pairs.h", "model/call_runs.h", "model/capture_windows.h", "model/context_failure.h", "model/groups.h", "model/id_bits.h", "model/id_map.h",
                  "model/job_time.h", "model/launch_ids.h", "model/memo.h", "model/names.h", "model/overview.h", "model/ranks.h",
                  "model/python_stacks.h", "model/rows.h", "model/sql.h", "model/string_cache.h", "model/sums.h",
                  "model/thread_label.h", "model/thread_ranges.h", "model/threads.h", "model/window.h"}}
FACE_USERS = ("cli", "tui", "bench", "capture", "fuzz")
# Folders a module may not include from. Their headers are included by bare
# name ("run_session.h") through each folder's include path, so an include is
# theirs when the name is a file there and not one beside the includer.
MAY_NOT_USE = {
    "collectors": ("capture", "cli"),
    "capture": ("cli",),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def sources(root):
    for top in sorted(os.listdir(root)):
        if top.startswith(".") or top.startswith("build"):
            continue
        path = os.path.join(root, top)
        if not os.path.isdir(path):
            continue
        for dirpath, dirnames, files in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu", ".cpp", ".cc")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def forbidden_owner(root, rel, name):
    """The folder of MAY_NOT_USE[rel's module] that the include reaches, or None."""
    own = rel.split(os.sep)[0]
    banned = MAY_NOT_USE.get(own, ())
    if not banned or os.path.exists(os.path.join(root, os.path.dirname(rel), name)):
        return None
    for folder in banned:
        if name.startswith(folder + "/") or os.path.isfile(os.path.join(root, folder, name)):
            return folder
    return None


def report_folder(parts):
    """The report/ folder of a file (parts of its path from the root)."""
    if parts[1] == "analysis" and len(parts) > 3:
        return "analysis/" + parts[2]
    return parts[1]


def target_folder(name):
    """The report/ folder an include by path names, or None."""
    parts = name.split("/")
    if len(parts) < 2:
        return None
    if parts[0] == "analysis" and len(parts) > 2:
        return "analysis/" + parts[1]
    return parts[0] if parts[0] in REPORT_MAY_USE else None


def may_use(own, target):
    allowed = REPORT_MAY_USE.get(own, set())
    # export/ and job/ use analysis/ as a whole, its subfolders included
    return target in allowed or (target.startswith("analysis/") and "analysis" in allowed)


def module_of(rel):
    """A file and its header are one module; so is its X_impl.h."""
    stem = rel.rsplit(".", 1)[0]
    return stem[: -len("_impl")] if stem.endswith("_impl") else stem


def include_circles(root):
    """Modules of report/ and libprof/ that include, through others, one
    that includes them: each circle once, as its modules in order."""
    files = [rel for rel in sources(root) if rel.split(os.sep)[0] in ("report", "libprof")]
    known = set(files)
    edges = {}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = INCLUDE.match(line)
                if not m or m.group(1) != '"':
                    continue
                name = m.group(2)
                here = os.path.normpath(os.path.join(os.path.dirname(rel), name))
                for cand in (here, os.path.join("report", name),
                             os.path.join("libprof", "include", name), os.path.join("libprof", "src", name)):
                    if cand in known:
                        a, b = module_of(rel), module_of(cand)
                        if a != b:
                            edges.setdefault(a, set()).add(b)
                        break
    index, low, stack, on, found = {}, {}, [], set(), []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(n):
        index[n] = low[n] = len(index)
        stack.append(n)
        on.add(n)
        for m in sorted(edges.get(n, ())):
            if m not in index:
                visit(m)
                low[n] = min(low[n], low[m])
            elif m in on:
                low[n] = min(low[n], index[m])
        if low[n] == index[n]:
            scc = []
            while True:
                m = stack.pop()
                on.discard(m)
                scc.append(m)
                if m == n:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for n in sorted(edges):
        if n not in index:
            visit(n)
    return found


def problems(root):
    for rel in sources(root):
        parts = rel.split(os.sep)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                bracket, name = m.groups()
                closing = ">" if bracket == "<" else '"'
                where = f"{rel}:{lineno}: #include {bracket}{name}{closing}"
                if name == "sqlite3.h" and parts[0] != "libprof":
                    yield f"{where}: only libprof/ includes sqlite3.h"
                if bracket != '"':
                    continue
                if name.startswith("../") and parts[0] != "tests":
                    yield f"{where}: reach another module by its include path, not ../"
                banned = forbidden_owner(root, rel, name)
                if banned:
                    yield f"{where}: {parts[0]}/ may not use {banned}/"
                target = target_folder(name)
                if target is None:
                    continue
                if parts[0] == "report" and len(parts) > 2:
                    own = report_folder(parts)
                    if target != own and not may_use(own, target):
                        yield f"{where}: report/{own} may not use report/{target}"
                    elif target != own and target in LENT and name not in LENT[target]:
                        lent = " or ".join(sorted(LENT[target]))
                        yield f"{where}: report/{own} reaches report/{target} through {lent} only"
                elif parts[0] in FACE_USERS and "/" not in target and name != FACE[target] \
                        and name != "sink/table.h":
                    yield f"{where}: {parts[0]}/ reaches report/{target} through {FACE[target]} only"
                elif parts[0] in FACE_USERS and "/" in target:
                    yield f"{where}: {parts[0]}/ reaches report/analysis through {FACE['analysis']} only"
    for circle in include_circles(root):
        yield "include circle: " + " -> ".join(circle)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = list(problems(root))
    for p in found:
        print(p)
    if found:
        print(f"check-includes: {len(found)} include(s) break the module rules", file=sys.stderr)
        return 1
    print("check-includes: every include follows the module rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
