# tmux_lib.sh - helpers for the tests that drive `perfkit top` inside tmux,
# sourced after cli_lib.sh: a private tmux server that the exit trap stops,
# the screen of session "top" in $TMP/screen, and waits on what it shows.
command -v tmux >/dev/null || { echo "FAIL: tmux is needed" >&2; exit 1; }
SOCK="perfkit-top-$(basename "$0" .sh)-$$"
trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; rm -rf "$TMP"' EXIT
tm() { tmux -L "$SOCK" "$@"; }
status=
: >"$TMP/err" # fail() shows perfkit's stderr; top's own goes to the pane

screen() { tm capture-pane -p -t top:0 >"$TMP/screen" 2>/dev/null; }

# wait_for NAME TEXT [SECONDS]: the screen shows TEXT in time (default 5 s).
wait_for() {
	for _ in $(seq $((${3:-5} * 10))); do
		screen
		if grep -qF -- "$2" "$TMP/screen"; then pass "$1"; return 0; fi
		sleep 0.1
	done
	fail "$1: the screen lacks '$2'"
	sed 's/^/    | /' "$TMP/screen" >&2
	return 1
}
