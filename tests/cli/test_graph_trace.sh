#!/usr/bin/env bash
# test_graph_trace.sh - a capture that recorded CUDA graphs whole
# (--cuda-graph-trace=graph), the corpus' graph_chain --graph on an H100:
# one row a graph launch and no kernel of the graph. Every reader counts a
# graph's time as GPU work: the overview's busy time is the launches' union,
# diagnose finds the NVTX steps and calls the loop GPU-bound, its critical
# path runs through the graph launches, and it says once that the kernels
# inside them are not seen and how to see them. The option's bad values and
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

# the option's bad values
run run --cuda-graph-trace=nodes -- true
expect_status "bad --cuda-graph-trace" 2
expect_one_error_line "bad --cuda-graph-trace" "--cuda-graph-trace: 'nodes' is neither node nor graph"
run run --cuda-graph-trace=node --trace=cuda,graphs -- true
expect_status "node with --trace=graphs" 2
expect_one_error_line "node with --trace=graphs" "contradict"
expect_that "no capture is left behind by a refused run" test -z "$(ls "$TMP"/perfkit-*.sqlite 2>/dev/null)"
[ "$failures" -eq 0 ]
