# tmux_lib.sh - helpers for the tests that drive `perfkit top` inside tmux,
# sourced after cli_lib.sh: a private tmux server that the exit trap stops,
# the screen of session "top" in $TMP/screen, and waits on what it shows.
command -v tmux >/dev/null || { echo "FAIL: tmux is needed" >&2; exit 1; }
SOCK="perfkit-top-$(basename "$0" .sh)-$$"
trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT
tm() { tmux -L "$SOCK" "$@"; }
# One server for the whole test, kept when a test replaces its only session:
# by default tmux exits with its last session, and a session started at that
# moment finds its server gone ("server exited unexpectedly").
tm start-server \; set -g exit-empty off
status=
: >"$TMP/err" # fail() shows perfkit's stderr; top's own goes to the pane

screen() { tm capture-pane -p -t top:0 >"$TMP/screen" 2>/dev/null; }

# shows TEXT / lacks TEXT: what the screen shows now.
shows() { screen && grep -qF -- "$1" "$TMP/screen"; }
lacks() { screen && ! grep -qF -- "$1" "$TMP/screen"; }

# wait_for NAME TEXT: the screen shows TEXT in time ($WAIT_S).
wait_for() {
	if wait_until "$WAIT_S" shows "$2"; then pass "$1"; return 0; fi
	fail "$1: the screen lacks '$2'"
	sed 's/^/    | /' "$TMP/screen" >&2
	return 1
}

# start_top NAME ARGS...: perfkit top ARGS in a fresh tmux session; its exit
# status lands in $TMP/NAME.status, its stderr in $TMP/NAME.err.
start_top() {
	local name=$1 cmd
	shift
	rm -f "$TMP/$name.status"
	printf -v cmd 'cd %q && env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q top' "$TMP" "$PERFKIT"
	for a in "$@"; do printf -v cmd '%s %q' "$cmd" "$a"; done
	printf -v cmd '%s 2>%q; echo $? >%q; sleep 60' "$cmd" "$TMP/$name.err" "$TMP/$name.status"
	tm kill-session -t top >/dev/null 2>&1
	tm new-session -d -s top -x 150 -y 40 "$cmd"
}

# replay_top FILE: perfkit top replaying FILE as fast as it can, in a
# 160x45 session "top"; keys K...: send keys to it.
replay_top() {
	local cmd
	printf -v cmd 'env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q top --replay=1000000000 %q; sleep 60' \
		"$PERFKIT" "$1"
	tm kill-session -t top >/dev/null 2>&1
	tm new-session -d -s top -x 160 -y 45 "$cmd"
}
keys() { tm send-keys -t top:0 "$@"; }

# expect_exit NAME WANT: top exits with WANT in time.
expect_exit() {
	local got
	wait_until "$WAIT_S" test -s "$TMP/$1.status"
	got=$(cat "$TMP/$1.status" 2>/dev/null || echo "still running")
	if [ "$got" = "$2" ]; then pass "$1: exit status $2"; else
		fail "$1: exit status '$got', wanted $2"; sed 's/^/    ! /' "$TMP/$1.err" >&2; fi
}

# readable NAME FILE: a complete capture of write_live_store's kernels
# (tests/tools) that perfkit report reads.
readable() {
	if "$PERFKIT" report "$2" >"$TMP/report.out" 2>&1 && grep -q live_kernel_a "$TMP/report.out"
	then pass "$1: the capture is complete"; else fail "$1: the capture is not complete"; fi
}
