#!/usr/bin/env bash
# test_top_live.sh - `perfkit top` on live data, in tmux: it follows a
# capture while its writer adds rows and sees it finished (the writer can
# still finish it: top lets go between reads); and, in a build with CUPTI,
# `perfkit top -- PROGRAM` shows the program's rows live, keeps its output
# off the screen, leaves a complete capture whether the program ends, top
# quits first or Ctrl-C stops it, and exits with the program's status.
. "$(dirname "$0")/cli_lib.sh"

. "$(dirname "$0")/tmux_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"

# ---- following a capture written in place --------------------------------------
"$LIVE" -o "$TMP/inplace.sqlite" 3 &
writer=$!
wait_until "$WAIT_S" test -s "$TMP/inplace.sqlite"
start_top inplace "$TMP/inplace.sqlite"
wait_for "in place: rows appear while the writer runs" "live_kernel_a"
wait_for "in place: shown as live" "live capture"
wait $writer
if [ $? = 0 ]; then pass "in place: the writer finished its file while top followed it"; else
	fail "in place: the writer could not finish its file"; fi
wait_for "in place: seen finished" "finished capture"
tm send-keys -t top:0 q
expect_exit inplace 0
readable "in place" "$TMP/inplace.sqlite"

# ---- running a program -------------------------------------------------------------
"$PERFKIT" run -o "$TMP/probe.sqlite" -- true >/dev/null 2>"$TMP/probe"
if grep -q "built without CUPTI" "$TMP/probe"; then
	echo "skip: this perfkit cannot run programs (built without CUPTI)"
	finish
	exit
fi

start_top program -o "$TMP/program.sqlite" -- "$LIVE" 3 3
wait_for "program: its rows appear live" "live_kernel_b"
wait_for "program: shown running" "running"
wait_for "program: its end is shown" "program exited (status 3)"
tm send-keys -t top:0 q
expect_exit program 3
readable "program" "$TMP/program.sqlite"
if grep -q "hello from write_live_store" "$TMP/program.log"; then
	pass "program: its output went to program.log"; else fail "program: no program.log output"; fi
if grep -q "capture written to" "$TMP/program.err"; then
	pass "program: perfkit's messages come after the screen"; else
	fail "program: no 'capture written to' on stderr"; fi

start_top quit-early -o "$TMP/early.sqlite" -- "$LIVE" 3 4
wait_for "quit early: running" "live_kernel_a"
tm send-keys -t top:0 q
expect_exit quit-early 4
readable "quit early" "$TMP/early.sqlite"
if grep -q "still running; waiting" "$TMP/quit-early.err"; then
	pass "quit early: top said it waits for the program"; else
	fail "quit early: no waiting message"; fi

start_top ctrl-c -o "$TMP/ctrlc.sqlite" -- "$LIVE" 30
wait_for "Ctrl-C: running" "live_kernel_a"
tm send-keys -t top:0 C-c
expect_exit ctrl-c 130
readable "Ctrl-C" "$TMP/ctrlc.sqlite"

finish
