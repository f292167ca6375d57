#!/usr/bin/env bash
# test_top_usage.sh - `perfkit top` outside the screen: its help, and bad
# usage or a bad file as one line on stderr with exit status 2, before any
# terminal is touched.
. "$(dirname "$0")/cli_lib.sh"

store="$TMP/good.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }

run top --help
expect_status "top --help" 0
expect_out "top --help" '^usage: perfkit top'
expect_out "top --help shows the optional replay speed" '--replay\[=SPEED\]'
expect_out "top --help shows the program form" '-- PROGRAM'

run help top
expect_status "help top" 0

run --help
expect_out "perfkit --help lists top" '^   top +live view'

run top --replya "$store"
expect_status "misspelt option" 2
expect_err_line "misspelt option" "perfkit: unknown option '--replya'; did you mean '--replay'?"

run top
expect_status "no file" 2
expect_one_error_line "no file" "needs a capture file"

run top "$store" "$store"
expect_status "two files" 2
expect_one_error_line "two files" "one capture file"

run top "$TMP/missing.sqlite"
expect_status "missing file" 2
expect_one_error_line "missing file" "missing.sqlite: no such file"

head -c 4096 /dev/urandom >"$TMP/noise.sqlite"
run top "$TMP/noise.sqlite"
expect_status "not SQLite" 2
expect_one_error_line "not SQLite" "noise.sqlite: not an SQLite database"

size=$(stat -c %s "$store")
head -c $((size / 2)) "$store" >"$TMP/truncated.sqlite"
run top --replay "$TMP/truncated.sqlite"
expect_status "truncated store" 2
expect_one_error_line "truncated store" "truncated.sqlite: truncated"

printf '#!/bin/sh\n' >"$TMP/app" && chmod +x "$TMP/app"
run top "$TMP/app"
expect_status "a program given as FILE" 2
expect_one_error_line "a program given as FILE" "perfkit top -- .*app"

run top --replay=fast "$store"
expect_status "bad replay speed" 2
expect_one_error_line "bad replay speed" "SPEED must be a positive number"

run top --replay=0 "$store"
expect_status "zero replay speed" 2

run top --refresh=1 "$store"
expect_status "refresh out of range" 2
expect_one_error_line "refresh out of range" "--refresh must be between"

run top -o "$TMP/x.sqlite" "$store"
expect_status "capture option with a FILE" 2
expect_one_error_line "capture option with a FILE" "apply to a program"

run top --replay "$store" -- true
expect_status "FILE and program" 2
expect_one_error_line "FILE and program" "not both"

run top --replay -- true
expect_status "replay of a program" 2
expect_one_error_line "replay of a program" "cannot run a program"

# running a program: like `perfkit run`, refused with one line in a build
# without CUPTI, and a missing program answered as a shell would
run top -- perfkit-no-such-program
if grep -q "built without CUPTI" "$TMP/err"; then
	expect_status "program without CUPTI" 2
	expect_err_line "program without CUPTI" \
		"perfkit: this perfkit was built without CUPTI; top cannot capture"
else
	expect_status "missing program" 127
	expect_err_line "missing program" "perfkit: perfkit-no-such-program: command not found"
fi

finish
