#!/usr/bin/env bash
# graph_trace.sh - --cuda-graph-trace on the GPU: the corpus' graph_chain
# --graph (one 64-kernel graph launched 520 times, each launch inside an
# NVTX range "step") and graph_chain without --graph (the same kernels
# launched one by one) captured with node (the default) and graph. node
# must hold 64 kernels a launch and no graph rows; graph one row a launch,
# no kernel of a graph, and the eager program's kernels as with node (only
# graphs are summarised). Then perfkit report and diagnose read each
# capture. Prints a PASS/FAIL table last; the log and the captures go to
# $OUT.
#
#   tests/gpu/graph_trace.sh [BUILD]   (GPU machine, repo root)
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PERFKIT=$BUILD/cli/perfkit
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
LOG=$OUT/graph_trace.log
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT/graph_trace"
: >"$LOG"
RESULTS=()
"$NVCC" -arch=sm_90 -O2 -o "$W/graph_chain" "$SRC/programs/graph_chain.cu" -ldl >>"$LOG" 2>&1 ||
	{ echo "graph_trace: cannot build graph_chain (see $LOG)"; exit 1; }

# rows FILE TABLE [WHERE]: the table's rows (0 when it is not there)
rows() {
	python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
try:
    print(db.execute("SELECT count(*) FROM %s %s" % (sys.argv[2], sys.argv[3])).fetchone()[0])
except sqlite3.OperationalError:
    print(0)' "$1" "$2" "${3:-}"
}

# case NAME OPTIONS -- PROGRAM...; then the expected kernel, graph-kernel
# and graph-row counts
run_case() {
	local name=$1 want_k=$2 want_gk=$3 want_g=$4 f ok=PASS k gk g
	shift 4
	f=$OUT/graph_trace/$name.sqlite
	echo "== $name: $*" >>"$LOG"
	timeout 120 "$PERFKIT" run -f -o "$f" "$@" >>"$LOG" 2>&1
	echo "exit $?" >>"$LOG"
	k=$(rows "$f" CUPTI_ACTIVITY_KIND_KERNEL)
	gk=$(rows "$f" CUPTI_ACTIVITY_KIND_KERNEL "WHERE graphNodeId != 0")
	g=$(rows "$f" CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
	[ "$k" = "$want_k" ] && [ "$gk" = "$want_gk" ] && [ "$g" = "$want_g" ] || ok=FAIL
	for cmd in "report" "diagnose" "report --format=json"; do
		# shellcheck disable=SC2086 # cmd is a word list
		if ! "$PERFKIT" $cmd "$f" >>"$LOG" 2>&1; then
			ok=FAIL
			echo "$name: perfkit $cmd failed" >>"$LOG"
		fi
	done
	RESULTS+=("$(printf '%-14s %s  kernels=%s graph_kernels=%s graph_rows=%s (want %s %s %s)' \
		"$name" "$ok" "$k" "$gk" "$g" "$want_k" "$want_gk" "$want_g")")
}

# 20 warm-up steps and 500 timed: 520 launches of the 64-kernel graph
run_case replay_node 33280 33280 0 -- "$W/graph_chain" --graph
run_case replay_graph 0 0 520 --cuda-graph-trace=graph -- "$W/graph_chain" --graph
run_case eager_graph 33280 0 0 --cuda-graph-trace=graph -- "$W/graph_chain"
run_case replay_kernels_graphs 0 0 520 --trace=kernels,graphs -- "$W/graph_chain" --graph
echo "== perfkit diagnose replay_graph" >>"$LOG"
"$PERFKIT" diagnose "$OUT/graph_trace/replay_graph.sqlite" >>"$LOG" 2>&1
rm -f "$OUT/graph_trace/replay_node.sqlite" "$OUT/graph_trace/eager_graph.sqlite"
printf '%s\n' "${RESULTS[@]}"
! printf '%s\n' "${RESULTS[@]}" | grep -q FAIL
