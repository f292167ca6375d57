#!/usr/bin/env bash
# `perfkit run` exits with the program's status, and 128 + the signal when
# the program was killed by one; the status is stored in the capture.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PERFKIT" run -o "$tmp/probe.sqlite" -- true >/dev/null 2>"$tmp/probe"
if grep -q "built without CUPTI" "$tmp/probe"; then
	"$PERFKIT" run -o "$tmp/x.sqlite" -- sh -c 'exit 7' 2>/dev/null
	[ $? = 2 ] || fail "fallback build: want status 2"
	[ -e "$tmp/x.sqlite" ] && fail "fallback build wrote a file"
	exit 0
fi

"$PERFKIT" run -o "$tmp/seven.sqlite" -- sh -c 'exit 7' >/dev/null 2>&1
[ $? = 7 ] || fail "want the program's status 7"
"$PERFKIT" run -o "$tmp/term.sqlite" -- sh -c 'kill -TERM $$' >/dev/null 2>&1
[ $? = 143 ] || fail "want 128 + SIGTERM (143)"
"$PERFKIT" run -o "$tmp/args.sqlite" -- sh -c 'exit $#' sh a b c >/dev/null 2>&1
[ $? = 3 ] || fail "arguments after the program reach it unchanged"
"$PERFKIT" report "$tmp/seven.sqlite" >/dev/null 2>&1 || fail "the capture of a failing program is readable"
exit 0
