#!/usr/bin/env bash
# A program that never touches CUDA still gives a valid, empty capture (named
# perfkit-PROGRAM-N.sqlite, first free N) and a note saying why it is empty.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PERFKIT" run -o "$tmp/probe.sqlite" -- true >/dev/null 2>"$tmp/probe"
grep -q "built without CUPTI" "$tmp/probe" && exit 0

cd "$tmp"
"$PERFKIT" run -- true >out 2>err
[ $? = 0 ] || fail "status: $(cat err)"
[ -f perfkit-true-1.sqlite ] || fail "default name perfkit-true-1.sqlite missing: $(ls)"
grep -q "^perfkit: note: true made no CUDA calls" err || fail "note missing: $(cat err)"
[ -s out ] && fail "perfkit wrote to the program's stdout: $(cat out)"
"$PERFKIT" report perfkit-true-1.sqlite >/dev/null 2>report.err || fail "not a valid capture: $(cat report.err)"

"$PERFKIT" run -- true >/dev/null 2>&1
[ -f perfkit-true-2.sqlite ] || fail "second run did not take the next free name: $(ls)"
exit 0
