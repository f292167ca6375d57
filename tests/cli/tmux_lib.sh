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
