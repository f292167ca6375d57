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

# A value that cannot name a file: the line names the variable and says
# why; a control character is refused and never echoed.
env_run() {
	env -u RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID "$1" "$PERFKIT" "${@:2}" \
		>"$TMP/out" 2>"$TMP/err"
	status=$?
}
nl=$(printf 'a\nb') esc=$(printf 'a\033[2Jb')
for spec in 'RANK=abc|y-%r|%r needs a rank: RANK=abc is not a rank \(a number from 0 to 2147483647\)' \
	'RANK=-1|y-%r|%r needs a rank: RANK=-1 is not a rank' \
	'RANK=12345678901234567890|y-%r|%r needs a rank: RANK=12345678901234567890 is not a rank' \
	'RANK=../../x|y-%r|%r needs a rank: RANK=\.\./\.\./x is not a rank' \
	'V=..|y-%q{V}|%q\{V\}: V is '"'"'\.\.'"'"', which is not allowed as a name part' \
	"V=$nl|y-%q{V}|%q\\{V\\}: V holds a control character \\(byte 0x0a\\)" \
	"V=$esc|y-%q{V}|%q\\{V\\}: V holds a control character \\(byte 0x1b\\)"; do
	IFS='|' read -r -d '' assign pattern message < <(printf '%s' "$spec")
	name="-o $pattern with $(printf '%q' "$assign")"
	env_run "$assign" run -o "$pattern" -- sh -c 'touch ran'
	expect_status "$name refused" 2
	expect_one_error_line "$name refused" "^perfkit: -o: $message"
	expect_that "$name: the program did not start" test ! -e ran
done
expect_that "no file from a refused value" test -z "$(ls | grep '^y-')"
finish
