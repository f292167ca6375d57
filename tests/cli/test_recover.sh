#!/usr/bin/env bash
# `perfkit run` killed with SIGKILL before it merged: readers refuse the
# unfinished output with one line that says what to do, and `perfkit
# recover` merges what the program's processes left in the live folder.
#
# The program here (sleep) makes no CUDA calls, so it writes no process file
# itself; a real capture (tests/data/rollout_naive.sqlite) is copied into the
# live folder under the name the program's process would have used, to stand
# in for it. tests/gpu/faults.sh does the same with a real CUDA program.
set -u
. "$(dirname "$0")/cli_lib.sh"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
FIXTURE=$DATA/rollout_naive.sqlite

if built_without_cupti; then
	skip "perfkit run killed and recovered" "built without CUPTI"
	finish
	exit
fi

names_live_dir() { dir=$(meta "$out" live_dir) && [ -n "$dir" ]; }

# start_run NAME: starts `perfkit run -- sleep 60`, waits until its output
# names the live folder, sets $out $dir $prog $runner.
start_run() {
	out=$TMP/$1.sqlite
	"$PERFKIT" run -o "$out" -- sleep 60 >/dev/null 2>"$TMP/$1.run.err" &
	runner=$!
	dir=
	if ! wait_until "$WAIT_S" names_live_dir; then
		echo "  perfkit run's output named no live folder in $WAIT_S s;" \
			"its stderr: $(head -c 300 "$TMP/$1.run.err")" >&2
	fi
	prog=$(meta "$out" pid)
}

ended() {
	local state

	state=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
	[ -z "$state" ] || [ "$state" = Z ]
}

# gone PID: waits until the process has ended (a zombie counts as ended).
gone() { wait_until "$WAIT_S" ended "$1"; }

start_run killed
expect_that "the live folder is named while the run goes on" test -d "$dir"
run report "$out"
expect_status "report while perfkit run writes" 2
expect_one_error_line "report while perfkit run writes" "is still writing it; follow it with .perfkit top"
run recover "$out"
expect_status "recover while perfkit run writes" 2

cp "$FIXTURE" "$dir/proc-$prog.sqlite"
kill -KILL "$runner"
wait "$runner" 2>/dev/null
for cmd in report diagnose roofline; do
	run "$cmd" "$out"
	expect_status "$cmd of a killed run's output" 2
	expect_one_error_line "$cmd of a killed run's output" "perfkit recover .*merges it from"
done
run diff "$out" "$FIXTURE"
expect_status "diff with a killed run's output" 2
run recover "$out"
expect_status "recover while the program still runs" 2
expect_one_error_line "recover while the program still runs" "the program \\(pid $prog\\) is still running"

kill -TERM "$prog"
expect_that "the program ended" gone "$prog"
run recover "$out"
expect_status "recover" 0
expect_err "recover" "recovered 1 process file into"
expect_that "the live folder is removed" test ! -e "$dir"
expect_that "the capture is marked recovered" test "$(meta "$out" recovered)" = 1
expect_that "the capture is finished" test "$(meta "$out" finished)" = 1
for r in cuda_gpu_kern_sum cuda_api_sum nvtx_sum; do
	run report --report=$r --format=csv "$out"
	cp "$TMP/out" "$TMP/recovered.csv"
	run report --report=$r --format=csv "$FIXTURE"
	expect_that "$r of the recovered capture equals the process file's" cmp -s "$TMP/out" "$TMP/recovered.csv"
done
run recover "$out"
expect_status "recover of a finished capture" 2
expect_one_error_line "recover of a finished capture" "not the output of an unfinished perfkit run"
run recover "$FIXTURE"
expect_status "recover of a fixture" 2

# Killed with two processes' files in the live folder: the larger is taken
# over, the other merged into it; the recovered capture holds both.
SECOND=$DATA/hash_embedding_naive.sqlite
kernels() { sqlite3 "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"; }
start_run two_processes
cp "$FIXTURE" "$dir/proc-$prog.sqlite"
cp "$SECOND" "$dir/proc-$((prog + 1)).sqlite"
kill -KILL "$runner"
wait "$runner" 2>/dev/null
kill -TERM "$prog"
expect_that "the program ended" gone "$prog"
run recover "$out"
expect_status "recover of two process files" 0
expect_err "recover of two process files" "recovered 2 process files into"
expect_that "both processes' kernels are in the capture" \
	test "$(kernels "$out")" -eq $(($(kernels "$FIXTURE") + $(kernels "$SECOND")))
run report --report=cuda_gpu_kern_sum --format=csv "$out"
expect_status "report of the two processes" 0

# Killed, and the temporary folder cleaned away since.
start_run folder_gone
kill -KILL "$runner" "$prog"
wait "$runner" 2>/dev/null
gone "$prog"
rm -rf "$dir"
run report "$out"
expect_status "report when the live folder is gone" 2
expect_one_error_line "report when the live folder is gone" "is gone: nothing to read"
run recover "$out"
expect_status "recover when the live folder is gone" 2
expect_one_error_line "recover when the live folder is gone" "is gone: nothing to recover"

run recover
expect_status "recover without a file" 2
run recover "$TMP/missing.sqlite"
expect_status "recover of a missing file" 2
expect_one_error_line "recover of a missing file" "no such file"
finish
