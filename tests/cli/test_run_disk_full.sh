#!/usr/bin/env bash
# `perfkit run` when the disk fills while the program records, and when the
# output's folder is removed while it runs: perfkit exits with the program's
# own status, says in one line what became of the capture, and the capture
# is a complete file (no -wal needed beside it) with exactly the rows that
# were committed. The program is write_live_store, which writes its process
# file under `perfkit run` the way the collector does and prints how many
# kernels it recorded.
#
# The disk fills for real on a 4 MiB tmpfs where this machine lets us mount
# one; the file size limit (`ulimit -f`, SIGXFSZ ignored, so writes fail
# with EFBIG) stands in for a full disk everywhere.
set -u
. "$(dirname "$0")/cli_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"

if built_without_cupti; then
	skip "perfkit run on a full disk, output folder removed" "built without CUPTI"
	finish
	exit
fi

sql() { sqlite3 "$1" "$2" 2>&1; }

# check_full_capture NAME FILE: the capture left by a run that filled the
# disk, copied alone, is complete and holds every recorded kernel but those
# counted as not written.
check_full_capture() {
	local name=$1 file=$2 recorded kept lost
	recorded=$(sed -n 's/^kernels=//p' "$TMP/out")
	expect_that "$name: the program recorded kernels" test -n "$recorded"
	if [ ! -f "$file" ]; then fail "$name: no capture at $file"; return; fi
	expect_that "$name: no -wal left beside the capture" test ! -s "$file-wal"
	rm -f "$TMP/alone.sqlite"
	cp "$file" "$TMP/alone.sqlite"
	expect_that "$name: the file alone passes SQLite's integrity check" \
		test "$(sql "$TMP/alone.sqlite" "PRAGMA integrity_check")" = ok
	kept=$(sql "$TMP/alone.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
	lost=$(sql "$TMP/alone.sqlite" "SELECT value FROM PERFKIT_COUNTERS WHERE name = 'rows_not_written'")
	expect_that "$name: some kernels were kept ($kept)" test "${kept:-0}" -gt 0
	expect_that "$name: some rows were not written ($lost)" test "${lost:-0}" -gt 0
	expect_that "$name: kept $kept + not written $lost = recorded $recorded" \
		test "$((kept + lost))" -eq "${recorded:-0}"
	expect_that "$name: the capture is finished" \
		test "$(sql "$TMP/alone.sqlite" "SELECT value FROM PERFKIT_META WHERE key = 'finished'")" = 1
	"$PERFKIT" report "$TMP/alone.sqlite" >/dev/null 2>"$TMP/report.err"
	expect_that "$name: perfkit report reads it" test $? -eq 0
	# the line that tells it, in the run's stderr
	grep -v '^perfkit: capture written' "$TMP/err" | grep '^perfkit' >"$TMP/told"
	expect_that "$name: one line tells what the capture lacks" \
		grep -qE "^perfkit: warning: the disk filled: $lost rows recorded after [0-9.]+ s of the run were not written(; .*)?$" "$TMP/told"
}

# By the file size limit: the process file cannot grow past 2 MiB.
dir=$TMP/limited
mkdir -p "$dir"
(
	trap '' XFSZ
	ulimit -f 2048
	TMPDIR=$dir exec "$PERFKIT" run -o "$dir/full.sqlite" -- "$LIVE" -r 50 2 3
) >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status "file size limit: perfkit run exits with the program's status" 3
check_full_capture "file size limit" "$dir/full.sqlite"
expect_that "file size limit: the run's folder is removed" \
	test -z "$(find "$dir" -name 'perfkit-run-*')"

# On a small tmpfs that fills (the process file, the output and the run's
# folder on the same disk, as with TMPDIR on a small /tmp).
dir=$TMP/small
mkdir -p "$dir"
if mount -t tmpfs -o size=4m tmpfs "$dir" 2>/dev/null; then
	# commits every 100 ms: the first ones fit whatever the machine's pace
	# (at the default 500 ms a fast machine's first commit alone outgrew
	# the disk, and nothing was kept), and 4 s of rows fill it
	(cd "$dir" && TMPDIR=$dir exec "$PERFKIT" run --flush-interval=100 -o "$dir/full.sqlite" \
		-- "$LIVE" -r 50 4 3) >"$TMP/out" 2>"$TMP/err"
	status=$?
	expect_status "full tmpfs: perfkit run exits with the program's status" 3
	check_full_capture "full tmpfs" "$dir/full.sqlite"
	umount "$dir"
else
	skip "a full tmpfs" "cannot mount one here"
fi

# The output's folder is removed while the program runs: the capture is
# kept in the run's folder, complete, and one line says where.
mkdir -p "$TMP/gone"
"$PERFKIT" run -o "$TMP/gone/x.sqlite" -- "$LIVE" 1.5 5 >"$TMP/out" 2>"$TMP/err" &
runner=$!
sleep 0.7
rm -rf "$TMP/gone"
wait "$runner"
status=$?
expect_status "output folder gone: perfkit run exits with the program's status" 5
kept=$(sed -n "s/^perfkit: warning: the output's folder is gone (.*): the capture is kept as \(.*\)$/\1/p" "$TMP/err")
expect_that "output folder gone: one line says where the capture is ($kept)" test -n "$kept"
if [ -n "$kept" ]; then
	expect_that "output folder gone: the capture is there" test -f "$kept"
	recorded=$(sed -n 's/^kernels=//p' "$TMP/out")
	expect_that "output folder gone: it holds every kernel recorded ($recorded)" \
		test "$(sql "$kept" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" = "$recorded"
	run report "$kept"
	expect_status "output folder gone: perfkit report reads the kept capture" 0
	rm -rf "$(dirname "$kept")"
fi
finish
