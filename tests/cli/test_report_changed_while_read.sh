#!/usr/bin/env bash
# test_report_changed_while_read.sh - a capture another process changes
# while `perfkit report` reads it is never printed as a mix of its two
# versions with status 0: report compares the file's size, SQLite's change
# counter and data_version when it has read it with what they were when it
# opened it, and a change is one line, "FILE changed while it was read; run
# again", and status 2.
#
# First, for certain: report writes the kernel trace of a real capture into
# a pipe read no further than its first KiB until the file has been
# rewritten in place (another version of it written over its bytes, the
# inode kept), so the reports after the trace read the other version.
# Then as it happens: a writer commits into the capture in a loop (python3's
# sqlite3, a kernel's name flipped between two values, each commit a
# transaction under the rollback journal, at most 30 s) while report runs
# at most 12 times; every run that exits 0 printed exactly what report
# prints of one of the two versions, every other run says one of the two
# lines a reader gives for it (changed, or locked past the busy timeout).
set -u
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
FILE=$TMP/capture.sqlite
REPORT=(report --report=cuda_gpu_trace,cuda_gpu_kern_sum,cuda_api_sum --format=csv "$FILE")
changed="capture\.sqlite changed while it was read; run again$"

# ---- rewritten in place while report is held at its first KiB -------------------
cp "$D/transformer_naive.sqlite" "$TMP/v1.sqlite"
cp "$TMP/v1.sqlite" "$TMP/v2.sqlite"
sqlite3 "$TMP/v2.sqlite" "UPDATE StringIds SET value = value || ' (v2)'"
[ "$(stat -c %s "$TMP/v1.sqlite")" = "$(stat -c %s "$TMP/v2.sqlite")" ] ||
	{ echo "FAIL: the two versions differ in size" >&2; exit 1; }

cp "$TMP/v1.sqlite" "$FILE"
rm -f "$TMP/pipe"
mkfifo "$TMP/pipe"
"$PERFKIT" "${REPORT[@]}" >"$TMP/pipe" 2>"$TMP/err" &
pid=$!
exec 3<"$TMP/pipe"
head -c 1024 <&3 >"$TMP/out"
# over its bytes, never truncated: a reader that looks while the shell's
# `>` has emptied the file would rightly say "truncated" instead
dd if="$TMP/v2.sqlite" of="$FILE" conv=notrunc status=none
cat <&3 >>"$TMP/out"
exec 3<&-
wait "$pid"
status=$?
expect_status "rewritten in place while read" 2
expect_one_error_line "rewritten in place while read" "$changed"
expect_that "what was read mixed the versions (the check is what tells)" grep -q ' (v2)' "$TMP/out"
run "${REPORT[@]}"
expect_status "the rewritten capture read again" 0
"$PERFKIT" "${REPORT[@]/$FILE/$TMP/v2.sqlite}" >"$TMP/v2.csv"
expect_that "the rewritten capture read again is the second version's" cmp -s "$TMP/out" "$TMP/v2.csv"

# ---- a writer committing in a loop --------------------------------------------------
SRC=$D/gpu_work.sqlite
cp "$SRC" "$FILE"
[ "$(sqlite3 "$FILE" "PRAGMA journal_mode")" = delete ] ||
	{ echo "FAIL: the capture is not under the rollback journal" >&2; exit 1; }
# the name of the kernel launched most, and the two versions' outputs
id=$(sqlite3 "$FILE" "SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL
	GROUP BY demangledName ORDER BY count(*) DESC LIMIT 1")
name=$(sqlite3 "$FILE" "SELECT value FROM StringIds WHERE id = $id")
run "${REPORT[@]}"
cp "$TMP/out" "$TMP/a.csv"
sqlite3 "$FILE" "UPDATE StringIds SET value = 'flipped_kernel' WHERE id = $id"
run "${REPORT[@]}"
cp "$TMP/out" "$TMP/b.csv"
differ() { ! cmp -s "$1" "$2"; }
expect_that "the two versions print differently" differ "$TMP/a.csv" "$TMP/b.csv"

rm -f "$TMP/stop"
python3 - "$FILE" "$id" "$name" "$TMP/stop" <<'PY' &
import os, sqlite3, sys, time
path, sid, name, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
db = sqlite3.connect(path, isolation_level=None, timeout=10)
end = time.time() + 30
i = 0
while time.time() < end and not os.path.exists(stop):
    db.execute("UPDATE StringIds SET value = ? WHERE id = ?", (name if i % 2 else "flipped_kernel", sid))
    i += 1
    time.sleep(0.01)
PY
writer=$!
mixed=0 clean=0 told=0
for try in $(seq 1 12); do
	run "${REPORT[@]}"
	if [ "$status" -eq 0 ]; then
		if cmp -s "$TMP/out" "$TMP/a.csv" || cmp -s "$TMP/out" "$TMP/b.csv"; then
			clean=$((clean + 1))
		else
			mixed=$((mixed + 1))
			cp "$TMP/out" "$TMP/mixed-$try.csv"
		fi
	else
		expect_status "try $try, changed under report" 2
		expect_one_error_line "try $try, changed under report" \
			"($changed|capture\.sqlite is locked by another process)"
		told=$((told + 1))
	fi
done
touch "$TMP/stop"
wait "$writer"
echo "report runs: $clean whole, $told told of a change, $mixed mixed"
expect_that "no run printed a mix of two versions with status 0 ($mixed did)" [ "$mixed" -eq 0 ]
finish
