#!/usr/bin/env bash
# `perfkit run -o FILE` never overwrites FILE unless -f is given.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PERFKIT" run -o "$tmp/probe.sqlite" -- true >/dev/null 2>"$tmp/probe"
grep -q "built without CUPTI" "$tmp/probe" && exit 0

echo "precious" >"$tmp/out.sqlite"
"$PERFKIT" run -o "$tmp/out.sqlite" -- true >/dev/null 2>"$tmp/err"
[ $? = 2 ] || fail "want status 2 for an existing output"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "want one line: $(cat "$tmp/err")"
grep -q "^perfkit: .*out.sqlite exists; use -f" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(cat "$tmp/out.sqlite")" = precious ] || fail "the existing file was changed"

"$PERFKIT" run -f -o "$tmp/out.sqlite" -- true >/dev/null 2>"$tmp/err"
[ $? = 0 ] || fail "-f: $(cat "$tmp/err")"
"$PERFKIT" report "$tmp/out.sqlite" >/dev/null 2>&1 || fail "-f did not leave a valid capture"
exit 0
