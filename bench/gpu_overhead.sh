#!/usr/bin/env bash
# gpu_overhead.sh - what tracing costs, on the GPU machine, as one table.
#
# Programs (each prints its own figure):
#   launch       bench/gpu/launch_loop: 20k empty launches (per_launch_us)
#   tiny         a tiny PyTorch op, x.add_(1) x 20k (per_op_us)
#   torch        a small PyTorch MLP's training step (step_ms)
#   transformer  a PyTorch transformer's training step (step_ms;
#                tests/gpu/torch_train.py)
#   forces_naive, forces_optimized, tnaive   the launch-bound bundled
#                workloads: batched forces both variants, the naive
#                transformer (step_ms from their JSON line)
#   launch1m     1M empty launches, the whole command timed, perfkit run's
#                finish included (wall_s)
#   gpt2         a GPT-2-like training step, ~400 kernels (the corpus'
#                hf_gpt2_train.py: Hugging Face GPT-2 from its config, 4
#                layers, bf16 autocast, AdamW; step_ms)
#   cnn          a CNN training step (bench/gpu/cnn_train.py: timm
#                ResNet-18, batch 32, SGD; step_ms)
#   graph        a loop replaying a 64-kernel CUDA graph (the corpus'
#                graph_chain --graph; step_ms), built here with nvcc
#   ddp          a 2-rank PyTorch DDP training step over NCCL, one GPU a
#                rank (tests/gpu/ddp_train.py under torchrun; the slower
#                rank's step_ms); not in the default list: it needs two GPUs
#   ready1m      the same run: how long after the program ended the capture
#                was complete, as `perfkit run` says ("ready X s after the
#                program ended"; ready_s), and from the end of the
#                program's work (its end_ns) to the end of the command,
#                the overview printed (after_s)
# Configurations:
#   untraced;
#   the counting-only CUPTI consumers of bench/gpu/libcount_consumer.so
#   (records counted, nothing converted or stored), the floors: kernels
#   only; kernels, copies, memsets and sync (gpu); gpu with the selected API
#   calls (`--trace=api`'s set) as activity records (selected), with the
#   whole runtime kind (rtkind) or through the callback API (callback);
#   everything `--trace=api-all` records (all);
#   `perfkit run` with its default trace, with it but no flush after a
#   synchronisation (perfkit_no_sync_flush: PERFKIT_SYNC_FLUSH_MS=0) or
#   with another least gap between such flushes (perfkit_sync_flush:MS), with
#   --trace=api-all, with --trace=cuda; with --start-paused and no window
#   ever opened (perfkit_paused: the cost outside a capture window, the
#   injection and the callbacks that watch for a window);
#   the PyTorch programs also under torch.profiler.
# The kind settings (gpt2, cnn, launch; graph its own):
#   perfkit run --trace=WORD, one --trace word at a time (kernels; copies
#   and memsets; sync; overhead; memory, the allocations; nvtx; api, the
#   selected calls), each against the counting consumer with exactly the
#   same activity kinds and callback ids (floor_kinds:...); the default
#   capture against floor_default (every kind and call the default
#   enables), with and without the flush after a synchronisation, and with
#   the writer thread dropping every buffer unread (perfkit_discard:
#   PERFKIT_BENCH_DISCARD=1, what the conversion and the store cost); on
#   the graph loop --cuda-graph-trace=node against graph.
# Every configuration runs once per round, all configurations of a program
# in turn within the round (interleaved, so drift of the machine hits all of
# them alike), ROUNDS rounds; the table holds the medians, the time each
# adds over untraced, and that added time as a multiple of the matching
# floor's (perfkit's default against "selected", api-all against "all",
# cuda against "gpu").
#
#   bench/gpu_overhead.sh [BUILD] [PROGRAM...]
#   ROUNDS=5 (default); CONFIGS="untraced perfkit ..." to run only those;
#   PIN=CPUS runs every program on those CPUs only (taskset -c CPUS)
# BUILD as for tests/gpu/run.sh. Raw values go to $OUT/overhead_raw.tsv, the
# writer's flushes in each perfkit run (how many, how many a synchronisation
# asked for, CUPTI's time over them) to $OUT/flush_counters.tsv.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
shift || true
PROGRAMS=${*:-launch tiny torch transformer forces_naive forces_optimized tnaive launch1m}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-5}
LOOP=$BUILD/bench/gpu/launch_loop
WL=$BUILD/workloads
FLOOR=$BUILD/bench/gpu/libcount_consumer.so
PERFKIT=$BUILD/cli/perfkit
TORCH=$ROOT/tests/gpu/torch_train.py
W=$(mktemp -d)
mkdir -p "${OUT:-$W}"
RAW=${OUT:-$W}/overhead_raw.tsv
LOG=${OUT:-$W}/bench.log
CORPUS=$ROOT/tests/gpu/programs
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
# The floors that record NVTX need CUPTI as NVTX's injection, as perfkit's
# collector hands NVTX to it.
CUPTI_LIB=${CUPTI_LIB:-$(ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so /usr/local/cuda/lib64/libcupti.so 2>/dev/null | head -1)}
# the floor that records what perfkit's default records
FLOOR_DEFAULT=kinds:kernel+memcpy+memcpy2+memset+sync+overhead+memory+nvtx+api
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1 TORCH_TRAIN_WARMUP_S=1
# Never NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# The command line of a program: its key, then the command.
program() {
	case $1 in
	launch) echo "per_launch_us $LOOP empty 20000" ;;
	tiny) echo "per_op_us python3 $TORCH tiny 20000" ;;
	torch) echo "step_ms python3 $TORCH plain 50" ;;
	transformer) echo "step_ms python3 $TORCH transformer 30" ;;
	forces_naive) echo "step_ms $WL/batched_forces --variant=naive --json --batch=16 --iters=200" ;;
	forces_optimized) echo "step_ms $WL/batched_forces --variant=optimized --json --batch=16 --iters=200" ;;
	tnaive) echo "step_ms $WL/transformer --variant=naive --json --iters=3" ;;
	launch1m) echo "wall_s $LOOP empty 1000000" ;;
	gpt2) echo "step_ms python3 $CORPUS/hf_gpt2_train.py" ;;
	cnn) echo "step_ms python3 $ROOT/bench/gpu/cnn_train.py" ;;
	graph) echo "step_ms $W/graph_chain --graph" ;;
	ddp) echo "rank_step_ms torchrun --standalone --nproc_per_node=2 $ROOT/tests/gpu/ddp_train.py --steps 100" ;;
	ready1m) echo "ready_s $LOOP empty 1000000" ;;
	after1m) echo "after_s $LOOP empty 1000000" ;;
	esac
}
# perfkit's --trace words and the floors with the same kinds
KIND_SETTINGS="kernels:kernel copies:memcpy+memcpy2+memset sync:sync overhead:overhead memory:memory nvtx:nvtx api:api"
kind_configs() {
	local s
	for s in $KIND_SETTINGS; do printf 'perfkit_trace:%s floor_kinds:%s ' "${s%%:*}" "${s#*:}"; done
	echo "floor_default perfkit perfkit_no_sync_flush perfkit_discard"
}
configs() {
	local all
	case $1 in
	# A Python program's run takes 10-15 s, most of it imports and
	# CUDA's start: the settings whose kinds these programs hardly record
	# (copies, memsets, allocations, overhead records) are measured on
	# the launch loop only, so that 7 rounds fit the device's time.
	gpt2) all="untraced perfkit_trace:kernels floor_kinds:kernel perfkit_trace:sync floor_kinds:sync perfkit_trace:nvtx floor_kinds:nvtx perfkit_trace:api floor_kinds:api floor_default perfkit perfkit_no_sync_flush perfkit_discard" ;;
	cnn) all="untraced perfkit_trace:kernels floor_kinds:kernel perfkit_trace:api floor_kinds:api floor_default perfkit" ;;
	graph) all="untraced perfkit_trace:kernels floor_kinds:kernel perfkit_trace:kernels,graphs floor_kinds:kernel+graph floor_default perfkit floor_default_graph perfkit_graph" ;;
	launch | tiny | transformer | torch)
		all="untraced floor_kernels floor_gpu floor_selected floor_rtkind floor_callback floor_callback_all floor_all perfkit perfkit_no_sync_flush perfkit_api perfkit_api_all perfkit_cuda perfkit_paused" ;;
	ready1m | after1m) all="perfkit perfkit_api_all" ;;
	*) all="untraced floor_kernels floor_selected perfkit" ;;
	esac
	case $1 in tiny | torch | transformer) all="$all profiler" ;; esac
	[ "$1" = launch ] && all="$all $(kind_configs)"
	if [ -n "${CONFIGS:-}" ]; then
		for c in $all; do [[ " $CONFIGS " == *" $c "* ]] && echo "$c"; done
		# floors of chosen activity kinds (count_consumer.c "kinds:") and
		# perfkit's --trace words, beyond a program's own list
		for c in $CONFIGS; do
			[[ " $all " != *" $c "* ]] && [[ $c == floor_kinds:* || $c == perfkit_trace:* ||
				$c == perfkit_sync_flush:* ]] && echo "$c"
		done
	else
		echo "$all"
	fi
}

