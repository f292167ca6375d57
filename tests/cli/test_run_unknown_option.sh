#!/usr/bin/env bash
# Bad `perfkit run` usage is one line on stderr and status 2, in every build:
# an unknown option, an unknown --trace item, a bad interval, no program,
# an unknown --metrics set or sample.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

expect_usage() { # DESCRIPTION PATTERN ARGS...
	local what=$1 pattern=$2
	shift 2
	"$PERFKIT" run "$@" >/dev/null 2>"$tmp/err"
	[ $? = 2 ] || fail "$what: want status 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$what: want one line: $(cat "$tmp/err")"
	grep -q "^perfkit: .*$pattern" "$tmp/err" || fail "$what: message: $(cat "$tmp/err")"
}

cd "$tmp"
expect_usage "unknown option" "bogus" --bogus -- true
expect_usage "unknown trace item" "gpu" --trace=cuda,gpu -- true
expect_usage "zero flush interval" "flush-interval" --flush-interval=0 -- true
expect_usage "no program" "program"
expect_usage "unknown metrics set" "unknown set 'flops' (choose roofline or memory)" --metrics=flops -- true
expect_usage "metrics sample out of range" "metrics-sample" --metrics=memory --metrics-sample=0 -- true
ls perfkit-*.sqlite >/dev/null 2>&1 && fail "bad usage wrote a capture"
exit 0
