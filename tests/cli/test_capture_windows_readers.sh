#!/usr/bin/env bash
# test_capture_windows_readers.sh - the readers of a capture made of capture
# windows, on the real two-window capture (steps 3-6 and 10-12 of a
# program recorded, the time between never): the time between the windows
# is neither GPU idle time nor part of a span, no step crosses it, and
# --window=K reads window K alone in every reader that takes it; a K past
# the windows, or a capture without windows, is one error line and exit 2;
# perfkit top --replay says whether a window is open; in a DDP job whose
# windows an NVTX range opened, each rank's steps are the ranges its
# window holds. Every expected value is computed here from the capture's
# own rows.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/tmux_lib.sh"
F=$PERFKIT_TEST_DATA/windows/two_profiler_windows.sqlite
cd "$TMP" || exit 1

q() { sqlite3 -readonly "$F" "$1"; }
# json_field REPORT COLUMN: the first row's COLUMN of REPORT in $TMP/out (JSON).
json_field() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(next(r for r in d["reports"] if r["name"] == sys.argv[2])["rows"][0][sys.argv[3]])' "$TMP/out" "$1" "$2"
}
# steps_field COLUMN: the column of every gpu_idle_steps row, one a line.
steps_field() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for r in next(r for r in d["reports"] if r["name"] == "gpu_idle_steps")["rows"]: print(r[sys.argv[2]])' \
		"$TMP/out" "$1"
}

W1S=$(q "SELECT start FROM PERFKIT_CAPTURE_WINDOWS WHERE id = 1")
W1E=$(q "SELECT end FROM PERFKIT_CAPTURE_WINDOWS WHERE id = 1")
W2S=$(q "SELECT start FROM PERFKIT_CAPTURE_WINDOWS WHERE id = 2")
W2E=$(q "SELECT end FROM PERFKIT_CAPTURE_WINDOWS WHERE id = 2")
ZERO=$(q "SELECT value FROM PERFKIT_META WHERE key = 'start_ns'")

# ---- the whole capture: no idle time between the windows -------------------------------
run diagnose -F json "$F"
expect_status "diagnose" 0
LS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"]["start_ns"])' "$TMP/out")
LE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"]["end_ns"])' "$TMP/out")
# the loop's time inside the windows, and the GPU's busy union there, from the rows
# (a window runs on to the end of the GPU work that starts in it before the
# next window opens: its kernels run after the host closed it)
recorded=$(q "WITH g AS (SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
	SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET UNION ALL
	SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY),
	w AS (SELECT start, end, coalesce((SELECT min(n.start) FROM PERFKIT_CAPTURE_WINDOWS n
		WHERE n.start > c.start), 9223372036854775807) AS next FROM PERFKIT_CAPTURE_WINDOWS c),
	x AS (SELECT start, max(end, coalesce((SELECT max(g.end) FROM g WHERE g.start >= w.start
		AND g.start < w.next), end)) AS end FROM w)
	SELECT sum(max(0, min(end, $LE) - max(start, $LS))) FROM x")