# once CONFIG KEY CMD...: one run; prints the number after KEY (wall_s: the
# whole command's wall time; step_ms also from a workload's JSON line).
once() {
	local config=$1 key=$2 t0 t1
	shift 2
	t0=$(date +%s.%N)
	[ -n "${PIN:-}" ] && set -- taskset -c "$PIN" "$@"
	case $config in
	untraced) "$@" ;;
	floor_default) COUNT_CONSUMER_FLOOR=$FLOOR_DEFAULT NVTX_INJECTION64_PATH=$CUPTI_LIB \
		CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	floor_default_graph) COUNT_CONSUMER_FLOOR=$FLOOR_DEFAULT+graph NVTX_INJECTION64_PATH=$CUPTI_LIB \
		CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	floor_kinds:*nvtx*) COUNT_CONSUMER_FLOOR=${config#floor_} NVTX_INJECTION64_PATH=$CUPTI_LIB \
		CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	floor_*) COUNT_CONSUMER_FLOOR=${config#floor_} CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	perfkit_trace:*) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace="${config#perfkit_trace:}" -- "$@" ;;
	perfkit_discard) PERFKIT_BENCH_DISCARD=1 "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_graph) "$PERFKIT" run -f -o "$W/cap.sqlite" --cuda-graph-trace=graph -- "$@" ;;
	perfkit) "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_no_sync_flush) PERFKIT_SYNC_FLUSH_MS=0 "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_sync_flush:*) PERFKIT_SYNC_FLUSH_MS=${config#perfkit_sync_flush:} \
		"$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_api) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace=cuda,nvtx,memory,api -- "$@" ;;
	perfkit_api_all) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace=cuda,nvtx,memory,api-all -- "$@" ;;
	perfkit_cuda) "$PERFKIT" run -f -o "$W/cap.sqlite" --trace=cuda -- "$@" ;;
	perfkit_paused) "$PERFKIT" run -f -o "$W/cap.sqlite" --start-paused -- "$@" ;;
	profiler) set -- "${@/%plain/profiler}"; set -- "${@/%transformer/transformer_profiler}"
		"${@/%tiny/tiny_profiler}" ;;
	esac 2>"$W/once.err" >"$W/once.out"
	t1=$(date +%s.%N)
	cat "$W/once.err" "$W/once.out" >>"$LOG"
	if [ "$key" = wall_s ]; then
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
	elif [ "$key" = ready_s ]; then
		sed -n 's/.*(ready \([0-9.]*\) s after the program ended).*/\1/p' "$W/once.err" | head -1
	elif [ "$key" = rank_step_ms ]; then
		grep -o 'step_ms [0-9.]*' "$W/once.out" | awk '$2 + 0 > m { m = $2 + 0 } END { if (m) print m }'
	elif [ "$key" = after_s ]; then
		awk -v t1="$t1" '$1 == "end_ns" { printf "%.3f\n", t1 - $2 / 1e9; exit }' "$W/once.out"
	else
		awk -v k="$key" '$1 == k { print $2; exit }
			/^\{/ && match($0, /"step_ms": *[0-9.eE+-]+/) {
				v = substr($0, RSTART, RLENGTH); sub(/.*: */, "", v); print v; exit }' "$W/once.out"
	fi
}

