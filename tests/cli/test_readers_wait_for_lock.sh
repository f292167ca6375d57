#!/usr/bin/env bash
# test_readers_wait_for_lock.sh - a reader of a capture that another process
# has locked (a writer committing under the rollback journal holds the
# whole file) waits for the lock: a writer that holds it briefly leaves
# `perfkit report` to finish with what it prints of the untouched capture;
# one that holds it past the busy timeout (5 s; PERFKIT_BUSY_TIMEOUT_MS
# shortens it here) gets one line naming the file and how long it waited,
# and status 2, from every reader: report (one capture, and a job of two),
# diagnose, roofline, diff (either side), baseline save, gate, merge, top.
# The lock is held by python3's sqlite3 (BEGIN EXCLUSIVE, then ROLLBACK:
# nothing in the file changes), for a bounded time.
. "$(dirname "$0")/cli_lib.sh"
command -v python3 >/dev/null || { echo "FAIL: python3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
FILE=$TMP/capture.sqlite
good=$D/gpu_work.sqlite
cp "$D/clean_loop.sqlite" "$FILE"
unset PERFKIT_BUSY_TIMEOUT_MS

# hold_lock SECONDS: a process holds FILE's exclusive lock for at most
# SECONDS, then lets go without a change; $holder is its pid, and the lock
# is held when this returns
hold_lock() {
	rm -f "$TMP/holder.out"
	python3 - "$FILE" "$1" >"$TMP/holder.out" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
PY
	holder=$!
	wait_until "$WAIT_S" grep -q held "$TMP/holder.out" ||
		{ echo "FAIL: the lock was never held" >&2; exit 1; }
}

run report "$FILE"
expect_status "the capture unlocked" 0
cp "$TMP/out" "$TMP/unlocked.txt"
"$PERFKIT" baseline save -o "$TMP/baseline.json" "$good" >/dev/null ||
	{ echo "FAIL: cannot save a baseline" >&2; exit 1; }

# a writer that lets go within the busy timeout: report waits, then reads
hold_lock 2
SECONDS=0
run report "$FILE"
waited=$SECONDS
expect_status "report of a capture locked for 2 s" 0
expect_that "report of a capture locked for 2 s prints what it prints unlocked" \
	cmp -s "$TMP/out" "$TMP/unlocked.txt"
expect_that "report waited for the lock (${waited} s)" [ "$waited" -ge 1 ]
wait "$holder"

# a writer that holds it longer than the readers wait
export PERFKIT_BUSY_TIMEOUT_MS=300
line="capture\.sqlite is locked by another process \(a capture still being written\?\); waited 0\.3 s$"
hold_lock 120
locked() {
	local name=$1
	shift
	run "$@" </dev/null
	expect_status "$name of a locked capture" 2
	expect_one_error_line "$name of a locked capture" "$line"
}
locked "report" report "$FILE"
locked "report csv" report --format=csv --report=cuda_gpu_kern_sum "$FILE"
locked "report of a job" report "$good" "$FILE"
locked "diagnose" diagnose "$FILE"
locked "roofline" roofline "$FILE"
locked "diff base" diff "$FILE" "$good"
locked "diff new" diff "$good" "$FILE"
locked "baseline save" baseline save -o "$TMP/b.json" "$FILE"
locked "gate" gate --baseline="$TMP/baseline.json" "$FILE"
locked "merge" merge -o "$TMP/merged.sqlite" "$good" "$FILE"
expect_that "a merge that met a lock leaves no output" [ ! -e "$TMP/merged.sqlite" ]
run top
if grep -q "built without ncurses" "$TMP/err"; then
	skip "top of a locked capture" "this perfkit was built without ncurses"
else
	locked "top" top "$FILE"
	locked "top --replay" top --replay=1000 "$FILE"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# let go, the capture reads as before
unset PERFKIT_BUSY_TIMEOUT_MS
run report "$FILE"
expect_status "report once the lock is gone" 0
expect_that "report once the lock is gone prints what it printed" cmp -s "$TMP/out" "$TMP/unlocked.txt"
finish
