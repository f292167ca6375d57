#!/usr/bin/env bash
# test_run_same_output.sh - two `perfkit run`s writing to the same output at
# once. Without -f the second refuses with one line and the first's capture
# is whole. With -f the second replaces the file that was there when it
# started (the first's unfinished output), once its own capture is
# complete. Whichever run finds another file under the name at its end
# keeps its capture in its run folder and says where in one line: the
# first when the second ended first; the second when the first ended
# first, since the first's finished capture is not the file the second's -f
# was given for. No capture is lost, none is damaged, and each holds
# exactly the kernels its program recorded.
# The programs are tests/tools/write_live_store, which record kernels as
# the collector does and print how many ("written=N").
set -u
. "$(dirname "$0")/cli_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"
OUT=$TMP/same.sqlite

if built_without_cupti; then
	skip "two perfkit runs onto one output" "built without CUPTI"
	finish
	exit
fi

kernels() { sqlite3 -readonly "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"; }
written() { sed -n 's/^written=//p' "$1"; }
running() { [ -n "$(meta "$OUT" live_dir)" ]; }

# whole NAME FILE PROGRAM_STDOUT: FILE is a finished, undamaged capture
# holding the kernels the program said it wrote.
whole() {
	local want
	want=$(written "$3")
	expect_that "$1: the capture passes integrity_check" \
		test "$(sqlite3 -readonly "$2" "PRAGMA integrity_check")" = ok
	expect_that "$1: the capture is finished" test "$(meta "$2" finished)" = 1
	expect_that "$1: it holds the $want kernels written" test "$(kernels "$2")" = "$want"
}

# kept_whole NAME RUN: that run's (first or second) one line names where it
# kept its capture, and that capture is whole.
kept_whole() {
	local kept
	kept=$(sed -n "s/.*another file took the output's name (.*same\.sqlite): the capture is kept as //p" \
		"$TMP/$2.err")
	expect_that "$1: the $2 run says where it kept its capture" test -n "$kept"
	[ -n "$kept" ] && whole "$1: the $2 run's kept capture" "$kept" "$TMP/$2.out"
}

# start_first SECONDS: the first run, writing $OUT for SECONDS; returns once
# its output names its live folder.
start_first() {
	rm -f "$OUT"
	"$PERFKIT" run -o "$OUT" -- "$LIVE" "$1" >"$TMP/first.out" 2>"$TMP/first.err" &
	first=$!
	wait_until "$WAIT_S" running || fail "the first run did not start"
}

# ---- without -f ----------------------------------------------------------------
start_first 2
run run -o "$OUT" -- "$LIVE" 1
expect_status "a second run without -f" 2
expect_one_error_line "a second run without -f" "same\.sqlite exists; use -f to overwrite it"
wait "$first"
expect_that "the first run exits with its program's status" test $? = 0
whole "without -f, the first run" "$OUT" "$TMP/first.out"

# ---- with -f, the second ending first ---------------------------------------------
start_first 3
run run -f -o "$OUT" -- "$LIVE" 1
expect_status "a second run with -f, ending first" 0
cp "$TMP/out" "$TMP/second.out"
whole "-f, second ending first: the output" "$OUT" "$TMP/second.out"
wait "$first"
expect_that "-f, second ending first: the first run exits with its program's status" test $? = 0
kept_whole "-f, second ending first" first
whole "-f, second ending first: the output is still the second's" "$OUT" "$TMP/second.out"

# ---- with -f, the first ending first ------------------------------------------------
start_first 1
"$PERFKIT" run -f -o "$OUT" -- "$LIVE" 3 >"$TMP/second.out" 2>"$TMP/second.err" &
second=$!
wait "$first"
expect_that "-f, first ending first: the first run exits with its program's status" test $? = 0
wait "$second"
expect_that "-f, first ending first: the second run exits with its program's status" test $? = 0
kept_whole "-f, first ending first" second
whole "-f, first ending first: the output is the first's" "$OUT" "$TMP/first.out"
expect_that "-f, first ending first: the first run has no warning" \
	test -z "$(grep "^perfkit: warning" "$TMP/first.err")"
finish
