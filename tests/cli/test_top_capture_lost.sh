#!/usr/bin/env bash
# test_top_capture_lost.sh - `perfkit top` when the file it reads is deleted
# or truncated under it, driven in tmux: it never crashes or hangs; what it
# read stays on the screen, the status line says how the capture was lost
# and the footer names the file.
#  - `perfkit top FILE` following a capture written in place, or replaying
#    one: reading stops, and quitting exits 2 with that one line on stderr.
#    Deleting a file top replays loses nothing (top has it open).
#  - following a `perfkit run` (`perfkit top FILE` on its output) or running
#    the program (`perfkit top -- PROGRAM`): a process file deleted or
#    truncated before the run merged it is counted on the status line ("1
#    process file deleted"), as the capture will lack its rows, and the run
#    says so too. Following exits 2 with the line; running the program exits
#    with the program's status, as `perfkit run` does, the line a warning.
#  - the output of the run deleted or truncated: the run writes the capture
#    there anew, complete.
# The writer is tests/tools/write_live_store, which commits kernels every
# 100 ms the way the collector does; the replay reads a real GPU capture.
. "$(dirname "$0")/cli_lib.sh"

. "$(dirname "$0")/tmux_lib.sh"
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"
FIXTURE=$PERFKIT_TEST_DATA/transformer_naive.sqlite

# expect_top_line NAME FILE PATTERN: top's stderr ($TMP/NAME.err) is one
# line matching PATTERN that names FILE.
expect_top_line() {
	local err=$TMP/$1.err
	if [ "$(wc -l <"$err")" -eq 1 ] && grep -q '^perfkit: ' "$err" && grep -qF -- "$2" "$err" &&
	   grep -qE -- "$3" "$err"; then
		pass "$1: one line on stderr names the file"
	else
		fail "$1: stderr is not one line naming $2 and matching /$3/"
		sed 's/^/    ! /' "$err" >&2
	fi
}

bigger_than() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt "$2" ]; }

# ---- a capture followed in place ----------------------------------------------------
for how in deleted truncated; do
	file=$TMP/inplace-$how.sqlite
	"$LIVE" -o "$file" 30 >/dev/null 2>&1 &
	writer=$!
	wait_until "$WAIT_S" test -s "$file"
	start_top "inplace-$how" "$file"
	wait_for "in place, $how: rows appear" "live_kernel_a"
	wait_until "$WAIT_S" bigger_than "$file" 65536
	if [ $how = deleted ]; then rm "$file"; else truncate -s 16384 "$file"; fi
	wait_for "in place, $how: the status line says so" "capture $how; nothing more is read"
	wait_for "in place, $how: the footer names the file" "$how while being read"
	wait_for "in place, $how: the rows read stay on the screen" "live_kernel_b"
	tm send-keys -t top:0 q
	expect_exit "inplace-$how" 2
	expect_top_line "inplace-$how" "$file" "$how while being read"
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
done

# ---- a capture replayed ----------------------------------------------------------------
# The replay reads the file it opened: truncating it stops the replay...
cp "$FIXTURE" "$TMP/replay.sqlite"
start_top replay-truncated --replay=0.02 "$TMP/replay.sqlite"
wait_for "replay, truncated: replaying" "replay 0.02x"
truncate -s 65536 "$TMP/replay.sqlite"
wait_for "replay, truncated: the status line says so" "capture truncated; nothing more is read"
tm send-keys -t top:0 q
expect_exit replay-truncated 2
expect_top_line replay-truncated "$TMP/replay.sqlite" "truncated while being read"

