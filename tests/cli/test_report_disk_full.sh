#!/usr/bin/env bash
# test_report_disk_full.sh - a capture whose disk filled during the run
# (tests/data/faults/disk_full.sqlite, made on the GPU by tests/gpu/faults.sh)
# reads like any other, and the overview says how many rows were not
# written: the count is the file's own rows_not_written counter.
. "$(dirname "$0")/cli_lib.sh"

cap="$PERFKIT_TEST_DATA/faults/disk_full.sqlite"
lost=$(python3 -c 'import sqlite3,sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM PERFKIT_COUNTERS WHERE name = ?", ("rows_not_written",)).fetchone()
print(r[0] if r else 0)' "$cap")
[ "${lost:-0}" -gt 0 ] || { echo "FAIL: the fixture records rows_not_written" >&2; exit 1; }

run report "$cap"
[ "$status" -eq 0 ] && pass "report on a disk-full capture exits 0" || fail "report on a disk-full capture exits 0"
grep -q "^$lost rows were not written because the disk filled" "$TMP/out" &&
	pass "the overview warns of the $lost rows not written" || fail "the overview warns of the $lost rows not written"

run report --format=json --report=overview "$cap"
python3 - "$TMP/out" "$lost" <<'PY' && pass "JSON carries the warning" || fail "JSON carries the warning"
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
sys.exit(0 if "%s rows were not written" % sys.argv[2] in text else 1)
PY

run report "$PERFKIT_TEST_DATA/faults/four_contexts.sqlite"
! grep -q "rows were not written" "$TMP/out" && pass "a complete capture has no such warning" ||
	fail "a complete capture has no such warning"
finish
