#!/usr/bin/env bash
# workloads_a.sh - runs the hash embedding and batched forces workloads on
# the GPU, both variants with --check, and prints one table of the results.
#
# usage: tests/gpu/workloads_a.sh [BINDIR [LOGDIR]]
#   BINDIR holds hash_embedding and batched_forces (default build/workloads)
#   LOGDIR receives each program's full output (default a temporary folder)
# Exit status: 0 when every run and every check passed, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/workloads}
logs=${2:-$(mktemp -d)}
mkdir -p "$logs"
status=0

run() { # name, then the command
	local name=$1
	shift
	echo "== $name: $*"
	"$@" >"$logs/$name.log" 2>&1
	local rc=$?
	cat "$logs/$name.log"
	echo "== $name: exit $rc"
	[ $rc -eq 0 ] || status=1
	grep -h '^{' "$logs/$name.log" >>"$logs/results.jsonl"
}

: >"$logs/results.jsonl"
run hash_1M "$bin/hash_embedding" --variant=both --check --json --rows=1M --iters=50 --cpu-table
run hash_100K "$bin/hash_embedding" --variant=both --check --json --rows=100K --iters=200
run forces "$bin/batched_forces" --variant=both --check --json --batch=1,4,8,16,32 --iters=200

echo
echo "summary (speedup: optimized over naive at the same size)"
python3 - "$logs/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
naive = {(r["workload"], r["size"]): r for r in rows if r["variant"] == "naive"}
print("%-15s %-10s %-12s %11s %14s %-13s %-14s %8s" % ("workload", "variant", "size", "ms/step", "throughput", "unit", "check", "speedup"))
for r in rows:
    chk = "-" if not r["checked"] else ("ok " if r["check_ok"] else "FAIL ") + ("%.1e" % r["check_error"] if r["check_error"] is not None else "nan")
    base = naive.get((r["workload"], r["size"]))
    sp = "%.2fx" % (r["throughput"] / base["throughput"]) if base and r["variant"] != "naive" else "-"
    print("%-15s %-10s %-12s %11.4f %14.4g %-13s %-14s %8s" % (r["workload"], r["variant"], r["size"], r["step_ms"], r["throughput"], r["unit"], chk, sp))
PY
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