# ... deleting it does not: the replay runs to its end.
busiest=$(sqlite3 -readonly "$FIXTURE" "SELECT substr(s.value, 1, 40) FROM CUPTI_ACTIVITY_KIND_KERNEL k
	JOIN StringIds s ON s.id = k.shortName GROUP BY s.value ORDER BY sum(k.end - k.start) DESC LIMIT 1")
cp "$FIXTURE" "$TMP/replay.sqlite"
start_top replay-deleted --replay=0.1 "$TMP/replay.sqlite"
wait_for "replay, deleted: replaying" "replay 0.1x"
rm "$TMP/replay.sqlite"
wait_for "replay, deleted: the replay runs to its end" "replay finished"
wait_for "replay, deleted: the busiest kernel is shown" "$busiest"
tm send-keys -t top:0 q
expect_exit replay-deleted 0

# ---- a perfkit run, followed or run by top ----------------------------------------------
if built_without_cupti; then
	skip "a run's process file or output lost while top reads it" "built without CUPTI"
	finish
	exit
fi

# proc_file OUT: the process file write_live_store writes under the run
# whose output is OUT, once it has rows ($proc).
has_rows() { bigger_than "$1" 65536; }
names_live_dir() { [ -n "$(meta "$1" live_dir)" ]; }
proc_file() {
	local dir pid
	wait_until "$WAIT_S" names_live_dir "$1"
	dir=$(meta "$1" live_dir)
	pid=$(meta "$1" pid)
	proc=$dir/proc-$pid.sqlite
	wait_until "$WAIT_S" has_rows "$proc"
}

lose() { # HOW FILE
	if [ "$1" = deleted ]; then rm "$2"; else truncate -s 16384 "$2"; fi
}

for how in deleted truncated; do
	out=$TMP/follow-$how.sqlite
	"$PERFKIT" run -o "$out" -- "$LIVE" 4 >/dev/null 2>"$TMP/follow-$how.run.err" &
	runner=$!
	proc_file "$out"
	start_top "follow-$how" "$out"
	wait_for "following a run, process file $how: rows appear" "live_kernel_a"
	lose $how "$proc"
	wait_for "following a run, process file $how: counted" "live capture; 1 process file $how"
	wait "$runner"
	wait_for "following a run, process file $how: the run's end is seen" \
		"finished capture; 1 process file $how"
	tm send-keys -t top:0 q
	expect_exit "follow-$how" 2
	expect_top_line "follow-$how" "$proc" "$how while being read"
done
if grep -q "1 process file was deleted from .*the capture lacks its rows" "$TMP/follow-deleted.run.err"
then pass "following a run, process file deleted: the run says the capture lacks it"
else fail "following a run, process file deleted: the run does not say so"; fi
if grep -q "the capture holds 0 of 1 process files" "$TMP/follow-truncated.run.err"
then pass "following a run, process file truncated: the run says the capture lacks it"
else fail "following a run, process file truncated: the run does not say so"; fi

for how in deleted truncated; do
	out=$TMP/program-$how.sqlite
	start_top "program-$how" -o "$out" -- "$LIVE" 4 3
	proc_file "$out"
	wait_for "running a program, process file $how: rows appear" "live_kernel_a"
	lose $how "$proc"
	wait_for "running a program, process file $how: counted" "running; 1 process file $how"
	wait_for "running a program, process file $how: the program's end is seen" \
		"program exited (status 3); 1 process file $how"
	tm send-keys -t top:0 q
	expect_exit "program-$how" 3
	if grep -q "^perfkit: warning: .*$how while being read" "$TMP/program-$how.err"
	then pass "running a program, process file $how: a warning names it"
	else fail "running a program, process file $how: no warning"; fi
done

# The run's output deleted or truncated: written anew at the run's end.
for how in deleted truncated; do
	out=$TMP/output-$how.sqlite
	start_top "output-$how" -o "$out" -- "$LIVE" 3
	proc_file "$out"
	wait_for "running a program, output $how: rows appear" "live_kernel_a"
	if [ $how = deleted ]; then rm "$out"; else truncate -s 0 "$out"; fi
	wait_for "running a program, output $how: the capture is complete" \
		"program exited (status 0); capture complete"
	tm send-keys -t top:0 q
	expect_exit "output-$how" 0
	if grep -q "was $how while the program ran; the capture is written there anew" \
		"$TMP/output-$how.err"
	then pass "running a program, output $how: the run says it wrote it anew"
	else fail "running a program, output $how: the run does not say so"; fi
	readable "running a program, output $how" "$out"
done

out=$TMP/follow-output.sqlite
"$PERFKIT" run -o "$out" -- "$LIVE" 3 >/dev/null 2>"$TMP/follow-output.run.err" &
runner=$!
proc_file "$out"
start_top follow-output "$out"
wait_for "following a run, output deleted: rows appear" "live_kernel_a"
rm "$out"
wait "$runner"
wait_for "following a run, output deleted: the finished capture is read" "finished capture"
tm send-keys -t top:0 q
expect_exit follow-output 0
readable "following a run, output deleted" "$out"
finish
