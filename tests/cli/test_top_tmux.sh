#!/usr/bin/env bash
# test_top_tmux.sh - `perfkit top --replay=<large> FILE` driven inside tmux:
# the screen shows the kernels the capture holds (asked of the capture with
# sqlite3, not written down here), sorts by another column and reverses,
# filters by name, pauses, scrolls, shows its help, says when the terminal
# is too small, redraws when it grows again, and quits with q (exit status 0).
# Runs on a store written by the writer API and on a real GPU capture from
# tests/data when one is there.
. "$(dirname "$0")/cli_lib.sh"

command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
. "$(dirname "$0")/tmux_lib.sh"

COLS=160
ROWS=45

# wait_gone NAME TEXT: TEXT leaves the screen in time.
wait_gone() {
	if wait_until "$WAIT_S" lacks "$2"; then pass "$1"; return 0; fi
	fail "$1: the screen still shows '$2'"
	return 1
}

# The kernel table's rows (between its column names and the next panel).
table() {
	screen
	awk '/Share.*Total.*Count.*Avg.*Name/ { table = 1; next }
	     table && (/NVTX/ || /q quit/) { exit }
	     table { print }' "$TMP/screen"
}

# table_lacks NAME TEXT: TEXT leaves the kernel table in time.
table_without() { ! table | grep -qF -- "$1"; }
table_lacks() {
	if wait_until "$WAIT_S" table_without "$2"; then pass "$1"; return 0; fi
	fail "$1: the kernel table still shows '$2'"
	return 1
}

# The name in the first row of the kernel table that shows a plain ASCII
# name: rows whose name the screen had to sanitise ('?' for a control
# character, U+FFFD for invalid UTF-8) are passed over, as names() leaves
# those names out. A row is "%6.1f%% %9s %9s %9s  NAME" (39 columns first).
first_row() {
	table | LC_ALL=C awk '
		{
			name = substr($0, 40)
			sub(/\xE2\x80\xA6$/, "", name)       # the cut mark of a long name
			sub(/ +$/, "", name)
			if (name == "" || name ~ /[^ -~]/ || index(name, "?")) next
			print name
			exit
		}'
}

# expect_first NAME TEXT: that first row starts with TEXT in time.
first_row_is() { row=$(first_row) && case "$row" in "$1"*) true ;; *) false ;; esac; }
expect_first() {
	local row
	if wait_until "$WAIT_S" first_row_is "$2"; then pass "$1"; return 0; fi
	fail "$1: first plain row is '$row', wanted '$2'"
	return 1
}

keys() { tm send-keys -t top:0 "$@"; }

# expect_top_line NAME LINE / expect_top_line_not NAME LINE: the kernel
# table's top line becomes (or stops being) LINE in time.
top_line_is() { [ "$(table | head -1)" = "$1" ]; }
top_line_is_not() { [ "$(table | head -1)" != "$1" ]; }
expect_top_line() {
	if wait_until "$WAIT_S" top_line_is "$2"; then pass "$1"; return 0; fi
	fail "$1: top line is '$(table | head -1)', wanted '$2'"
}
expect_top_line_not() {
	if wait_until "$WAIT_S" top_line_is_not "$2"; then pass "$1"; return 0; fi
	fail "$1: top line stayed '$2'"
}

# Kernel names of the capture in an SQL order, cut to what a column shows;
# plain ASCII names only (the screen shows others sanitised; first_row
# passes over those rows the same way).
names() { # FILE ORDER LIMIT
	sqlite3 "$1" "SELECT substr(s.value, 1, 40) FROM CUPTI_ACTIVITY_KIND_KERNEL k
		JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName)
		WHERE s.value NOT GLOB '*[^ -~]*' AND s.value NOT GLOB '*[?]*'
		GROUP BY s.value ORDER BY $2 LIMIT $3"
}

