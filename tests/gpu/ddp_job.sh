#!/usr/bin/env bash
# ddp_job.sh - a 2-rank PyTorch DDP job (NCCL, torchrun) captured the ways
# a user captures one, on the GPU machine: the whole job in one file, the
# same with one rank made late on purpose (a straggler), and one file per
# rank through -o patterns; torch.profiler's kernel counts of the same
# program beside. Then the same job with no communication under the
# backward pass (ddp_train.py --no-overlap), under perfkit and under
# torch.profiler: each rank's GPU time of its kernels compared (with
# overlap a waiting NCCL kernel slows a rank's kernels by a share that
# differs run to run). Captures and logs go to $OUT; a table is printed last.
#
#   tests/gpu/ddp_job.sh [BUILD]     BUILD as for tests/gpu/run.sh
#   STEPS=30  LATE_MS=20
#   PARTS="profiler even straggler per_rank profiler_solo solo" (the default: all)
#
# With one GPU the two ranks share it (ddp_train.py --one-gpu: NCCL over
# sockets on the loopback); with two or more, one GPU a rank.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
STEPS=${STEPS:-30}
LATE_MS=${LATE_MS:-20}
PARTS=${PARTS:-profiler even straggler per_rank profiler_solo solo}
W=$(mktemp -d)
LOG=$OUT/ddp_job.log
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
# Never NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
: >"$LOG"
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
ONE=()
[ "$NGPU" -lt 2 ] && ONE=(--one-gpu)
TRAIN=("$SRC/ddp_train.py" --steps "$STEPS" "${ONE[@]}")
TORCHRUN=(torchrun --standalone --nproc_per_node=2)
RESULTS=()
result() { RESULTS+=("$(printf '%-4s  %-28s %s' "$2" "$1" "$3")"); }

step() { # NAME COMMAND...: run it (when PARTS names it), log it, say how it ended
	local name=$1 rc
	shift
	[[ " $PARTS " == *" $name "* ]] || return 0
	echo "=== $name: $*" >>"$LOG"
	timeout -k 5 240 "$@" >"$W/$name.log" 2>&1
	rc=$?
	cat "$W/$name.log" >>"$LOG"
	echo "--- $name: exit $rc" >>"$LOG"
	result "$name" "$([ $rc = 0 ] && echo PASS || echo FAIL)" \
		"exit $rc; $(grep -h 'step_ms' "$W/$name.log" | tr '\n' ' ')"
	cp "$W"/ddp2_*.sqlite "$OUT/" 2>/dev/null # at once: a run cut short keeps them
	return $rc
}

echo "GPUs: $NGPU ${ONE[*]}" >>"$LOG"
step profiler "${TORCHRUN[@]}" "${TRAIN[@]}" --profile "$W/prof"
step even "$PERFKIT" run -f -o "$W/ddp2_even.sqlite" -- "${TORCHRUN[@]}" "${TRAIN[@]}"
step straggler "$PERFKIT" run -f -o "$W/ddp2_straggler.sqlite" -- "${TORCHRUN[@]}" "${TRAIN[@]}" \
	--late-rank 1 --late-ms "$LATE_MS"
step per_rank "${TORCHRUN[@]}" --no-python "$PERFKIT" run -f -o "$W/ddp2_rank%r.sqlite" -- \
	python3 "${TRAIN[@]}"
step profiler_solo "${TORCHRUN[@]}" "${TRAIN[@]}" --no-overlap --profile "$W/prof_solo"
step solo "$PERFKIT" run -f -o "$W/ddp2_solo.sqlite" -- "${TORCHRUN[@]}" "${TRAIN[@]}" --no-overlap
for f in ddp2_even ddp2_straggler ddp2_rank0 ddp2_rank1 ddp2_solo; do
	[ -f "$W/$f.sqlite" ] || { result "$f:check" FAIL "no capture"; continue; }
	cp "$W/$f.sqlite" "$OUT/"
	case $f in
	ddp2_rank*) args=("$W/prof" --ranks 1) ;;
	ddp2_solo) args=("$W/prof_solo" --gpu-time) ;;
	*) args=("$W/prof") ;;
	esac
	python3 "$SRC/ddp_check.py" "$W/$f.sqlite" "${args[@]}" >"$W/$f.check" 2>&1
	cat "$W/$f.check" >>"$LOG"
	result "$f:check" "$(tail -1 "$W/$f.check" | cut -c1-4)" "$(grep -c '^PASS' "$W/$f.check") pass lines"
done
cp -r "$W/prof" "$W/prof_solo" "$OUT/" 2>/dev/null
for f in "$W"/*.check; do echo "== $(basename "$f")"; cat "$f"; done
printf '%s\n' "${RESULTS[@]}"
