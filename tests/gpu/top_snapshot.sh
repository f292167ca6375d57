#!/usr/bin/env bash
# top_snapshot.sh - `perfkit top -- PROGRAM` on the GPU machine, inside tmux:
# saves screen snapshots while the program runs, sorts by another column,
# quits with q, and checks that the capture is complete and valid.
#
#   tests/gpu/top_snapshot.sh BUILD OUTDIR   (BUILD as for tests/gpu/run.sh)
set -u
BUILD=$(cd "$1" && pwd)
OUTDIR=$2
PERFKIT=$BUILD/cli/perfkit
W=$(mktemp -d)
SOCK=perfkit-top-$$
mkdir -p "$OUTDIR"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

tmux -L "$SOCK" new-session -d -x 150 -y 45 \
	"cd $W && $PERFKIT top -o $W/top.sqlite -f -- $BUILD/workloads/transformer --variant=naive --steps=60 --iters=3; echo \$? > $W/status"
sleep 8
tmux -L "$SOCK" capture-pane -p >"$OUTDIR/top_live.txt"
tmux -L "$SOCK" send-keys s
sleep 2
tmux -L "$SOCK" capture-pane -p >"$OUTDIR/top_sorted.txt"
tmux -L "$SOCK" send-keys q
for _ in $(seq 120); do [ -f "$W/status" ] && break; sleep 1; done
status=$(cat "$W/status" 2>/dev/null || echo none)
kernels=$(sqlite3 "file:$W/top.sqlite?mode=ro" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL" 2>/dev/null ||
	python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])' "$W/top.sqlite")
"$PERFKIT" report "$W/top.sqlite" >"$OUTDIR/top_report.txt" 2>&1
report=$?
echo "top: program exit $status, capture kernels $kernels, report exit $report"
[ "$status" = 0 ] && [ "$report" = 0 ] && [ "${kernels:-0}" -gt 0 ]
