#!/usr/bin/env bash
# test_capture_windows.sh - capture windows as far as a machine without a
# GPU can check them: the window options refuse what they cannot do with
# one line and exit 2 before anything runs or is written; `perfkit start`
# and `perfkit stop` find a running capture by its file or a pid and write
# the control file its collectors read (numbered, newest last, the user's
# own), and refuse a finished capture or a process that is not a run; the
# real windowed captures made on the H100 (tests/gpu/windows.sh) are read
# by every report and by diagnose, and a merge keeps each capture's windows.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA/windows

cd "$TMP" || exit 1
refused "unknown range" "--capture-range=steps: choose nvtx:NAME" --capture-range=steps
refused "count 0" "count=N a number of at least 1" --capture-range=nvtx:step,count=0
refused "a domain without a name" "choose nvtx:NAME" --capture-range=nvtx:step@
refused "unknown range option" "after NAME come skip=M and count=N only" \
	--capture-range=nvtx:step,every=2
refused "nvtx range without nvtx" "watches NVTX ranges: add nvtx to --trace" \
	--capture-range=nvtx:step --trace=cuda
refused "delay not a duration" "--delay=soon is not a duration" --delay=soon
refused "delay by another grammar" "--delay=1e3ms is not a duration" --delay=1e3ms
refused "duration 0" "--duration=0 is not a duration above 0" --duration=0
refused "range and delay" "--delay and --duration go without it" \
	--capture-range=cudaProfilerApi --delay=1

run start
expect_status "start without a capture" 2
run stop "$D/torch_profiler_window.sqlite"
expect_status "stop on a finished capture" 2
expect_one_error_line "stop on a finished capture" "is not the output of a perfkit run still going"
run start $$
expect_status "start on a process that is not a run" 2
expect_one_error_line "start on a process that is not a run" "is not a perfkit run"

if built_without_cupti; then
	skip "start and stop on a running capture" "perfkit built without CUPTI"
else
	live=$TMP/live.sqlite
	paused_run "$live" 10
	expect_that "a run that waits for its windows says so from its start (windowed 1)" \
		test "$(meta "$live" windowed)" = 1
	dir=$(meta "$live" live_dir)
	run start "$live"
	expect_status "start by the capture's file" 0
	expect_that "the control file asks to open (1 open)" \
		test "$(cat "$dir/control" 2>/dev/null)" = "1 open"
	run stop "$(meta "$live" pid)"
	expect_status "stop by the program's pid" 0
	expect_that "the control file asks to close (2 close)" \
		test "$(cat "$dir/control" 2>/dev/null)" = "2 close"
	run start "$runner"
	expect_status "start by perfkit run's own pid" 0
	expect_that "the control file asks to open again (3 open)" \
		test "$(cat "$dir/control" 2>/dev/null)" = "3 open"
	expect_that "the control file is the user's own, 0600" \
		test "$(stat -c '%u %a' "$dir/control")" = "$(id -u) 600"
	end_paused_run "$live"
fi

for f in "$D"/*.sqlite; do
	name=$(basename "$f" .sqlite)
	for fmt in text csv json chrome perfetto folded; do
		run report --format=$fmt "$f"
		expect_status "$name: report --format=$fmt" 0
	done
	run diagnose "$f"
	expect_status "$name: diagnose" 0
done
run merge --force -o "$TMP/job.sqlite" "$D/torch_profiler_window.sqlite" "$D/two_profiler_windows.sqlite"
expect_status "merge of two windowed captures" 0
expect_that "the merge keeps the three windows of the two captures" \
	test "$(sqlite3 -readonly "$TMP/job.sqlite" "SELECT count(*) FROM PERFKIT_CAPTURE_WINDOWS")" = 3
expect_that "the windows' ends stay after their starts on the job's time base" \
	test "$(sqlite3 -readonly "$TMP/job.sqlite" \
		"SELECT count(*) FROM PERFKIT_CAPTURE_WINDOWS WHERE end > start")" = 3
finish
