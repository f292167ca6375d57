# cli_lib.sh - helpers sourced by the command-line tests: run perfkit,
# check its exit status and messages, report each failure by name.
: "${PERFKIT:?PERFKIT must name the perfkit binary}"
failures=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# perfkit run's folders (and a capture it keeps there) go where the test's
# files go, and leave with them; a test may name its own TMPDIR.
mkdir "$TMP/run-folders"
export TMPDIR=$TMP/run-folders

# run ARGS...: runs perfkit, leaving $status, $TMP/out, $TMP/err.
run() {
	"$PERFKIT" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
}

fail() {
	echo "FAIL: $1" >&2
	echo "  command status: $status" >&2
	echo "  stderr: $(head -c 600 "$TMP/err")" >&2
	failures=$((failures + 1))
}

pass() { echo "ok: $1"; }

# How long a test waits for something that takes well under a second on an
# idle machine (a process to start or end, a file to appear, a screen to
# change). Generous, since the tests share two loaded cores: only a test
# that is failing anyway waits this long.
WAIT_S=30

# wait_until SECONDS COMMAND...: runs COMMAND until it succeeds (0) or
# SECONDS of wall time have passed (1). A deadline, not a number of tries:
# how long a try takes depends on the machine's load.
wait_until() {
	local deadline=$((SECONDS + $1))

	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# expect_status NAME WANT
expect_status() {
	if [ "$status" -eq "$2" ]; then pass "$1 (exit $2)"; else fail "$1: wanted exit $2"; fi
}

# expect_err_line NAME EXACT: stderr is exactly that one line.
expect_err_line() {
	local got
	got=$(cat "$TMP/err")
	if [ "$got" = "$2" ]; then pass "$1 message"; else fail "$1: wanted stderr '$2', got '$got'"; fi
}

# expect_one_error_line NAME PATTERN: one line, "perfkit: " prefix, matching PATTERN (grep -E).
expect_one_error_line() {
	local lines
	lines=$(wc -l <"$TMP/err")
	if [ "$lines" -ne 1 ]; then fail "$1: wanted one stderr line, got $lines"; return; fi
	if ! grep -q '^perfkit: ' "$TMP/err"; then fail "$1: stderr lacks 'perfkit: '"; return; fi
	if ! grep -qE -- "$2" "$TMP/err"; then fail "$1: stderr does not match /$2/"; return; fi
	pass "$1 message"
}

# expect_out NAME PATTERN: stdout matches.
expect_out() {
	if grep -qE -- "$2" "$TMP/out"; then pass "$1 output"; else fail "$1: stdout lacks /$2/"; fi
}

# expect_err NAME PATTERN: stderr matches.
expect_err() {
	if grep -qE -- "$2" "$TMP/err"; then pass "$1 message"; else fail "$1: stderr lacks /$2/"; fi
}

# expect_that NAME COMMAND...: COMMAND succeeds (a check that is no perfkit run).
expect_that() {
	if "${@:2}"; then pass "$1"; else fail "$1"; fi
}

# meta FILE KEY: a PERFKIT_META value of a capture, "" when there is none.
# Read-only: sqlite3 would otherwise create an empty FILE when it is not
# there yet, and a `perfkit run` starting then refuses its output as existing.
meta() { sqlite3 -readonly "$1" "SELECT value FROM PERFKIT_META WHERE key = '$2'" 2>/dev/null; }
has_meta() { test -n "$(meta "$1" "$2")"; }

# paused_run FILE SECONDS: `perfkit run --start-paused -- sleep SECONDS`
# writing FILE in the background ($runner its pid), returned once the run
# has recorded the program's pid; end_paused_run FILE ends the program and
# waits for the run.
paused_run() {
	"$PERFKIT" run -o "$1" --start-paused -- sleep "$2" >/dev/null 2>&1 &
	runner=$!
	wait_until "$WAIT_S" has_meta "$1" pid
}
end_paused_run() {
	kill "$(meta "$1" pid)" 2>/dev/null
	wait "$runner"
}

# built_without_cupti: this perfkit's `run` refuses to capture. Probes with
# `perfkit run -- true`, leaving $status, $TMP/out and $TMP/err like run.
built_without_cupti() {
	run run -o "$TMP/probe.sqlite" -- true
	grep -q "built without CUPTI" "$TMP/err"
}

# built_without_perfetto: this perfkit's `report --format=perfetto` says it
# was built without protobuf-c. Probes with gpu_work's trace, leaving
# $status, $TMP/out and $TMP/err like run.
built_without_perfetto() {
	run report --format=perfetto -o "$TMP/probe.pftrace" "$PERFKIT_TEST_DATA/gpu_work.sqlite"
	grep -q "built without protobuf-c" "$TMP/err"
}

# refused NAME PATTERN OPTION...: `perfkit run OPTION... -- true` exits 2
# with one error line matching PATTERN and writes nothing (run in $TMP).
refused() {
	local name=$1 pattern=$2
	shift 2
	run run -o "$TMP/never.sqlite" "$@" -- true
	expect_status "$name" 2
	expect_one_error_line "$name" "$pattern"
	expect_that "$name: nothing written" test ! -e "$TMP/never.sqlite"
}

# skip WHAT WHY: says which checks did not run and why, so a pass in a
# reduced build does not read as if they had.
skip() { echo "skip: $1 ($2)"; }

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed" >&2
		exit 1
	fi
	echo "all checks passed"
}
