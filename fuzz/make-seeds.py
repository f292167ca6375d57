#!/usr/bin/env python3
"""Makes small seed captures for the fuzz corpora from real captures.

A fuzz seed is an input, not a fixture: what matters is that it is a real
capture's structure (its dialect, tables, indexes, strings) and small enough
to mutate quickly. Empty tables and tables no reader names are dropped;
every other table keeps its first ROWS rows; StringIds keeps the strings the
kept rows can refer to (cut to 256 bytes); the file is rewritten with
512-byte pages and no free space.

Usage: make-seeds.py OUT_DIR CAPTURE.sqlite...   (writes OUT_DIR/<name>.sqlite)"""
import os
import re
import shutil
import sqlite3
import sys

ROWS = 8
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def names_the_readers_use():
    """Every identifier in the readers' sources: a table none of them names
    (nsys exports have dozens: OS runtime, sampling, ...) adds only size."""
    words = set()
    for top in ("report", os.path.join("libprof", "src")):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", fh.read()))
    return words


def shrink(src, dst, used_names):
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    db.execute("PRAGMA journal_mode=DELETE")
    tables = [r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for t in list(tables):
        if t.lower() == "stringids":
            continue
        # nsys exports carry a hundred tables, most empty or never read: one
        # page each is most of a small seed, and a missing table is a case
        # the readers handle.
        if (t not in used_names or
                db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] == 0):
            db.execute(f'DROP TABLE "{t}"')
            tables.remove(t)
            continue
        db.execute(f'DELETE FROM "{t}" WHERE rowid NOT IN '
                   f'(SELECT rowid FROM "{t}" ORDER BY rowid LIMIT {ROWS})')
    if any(t.lower() == "stringids" for t in tables):
        used = set()
        for t in tables:
            if t.lower() == "stringids":
                continue
            for row in db.execute(f'SELECT * FROM "{t}"'):
                used.update(v for v in row if isinstance(v, int))
        db.execute("CREATE TEMP TABLE keep(id INTEGER PRIMARY KEY)")
        db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", ((v,) for v in used))
        db.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT id FROM keep)")
        # Some exports hold a 30 kB string (a whole environment, NULs
        # included); its first bytes exercise the same code.
        db.execute("UPDATE StringIds SET value = CAST(substr(CAST(value AS BLOB), 1, 256) AS TEXT)"
                   " WHERE length(CAST(value AS BLOB)) > 256")
    db.commit()
    db.execute("PRAGMA page_size=512")
    db.execute("VACUUM")
    db.close()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    used_names = names_the_readers_use()
    for src in sys.argv[2:]:
        dst = os.path.join(out, os.path.basename(src))
        shrink(src, dst, used_names)
        print(f"{dst}: {os.path.getsize(dst)} bytes")


if __name__ == "__main__":
    main()
