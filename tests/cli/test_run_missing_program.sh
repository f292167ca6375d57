#!/usr/bin/env bash
# `perfkit run` on a program that does not exist answers like a shell: the
# shell's message and status 127 (126 for a file that is not executable).
# A build without CUPTI refuses every run with one line and status 2.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	run run -- perfkit-no-such-program
	expect_status "fallback build" 2
	expect_err_line "fallback build" "perfkit: this perfkit was built without CUPTI; run cannot capture"
	skip "missing and non-executable programs" "built without CUPTI"
	finish
	exit
fi

cd "$TMP"
run run -- perfkit-no-such-program
expect_status "missing program" 127
expect_err_line "missing program" "perfkit: perfkit-no-such-program: command not found"
expect_that "no capture for a program that never ran" test -z "$(ls perfkit-*.sqlite 2>/dev/null)"

run run -- ./missing
expect_status "missing path" 127
expect_err "missing path" "No such file or directory"

touch not-executable
run run -- ./not-executable
expect_status "non-executable" 126
finish
