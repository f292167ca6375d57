#!/usr/bin/env bash
# `perfkit run` on a program that does not exist answers like a shell: the
# shell's message and status 127 (126 for a file that is not executable).
# A build without CUPTI refuses every run with one line and status 2.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PERFKIT" run -o "$tmp/probe.sqlite" -- true >/dev/null 2>"$tmp/probe"
if grep -q "built without CUPTI" "$tmp/probe"; then
	"$PERFKIT" run -- perfkit-no-such-program >/dev/null 2>"$tmp/err"
	[ $? = 2 ] || fail "fallback build: want status 2"
	[ "$(cat "$tmp/err")" = "perfkit: this perfkit was built without CUPTI; run cannot capture" ] ||
		fail "fallback message: $(cat "$tmp/err")"
	exit 0
fi

cd "$tmp"
"$PERFKIT" run -- perfkit-no-such-program >/dev/null 2>err
[ $? = 127 ] || fail "missing program: want status 127"
[ "$(cat err)" = "perfkit: perfkit-no-such-program: command not found" ] || fail "message: $(cat err)"
ls perfkit-*.sqlite >/dev/null 2>&1 && fail "a capture was written for a program that never ran"

"$PERFKIT" run -- ./missing >/dev/null 2>err
[ $? = 127 ] || fail "missing path: want status 127"
grep -q "No such file or directory" err || fail "missing path message: $(cat err)"

touch not-executable
"$PERFKIT" run -- ./not-executable >/dev/null 2>err
[ $? = 126 ] || fail "non-executable: want status 126"
exit 0
