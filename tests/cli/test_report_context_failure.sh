#!/usr/bin/env bash
# test_report_context_failure.sh - captures of programs whose CUDA context
# failed (tests/data/faults/context_failed*.sqlite, made on the GPU by
# tests/gpu/faults.sh): the overview and diagnose say where it failed and
# how much GPU work has no times. Every expected figure is read from the
# file itself: the first API call returning an illegal address, its name,
# and the collector's counters.
. "$(dirname "$0")/cli_lib.sh"

facts() { # CAPTURE -> "CALL CODE KERNELS COPIES" of the file's own rows
	python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
call, code = db.execute("SELECT s.value, r.returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                        "ON s.id = r.nameId WHERE r.returnValue = 700 ORDER BY r.start LIMIT 1").fetchone()
def counter(name):
    r = db.execute("SELECT value FROM PERFKIT_COUNTERS WHERE name = ?", (name,)).fetchone()
    return r[0] if r else 0
print(call.rsplit("_v", 1)[0], code, counter("incomplete_kernels"), counter("incomplete_copies"))
PY
}

for name in context_failed context_failed_queued; do
	cap="$PERFKIT_TEST_DATA/faults/$name.sqlite"
	read -r call code kernels copies <<<"$(facts "$cap")"
	[ "$code" = 700 ] && [ "$kernels" -gt 0 ] || { echo "FAIL: $name records the failure" >&2; exit 1; }
	run report "$cap"
	[ "$status" -eq 0 ] && pass "$name: report exits 0" || fail "$name: report exits 0"
	grep -q "^the program's CUDA context failed at +[0-9.]* s: $call returned cudaErrorIllegalAddress ($code, " "$TMP/out" &&
		pass "$name: the overview names the failing call ($call)" || fail "$name: the overview names the failing call ($call)"
	want="^$kernels kernels"
	[ "$kernels" -eq 1 ] && want="^1 kernel "
	[ "$copies" -gt 0 ] && want="$want.* and $copies cop"
	grep -q "$want.* no GPU times" "$TMP/out" &&
		pass "$name: the overview counts the work without times ($kernels, $copies)" ||
		fail "$name: the overview counts the work without times ($kernels, $copies)"

	run diagnose --format=json "$cap"
	python3 - "$TMP/out" "$call" "$kernels" <<'PY' && pass "$name: diagnose's JSON carries both" || fail "$name: diagnose's JSON carries both"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
ok = (sys.argv[2] in (d["context_failure"] or "") and (d["untimed_work"] or "").startswith(sys.argv[3] + " kernel")
      and "compute-sanitizer" in (d["context_failure_next"] or "")
      # the capture's span is the run's, not the clock's epoch
      and 0 < w["capture_start_ns"] < w["capture_end_ns"] < w["capture_start_ns"] + 3600 * 10**9)
sys.exit(0 if ok else 1)
PY
	run diagnose "$cap"
	grep -q "^failure: the program's CUDA context failed" "$TMP/out" && grep -q "^untimed: $kernels kernel" "$TMP/out" &&
		pass "$name: diagnose says it above the findings" || fail "$name: diagnose says it above the findings"
done

run report "$PERFKIT_TEST_DATA/faults/four_contexts.sqlite"
! grep -q "context failed\|no GPU times" "$TMP/out" && pass "a capture without failure has no such warning" ||
	fail "a capture without failure has no such warning"
run diagnose --format=json "$PERFKIT_TEST_DATA/faults/four_contexts.sqlite"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["context_failure"] is None and d["context_failure_next"] is None and d["untimed_work"] is None else 1)' "$TMP/out" &&
	pass "nor in diagnose's JSON" || fail "nor in diagnose's JSON"
finish
