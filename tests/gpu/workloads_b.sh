#!/usr/bin/env bash
# workloads_b.sh - runs the rollout (seed 001) and transformer (seeds 003/004)
# workloads on the GPU, naive and optimized, with --check, and prints one
# table of every result. Exit status 1 when a check or a program fails.
#
# usage: tests/gpu/workloads_b.sh [BIN_DIR [LOG_DIR]]
#   BIN_DIR  folder holding the rollout and transformer programs (build/workloads)
#   LOG_DIR  where each program's full output is kept (a temporary folder)
set -u
bin=${1:-build/workloads}
log=${2:-$(mktemp -d)}
mkdir -p "$log"
status=0

run() {
	local name=$1
	shift
	echo "== $name $*"
	if [ ! -x "$bin/$name" ]; then
		echo "workloads_b: $bin/$name is missing" >&2
		status=1
		return
	fi
	"$bin/$name" "$@" --check --json >"$log/$name.log" 2>&1
	local rc=$?
	grep -v '^{' "$log/$name.log"
	if [ $rc -ne 0 ]; then
		echo "workloads_b: $name exited with status $rc" >&2
		status=1
	fi
}

run rollout --variant=both --precision=all
run transformer --variant=both

# One table from the programs' JSON lines (flat objects, fixed keys).
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2"; }
echo
printf '%-12s %-10s %-26s %10s %14s %-12s %-6s %10s\n' workload variant size ms/step \
	throughput unit check error
cat "$log"/rollout.log "$log"/transformer.log 2>/dev/null | grep '^{' | while read -r line; do
	ok=$(field check_ok "$line")
	printf '%-12s %-10s %-26s %10.4f %14.4g %-12s %-6s %10s\n' "$(field workload "$line")" \
		"$(field variant "$line")" "$(field size "$line")" "$(field step_ms "$line")" \
		"$(field throughput "$line")" "$(field unit "$line")" \
		"$([ "$ok" = true ] && echo ok || echo FAIL)" "$(field check_error "$line")"
done
exit $status
