#!/usr/bin/env bash
# test_top_graph_launches.sh - `perfkit top` counts CUDA graphs recorded
# whole (--cuda-graph-trace=graph: one CUPTI_ACTIVITY_KIND_GRAPH_TRACE row a
# launch, no row of the graph's kernels) as the other readers do: each
# graph's launches are a row of the kernel list named as the kernel
# summaries name it, "CUDA graph ID (nodes not recorded)", in the header's
# kernel count and time, and in their GPU's busy share and kernel figures
# (memsets count in the busy share too), in its first frame of a finished
# capture and at the end of a replay. The capture is the real H100 capture
# tests/data/graph/graph_replay_whole.sqlite; its two-GPU copy moves every
# other launch to device 1 (with a TARGET_INFO_GPU row), as a GPU panel
# shows only for several GPUs. Followed live, the graph table appears only
# with its first row (the writer makes it then): tests/tools/write_live_store
# launches a graph in its run's second half, and top shows the launches
# both following the file in place and running the program (where it
# keeps the process file open). Every expected value comes from the
# capture's own rows (sqlite3), formatted as top formats it.
. "$(dirname "$0")/cli_lib.sh"

command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
. "$(dirname "$0")/tmux_lib.sh"

F=$PERFKIT_TEST_DATA/graph/graph_replay_whole.sqlite
G=CUPTI_ACTIVITY_KIND_GRAPH_TRACE
K=CUPTI_ACTIVITY_KIND_KERNEL
LIVE="$PERFKIT_TEST_TOOLS/write_live_store"
q() { sqlite3 -readonly "$1" "$2"; }

# top's compact duration and count (libprof's prof_units, PROF_UNITS_COMPACT)
duration() {
	awk -v n="$1" 'function three(v, u) {
		return sprintf(v >= 99.95 ? "%.0f%s" : v >= 9.995 ? "%.1f%s" : "%.2f%s", v, u) }
	BEGIN { if (n < 1000) printf "%dns\n", n; else if (n < 999.5e3) print three(n / 1e3, "us");
		else if (n < 999.5e6) print three(n / 1e6, "ms"); else print three(n / 1e9, "s") }'
}
count() {
	awk -v n="$1" 'BEGIN { if (n < 999.5) { printf "%.0f\n", n; exit }
		split("k M G T", u, " "); i = 0; while (n >= 999.5 && i < 4) { n /= 1000; i++ }
		printf(n >= 99.95 ? "%.0f%s\n" : n >= 9.995 ? "%.1f%s\n" : "%.2f%s\n", n, u[i]) }'
}
# A sound span, as the readers take it (prof_span_is_bad's complement).
SOUND="end >= start"

# kernel_total CAPTURE [WHERE]: "COUNT NS" of the kernels and graph launches
kernel_total() {
	q "$1" "SELECT sum(n) || ' ' || coalesce(sum(t), 0) FROM (
		SELECT count(*) n, sum(end - start) t FROM $K WHERE $SOUND ${2:+AND $2}
		UNION ALL SELECT count(*), sum(end - start) FROM $G WHERE $SOUND ${2:+AND $2})"
}

# graph_rows CAPTURE: top's kernel-list row of each graph, as a grep -E pattern
# (share of the kernel time, total, launches, average, name)
graph_rows() {
	local all n t id share
	read -r _ all < <(kernel_total "$1")
	q "$1" "SELECT count(*), sum(end - start), graphId FROM $G WHERE $SOUND GROUP BY graphId" |
	while IFS='|' read -r n t id; do
		share=$(awk -v t="$t" -v a="$all" 'BEGIN { printf "%.1f\n", a ? 100 * t / a : 0 }')
		printf ' +%s%% +%s +%s +%s  CUDA graph %s \\(nodes not recorded\\)$\n' "$share" \
			"$(duration "$t")" "$(count "$n")" "$(duration $((t / n)))" "$id"
	done
}

# screen_has NAME PATTERN: the screen ($TMP/screen) has a line matching PATTERN
screen_has() {
	if grep -qE -- "$2" "$TMP/screen"; then pass "$1"; else
		fail "$1: no line matches '$2'"; sed 's/^/    | /' "$TMP/screen" >&2; fi
}

# check_kernels NAME CAPTURE: the header's kernel figures and each graph's row
check_kernels() {
	local n t
	read -r n t < <(kernel_total "$2")
	screen_has "$1: the header counts the $n graph launches and kernels" \
		"^ kernels $(count "$n") \($(duration "$t")\) \|"
	while IFS= read -r row; do
		screen_has "$1: the graph's row in the kernel list" "$row"
	done < <(graph_rows "$2")
}

