#!/usr/bin/env bash
# `perfkit run` exits with the program's status, and 128 + the signal when
# the program was killed by one; the status is stored in the capture.
# A build without CUPTI refuses to run with status 2 and writes no file.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	run run -o "$TMP/x.sqlite" -- sh -c 'exit 7'
	expect_status "fallback build" 2
	expect_that "fallback build writes no file" test ! -e "$TMP/x.sqlite"
	skip "the program's status, 128 + signal, arguments reaching the program" "built without CUPTI"
	finish
	exit
fi

run run -o "$TMP/seven.sqlite" -- sh -c 'exit 7'
expect_status "the program's status" 7
run run -o "$TMP/term.sqlite" -- sh -c 'kill -TERM $$'
expect_status "128 + SIGTERM" 143
run run -o "$TMP/args.sqlite" -- sh -c 'exit $#' sh a b c
expect_status "arguments after the program reach it unchanged" 3
run report "$TMP/seven.sqlite"
expect_status "the capture of a failing program is readable" 0
finish
