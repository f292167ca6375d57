#!/usr/bin/env bash
# capture.sh - the corpus of tests/gpu/programs run on the GPU machine, each
# program twice: once untraced (the program's own step time) and once under
# `perfkit run` (the capture). Run from the repository root:
#
#   tests/gpu/programs/capture.sh [BUILD [NAME...]]
#
# BUILD is perfkit staged as tests/gpu/run.sh --stage makes it (default
# .gpu/collector: cli/perfkit, collectors/libperfkit-inject.so, lib/);
# NAMEs choose programs (default: all, in the order below). The .cu programs
# are built here first (nvcc -arch=sm_90). A program that fails is logged
# and the next one runs. A run starts only while it can end within
# BUDGET_S seconds (default 480) of the start.
#
# Writes $OUT/corpus.log (every command and its output) and
# $OUT/corpus.tar.xz (the captures, NAME.sqlite), and prints a table last:
# exit status and step_ms of both runs, kernels in the capture, its size.
set -u

PROGRAMS=(graph_eager graph_replay alloc_churn alloc_pool managed_memory managed_prefetch pinned_overlap
	phases_no_nvtx triton_softmax fp32_gemm_no_tf32 pageable_sync_copies hf_gpt2_train
	hf_gpt2_infer_b1 timm_resnet_dataloader jax_jit_mlp compile_default
	compile_reduce_overhead pageable_pinned pageable_no_item)

BUILD=$(cd "${1:-.gpu/collector}" && pwd) || exit 2
shift $(($# > 0 ? 1 : 0))
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
LOG=$OUT/corpus.log
BUDGET_S=${BUDGET_S:-480}
UNTRACED_LIMIT=60
TRACED_LIMIT=90
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
# Never NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

log() { printf '%s\n' "$*" >>"$LOG"; }

# command NAME: the program's command line, in CMD
command_of() {
	case $1 in
	graph_eager) CMD=("$BIN/graph_chain") ;;
	graph_replay) CMD=("$BIN/graph_chain" --graph) ;;
	alloc_churn) CMD=("$BIN/alloc_churn") ;;
	alloc_pool) CMD=("$BIN/alloc_churn" --pool) ;;
	pageable_pinned) CMD=(python3 "$SRC/pageable_sync_copies.py" --pinned) ;;
	pageable_no_item) CMD=(python3 "$SRC/pageable_sync_copies.py" --no-item) ;;
	managed_memory) CMD=("$BIN/managed_memory") ;;
	managed_prefetch) CMD=("$BIN/managed_memory" --prefetch) ;;
	pinned_overlap | phases_no_nvtx) CMD=("$BIN/$1") ;;
	*) CMD=(python3 "$SRC/$1.py") ;;
	esac
}

# the .cu file a program is built from, or nothing for a Python program
source_of() {
	case $1 in
	graph_eager | graph_replay) echo graph_chain ;;
	alloc_churn | alloc_pool) echo alloc_churn ;;
	managed_memory | managed_prefetch) echo managed_memory ;;
	pinned_overlap | phases_no_nvtx) echo "$1" ;;
	esac
}