LAUNCHES=$(q "$F" "SELECT count(*) FROM $G")
expect_that "the capture holds graph launches and no kernel" \
	test "$LAUNCHES" -gt 0 -a "$(q "$F" "SELECT count(*) FROM $K")" = 0

# ---- a finished capture: the first frame, and a replay's end ---------------------
start_top first "$F"
wait_for "first frame: the capture read whole" "finished capture"
check_kernels "first frame" "$F"
keys q
expect_exit first 0

replay_top "$F"
wait_for "replay runs to the end" "replay finished"
check_kernels "replay" "$F"
keys q

# the overview's top kernels say the same of the graph
run report -F json "$F"
read -r n t < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d["reports"] if r["name"] == "overview_top_kernels")
g = [x for x in r["rows"] if x["Name"].startswith("CUDA graph ")]
print(sum(x["Instances"] for x in g), sum(x["Total Time (ns)"] for x in g))' "$TMP/out")
expect_that "the overview's graph rows are the $LAUNCHES launches" test "$n" = "$LAUNCHES"
screen_has "top's kernel list agrees with the overview's graph rows" \
	" +$(duration "$t") +$(count "$n") +[0-9.]+[mun]?s  CUDA graph "

# ---- two GPUs: each GPU's busy share and kernel figures ----------------------------
two="$TMP/two_gpus.sqlite"
cp "$F" "$two"
sqlite3 "$two" "UPDATE $G SET deviceId = 1 WHERE rowid % 2 = 0;
	INSERT INTO TARGET_INFO_GPU (id, name, uuid) VALUES (1, 'second GPU', 'GPU-00000001');" ||
	{ echo "FAIL: cannot move launches to device 1" >&2; exit 1; }
# The screen's last second: the one the latest time top reads falls in; a
# GPU's busy share is the time of the GPU work that starts in it, capped.
LAST_S=$(q "$two" "SELECT max(t) / 1000000000 FROM (
	SELECT max(end) t FROM $K UNION ALL SELECT max(end) FROM $G
	UNION ALL SELECT max(end) FROM CUPTI_ACTIVITY_KIND_MEMCPY
	UNION ALL SELECT max(end) FROM CUPTI_ACTIVITY_KIND_MEMSET
	UNION ALL SELECT max(end) FROM NVTX_EVENTS WHERE eventType IN (59, 60)
	UNION ALL SELECT max(start) FROM CUDA_GPU_MEMORY_USAGE_EVENTS
	UNION ALL SELECT max(timestamp) FROM GPU_METRICS)")
start_top gpus "$two"
wait_for "two GPUs: the capture read whole" "finished capture"
wait_for "two GPUs: a GPU panel" "GPUs (2)"
for d in 0 1; do
	busy=$(q "$two" "SELECT printf('%3.0f', min(100.0, 100.0 * coalesce(sum(end - start), 0) / 1e9)) FROM (
		SELECT start, end, deviceId FROM $K UNION ALL SELECT start, end, deviceId FROM $G
		UNION ALL SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_MEMCPY
		UNION ALL SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_MEMSET)
		WHERE deviceId = $d AND $SOUND AND start / 1000000000 = $LAST_S")
	read -r n t < <(kernel_total "$two" "deviceId = $d")
	screen_has "GPU $d: busy $busy% of the last second, its $n launches' time" \
		"GPU $d +[^|]+ busy $busy% \| kernels $(count "$n") \($(duration "$t")\) \|"
done
keys q
expect_exit gpus 0

# ---- live: the graph table appears while top reads -----------------------------
"$LIVE" -o "$TMP/inplace.sqlite" -g 7 3 >"$TMP/inplace.out" &
writer=$!
wait_until "$WAIT_S" test -s "$TMP/inplace.sqlite"
start_top inplace "$TMP/inplace.sqlite"
wait_for "in place: rows appear while the writer runs" "live_kernel_a"
wait $writer
wait_for "in place: seen finished" "finished capture"
expect_that "in place: the writer launched the graph" grep -qE '^graph_launches=[1-9]' "$TMP/inplace.out"
check_kernels "in place" "$TMP/inplace.sqlite"
keys q
expect_exit inplace 0

"$PERFKIT" run -o "$TMP/probe.sqlite" -- true >/dev/null 2>"$TMP/probe"
if grep -q "built without CUPTI" "$TMP/probe"; then
	echo "skip: this perfkit cannot run programs (built without CUPTI)"
	finish
	exit
fi
start_top program -o "$TMP/program.sqlite" -- "$LIVE" -g 7 3
wait_for "program: its rows appear live" "live_kernel_a"
wait_for "program: its end is shown" "program exited"
# the screen as it was then, checked against the capture top leaves at its exit
keys q
expect_exit program 0
check_kernels "program" "$TMP/program.sqlite"
finish
