#!/usr/bin/env bash
# test_report_bad_spans.sh - rows whose end precedes their start are left out
# of every summary that sums durations, and each summary says how many: a
# note under the text table, "rows_left_out" in JSON, a line on stderr with
# CSV. The input is a copy of a real capture (tests/data/gpu_work.sqlite)
# damaged with the sqlite3 CLI: start and end swapped on 3 kernel rows, 2
# runtime API rows and 1 copy. The expected sums are the damaged file's
# own, computed here with SQL over the rows that stayed sound.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

good="$PERFKIT_TEST_DATA/gpu_work.sqlite"
bad="$TMP/damaged.sqlite"
cp "$good" "$bad"
sqlite3 "$bad" "
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = end, end = start WHERE rowid IN (10, 20, 30);
UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = end, end = start
  WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE end > start LIMIT 2);
UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = end, end = start
  WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY);" ||
	{ echo "FAIL: cannot damage the copy" >&2; exit 1; }
[ "$(sqlite3 "$bad" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end < start")" = 3 ] ||
	{ echo "FAIL: the damaged copy has 3 bad kernel rows" >&2; exit 1; }

# check_json FILE REPORT TABLE: the report's rows against SQL over the sound
# rows of TABLE (counts and total time), its rows_left_out against the bad ones
check_json() {
	run report --format=json --report="$2" "$1"
	[ "$status" -eq 0 ] || { fail "$2 on $(basename "$1") exits 0"; return; }
	local name="$2 on $(basename "$1"): sound rows summed, bad ones counted"
	python3 - "$TMP/out" "$1" "$2" "$3" <<'PY' && pass "$name" || fail "$name"
import json, sqlite3, sys
rep = json.load(open(sys.argv[1]))["reports"][0]
db = sqlite3.connect(sys.argv[2])
tables = sys.argv[4].split(",")
bad = sum(db.execute("SELECT count(*) FROM %s WHERE end < start" % t).fetchone()[0] for t in tables)
n, total = (sum(x) for x in zip(*(db.execute(
    "SELECT count(*), coalesce(sum(end - start), 0) FROM %s WHERE end >= start" % t).fetchone()
    for t in tables)))
rows = rep["rows"]
count_col = [c for c in rep["columns"] if c in ("Instances", "Num Calls", "Count")][0]
assert rep["rows_left_out"] == bad, (rep["rows_left_out"], bad)
assert sum(r[count_col] for r in rows) == n, (sum(r[count_col] for r in rows), n)
if "Total Time (ns)" in rep["columns"]:
    assert sum(r["Total Time (ns)"] for r in rows) == total, (sum(r["Total Time (ns)"] for r in rows), total)
    assert all(r["Min (ns)"] >= 0 for r in rows), [r["Min (ns)"] for r in rows]
PY
}

for f in "$bad" "$good"; do
	check_json "$f" cuda_gpu_kern_sum CUPTI_ACTIVITY_KIND_KERNEL
	check_json "$f" cuda_api_sum CUPTI_ACTIVITY_KIND_RUNTIME,CUPTI_ACTIVITY_KIND_DRIVER
	check_json "$f" cuda_gpu_mem_time_sum CUPTI_ACTIVITY_KIND_MEMCPY,CUPTI_ACTIVITY_KIND_MEMSET
	check_json "$f" cuda_gpu_mem_size_sum CUPTI_ACTIVITY_KIND_MEMCPY,CUPTI_ACTIVITY_KIND_MEMSET
done

# the overview's sections: busy time and top kernels without the bad rows
run report --format=json "$bad"
python3 - "$TMP/out" <<'PY' && pass "overview: each section says what it left out" || fail "overview: each section says what it left out"
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert reps["overview_gpu_busy"]["rows_left_out"] == 4, reps["overview_gpu_busy"]
assert reps["overview_top_kernels"]["rows_left_out"] == 3, reps["overview_top_kernels"]
assert reps["overview_transfers"]["rows_left_out"] == 1, reps["overview_transfers"]
assert all(r["Min (ns)"] >= 0 for r in reps["overview_top_kernels"]["rows"])
PY

# text: one note under the table; none on the sound capture
run report --report=cuda_gpu_kern_sum "$bad"
expect_status "kernel summary of a damaged capture" 0
if [ "$(tail -n 1 "$TMP/out")" = "note: 3 rows with an impossible span (end before start, or 2^63 ns or more long) were left out" ] &&
	[ "$(grep -c '^note:' "$TMP/out")" -eq 1 ]; then
	pass "text: one note under the table"
else
	fail "text: one note under the table (got: $(tail -n 2 "$TMP/out"))"
fi
run report --report=cuda_gpu_kern_sum,cuda_api_sum "$good"
grep -q '^note:' "$TMP/out" && fail "text: no note on a sound capture" || pass "text: no note on a sound capture"

# CSV: the table stays a table, the note goes to stderr
run report --format=csv --report=cuda_api_sum "$bad"
expect_status "CSV of a damaged capture" 0
expect_err_line "CSV note" "perfkit: cuda_api_sum: 2 rows with an impossible span (end before start, or 2^63 ns or more long) were left out"
python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); sys.exit(0 if all(len(r) == len(rows[0]) for r in rows) else 1)' "$TMP/out" &&
	pass "CSV: every line is a row of the table" || fail "CSV: every line is a row of the table"

finish
