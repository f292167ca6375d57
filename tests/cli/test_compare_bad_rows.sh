#!/usr/bin/env bash
# test_compare_bad_rows.sh - `perfkit baseline save`, `gate` and `diff` on
# captures holding what no sound capture does: rows whose end precedes their
# start, copies and memsets of a negative byte count (the only copy of one
# direction among them), and kernels so long that their durations add up
# past INT64_MAX. Bad rows are left out of every
# key and total and counted (a warning from baseline save, "rows_left_out"
# in the gate's and the diff's JSON); sums are held at INT64_MAX instead of
# wrapping; a baseline perfkit saves always loads back, and the capture it
# was saved from passes its gate. The inputs are copies of a real capture
# (tests/data/gpu_work.sqlite) damaged with the sqlite3 CLI; the expected
# figures are computed here with SQL over the damaged file.
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_SOURCE:?}"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

good="$PERFKIT_TEST_DATA/gpu_work.sqlite"
bad="$TMP/bad_rows.sqlite"
long="$TMP/long_kernels.sqlite"
cp "$good" "$bad"
cp "$good" "$long"
sqlite3 "$bad" "
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = end, end = start WHERE rowid IN (10, 20);
UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -bytes
  WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1);
UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -bytes WHERE copyKind = 2;
UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET bytes = -bytes
  WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMSET);" ||
	{ echo "FAIL: cannot damage the copy" >&2; exit 1; }
# Kernels of 2^62 ns each: any two of them add up past INT64_MAX.
sqlite3 "$long" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 4611686018427387904
  WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 4);" ||
	{ echo "FAIL: cannot damage the copy" >&2; exit 1; }

bad_rows=$(sqlite3 "$bad" "SELECT
  (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end < start) +
  (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE end < start OR bytes < 0) +
  (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE end < start OR bytes < 0)")
[ "$bad_rows" = 5 ] || { echo "FAIL: the damaged copy has 5 bad rows, not $bad_rows" >&2; exit 1; }

# baseline save: a warning with the count; the file holds the sound rows' sums.
run baseline save -o "$TMP/bad.json" "$bad"
expect_status "baseline save of a capture with bad rows" 0
expect_err "baseline save of a capture with bad rows" \
	"^perfkit: warning: .*bad_rows.sqlite: $bad_rows rows with an impossible span \\(end before start, or 2\\^63 ns or more long\\) or a negative byte count were left out$"
python3 - "$TMP/bad.json" "$bad" <<'PY' && pass "baseline: copy bytes and GPU time of the sound rows" || fail "baseline: copy bytes and GPU time of the sound rows"
import json, sqlite3, sys
keys = json.load(open(sys.argv[1]))["keys"]
db = sqlite3.connect(sys.argv[2])
htod = db.execute("SELECT sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
                  " WHERE copyKind = 1 AND end >= start AND bytes >= 0").fetchone()[0]
gpu = sum(db.execute("SELECT coalesce(sum(end - start), 0) FROM %s WHERE end >= start%s" % (t, w)).fetchone()[0]
          for t, w in (("CUPTI_ACTIVITY_KIND_KERNEL", ""),
                       ("CUPTI_ACTIVITY_KIND_MEMCPY", " AND bytes >= 0"),
                       ("CUPTI_ACTIVITY_KIND_MEMSET", " AND bytes >= 0")))
assert keys["copy_bytes:HtoD"]["median"] == htod, (keys["copy_bytes:HtoD"]["median"], htod)
assert keys["gpu_time"]["median"] == gpu, (keys["gpu_time"]["median"], gpu)
# the only DtoH copy moved a negative byte count: no key is made of nothing
assert "copy_bytes:DtoH" not in keys, keys.get("copy_bytes:DtoH")
PY

# gate: the saved baseline loads, its own capture passes, the count is in the JSON.
run gate --format=json --baseline "$TMP/bad.json" "$bad"
expect_status "gate of a capture with bad rows against its own baseline" 0
python3 - "$TMP/out" "$bad_rows" <<'PY' && pass "gate JSON: rows_left_out" || fail "gate JSON: rows_left_out"
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert reps["gate_summary"]["rows_left_out"] == int(sys.argv[2]), reps["gate_summary"]
PY
run gate --format=json --baseline "$TMP/bad.json" "$good"
python3 - "$TMP/out" <<'PY' && pass "gate JSON: none left out of a sound capture" || fail "gate JSON: none left out of a sound capture"
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert reps["gate_summary"]["rows_left_out"] == 0, reps["gate_summary"]
PY

# diff: both sides' bad rows counted under the totals.
run diff --format=json "$bad" "$bad"
expect_status "diff of a capture with bad rows" 0
python3 - "$TMP/out" "$bad_rows" <<'PY' && pass "diff JSON: rows_left_out of both" || fail "diff JSON: rows_left_out of both"
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert reps["diff_totals"]["rows_left_out"] == 2 * int(sys.argv[2]), reps["diff_totals"]
assert all(r["Base Total (ns)"] >= 0 for r in reps["diff_kernels"]["rows"])
PY

# Durations past INT64_MAX: the summary holds its total at the limit, the
# baseline at the largest number a baseline holds, and the round trip works.
limit=9223372036854775807
# The largest number a baseline holds, as the reader of baselines has it.
baseline_max=$(sed -n 's/^#define BASELINE_MAX_NUMBER //p' "$PERFKIT_SOURCE/report/compare/baseline.h")
run report --format=json --report=cuda_gpu_kern_sum "$long"
expect_status "kernel summary of kernels adding up past INT64_MAX" 0
python3 - "$TMP/out" "$long" "$limit" <<'PY' && pass "summary: a total past INT64_MAX held there" || fail "summary: a total past INT64_MAX held there"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
db = sqlite3.connect(sys.argv[2])
# Python's integers do not overflow: the true total of each kernel name.
true = {}
for name, d in db.execute("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                          " JOIN StringIds s ON s.id = k.demangledName"):
    true[name] = true.get(name, 0) + d
limit = int(sys.argv[3])
assert max(true.values()) > limit
for r in rows:
    assert 0 <= r["Total Time (ns)"] <= limit, r
assert any(r["Total Time (ns)"] == limit for r in rows)
PY
run baseline save -o "$TMP/long.json" "$long"
expect_status "baseline save of kernels adding up past INT64_MAX" 0
python3 - "$TMP/long.json" "$baseline_max" <<'PY' && pass "baseline: every number within what a baseline holds" || fail "baseline: every number within what a baseline holds"
import json, sys
def numbers(v):
    if isinstance(v, dict):
        for x in v.values(): yield from numbers(x)
    elif isinstance(v, list):
        for x in v: yield from numbers(x)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield v
keys = json.load(open(sys.argv[1]))["keys"]
most = float(sys.argv[2])
assert all(0 <= x <= most for x in numbers(keys))
assert keys["gpu_time"]["median"] == most, keys["gpu_time"]
PY
run gate --baseline "$TMP/long.json" "$long"
expect_status "gate of kernels adding up past INT64_MAX against their own baseline" 0
run diagnose "$long"
if [ "$status" -eq 0 ] || { [ "$status" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; }; then
	pass "diagnose of kernels adding up past INT64_MAX: a diagnosis or one line (exit $status)"
else
	fail "diagnose of kernels adding up past INT64_MAX: a diagnosis or one line"
fi

finish
