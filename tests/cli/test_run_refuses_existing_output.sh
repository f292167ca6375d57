#!/usr/bin/env bash
# `perfkit run -o FILE` never overwrites FILE unless -f is given.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	skip "-o onto an existing file, with and without -f" "built without CUPTI"
	finish
	exit
fi

echo "precious" >"$TMP/out.sqlite"
run run -o "$TMP/out.sqlite" -- true
expect_status "an existing output" 2
expect_one_error_line "an existing output" "out\.sqlite exists; use -f"
expect_that "the existing file is unchanged" test "$(cat "$TMP/out.sqlite")" = precious

run run -f -o "$TMP/out.sqlite" -- true
expect_status "-f" 0
run report "$TMP/out.sqlite"
expect_status "-f leaves a valid capture" 0
finish
