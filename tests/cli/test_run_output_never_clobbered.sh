#!/usr/bin/env bash
# test_run_output_never_clobbered.sh - `perfkit run -f -o PATH` replaces a
# regular file only, and only once the new capture is complete. A FIFO, a
# character device, a directory, a symbolic link (its target untouched) and
# the very program being run are refused with one line and left as they
# were; before, each was replaced by the capture (as root, /dev/full became
# a 294,912-byte SQLite file, and `cp /bin/true a; perfkit run -f -o a --
# ./a` replaced the program). An existing capture stays byte for byte as it
# was while the program runs, and when perfkit itself is killed then,
# `perfkit recover PATH` finishes the new capture from the file beside it.
#
# The refusals come before the collector is looked for, so they are checked
# in a build without CUPTI too; the rest runs a program.
set -u
. "$(dirname "$0")/cli_lib.sh"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
D=$TMP/outs
mkdir "$D"

precious() { echo "precious $(basename "$1")" >"$1"; cp "$1" "$1.was"; }
unchanged() { cmp -s "$1" "$1.was"; }
no_temp_left() { [ -z "$(find "$D" -name '.*.perfkit-*' -print -quit)" ]; }
# ended PID: the process is gone, or a zombie (its parent, perfkit, was killed).
ended() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
	[ -z "$state" ] || [ "$state" = Z ]
}
run_bounded() { timeout 60 "$PERFKIT" "$@" >"$TMP/out" 2>"$TMP/err"; status=$?; }

mkfifo "$D/fifo"
run_bounded run -f -o "$D/fifo" -- true
expect_status "run -f -o onto a FIFO" 2
expect_one_error_line "run -f -o onto a FIFO" "fifo is a FIFO, not a regular file"
expect_that "the FIFO is still a FIFO" test -p "$D/fifo"

if [ "$(id -u)" = 0 ] && mknod "$D/full" c 1 7 2>/dev/null; then
	run run -f -o "$D/full" -- true
	expect_status "run -f -o onto a character device" 2
	expect_one_error_line "run -f -o onto a character device" "full is a character device, not a regular file"
	expect_that "the device is still a device" test -c "$D/full"
else
	skip "run -f -o onto a character device made with mknod" "not root, or mknod refused"
fi

mkdir "$D/dir"
run run -f -o "$D/dir" -- true
expect_status "run -f -o onto a directory" 2
expect_one_error_line "run -f -o onto a directory" "dir is a directory, not a file"

precious "$D/victim.sqlite"
ln -s victim.sqlite "$D/link.sqlite"
run run -f -o "$D/link.sqlite" -- true
expect_status "run -f -o onto a symbolic link" 2
expect_one_error_line "run -f -o onto a symbolic link" "link\.sqlite is a symbolic link; perfkit does not write through one"
expect_that "the link's target is unchanged" unchanged "$D/victim.sqlite"

precious "$D/old.sqlite"
run run -o "$D/old.sqlite" -- true
expect_status "run -o onto an existing file" 2
expect_one_error_line "run -o onto an existing file" "old\.sqlite exists; use -f to overwrite it"
expect_that "the existing file is unchanged" unchanged "$D/old.sqlite"

if built_without_cupti; then
	skip "run -f onto the program and onto an existing capture" "built without CUPTI"
	finish
	exit
fi

# ---- the program being run -------------------------------------------------------------
cp "$(type -P true)" "$D/a"
cp "$D/a" "$D/a.was"
(cd "$D" && "$PERFKIT" run -f -o a -- ./a >"$TMP/out" 2>"$TMP/err")
status=$?
expect_status "run -f -o a -- ./a" 2
expect_one_error_line "run -f -o a -- ./a" "a is the program to run; perfkit does not replace it"
expect_that "the program is unchanged" cmp -s "$D/a" "$D/a.was"
expect_that "the program still runs" "$D/a"
# found on PATH, as exec finds it
mkdir "$D/bin"
cp "$D/a" "$D/bin/prog"
PATH=$D/bin:$PATH "$PERFKIT" run -f -o "$D/bin/prog" -- prog >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status "run -f -o onto the program found on PATH" 2
expect_one_error_line "run -f -o onto the program found on PATH" "prog is the program to run"
expect_that "the program on PATH is unchanged" cmp -s "$D/bin/prog" "$D/a.was"

# ---- -f onto an existing capture: replaced only once the new one is complete -------------
LIVE=$PERFKIT_TEST_TOOLS/write_live_store
OLD=$D/cap.sqlite
cp "$DATA/rollout_naive.sqlite" "$OLD"
cp "$OLD" "$OLD.was"
beside_names_live_dir() {
	beside=$(find "$D" -maxdepth 1 -name '.cap.sqlite.perfkit-*' ! -name '*-wal' ! -name '*-shm' | head -n 1)
	[ -n "$beside" ] && [ -n "$(meta "$beside" live_dir)" ]
}
"$PERFKIT" run -f -o "$OLD" -- "$LIVE" 2 >"$TMP/live.out" 2>"$TMP/live.err" &
runner=$!
beside=
wait_until "$WAIT_S" beside_names_live_dir || fail "the run wrote no file beside the output"
expect_that "while the program runs, the old capture is unchanged" unchanged "$OLD"
wait "$runner"
expect_that "run -f exits with its program's status" test $? = 0
expect_that "the old capture is replaced by the finished one" test "$(meta "$OLD" finished)" = 1
expect_that "the capture is the run's" test "$(meta "$OLD" command)" = "$LIVE 2"
expect_that "it holds the kernels the program wrote" test \
	"$(sqlite3 -readonly "$OLD" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" = \
	"$(sed -n 's/^written=//p' "$TMP/live.out")"
expect_that "no file is left beside it" no_temp_left

# ---- perfkit killed while the program runs: the old capture stays, recover by its name ---
cp "$OLD.was" "$OLD"
"$PERFKIT" run -f -o "$OLD" -- sleep 60 >/dev/null 2>"$TMP/killed.err" &
runner=$!
beside=
wait_until "$WAIT_S" beside_names_live_dir || fail "the run wrote no file beside the output"
prog=$(meta "$beside" pid)
cp "$DATA/hash_embedding_naive.sqlite" "$(meta "$beside" live_dir)/proc-$prog.sqlite"
kill -KILL "$runner"
wait "$runner" 2>/dev/null
kill -TERM "$prog"
wait_until "$WAIT_S" ended "$prog" || fail "the program did not end"
expect_that "perfkit killed: the old capture is unchanged" unchanged "$OLD"
run recover "$OLD"
expect_status "recover by the output's name" 0
expect_err "recover by the output's name" "recovered 1 process file into .*cap\.sqlite"
expect_that "the recovered capture took the output's name" test "$(meta "$OLD" recovered)" = 1
expect_that "it holds the process file's kernels" test \
	"$(sqlite3 -readonly "$OLD" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")" = \
	"$(sqlite3 -readonly "$DATA/hash_embedding_naive.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")"
expect_that "no file is left beside it" no_temp_left
finish
