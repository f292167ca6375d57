#!/usr/bin/env bash
# test_report_truncated_while_read.sh - `perfkit report` on a capture that
# another process truncates while report reads it: one line naming the file
# and status 2, never a crash and never an exit 0 on rows it could not read.
# Deleted or replaced (renamed over) meanwhile, the capture is read whole:
# report holds it open. Report writes the kernel trace of a real capture
# (1.4 MB of CSV) into a pipe that is read no further than its first KiB
# until the file has been changed, so report cannot finish before that.
set -u
. "$(dirname "$0")/cli_lib.sh"
FIXTURE=$PERFKIT_TEST_DATA/transformer_naive.sqlite
FILE=$TMP/capture.sqlite
REPORT=(report --report=cuda_gpu_trace,cuda_api_sum --format=csv "$FILE")

# report_while CHANGE...: perfkit report on a fresh copy of the fixture,
# with CHANGE run on it once report has begun writing; leaves $status,
# $TMP/out (everything report wrote) and $TMP/err like run.
report_while() {
	local fifo=$TMP/pipe pid

	cp "$FIXTURE" "$FILE"
	rm -f "$fifo"
	mkfifo "$fifo"
	"$PERFKIT" "${REPORT[@]}" >"$fifo" 2>"$TMP/err" &
	pid=$!
	exec 3<"$fifo"
	head -c 1024 <&3 >"$TMP/out"
	"$@"
	cat <&3 >>"$TMP/out"
	exec 3<&-
	wait "$pid"
	status=$?
}

cp "$FIXTURE" "$FILE"
run "${REPORT[@]}"
expect_status "the untouched capture" 0
cp "$TMP/out" "$TMP/whole.csv"

for bytes in 0 65536 1048576; do
	report_while truncate -s "$bytes" "$FILE"
	expect_status "truncated to $bytes bytes while read" 2
	expect_one_error_line "truncated to $bytes bytes while read" \
		"capture\.sqlite: truncated while being read \\($bytes bytes, [0-9]+ when opened\\)"
done

report_while rm "$FILE"
expect_status "deleted while read" 0
expect_that "deleted while read: every row is read" cmp -s "$TMP/out" "$TMP/whole.csv"

cp "$PERFKIT_TEST_DATA/clean_loop.sqlite" "$TMP/other.sqlite"
report_while mv "$TMP/other.sqlite" "$FILE"
expect_status "replaced while read" 0
expect_that "replaced while read: every row of the first is read" cmp -s "$TMP/out" "$TMP/whole.csv"
finish
