#!/usr/bin/env bash
# test_report_binary_refuses_terminal.sh - a binary output (report
# --format=perfetto) with no -o and stdout a terminal is refused in one
# line, status 2, and nothing reaches the terminal; before, the trace's
# bytes were written to the screen. A pipe, a file and -o FILE on a
# terminal still get the trace, the same bytes each way. The terminal is
# a real pseudo-terminal (python's pty), not a guess at one.
. "$(dirname "$0")/cli_lib.sh"

cap="$PERFKIT_TEST_DATA/gpu_work.sqlite"
if built_without_perfetto; then
	skip "perfetto to a terminal" "built without protobuf-c"
	finish
	exit
fi
expect_status "perfetto to a file" 0

# on_tty OUT ARGS...: perfkit ARGS with stdout (only) a new pseudo-terminal;
# what the terminal received in OUT, stderr in $TMP/err, exit in $status.
on_tty() {
	local out=$1
	shift
	python3 - "$out" "$PERFKIT" "$@" 2>"$TMP/err" <<'PY'
import os, pty, subprocess, sys
out, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
p = subprocess.Popen(argv, stdout=slave, stderr=sys.stderr, stdin=subprocess.DEVNULL)
os.close(slave)
got = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the terminal's last writer is gone
        break
    if not chunk:
        break
    got += chunk
open(out, "wb").write(got)
sys.exit(p.wait())
PY
	status=$?
}

for spelled in "--format=perfetto" "-F perfetto"; do
	# shellcheck disable=SC2086 # -F perfetto is two words
	on_tty "$TMP/screen" report $spelled "$cap"
	expect_status "report $spelled to a terminal" 2
	expect_err_line "report $spelled to a terminal" \
		"perfkit: --format=perfetto is binary; write it to a file with -o FILE or pipe it"
	if [ -s "$TMP/screen" ]; then fail "report $spelled: nothing reaches the terminal ($(wc -c <"$TMP/screen") bytes)"
	else pass "report $spelled: nothing reaches the terminal"; fi
done
on_tty "$TMP/screen" report --format=perfetto -o - "$cap"
expect_status "report --format=perfetto -o - to a terminal" 2

# -o FILE on a terminal, a pipe and a file: the same trace
on_tty "$TMP/screen" report --format=perfetto -o "$TMP/tty.pftrace" "$cap"
expect_status "report --format=perfetto -o FILE from a terminal" 0
"$PERFKIT" report --format=perfetto "$cap" 2>"$TMP/err" | cat >"$TMP/pipe.pftrace"
status=${PIPESTATUS[0]}
expect_status "report --format=perfetto into a pipe" 0
"$PERFKIT" report --format=perfetto "$cap" >"$TMP/file.pftrace" 2>"$TMP/err"
status=$?
expect_status "report --format=perfetto into a file" 0
if [ -s "$TMP/pipe.pftrace" ] && cmp -s "$TMP/pipe.pftrace" "$TMP/probe.pftrace" &&
	cmp -s "$TMP/file.pftrace" "$TMP/probe.pftrace" && cmp -s "$TMP/tty.pftrace" "$TMP/probe.pftrace"; then
	pass "a pipe, a file and -o FILE get the same trace"
else
	fail "a pipe, a file and -o FILE get the same trace"
fi

# A text format still goes to the terminal.
on_tty "$TMP/screen" report --format=json "$cap"
expect_status "report --format=json to a terminal" 0
expect_that "json reaches the terminal" grep -q '"reports"' "$TMP/screen"

finish
