#!/usr/bin/env bash
# A run whose finish met a full disk knew its program's exit status, and
# `perfkit recover` keeps it: the recovered capture holds the status and
# the run's duration, and recover says the status instead of "not known".
#
# The output lies on a small tmpfs that another file fills while the
# program runs; the run folder (TMPDIR), with the process file, on another
# with room. The finish's first commit, the one with the exit status,
# then finds no room for the output, which stays unfinished for recover;
# the run leaves its end in the run folder, where recover finds it. Before,
# the status was only in that failed commit. A finish that did commit the
# status into the output before failing is stood in for by a killed run's
# output given the keys with sqlite3, as that finish leaves them.
set -u
. "$(dirname "$0")/cli_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"

if built_without_cupti; then
	skip "the exit status of a run recovered after a full disk" "built without CUPTI"
	finish
	exit
fi

names_live_dir() { [ -n "$(meta "$1" live_dir)" ]; }
ended() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
	[ -z "$state" ] || [ "$state" = Z ]
}

out_fs=$TMP/out_fs run_fs=$TMP/run_fs
mkdir -p "$out_fs" "$run_fs"
if mount -t tmpfs -o size=8m tmpfs "$out_fs" 2>/dev/null &&
	mount -t tmpfs -o size=8m tmpfs "$run_fs" 2>/dev/null; then
	out=$out_fs/out.sqlite
	TMPDIR=$run_fs "$PERFKIT" run -o "$out" -- "$LIVE" -r 20 2 3 >"$TMP/out" 2>"$TMP/err" &
	runner=$!
	wait_until "$WAIT_S" names_live_dir "$out" || fail "the run never named its live folder"
	dir=$(meta "$out" live_dir)
	# fill the output's disk while the program runs
	dd if=/dev/zero of="$out_fs/filler" bs=64k 2>/dev/null
	wait "$runner"
	status=$?
	expect_status "perfkit run exits with the program's status" 3
	expect_err "the run says recover merges the files when there is room" \
		"when there is room, .perfkit recover .*out.sqlite. merges them"
	expect_that "the output is left unfinished" test -z "$(meta "$out" finished)"
	expect_that "the output does not hold the exit status" test -z "$(meta "$out" exit_status)"
	rm -f "$out_fs/filler"
	run recover "$out"
	expect_status "recover after the disk filled" 0
	expect_err "recover says the status the run had" \
		"^perfkit: recovered 1 process file into .*out.sqlite \\(the program's exit status was 3\\)$"
	expect_that "the recovered capture holds exit status 3" test "$(meta "$out" exit_status)" = 3
	expect_that "and how long the program ran" test "$(meta "$out" duration_ns)" -gt 2000000000
	expect_that "and it is marked recovered" test "$(meta "$out" recovered)" = 1
	expect_that "the run folder is removed" test ! -e "$dir"
	run report "$out"
	expect_status "report reads the recovered capture" 0
	expect_out "its overview gives the exit status" "^Exit status +3$"
	umount "$out_fs" "$run_fs"
else
	umount "$out_fs" 2>/dev/null
	skip "a finish on a full disk" "cannot mount a tmpfs here"
fi

# The output holds the status (the finish committed it, then failed):
# recover keeps it from there.
out=$TMP/killed.sqlite
"$PERFKIT" run -o "$out" -- sleep 60 >/dev/null 2>"$TMP/killed.err" &
runner=$!
wait_until "$WAIT_S" names_live_dir "$out" || fail "the killed run never named its live folder"
prog=$(meta "$out" pid)
kill -KILL "$runner"
wait "$runner" 2>/dev/null
kill -TERM "$prog"
wait_until "$WAIT_S" ended "$prog"
sqlite3 "$out" "INSERT OR REPLACE INTO PERFKIT_META (key, value) VALUES
	('exit_status', '143'), ('duration_ns', '1500000000')"
run recover "$out"
expect_status "recover of an output that holds the status" 0
expect_err "recover says that status" "\\(the program's exit status was 143\\)$"
expect_that "the recovered capture keeps it" \
	test "$(meta "$out" exit_status),$(meta "$out" duration_ns)" = "143,1500000000"

# A run killed before its program ended knows no status: recover says so.
out=$TMP/unknown.sqlite
"$PERFKIT" run -o "$out" -- sleep 60 >/dev/null 2>"$TMP/unknown.err" &
runner=$!
wait_until "$WAIT_S" names_live_dir "$out" || fail "the second killed run never named its live folder"
prog=$(meta "$out" pid)
kill -KILL "$runner"
wait "$runner" 2>/dev/null
kill -TERM "$prog"
wait_until "$WAIT_S" ended "$prog"
run recover "$out"
expect_status "recover of a run killed before its program ended" 0
expect_err "recover says the status is not known" "exit status and end are not known\\)$"
expect_that "the recovered capture holds no status" test -z "$(meta "$out" exit_status)"
finish