busy=$(python3 - "$F" "$LS" "$LE" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
lo, hi = int(sys.argv[2]), int(sys.argv[3])
rows = sorted(db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
			 "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET UNION ALL "
			 "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
total, cur_s, cur_e = 0, None, None
for s, e in rows:
    s, e = max(s, lo), min(e, hi)
    if e <= s:
        continue
    if cur_e is not None and s <= cur_e:
        cur_e = max(cur_e, e)
        continue
    if cur_e is not None:
        total += cur_e - cur_s
    cur_s, cur_e = s, e
if cur_e is not None:
    total += cur_e - cur_s
print(total)
PY
)
run report --report=gpu_idle_sum -F json "$F"
expect_status "gpu_idle_sum" 0
expect_that "the loop's window is its time inside the capture windows ($recorded ns)" \
	test "$(json_field gpu_idle_window 'Window (ns)')" = "$recorded"
expect_that "the time between the windows is cut out of the loop's span" \
	test "$recorded" -lt $((LE - LS))
expect_that "busy time is the GPU's work in the loop ($busy ns)" \
	test "$(json_field gpu_idle_window 'Busy (ns)')" = "$busy"
expect_that "gpu_idle_sum's idle time is the windows' time less the busy time" \
	test "$(json_field gpu_idle_window 'Idle (ns)')" = $((recorded - busy))
idle_by_step=$(steps_field 'Idle (ns)' | paste -sd+ | bc)
expect_that "the steps' idle time adds up to the idle time, none of it between the windows" \
	test "$idle_by_step" = $((recorded - busy))
# steps: the launches of the marking kernel, the first (warm-up) left out
launches=$(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
expect_that "one step per launch after the first ($((launches - 1)))" \
	test "$(json_field gpu_idle_window 'Steps')" = $((launches - 1))
outside=0
for s in $(steps_field 'Step Start (ns)'); do
	t=$((ZERO + s))
	{ [ "$t" -ge "$W1S" ] && [ "$t" -lt "$W1E" ]; } || { [ "$t" -ge "$W2S" ] && [ "$t" -lt "$W2E" ]; } ||
		outside=$((outside + 1))
done
expect_that "every step starts inside a capture window" test "$outside" = 0

run report -F json "$F"
expect_that "the overview's busy span is the windows' recorded time" \
	test "$(json_field overview_gpu_busy 'Span (ns)')" = $((W1E - W1S + W2E - W2S))
run diagnose "$F"
expect_out "diagnose says how much of its window was recorded" "us of it recorded"

# ---- an NVTX window in a job: the steps are the ranges the windows hold -----------------
# A 2-rank DDP job captured with --capture-range=nvtx:train_step,skip=10,count=5:
# NVTX is recorded over the whole run, the kernels only inside each rank's
# window, which opens in the push of a train_step range and closes in the
# pop of the fifth.
J=$PERFKIT_TEST_DATA/windows/ddp2_nvtx_window.sqlite
for rank in 0 1; do
	run diagnose -F json --rank "$rank" "$J"
	expect_status "ddp2 window, rank $rank: diagnose" 0
	want=$(sqlite3 -readonly "$J" "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId
		JOIN PERFKIT_CAPTURE_WINDOWS w ON w.globalPid = (e.globalTid >> 24) << 24
		WHERE s.value = 'train_step' AND e.start < w.end AND e.end > w.start
		AND w.globalPid = (SELECT globalPid FROM PERFKIT_CAPTURE_WINDOWS ORDER BY globalPid
		LIMIT 1 OFFSET $rank)")
	got=$(python3 -c 'import json,sys; w = json.load(open(sys.argv[1]))["window"]
print(w["iterations"], w["source"])' "$TMP/out")
	expect_that "ddp2 window, rank $rank: the loop is the $want train_step ranges its window holds ($got)" \
		test "$got" = "$want NVTX range \"train_step\" x $want"
done

# ---- --window=K -------------------------------------------------------------------------
for k in 1 2; do
	ws=$(q "SELECT start FROM PERFKIT_CAPTURE_WINDOWS WHERE id = $k")
	we=$(q "SELECT end FROM PERFKIT_CAPTURE_WINDOWS WHERE id = $k")
	next=$(q "SELECT coalesce((SELECT start FROM PERFKIT_CAPTURE_WINDOWS WHERE id = $k + 1), 9e18)")
	kernels=$(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start >= $ws AND start < $next")
	run report --window=$k --report=cuda_gpu_kern_sum,gpu_idle_sum -F json "$F"
	expect_status "report --window=$k" 0
	expect_that "--window=$k: the kernels launched in window $k ($kernels)" \
		test "$(json_field cuda_gpu_kern_sum Instances)" = "$kernels"
	expect_that "--window=$k: one step per launch but the first" \
		test "$(json_field gpu_idle_window Steps)" = $((kernels - 1))
	expect_that "--window=$k: the loop lies inside window $k" \
		test "$(json_field gpu_idle_window 'Window (ns)')" -le $((we - ws))
	run diagnose --window=$k "$F"
	expect_status "diagnose --window=$k" 0
	expect_out "diagnose --window=$k: the loop of window $k" "launched $kernels times"
	run roofline --window=$k "$F"
	expect_status "roofline --window=$k" 0
	run diff --window=$k "$F" "$F"
	expect_status "diff --window=$k of the capture with itself" 0
	run baseline save --window=$k -o "$TMP/base$k.json" "$F"
	expect_status "baseline save --window=$k" 0
	run gate --window=$k --baseline="$TMP/base$k.json" "$F"
	expect_status "gate --window=$k against its own baseline" 0
done
run report --window=3 "$F"
expect_status "--window=3 of two windows" 2
expect_one_error_line "--window=3 of two windows" "--window=3: .*has 2 capture windows"
run diagnose --window=0 "$F"
expect_status "--window=0" 2
expect_one_error_line "--window=0" "--window=0: a window's number, 1 for the first"
run diagnose --window=1 "$PERFKIT_TEST_DATA/clean_loop.sqlite"
expect_status "--window on a capture without windows" 2
expect_one_error_line "--window on a capture without windows" "has no capture windows"

# ---- perfkit top --replay ------------------------------------------------------------------
# a 1.4 ms capture replayed over 14 s
start_top replay --replay=0.0001 "$F"
wait_for "top --replay: between the windows, paused" "paused: no window open (1 closed)"
wait_for "top --replay: the second window open, and what opened it" \
	"window 2 open since +"
wait_for "top --replay: at the end, none open" "2 capture windows, none open"
keys q
expect_exit replay 0

# ---- perfkit top on a run waiting for its first window ----------------------------------
# (no windows table yet: it is made with the first window's row)
if built_without_cupti; then
	skip "top on a paused run" "perfkit built without CUPTI"
else
	live=$TMP/paused.sqlite
	paused_run "$live" 30
	start_top live "$live"
	wait_for "top on a --start-paused run before any window: paused" "paused: no window opened yet"
	keys q
	expect_exit live 0
	end_paused_run "$live"
fi
finish
