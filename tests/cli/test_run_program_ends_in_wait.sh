#!/usr/bin/env bash
# A program that ends just after perfkit's wait loop last found it running
# (between its waitpid and its poll) ends the run: perfkit exits with the
# program's status and writes the capture, rather than wait for a wake-up
# it has already thrown away. The shim child_ends_in_wait.so makes the
# program (sleep) end at that moment, every time, with SIGTERM.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	skip "a program that ends inside perfkit's wait" "built without CUPTI"
	finish
	exit
fi
shim=$PERFKIT_TEST_TOOLS/child_ends_in_wait.so
if [ ! -f "$shim" ]; then
	fail "the shim $shim was not built"
	finish
	exit
fi

# timeout's 124 is a perfkit that waits for good; 143 the program's SIGTERM
LD_PRELOAD=$shim ASAN_OPTIONS=verify_asan_link_order=0 \
	timeout -k 5 "$WAIT_S" "$PERFKIT" run -o "$TMP/ends.sqlite" -- sleep 600 \
	>"$TMP/out" 2>"$TMP/err"
status=$?
expect_status "a program that ends inside the wait" 143
expect_that "its capture is written" test -s "$TMP/ends.sqlite"
finish
