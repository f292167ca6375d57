#!/usr/bin/env bash
# The end of `perfkit run` shows a progress line on stderr, rewritten in
# place and erased when the capture is complete, only when stderr is a
# terminal; with stderr in a file or a pipe it says nothing of it. The
# program is write_live_store, which writes its process file under `perfkit
# run` the way the collector does.
set -u
. "$(dirname "$0")/cli_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"

if built_without_cupti; then
	skip "the progress line of perfkit run" "built without CUPTI"
	finish
	exit
fi

run run -o "$TMP/plain.sqlite" -- "$LIVE" 0.3
expect_status "stderr in a file" 0
if grep -q "finishing the capture" "$TMP/err" || grep -q $'\r' "$TMP/err"; then
	fail "stderr in a file: a progress line was written"; else
	pass "stderr in a file: no progress line"; fi

if ! command -v script >/dev/null; then
	skip "the progress line on a terminal" "no script(1) to give perfkit one"
	finish
	exit
fi
# script(1) gives the command a terminal and copies what it writes there.
script -qec "$(printf '%q ' "$PERFKIT" run -o "$TMP/tty.sqlite" -- "$LIVE" 0.3)" /dev/null \
	>"$TMP/tty" 2>&1
if grep -q "finishing the capture: building indexes" "$TMP/tty"; then
	pass "stderr on a terminal: the progress line is shown"; else
	fail "stderr on a terminal: no progress line in: $(head -c 400 "$TMP/tty")"; fi
if grep -q $'\r\033\[K' "$TMP/tty"; then pass "stderr on a terminal: the line is erased"; else
	fail "stderr on a terminal: the progress line is not erased"; fi
run report "$TMP/tty.sqlite"
expect_status "the capture made on a terminal is complete" 0
finish