# A piece of name $1 that name $2 does not hold (ignoring case), for the
# filter; quotes, backslashes and ';' are left out to keep send-keys plain.
distinct_piece() {
	local a=$1 b len off piece lower
	b=$(printf '%s' "$2" | tr '[:upper:]' '[:lower:]')
	for len in 12 8 5 3; do
		for ((off = 0; off + len <= ${#a}; off++)); do
			piece=${a:off:len}
			case "$piece" in *[\"\'\\\;]* | " "* | *" ") continue ;; esac
			lower=$(printf '%s' "$piece" | tr '[:upper:]' '[:lower:]')
			case "$b" in *"$lower"*) continue ;; esac
			printf '%s' "$piece"
			return 0
		done
	done
	return 1
}

check_capture() { # LABEL FILE
	local label=$1 file=$2 cmd top1 top2 by_count by_name last piece first second
	mapfile -t top < <(names "$file" "sum(k.end - k.start) DESC" 5)
	if [ "${#top[@]}" -lt 2 ]; then
		fail "$label: the capture has fewer than two printable kernel names"
		return
	fi
	top1=${top[0]}
	top2=${top[1]}
	by_count=$(names "$file" "count(*) DESC, s.value" 1)
	by_name=$(names "$file" "s.value" 1)
	last=$(names "$file" "s.value DESC" 1)

	rm -f "$TMP/status"
	printf -v cmd 'env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q top --replay=1000000000 %q; echo $? >%q; sleep 60' \
		"$PERFKIT" "$file" "$TMP/status"
	tm kill-session -t top >/dev/null 2>&1
	tm new-session -d -s top -x "$COLS" -y "$ROWS" "$cmd"

	wait_for "$label: replay runs to the end" "replay finished"
	wait_for "$label: the busiest kernel is shown" "$top1"
	wait_for "$label: the second busiest kernel is shown" "$top2"
	expect_first "$label: sorted by total time first" "$top1"
	wait_for "$label: NVML metrics of a replay are N/A, not 0" "GPU util N/A"

	keys s
	wait_for "$label: s sorts by the next column" "sort: count descending"
	expect_first "$label: the most launched kernel comes first" "$by_count"
	keys s s s
	wait_for "$label: s reaches the name column" "sort: name descending"
	expect_first "$label: names descending" "$last"
	keys S
	wait_for "$label: S reverses the order" "sort: name ascending"
	expect_first "$label: names ascending" "$by_name"
	keys s
	wait_for "$label: s wraps round to total" "sort: total ascending"
	keys S

	if piece=$(distinct_piece "$top1" "$top2"); then
		keys / "$piece" Enter
		wait_for "$label: the filter is applied" "filter \"$piece\""
		wait_for "$label: a matching kernel stays" "$top1"
		table_lacks "$label: the others go" "$top2"
		keys / BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace Enter
		wait_for "$label: an empty filter shows every kernel again" "$top2"
	else
		fail "$label: no piece of '$top1' tells it from '$top2'"
	fi

	keys p
	wait_for "$label: p pauses" "PAUSED"
	keys p
	wait_gone "$label: p resumes" "PAUSED"

	# scrolling, on a terminal too short for every kernel name
	if [ "$(sqlite3 "$file" "SELECT count(DISTINCT coalesce(demangledName, shortName))
			FROM CUPTI_ACTIVITY_KIND_KERNEL")" -ge 12 ]; then
		tm resize-window -t top:0 -x "$COLS" -y 20
		wait_gone "$label: a short terminal hides the NVTX panels" "NVTX"
		first=$(table | head -1)
		second=$(table | sed -n 2p)
		keys Down
		expect_top_line "$label: Down scrolls by a row" "$second"
		keys Up
		expect_top_line "$label: Up scrolls back" "$first"
		keys NPage
		expect_top_line_not "$label: PgDn scrolls by a page" "$first"
		keys Home
		expect_top_line "$label: Home goes back to the top" "$first"
		tm resize-window -t top:0 -x "$COLS" -y "$ROWS"
	fi

	keys h
	wait_for "$label: h shows the help" "perfkit top - keys"
	keys h
	wait_gone "$label: a key closes the help" "perfkit top - keys"

	tm resize-window -t top:0 -x 40 -y 10
	wait_for "$label: a small terminal is told so" "terminal too small (40x10)"
	tm resize-window -t top:0 -x "$COLS" -y "$ROWS"
	wait_for "$label: growing again redraws the table" "$top1"
	wait_gone "$label: the too-small message goes" "terminal too small"

	keys q
	wait_until "$WAIT_S" test -s "$TMP/status"
	status=$(cat "$TMP/status" 2>/dev/null || echo none)
	if [ "$status" = 0 ]; then pass "$label: q quits with status 0"; else
		fail "$label: q: exit status '$status'"; fi
	tm kill-session -t top >/dev/null 2>&1
}

store="$TMP/store.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }
check_capture "writer store" "$store"

# Names with control characters reach the screen sanitised.
rm -f "$TMP/status"
printf -v cmd 'env LANG=C.UTF-8 LC_ALL=C.UTF-8 %q top --replay=1000000000 %q; echo $? >%q; sleep 60' \
	"$PERFKIT" "$store" "$TMP/status"
tm new-session -d -s top -x "$COLS" -y "$ROWS" "$cmd"
wait_for "an escape sequence in a name is shown as text" "esc?[31mred"
wait_for "a newline in a name is shown as text" "line1?line2"
keys q
tm kill-session -t top >/dev/null 2>&1

# Real captures made on a GPU, when the fixtures are there: the first two
# with at least two kernel names.
real=0
for name in hash_embedding_naive.sqlite transformer_naive.sqlite gpu_work.sqlite \
	    torch_train.sqlite rollout_naive.sqlite; do
	file="$PERFKIT_TEST_DATA/$name"
	[ -f "$file" ] && [ "$(names "$file" "s.value" 2 | wc -l)" -ge 2 ] || continue
	check_capture "$name" "$file"
	real=$((real + 1))
	[ "$real" -lt 2 ] || break
done

finish
