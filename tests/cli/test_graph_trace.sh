#!/usr/bin/env bash
# test_graph_trace.sh - a capture that recorded CUDA graphs whole
# (--cuda-graph-trace=graph), the corpus' graph_chain --graph on an H100:
# one row a graph launch and no kernel of the graph. Every reader counts a
# graph's time as GPU work: the overview's busy time is the launches' union,
# diagnose finds the NVTX steps and calls the loop GPU-bound, its critical
# path runs through the graph launches, and it says once that the kernels
# inside them are not seen and how to see them. The kernel summaries
# (cuda_gpu_kern_sum, the overview's top kernels) show each graph's launches
# as a row of their own, "CUDA graph ID (nodes not recorded)", with a note
# that says so, and cuda_gpu_trace one row a launch; the Chrome and Perfetto
# traces one slice a launch on its stream, with its graph and correlation
# ids and the flow from its cudaGraphLaunch. The option's bad values and
# its contradiction with --trace are one error line and exit 2. Expected
# values come from the capture's own rows.
. "$(dirname "$0")/cli_lib.sh"
F=$PERFKIT_TEST_DATA/graph/graph_replay_whole.sqlite
cd "$TMP" || exit 1
q() { sqlite3 -readonly "$F" "$1"; }

LAUNCHES=$(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
expect_that "the fixture holds graph launches and no kernel" \
	test "$LAUNCHES" -gt 0 -a "$(q 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')" = 0

# the overview's busy time: the union of the launches and the two copies
# (none overlap: one stream)
WANT_BUSY=$(q "SELECT (SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
	+ (SELECT coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY)
	+ (SELECT coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMSET)")
run report -F json "$F"
expect_status "overview" 0
GOT_BUSY=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(next(r for r in d["reports"] if r["name"] == "overview_gpu_busy")["rows"][0]["Busy Time (ns)"])' "$TMP/out")
expect_that "overview: busy time is the graph launches' ($WANT_BUSY ns, got $GOT_BUSY)" \
	test "$GOT_BUSY" = "$WANT_BUSY"

run diagnose "$F"
expect_status "diagnose" 0
STEPS=$(q "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE s.value = 'step'")
expect_out "diagnose: the loop is the NVTX steps" 'window: NVTX range "step" x [0-9]+'
expect_out "diagnose: a graph's time is GPU computing" '^verdict: bound by GPU compute'
expect_out "diagnose: the critical path runs through the launches" '[0-9.]+ us  graph launch, nodes not recorded'
expect_out "diagnose: says the graphs' kernels are not seen, and how to see them" \
	"^not run: graph_nodes: the kernels inside [0-9]+ CUDA graph launches: .*--cuda-graph-trace=node"
N=$(sed -n 's/^window: NVTX range "step" x \([0-9]*\).*/\1/p' "$TMP/out")
expect_that "diagnose: at most the $STEPS NVTX steps are the loop (got $N)" test "${N:-0}" -le "$STEPS" -a "${N:-0}" -gt 0

# a node capture says nothing of the kind
run diagnose "$PERFKIT_TEST_DATA/corpus/graph_replay.sqlite"
expect_status "diagnose node capture" 0
if grep -q graph_nodes "$TMP/out"; then fail "a node capture names graph_nodes"; else pass "a node capture is silent on graph_nodes"; fi

# the kernel summaries: one row a graph, its launches' count and times
GRAPHS=$(q "SELECT count(DISTINCT graphId) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
WANT_ROWS=$(q "SELECT group_concat(r, ' ') FROM (SELECT 'CUDA graph ' || graphId
	|| ' (nodes not recorded):' || count(*) || ':' || sum(end - start) || ':' || min(end - start)
	|| ':' || max(end - start) AS r FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE GROUP BY graphId ORDER BY r)")
# graph_rows REPORT: "NAME:INSTANCES:TOTAL:MIN:MAX" of REPORT's graph rows in
# $TMP/out (JSON), then its graph_launches note
graph_rows() {
	python3 - "$1" "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
r = next(r for r in d["reports"] if r["name"] == sys.argv[1])
rows = sorted("%s:%d:%d:%d:%d" % (x["Name"], x["Instances"], x["Total Time (ns)"], x["Min (ns)"],
                                  x["Max (ns)"]) for x in r["rows"] if x["Name"].startswith("CUDA graph "))
print(" ".join(rows))
print(r.get("graph_launches"))
PY
}
run report -r cuda_gpu_kern_sum -F json "$F"
expect_status "cuda_gpu_kern_sum" 0
graph_rows cuda_gpu_kern_sum >"$TMP/rows"
expect_that "cuda_gpu_kern_sum: one row a graph ($GRAPHS) with its launches' count, total, min and max" \
	test "$(sed -n 1p "$TMP/rows")" = "$WANT_ROWS"
expect_that "cuda_gpu_kern_sum: the note counts the $LAUNCHES launches" test "$(sed -n 2p "$TMP/rows")" = "$LAUNCHES"
run report -F json "$F"
graph_rows overview_top_kernels >"$TMP/rows"
expect_that "overview: the top kernels are the graphs' rows" test "$(sed -n 1p "$TMP/rows")" = "$WANT_ROWS"
run report -r cuda_gpu_kern_sum "$F"
expect_out "cuda_gpu_kern_sum text: the graph's row" "CUDA graph [0-9]+ \(nodes not recorded\)$"
expect_out "cuda_gpu_kern_sum text: the note says the nodes were not recorded" \
	"^note: $LAUNCHES CUDA graph launches were recorded whole \(--cuda-graph-trace=graph\).*kernels inside them are not in the capture"
run report -r cuda_gpu_kern_sum -F csv "$F"
expect_err "cuda_gpu_kern_sum csv: the note on stderr" "$LAUNCHES CUDA graph launches were recorded whole"
run report -r cuda_gpu_trace -F csv "$F"
WANT_TRACE=$(q "SELECT count(*) || ':' || sum(end - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
GOT_TRACE=$(tr -d '\r' <"$TMP/out" |
	awk -F, '/,CUDA graph [0-9]+ \(nodes not recorded\)$/ { n++; t += $2 } END { print n ":" t }')
expect_that "cuda_gpu_trace: one row a launch, their durations the table's ($WANT_TRACE, got $GOT_TRACE)" \
	test "$GOT_TRACE" = "$WANT_TRACE"

# the Chrome trace: one slice a launch on its stream, with its ids, each
# reached by a flow from its launching call
WANT_SLICES=$(q "SELECT count(*) || ':' || sum(end - start) || ':' || sum(correlationId)
	|| ':' || sum(graphId) || ':' || sum(streamId) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
WANT_FLOWS=$(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
	ON r.correlationId = g.correlationId JOIN StringIds s ON s.id = r.nameId
	WHERE s.value LIKE 'cudaGraphLaunch%'")
run report -F chrome -o "$TMP/graph.json" "$F"
expect_status "chrome export" 0
GOT=$(python3 - "$TMP/graph.json" <<'PY'
import decimal, json, sys
ev = json.load(open(sys.argv[1]), parse_float=decimal.Decimal)["traceEvents"]
g = [e for e in ev if e.get("cat") == "cuda_graph"]
named = all(e["name"] == "CUDA graph %d (nodes not recorded)" % e["args"]["graphId"] for e in g)
on_stream = all(e["tid"] == e["args"]["stream"] for e in g)
ns = sum(int(e["dur"] * 1000) for e in g)
print("%d:%d:%d:%d:%d" % (len(g), ns, sum(e["args"]["correlation"] for e in g),
                          sum(e["args"]["graphId"] for e in g), sum(e["tid"] for e in g)))
# a flow's finish at each slice, its start at the cudaGraphLaunch of the
# slice's correlation id
calls = {(e["args"]["correlation"]): e for e in ev if e.get("name") == "cudaGraphLaunch"}
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
at = {(e["pid"], e["tid"], e["ts"]): e for e in g}
flows = 0
for f in (e for e in ev if e["ph"] == "f"):
    s, slice_ = starts.get(f["id"]), at.get((f["pid"], f["tid"], f["ts"]))
    if slice_ is None or s is None:
        continue
    call = calls.get(slice_["args"]["correlation"])
    if call and (s["pid"], s["tid"], s["ts"]) == (call["pid"], call["tid"], call["ts"]):
        flows += 1
print(flows, named and on_stream)
PY
)
expect_that "chrome: one slice a launch, with the table's durations and ids ($WANT_SLICES, got ${GOT%%$'\n'*})" \
	test "${GOT%%$'\n'*}" = "$WANT_SLICES"
expect_that "chrome: a flow from each launch's cudaGraphLaunch ($WANT_FLOWS), named by graph, on its stream (got ${GOT#*$'\n'})" \
	test "${GOT#*$'\n'}" = "$WANT_FLOWS True"

# the Perfetto trace: the checker compares its cuda_graph slices with the
# table's rows and pairs every flow
run report -F perfetto -o "$TMP/graph.pftrace" "$F"
if grep -q "built without protobuf-c" "$TMP/err"; then
	pass "perfetto: not built (no protobuf-c)"
elif protoc --proto_path="$PERFKIT_SOURCE/report/export/perfetto" --decode=perfetto.protos.Trace \
	perfetto_subset.proto <"$TMP/graph.pftrace" >"$TMP/graph.txt" &&
	python3 "$PERFKIT_SOURCE/tests/tools/check_perfetto_trace.py" "$F" "$TMP/graph.txt" >"$TMP/check"; then
	pass "perfetto: one cuda_graph slice a launch with its times, flows paired"
	N=$(grep -c 'name: "CUDA graph [0-9]* (nodes not recorded)"' "$TMP/graph.txt")
	expect_that "perfetto: the slices named by graph ($GRAPHS name(s) interned, got $N)" test "$N" -ge "$GRAPHS"
	N=$(sed -n 's/^ok: .* \([0-9]*\) flows$/\1/p' "$TMP/check")
	WANT_ALL_FLOWS=$((WANT_FLOWS + $(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY")))
	expect_that "perfetto: a flow to each launch and copy ($WANT_ALL_FLOWS, got $N)" test "$N" = "$WANT_ALL_FLOWS"
else
	cat "$TMP/check" >&2
	fail "perfetto: one cuda_graph slice a launch with its times, flows paired"
fi

# the graph launches each attributed as the attribution rules say
# (SUM_LAUNCHED_BY, SUM_NVTX_OPEN_AT_CALL): "RANGE|API|GRAPH|LAUNCHES|TOTAL|MIN|MAX"
# by the innermost push/pop range open on the launching call's thread when
# the call started (the latest to start, the shorter of two), API the
# call's name without nsys's _v suffix
ATTRIBUTED="WITH l AS (SELECT g.graphId AS graph, g.end - g.start AS d, a.nameId AS api,
	(SELECT coalesce(s.value, n.text) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
	 WHERE n.eventType = 59 AND n.globalTid = a.globalTid AND n.start <= a.start AND n.end > a.start
	 ORDER BY n.start DESC, n.end, n.rowid LIMIT 1) AS range
	FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE g JOIN CUPTI_ACTIVITY_KIND_RUNTIME a
	ON a.correlationId = g.correlationId AND g.globalPid = (a.globalTid >> 24) << 24)"
WANT_NVTX=$(q "$ATTRIBUTED SELECT group_concat(r, ' ') FROM (SELECT range || ':CUDA graph ' || graph
	|| ' (nodes not recorded):' || count(*) || ':' || sum(d) || ':' || min(d) || ':' || max(d) AS r
	FROM l WHERE range IS NOT NULL GROUP BY range, graph ORDER BY r)")
IN_RANGES=$(q "$ATTRIBUTED SELECT count(*) FROM l WHERE range IS NOT NULL")
expect_that "the fixture launches its graphs inside NVTX ranges ($IN_RANGES)" test "$IN_RANGES" -gt 0
run report -r nvtx_kern_sum -F json "$F"
expect_status "nvtx_kern_sum" 0
python3 - "$TMP/out" >"$TMP/rows" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
print(" ".join(sorted("%s:%s:%d:%d:%d:%d" % (x["NVTX Range"], x["Kernel Name"], x["Instances"],
                                             x["Total Time (ns)"], x["Min (ns)"], x["Max (ns)"])
                      for x in r["rows"] if x["Kernel Name"].startswith("CUDA graph "))))
print(r.get("graph_launches"))
PY
expect_that "nvtx_kern_sum: a row a range and graph, the launches attributed as the rules say ($WANT_NVTX, got $(sed -n 1p "$TMP/rows"))" \
	test "$(sed -n 1p "$TMP/rows")" = "$WANT_NVTX"
expect_that "nvtx_kern_sum: the note counts the $IN_RANGES launches in ranges" \
	test "$(sed -n 2p "$TMP/rows")" = "$IN_RANGES"
run report -r nvtx_kern_sum "$F"
expect_out "nvtx_kern_sum text: the note says the nodes were not recorded" \
	"^note: $IN_RANGES CUDA graph launches? w.* recorded whole \(--cuda-graph-trace=graph\)"
run report -r nvtx_kern_sum -F json "$PERFKIT_TEST_DATA/corpus/graph_replay.sqlite"
if grep -q graph_launches "$TMP/out"; then fail "nvtx_kern_sum of a node capture has a graph note"
else pass "nvtx_kern_sum of a node capture has no graph note"; fi

# the folded stacks weighed by GPU time: each launch's time under its
# launching call, the graph's frame last; all of the launches' time there
WANT_STACKS=$(q "$ATTRIBUTED SELECT group_concat(r, ' ') FROM (SELECT coalesce(range, '-') || ';'
	|| s.value || ';CUDA graph ' || graph || ' (nodes not recorded):' || sum(d) AS r
	FROM l JOIN StringIds s ON s.id = l.api GROUP BY range, s.value, graph ORDER BY r)" |
	sed 's/_v[0-9]*;/;/g')
WANT_GPU=$(q "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
run report -F folded "$F"
expect_status "folded" 0
GOT_STACKS=$(python3 - "$TMP/out" <<'PY'
import collections, re, sys
by, total = collections.Counter(), 0
for line in open(sys.argv[1]):
    frames, w = line.rstrip("\n").rsplit(" ", 1)
    f = frames.split(";")
    if not re.fullmatch(r"CUDA graph \d+ \(nodes not recorded\)", f[-1]):
        continue
    total += int(w)
    # process;thread;ranges...;call;graph: the innermost range, or "-"
    by[";".join([f[-3] if len(f) > 4 else "-"] + f[-2:])] += int(w)
print(" ".join(sorted("%s:%d" % kv for kv in by.items())))
print(total)
PY
)
expect_that "folded: each launch under its range and call, the graph's frame last ($WANT_STACKS, got ${GOT_STACKS%%$'\n'*})" \
	test "${GOT_STACKS%%$'\n'*}" = "$WANT_STACKS"
expect_that "folded: all the launches' GPU time ($WANT_GPU ns, got ${GOT_STACKS#*$'\n'})" \
	test "${GOT_STACKS#*$'\n'}" = "$WANT_GPU"
run report -F folded --weight=api "$F"
if grep -q "CUDA graph" "$TMP/out"; then fail "folded --weight=api: a graph frame"
else pass "folded --weight=api: calls weigh their own time, no graph frame"; fi

# the overview's busy title says graphs count where there are launches,
# and only there
run report -F json "$F"
TITLE=$(python3 -c 'import json,sys
print(next(r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "overview_gpu_busy")["title"])' "$TMP/out")
expect_that "overview: the busy title names the $LAUNCHES graph launches (got '$TITLE')" \
	test "$TITLE" = "GPU Busy (kernels, CUDA graphs, copies, memsets)"
run report "$PERFKIT_TEST_DATA/corpus/graph_replay.sqlite"
expect_out "overview of a node capture: the busy title as it was" '^ \*\* GPU Busy \(kernels, copies, memsets\) \(overview_gpu_busy\):$'

# the HTML report: the busy title, and its utilisation plot counts the
# launches as the overview does. A gnuplot that keeps the plot's data
# before drawing it: the busy share of each bin, times the bin, adds up to
# the GPU work inside the plot's axis (graph launches and copies: one
# stream, none overlap), within the data's rounding (0.001 %). The page's
# one gnuplot reads its commands on standard input: the stand-in passes
# them on and copies util.dat out of the folder a `cd` names.
REAL_GNUPLOT=$(command -v gnuplot || true)
mkdir -p "$TMP/bin"
cat >"$TMP/bin/gnuplot" <<EOF
#!/bin/sh
while IFS= read -r line; do
	printf '%s\\n' "\$line"
	case \$line in
	"cd '"*) d=\${line#cd \'}; d=\${d%\'}; [ -f "\$d/util.dat" ] && cp "\$d/util.dat" "$TMP/util.dat" ;;
	esac
done | exec "$REAL_GNUPLOT"
EOF
chmod +x "$TMP/bin/gnuplot"
PATH="$TMP/bin:$PATH" run report -F html -o "$TMP/graph.html" "$F"
expect_status "html" 0
expect_that "html: the busy title names the graphs" grep -q "GPU Busy (kernels, CUDA graphs, copies, memsets)" "$TMP/graph.html"
if [ -z "$REAL_GNUPLOT" ]; then
	pass "html utilisation plot: not drawn (no gnuplot)"
else
	ZERO=$(q "SELECT min(v) FROM (SELECT CAST(value AS INTEGER) AS v FROM PERFKIT_META WHERE key = 'start_ns'
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start > 0
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE WHERE start > 0
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start > 0
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start > 0
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start > 0
		UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_DRIVER WHERE start > 0
		UNION ALL SELECT min(start) FROM NVTX_EVENTS WHERE start > 0)")
	read -r LO HI PLOTTED < <(python3 - "$TMP/util.dat" "$ZERO" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
t = [round(float(r[0]) * 1e6) for r in rows]
busy = sum(float(rows[b][1]) / 100 * (t[b + 1] - t[b]) for b in range(len(rows) - 1))
print(int(sys.argv[2]) + t[0], int(sys.argv[2]) + t[-1], round(busy))
PY
)
	WANT_PLOT=$(q "SELECT sum(max(0, min(end, $HI) - max(start, $LO))) FROM (
		SELECT start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE UNION ALL SELECT start, end FROM
		CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET)")
	expect_that "html utilisation plot: the launches' busy time in the axis ($WANT_PLOT ns, got $PLOTTED)" \
		python3 -c 'import sys; w, g, span = map(int, sys.argv[1:]); sys.exit(abs(w - g) > span * 1e-5 + 1000)' \
		"$WANT_PLOT" "$PLOTTED" $((HI - LO))
	expect_that "html utilisation plot: its caption names the graph launches" \
		grep -q "ran a kernel, a CUDA graph launch, a copy or a memset" "$TMP/graph.html"
fi

# the option's bad values
run run --cuda-graph-trace=nodes -- true
expect_status "bad --cuda-graph-trace" 2
expect_one_error_line "bad --cuda-graph-trace" "--cuda-graph-trace: 'nodes' is neither node nor graph"
run run --cuda-graph-trace=node --trace=cuda,graphs -- true
expect_status "node with --trace=graphs" 2
expect_one_error_line "node with --trace=graphs" "contradict"
expect_that "no capture is left behind by a refused run" test -z "$(ls "$TMP"/perfkit-*.sqlite 2>/dev/null)"
[ "$failures" -eq 0 ]
