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
#   synchronisation (perfkit_no_sync_flush: PERFKIT_SYNC_FLUSH_MS=0), with
#   --trace=api-all, with --trace=cuda; with --start-paused and no window
#   ever opened (perfkit_paused: the cost outside a capture window, the
#   injection and the callbacks that watch for a window);
#   the PyTorch programs also under torch.profiler.
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
# BUILD as for tests/gpu/run.sh. Raw values go to $OUT/overhead_raw.tsv.
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
RAW=${OUT:-$W}/overhead_raw.tsv
LOG=${OUT:-$W}/bench.log
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
	ddp) echo "rank_step_ms torchrun --standalone --nproc_per_node=2 $ROOT/tests/gpu/ddp_train.py --steps 100" ;;
	ready1m) echo "ready_s $LOOP empty 1000000" ;;
	after1m) echo "after_s $LOOP empty 1000000" ;;
	esac
}
configs() {
	local all
	case $1 in
	launch | tiny | transformer | torch)
		all="untraced floor_kernels floor_gpu floor_selected floor_rtkind floor_callback floor_callback_all floor_all perfkit perfkit_no_sync_flush perfkit_api perfkit_api_all perfkit_cuda perfkit_paused" ;;
	ready1m | after1m) all="perfkit perfkit_api_all" ;;
	*) all="untraced floor_kernels floor_selected perfkit" ;;
	esac
	case $1 in tiny | torch | transformer) all="$all profiler" ;; esac
	if [ -n "${CONFIGS:-}" ]; then
		for c in $all; do [[ " $CONFIGS " == *" $c "* ]] && echo "$c"; done
		# floors of chosen activity kinds (count_consumer.c "kinds:")
		for c in $CONFIGS; do [[ $c == floor_kinds:* ]] && echo "$c"; done
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
	floor_*) COUNT_CONSUMER_FLOOR=${config#floor_} CUDA_INJECTION64_PATH=$FLOOR "$@" ;;
	perfkit) "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
	perfkit_no_sync_flush) PERFKIT_SYNC_FLUSH_MS=0 "$PERFKIT" run -f -o "$W/cap.sqlite" -- "$@" ;;
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

steal() { awk '$1 == "cpu" { print $9 }' /proc/stat; }
STEAL0=$(steal)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" |
	tee -a "$LOG"
printf 'program\tconfig\tround\tvalue\n' >"$RAW"
for round in $(seq "$ROUNDS"); do
	for p in $PROGRAMS; do
		read -r key cmd <<<"$(program "$p")"
		for c in $(configs "$p"); do
			# shellcheck disable=SC2086 # cmd is a word list
			v=$(once "$c" "$key" $cmd)
			printf '%s\t%s\t%s\t%s\n' "$p" "$c" "$round" "${v:-nan}" >>"$RAW"
		done
	done
done

echo "cpu steal over the run: $(( $(steal) - STEAL0 )) ticks ($(nproc) cpus, $(getconf CLK_TCK)/s)" | tee -a "$LOG"
python3 - "$RAW" <<'PY'
import statistics, sys
vals = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p, c, _, v = line.split("\t")
    if v != "nan":
        vals.setdefault((p, c), []).append(float(v))
units = {"launch": "us/launch", "tiny": "us/op", "torch": "ms/step", "transformer": "ms/step",
         "forces_naive": "ms/step", "forces_optimized": "ms/step", "tnaive": "ms/step",
         "launch1m": "s/run", "ready1m": "s after", "after1m": "s after", "ddp": "ms/step"}
floor_of = {"perfkit": "floor_selected", "perfkit_no_sync_flush": "floor_selected", "perfkit_api": "floor_selected", "perfkit_api_all": "floor_all", "perfkit_cuda": "floor_gpu"}
configs = ("untraced", "floor_kernels", "floor_gpu", "floor_selected", "floor_rtkind",
           "floor_callback", "floor_callback_all", "floor_all", "perfkit", "perfkit_no_sync_flush", "perfkit_api", "perfkit_api_all", "perfkit_cuda", "perfkit_paused", "profiler")
print("\n%-7s %-9s %-15s %10s %10s %8s %14s" % ("program", "unit", "config", "median", "added", "+%", "vs floor"))
for p in units:
    med = {c: statistics.median(v) for (q, c), v in vals.items() if q == p}
    if not med:
        continue
    if "untraced" not in med:  # a figure of its own (ready1m): medians only
        for c in configs:
            if c in med:
                print("%-7s %-9s %-15s %10.3f %10s %8s %14s" % (p, units[p], c, med[c], "-", "-", "-"))
        continue
    base = med["untraced"]
    for c in configs + tuple(sorted(k for (q, k) in vals if q == p and k.startswith("floor_kinds:"))):
        if c not in med:
            continue
        added = med[c] - base
        ratio = "-"
        f = floor_of.get(c)
        if f in med and med[f] - base > 0:
            ratio = "%.2fx %s" % (added / (med[f] - base), f.replace("floor_", ""))
        print("%-7s %-9s %-15s %10.3f %+10.3f %7.1f%% %14s" % (p, units[p], c, med[c], added,
              100 * added / base, ratio))
if not vals:
    sys.exit("gpu_overhead: no run printed a figure (see bench.log)")
# Each configuration against untraced within its round (paired): the
# median ratio and the rounds' range, which for 7 rounds holds the median
# with 98% confidence (order statistics 1 and 7).
by_round = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    p, c, r, v = line.split("\t")
    if v != "nan":
        by_round[(p, c, r)] = float(v)
print("\npaired against untraced, per round: median ratio (range over rounds)")
for p in units:
    rows = []
    for c in configs:
        if c == "untraced":
            continue
        rs = [by_round[(q, k, r)] / by_round[(q, "untraced", r)] for (q, k, r) in by_round
              if q == p and k == c and (q, "untraced", r) in by_round and by_round[(q, "untraced", r)] > 0]
        if rs:
            rows.append("%s %.3f (%.3f-%.3f, n=%d)" % (c, statistics.median(rs), min(rs), max(rs), len(rs)))
    if rows:
        print("%-7s %s" % (p, "; ".join(rows)))
print("n = %d rounds, interleaved; 'vs floor': perfkit's added time over the matching floor's" %
      min(len(v) for v in vals.values()))
PY
rm -rf "$W"