if [ $# -gt 0 ]; then
	for name in "$@"; do
		[[ " ${PROGRAMS[*]} " == *" $name "* ]] ||
			{ echo "capture.sh: no program $name; the corpus: ${PROGRAMS[*]}" >&2; exit 2; }
	done
	CHOSEN=("$@")
else
	CHOSEN=("${PROGRAMS[@]}")
fi
[ -x "$PERFKIT" ] || { echo "capture.sh: no perfkit at $PERFKIT" >&2; exit 2; }

: >"$LOG"
W=$(mktemp -d)
BIN=$W/bin
mkdir -p "$BIN"
log "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
log "perfkit: $PERFKIT; programs: ${CHOSEN[*]}"

declare -A BUILT
for name in "${CHOSEN[@]}"; do
	src=$(source_of "$name")
	if [ -z "$src" ] || [ -n "${BUILT[$src]:-}" ]; then
		continue
	fi
	log "=== build $src: $NVCC -arch=sm_90 -O2 -lineinfo"
	if "$NVCC" -arch=sm_90 -O2 -lineinfo -o "$BIN/$src" "$SRC/$src.cu" -ldl >>"$LOG" 2>&1; then
		BUILT[$src]=ok
	else
		BUILT[$src]=failed
		log "--- build $src failed"
	fi
done

# run LABEL LIMIT OUTPUT COMMAND...: run it in $W within LIMIT seconds when
# the budget allows; its status lands in STATUS ("skip" when not run)
run() {
	local label=$1 limit=$2 output=$3
	shift 3
	if [ $((SECONDS + limit)) -gt "$BUDGET_S" ]; then
		log "=== $label: not run, ${SECONDS}s of ${BUDGET_S}s spent"
		STATUS=skip
		return
	fi
	log "=== $label: $*"
	(cd "$W" && timeout -k 5 "$limit" "$@") >"$output" 2>&1
	STATUS=$?
	cat "$output" >>"$LOG"
	log "--- $label: exit $STATUS (${SECONDS}s since the start)"
}

step_ms() {
	[ -f "$1" ] || { echo -; return; }
	awk '$1 == "step_ms" { v = $2 } END { print (v == "" ? "-" : v) }' "$1"
}

kernels() {
	python3 - "$1" 2>/dev/null <<'EOF' || echo -
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])
EOF
}

ROWS=()
FAILED=0
for name in "${CHOSEN[@]}"; do
	src=$(source_of "$name")
	if [ -n "$src" ] && [ "${BUILT[$src]}" != ok ]; then
		ROWS+=("$name|build|build|-|-|-|-")
		FAILED=1
		continue
	fi
	command_of "$name"
	run "$name untraced" "$UNTRACED_LIMIT" "$W/$name.untraced.log" "${CMD[@]}"
	plain=$STATUS
	run "$name traced" "$TRACED_LIMIT" "$W/$name.traced.log" \
		"$PERFKIT" run -f -o "$W/$name.sqlite" -- "${CMD[@]}"
	traced=$STATUS
	[ "$plain" = 0 ] && [ "$traced" = 0 ] || FAILED=1
	n=- mb=-
	if [ -f "$W/$name.sqlite" ]; then
		n=$(kernels "$W/$name.sqlite")
		mb=$(awk -v b="$(stat -c %s "$W/$name.sqlite")" \
			'BEGIN { printf "%.1f%s", b / 1048576, (b > 32 * 1048576 ? " (large)" : "") }')
	fi
	ROWS+=("$name|$plain|$traced|$(step_ms "$W/$name.untraced.log")|$(step_ms "$W/$name.traced.log")|$n|$mb")
done
log "=== programs done after ${SECONDS}s"

# One archive of every capture. Blocks of 16 MiB let xz use every core; the
# captures become fixtures one file each later (tests/data/corpus/).
shopt -s nullglob
captures=("$W"/*.sqlite)
ARCHIVE=""
if [ ${#captures[@]} -gt 0 ]; then
	tar -C "$W" -cf - "${captures[@]##*/}" | xz -9 -T0 --block-size=16MiB >"$OUT/corpus.tar.xz"
	size=$(stat -c %s "$OUT/corpus.tar.xz")
	ARCHIVE=$(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1048576 }')
	[ "$size" -gt $((16 * 1048576)) ] && ARCHIVE="$ARCHIVE: over 16 MiB, leave the largest captures out"
	log "corpus.tar.xz: $ARCHIVE"
fi

{
	echo
	echo "corpus.tar.xz: ${ARCHIVE:-no captures}; ${SECONDS}s in all; log: $LOG"
	printf '%-24s %-8s %-8s %-12s %-12s %-8s %s\n' program exit traced step_ms step_ms_traced \
		kernels capture_MB
	for row in "${ROWS[@]}"; do
		IFS='|' read -r name plain traced ms ms_traced n mb <<<"$row"
		printf '%-24s %-8s %-8s %-12s %-12s %-8s %s\n' "$name" "$plain" "$traced" "$ms" \
			"$ms_traced" "$n" "$mb"
	done
} | tee -a "$LOG"
rm -rf "$W"
exit "$FAILED"
