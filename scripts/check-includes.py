#!/usr/bin/env python3
"""Checks that #include lines follow the module rules of docs/ARCHITECTURE.md.

  report/sink      may use libprof only
  report/summary   may use sink
  report/analysis  may use summary, sink
  report/compare   may use summary, sink
  report/export    may use summary, analysis, sink
  report/job       may use summary, analysis, sink
  other report/ folders reach report/summary through summary/summary.h and
                   summary/query.h only (summary_impl.h is the folder's own)
  cli/, tui/, bench/, capture/, fuzz/ reach a report/ folder through its face
                   header only (report/X/X.h; sink/sink.h for sink)
  collectors/      does not use capture/ or cli/ (the injection library
                   shares only libprof with the launcher)
  capture/         does not use cli/
  no file outside libprof/ includes <sqlite3.h>
  no "../" includes outside tests/ (a module is reached by its include path)

Prints one line per broken rule and exits 1 when there is any.
Usage: check-includes.py [SOURCE_ROOT]"""
import os
import re
import sys

REPORT_MAY_USE = {
    "sink": set(),
    "summary": {"sink"},
    "analysis": {"summary", "sink"},
    "compare": {"summary", "sink"},
    "export": {"summary", "analysis", "sink"},
    "job": {"summary", "analysis", "sink"},
}
FACE = {folder: f"{folder}/{folder}.h" for folder in REPORT_MAY_USE}
# Folders whose internals stay inside: the headers they lend to the rest of report/.
LENT = {"summary": {"summary/summary.h", "summary/query.h"}}
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
                target = name.split("/")[0] if "/" in name else None
                if target not in REPORT_MAY_USE:
                    continue
                if parts[0] == "report" and len(parts) > 2:
                    own = parts[1]
                    if target != own and target not in REPORT_MAY_USE.get(own, set()):
                        yield f"{where}: report/{own} may not use report/{target}"
                    elif target != own and target in LENT and name not in LENT[target]:
                        lent = " or ".join(sorted(LENT[target]))
                        yield f"{where}: report/{own} reaches report/{target} through {lent} only"
                elif parts[0] in FACE_USERS and name != FACE[target] and name != "sink/table.h":
                    yield f"{where}: {parts[0]}/ reaches report/{target} through {FACE[target]} only"


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
