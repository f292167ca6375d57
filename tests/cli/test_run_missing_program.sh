#!/usr/bin/env bash
# `perfkit run` (and `perfkit top --`) on a program that cannot be executed
# answers like a shell: one line, the shell's message, status 127 (not
# found) or 126 (found, but not executable: a folder, a file without the
# execute bit, a script whose #! interpreter is missing), and nothing of
# the run is left: no capture, no log, no run folder. Before, a folder
# passed the check (a folder is searchable), its exec failed in the child,
# and a capture of a program that never ran was written.
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

mkdir "$TMP/work"
cd "$TMP/work"
mkdir runs a-folder
touch not-executable
printf '#!/perfkit-no-such-interpreter\n' >no-interpreter
chmod +x no-interpreter
export TMPDIR=$TMP/work/runs

# nothing_left NAME: no capture, program log or run folder was left.
nothing_left() {
	expect_that "$1: no capture left" test -z "$(ls ./*.sqlite ./*.log 2>/dev/null)"
	expect_that "$1: no run folder left" test -z "$(ls runs)"
}

for spec in 'perfkit-no-such-program|127|perfkit: perfkit-no-such-program: command not found' \
	'./missing|127|perfkit: ./missing: No such file or directory' \
	'./a-folder|126|perfkit: ./a-folder: Is a directory' \
	"$TMP/work/a-folder|126|perfkit: $TMP/work/a-folder: Is a directory" \
	'./not-executable|126|perfkit: ./not-executable: Permission denied' \
	'./not-executable/x|126|perfkit: ./not-executable/x: Not a directory' \
	'./no-interpreter|127|perfkit: ./no-interpreter: cannot execute: its interpreter (#!) or loader was not found'; do
	IFS='|' read -r program want message <<<"$spec"
	for cmd in run top; do
		run "$cmd" -o out.sqlite -- "$program"
		expect_status "$cmd $program" "$want"
		expect_err_line "$cmd $program" "$message"
		nothing_left "$cmd $program"
	done
done
finish