# The writer's flushes in the run just made, and the time CUPTI took over
# them (drain.c's counters), beside the timings in $FLUSHES.
flush_counters() {
	python3 - "$W/cap.sqlite" "$@" >>"$FLUSHES" 2>>"$LOG" <<'PY'
import sqlite3, sys
db, rest = sys.argv[1], sys.argv[2:]
try:
    c = dict(sqlite3.connect(db).execute("SELECT name, value FROM PERFKIT_COUNTERS"))
except sqlite3.Error:
    c = {}
print("\t".join(rest + [str(c.get(k, "nan")) for k in ("flushes", "sync_flushes", "flush_ns")]))
PY
}

steal() { awk '$1 == "cpu" { print $9 }' /proc/stat; }
STEAL0=$(steal)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" |
	tee -a "$LOG"
printf 'program\tconfig\tround\tvalue\n' >"$RAW"
FLUSHES=${OUT:-$W}/flush_counters.tsv
printf 'program\tconfig\tround\tflushes\tsync_flushes\tflush_ns\n' >"$FLUSHES"
if [[ " $PROGRAMS " == *" graph "* ]] &&
	! "$NVCC" -arch=sm_90 -O2 -o "$W/graph_chain" "$CORPUS/graph_chain.cu" -ldl >>"$LOG" 2>&1; then
	echo "gpu_overhead: cannot build graph_chain (see $LOG)" >&2
	exit 1
fi
for round in $(seq "$ROUNDS"); do
	for p in $PROGRAMS; do
		read -r key cmd <<<"$(program "$p")"
		for c in $(configs "$p"); do
			# shellcheck disable=SC2086 # cmd is a word list
			v=$(once "$c" "$key" $cmd)
			printf '%s\t%s\t%s\t%s\n' "$p" "$c" "$round" "${v:-nan}" >>"$RAW"
			[[ $c == perfkit* ]] && flush_counters "$p" "$c" "$round"
		done
	done
done

echo "cpu steal over the run: $(( $(steal) - STEAL0 )) ticks ($(nproc) cpus, $(getconf CLK_TCK)/s)" | tee -a "$LOG"
KIND_SETTINGS="$KIND_SETTINGS kernels,graphs:kernel+graph" python3 "$ROOT/bench/gpu/overhead_table.py" "$RAW"
rm -rf "$W"
