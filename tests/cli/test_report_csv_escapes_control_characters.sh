#!/usr/bin/env bash
# test_report_csv_escapes_control_characters.sh - `report --format=csv`
# shows the control characters of kernel and range names as the text
# output does ('?'), where it wrote ESC, BEL and CR raw: a terminal showing
# the file acted on them, and a CR or line break split the row for every
# line-oriented reader. The input is a copy of a real capture whose kernel
# name and NVTX range name (their StringIds values) were given ESC, BEL and
# CR with the sqlite3 CLI; the names the CSV must hold are computed here
# from those values.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

f="$TMP/names.sqlite"
cp "$PERFKIT_TEST_DATA/clean_loop.sqlite" "$f"
sqlite3 "$f" "
UPDATE StringIds SET value = char(27) || '[31m' || value || char(7) || char(13) || 'tail'
  WHERE id = (SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1);
UPDATE StringIds SET value = 'ra' || char(13) || 'nge' || char(27) || ']0;title' || char(7)
  WHERE id = (SELECT textId FROM NVTX_EVENTS WHERE eventType = 59 AND textId IS NOT NULL LIMIT 1);" ||
	{ echo "FAIL: cannot change the names" >&2; exit 1; }

# the kernel's and the range's name with each control character as '?',
# as the text output shows them
want=()
while IFS= read -r -d '' name; do want+=("$name"); done < <(python3 - "$f" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for sql in ("SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1",
            "SELECT textId FROM NVTX_EVENTS WHERE eventType = 59 AND textId IS NOT NULL LIMIT 1"):
    (v,) = db.execute("SELECT value FROM StringIds WHERE id = (%s)" % sql).fetchone()
    assert "\x1b" in v
    sys.stdout.write("".join("?" if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in v) + "\0")
PY
)
[ "${#want[@]}" -eq 2 ] || { echo "FAIL: the copy does not hold the two names" >&2; exit 1; }

# check NAME: the CSV in $TMP/out holds no ESC or BEL, no CR or line break
# but those ending each line, and every line is a row of its table
check() {
	if python3 - "$TMP/out" <<'PY'; then pass "$1: no raw control character, a row per line"; else
import csv, sys
data = open(sys.argv[1], "rb").read()
assert b"\x1b" not in data and b"\x07" not in data, "ESC or BEL written raw"
assert b"\r" not in data.replace(b"\r\n", b""), "a CR that does not end a line"
assert b"\n" not in data.replace(b"\r\n", b""), "a line break inside a row"
for block in data.decode().split("\r\n\r\n"):
    rows = list(csv.reader(l for l in block.split("\r\n") if l))
    assert all(len(r) == len(rows[0]) for r in rows), rows[0]
PY
		fail "$1: no raw control character, a row per line"
	fi
}

run report --format=csv --report=cuda_gpu_kern_sum,cuda_gpu_trace,nvtx_sum,nvtx_kern_sum "$f"
expect_status "CSV of names holding control characters" 0
check "report csv"
expect_that "report csv: the kernel's name, '?' for its control characters" grep -qF -- "${want[0]}" "$TMP/out"
expect_that "report csv: the range's name, '?' for its control characters" grep -qF -- "${want[1]}" "$TMP/out"

# the text output shows them the same way
run report --report=nvtx_sum "$f"
expect_that "text: the range's name shown the same way" grep -qF -- "${want[1]}" "$TMP/out"

run diagnose --format=csv "$f"
expect_status "diagnose CSV of the same capture" 0
check "diagnose csv"

finish
