#!/usr/bin/env bash
# test_cli_f_means_force.sh - one meaning per option across subcommands:
# in every subcommand's --help, -f is --force wherever the command has
# --force and never anything else, --format's short form is -F, and a
# command that writes a file it could overwrite (-o) has -f/--force. The
# old spelling of the commands whose -f was --format, `-f FMT` and
# `-fFMT`, still selects FMT, with one warning line, and writes what
# --format=FMT writes; -f before anything else is --force.
. "$(dirname "$0")/cli_lib.sh"

cap="$PERFKIT_TEST_DATA/gpu_work.sqlite"
commands=$(sed -n 's/^PERFKIT_COMMAND(\([a-z]*\),.*/\1/p' "$PERFKIT_SOURCE/cli/commands.def")
[ -n "$commands" ] || { echo "FAIL: no commands in commands.def" >&2; exit 1; }

for c in $commands; do
	run "$c" --help
	if [ "$status" -ne 0 ]; then fail "$c --help: exit 0"; continue; fi
	opts=$(grep -E '^ +(-[a-zA-Z], )?--' "$TMP/out")
	f_lines=$(grep -cE '^ +-f, ' <<<"$opts")
	if grep -qE '^ +-f, ' <<<"$opts" && ! grep -qE '^ +-f, --force( |$)' <<<"$opts"; then
		fail "$c: -f is $(grep -E '^ +-f, ' <<<"$opts" | awk '{print $2}'), not --force"
	elif grep -qE '^ +(-[a-zA-Z], )?--force( |$)' <<<"$opts" && [ "$f_lines" -ne 1 ]; then
		fail "$c: --force has no -f"
	else
		pass "$c: -f is --force or nothing"
	fi
	if grep -qE '^ +(-[a-zA-Z], )?--format' <<<"$opts" && ! grep -qE '^ +-F, --format=FMT' <<<"$opts"; then
		fail "$c: --format's short form is not -F"
	fi
	if grep -qE '^ +-F, ' <<<"$opts" && ! grep -qE '^ +-F, --format=' <<<"$opts"; then
		fail "$c: -F is not --format"
	fi
	if grep -qE '^ +(-o, )?--output=' <<<"$opts" && [ "$f_lines" -ne 1 ]; then
		fail "$c: writes -o FILE without -f/--force"
	fi
done

# same NAME FMT ARGS...: `perfkit ARGS` with -f FMT and -fFMT writes what
# it writes with -F FMT, and says on stderr what it says then after one
# line of warning.
warning() { echo "perfkit: warning: -f $1 is now -F $1 (--format); -f means --force"; }
same() {
	local name=$1 fmt=$2
	shift 2
	run "$@" -F "$fmt"
	expect_status "$name -F $fmt" 0
	grep -q "is now -F" "$TMP/err" && fail "$name -F $fmt: no warning" || pass "$name -F $fmt: no warning"
	cp "$TMP/out" "$TMP/new.out"
	{ warning "$fmt"; cat "$TMP/err"; } >"$TMP/new.err"
	for old in "-f $fmt" "-f$fmt"; do
		# shellcheck disable=SC2086 # the old spelling is one or two words
		run "$@" $old
		expect_status "$name $old" 0
		if cmp -s "$TMP/err" "$TMP/new.err"; then pass "$name $old warns once"
		else fail "$name $old warns once"; fi
		if cmp -s "$TMP/out" "$TMP/new.out"; then pass "$name $old writes what -F $fmt writes"
		else fail "$name $old writes what -F $fmt writes"; fi
	done
}
same "report" json report "$cap"
same "report" csv report -r cuda_gpu_kern_sum "$cap"
same "diagnose" json diagnose "$cap"
same "roofline" csv roofline "$cap"
same "diff" json diff "$cap" "$cap"
run baseline save -o "$TMP/base.json" "$cap" "$cap"
expect_status "baseline save" 0
same "gate" json gate --baseline "$TMP/base.json" "$cap"

# -f alone, or before a capture, is --force: it replaces the -o file,
# in a command whose -f was --format.
echo old >"$TMP/old.json"
run report --format=json -o "$TMP/old.json" "$cap"
expect_status "report -o onto an existing file without -f" 2
expect_one_error_line "report -o onto an existing file without -f" "old\.json exists; use --force"
run report -f --format=json -o "$TMP/old.json" "$cap"
expect_status "report -f -o onto an existing file" 0
run report --format=json "$cap"
if cmp -s "$TMP/out" "$TMP/old.json"; then pass "report -f replaced the file with the report"
else fail "report -f replaced the file with the report"; fi
run diff -f -o "$TMP/old.json" -F json "$cap" "$cap"
expect_status "diff -f -o onto an existing file" 0
[ -s "$TMP/err" ] && fail "diff -f -o: no warning" || pass "diff -f -o: no warning"

# A name that is no format of the command keeps -f as --force: `-f html`
# in diagnose (which writes no HTML) takes html for a capture.
run diagnose -f html
expect_status "diagnose -f html" 2
expect_one_error_line "diagnose -f html: html is a file" "html"
run report -fbogus "$cap"
expect_status "report -fbogus" 2
expect_one_error_line "report -fbogus" "option '-f' takes no value"

finish
