#!/usr/bin/env bash
# Bad `perfkit run` usage is one line on stderr and status 2, in every build:
# an unknown option, an unknown --trace item, a bad interval, no program,
# an unknown --metrics set or sample.
set -u
. "$(dirname "$0")/cli_lib.sh"

expect_usage() { # DESCRIPTION PATTERN ARGS...
	local what=$1 pattern=$2
	shift 2
	run run "$@"
	expect_status "$what" 2
	expect_one_error_line "$what" "$pattern"
}

cd "$TMP"
expect_usage "unknown option" "bogus" --bogus -- true
expect_usage "unknown trace item" "gpu" --trace=cuda,gpu -- true
expect_usage "zero flush interval" "flush-interval" --flush-interval=0 -- true
expect_usage "no program" "program"
expect_usage "unknown metrics set" "unknown set 'flops' \(choose roofline or memory\)" --metrics=flops -- true
expect_usage "metrics sample out of range" "metrics-sample" --metrics=memory --metrics-sample=0 -- true
expect_that "bad usage wrote no capture" test -z "$(ls perfkit-*.sqlite 2>/dev/null)"
finish
