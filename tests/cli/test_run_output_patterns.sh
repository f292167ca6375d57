#!/usr/bin/env bash
# `perfkit run -o` patterns: %h host, %r rank from the launcher's variables,
# %q{VAR}, %%; a pattern that cannot be expanded is refused with one line
# before the program starts.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	skip "perfkit run -o patterns" "built without CUPTI"
	finish
	exit
fi
cd "$TMP"
host=$(hostname)

RANK=3 WORLD_SIZE=4 run run -o 'job-%h-%r.sqlite' -- true
expect_status "-o job-%h-%r with RANK=3" 0
expect_that "the name holds host and rank" test -f "job-$host-3.sqlite"
OMPI_COMM_WORLD_RANK=9 JOB_ID=77 run run -o 'j%q{JOB_ID}-r%r-100%%.sqlite' -- true
expect_status "-o with %q{JOB_ID}, an Open MPI rank and %%" 0
expect_that "the name holds the variable, rank and a %" test -f "j77-r9-100%.sqlite"

for spec in 'x-%r.sqlite|%r needs a rank' 'x-%q{PERFKIT_TEST_UNSET}|PERFKIT_TEST_UNSET is not set' \
	'x-%y|unknown %y' 'x-%q{HOME}|holds a'; do
	pattern=${spec%%|*} message=${spec#*|}
	run run -o "$pattern" -- sh -c 'touch ran'
	expect_status "-o $pattern refused" 2
	expect_one_error_line "-o $pattern refused" "^perfkit: -o: .*$message"
	expect_that "-o $pattern: the program did not start" test ! -e ran
done
expect_that "no file from a refused pattern" test -z "$(ls | grep '^x-')"
finish
