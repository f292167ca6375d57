#!/usr/bin/env bash
# unified_memory.sh - unified-memory capture on the GPU machine: the corpus'
# managed_memory and managed_prefetch captured (capture.sh), a small capture
# with page faults for the CLI tests (gpu_work managed), what each holds
# (records per kind, bytes, time), and what recording the unified-memory
# counters costs: managed_memory and graph_eager untraced, traced with the
# default --trace and traced without `um`, in interleaved rounds.
#
#   OUT=DIR tests/gpu/unified_memory.sh [BUILD]   (repository root)
#
# Writes $OUT/um.log, $OUT/corpus/corpus.tar.xz and $OUT/um_small.sqlite.xz.
set -u

BUILD=$(cd "${1:-.gpu/collector}" && pwd) || exit 2
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
LOG=$OUT/um.log
ROUNDS=${ROUNDS:-3}
W=$(mktemp -d)
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
NO_UM=cuda,nvtx,memory,api
: >"$LOG"

log() { printf '%s\n' "$*" | tee -a "$LOG"; }

# what a capture holds of unified memory
summary() {
	python3 - "$1" <<'EOF' 2>&1 | tee -a "$LOG"
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q = lambda s: db.execute(s).fetchall()
print("  copies by kind/cause:", q("SELECT copyKind, migrationCause, count(*), sum(bytes), "
      "sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1, 2"))
print("  cpu faults:", q("SELECT count(*), count(DISTINCT address) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS"))
print("  cpu fault functions:", q("SELECT s.value, count(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS f "
      "JOIN StringIds s ON s.id = f.CpuInstruction GROUP BY 1 ORDER BY 2 DESC LIMIT 5"))
print("  gpu faults:", q("SELECT count(*), sum(numberOfPageFaults), sum(end - start), "
      "group_concat(DISTINCT faultAccessType) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS"))
print("  counters:", q("SELECT name, value FROM PERFKIT_COUNTERS"))
print("  kernels:", q("SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"))
EOF
}

step_ms() { awk '$1 == "step_ms" { v = $2 } END { print (v == "" ? "-" : v) }' "$1"; }

log "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
"$NVCC" -arch=sm_90 -O2 -lineinfo -o "$W/managed_memory" "$SRC/programs/managed_memory.cu" -ldl >>"$LOG" 2>&1 ||
	log "build managed_memory failed"
"$NVCC" -arch=sm_90 -O2 -lineinfo -o "$W/graph_chain" "$SRC/programs/graph_chain.cu" -ldl >>"$LOG" 2>&1 ||
	log "build graph_chain failed"

log "=== small capture: gpu_work managed 8 3"
(cd "$W" && timeout -k 5 60 "$PERFKIT" run -f -o "$W/um_small.sqlite" -- "$BUILD/tests/gpu/gpu_work" managed 8 3) >>"$LOG" 2>&1
log "exit $?"
summary "$W/um_small.sqlite"
xz -9 -k -c "$W/um_small.sqlite" >"$OUT/um_small.sqlite.xz"

log "=== cost: rounds of untraced / default / --trace=$NO_UM (step_ms, wall s)"
for r in $(seq "$ROUNDS"); do
	for prog in managed_memory graph_chain; do
		for how in untraced default no_um; do
			case $how in
			untraced) cmd=("$W/$prog") ;;
			default) cmd=("$PERFKIT" run -f -o "$W/cost.sqlite" -- "$W/$prog") ;;
			no_um) cmd=("$PERFKIT" run -f -o "$W/cost.sqlite" --trace=$NO_UM -- "$W/$prog") ;;
			esac
			t0=$(date +%s.%N)
			(cd "$W" && timeout -k 5 90 "${cmd[@]}") >"$W/cost.log" 2>&1
			st=$?
			t1=$(date +%s.%N)
			log "round $r $prog $how exit $st step_ms $(step_ms "$W/cost.log") wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
			[ "$st" = 0 ] || cat "$W/cost.log" >>"$LOG"
		done
	done
done

log "=== corpus: managed_memory managed_prefetch"
mkdir -p "$OUT/corpus"
OUT=$OUT/corpus "$SRC/programs/capture.sh" "$BUILD" managed_memory managed_prefetch 2>&1 | tee -a "$LOG"
mkdir -p "$W/corpus"
tar -C "$W/corpus" -xJf "$OUT/corpus/corpus.tar.xz"
for f in "$W"/corpus/*.sqlite; do
	log "--- $(basename "$f") ($(stat -c %s "$f") bytes)"
	summary "$f"
done
rm -rf "$W"
