#!/usr/bin/env bash
# ddp_python.sh - Python attribution and capture windows on a 2-rank
# PyTorch DDP job started by torchrun (tests/gpu/ddp_train.py), on the GPU
# machine, the two ways a user captures a job:
#   modules       perfkit run --pytorch=modules --python-sampling -- torchrun ...
#                 (one capture of the whole job)
#   modules_rank  torchrun --no-python perfkit run ... -o ddp2_py_rank%r.sqlite
#                 -- python3 ... (one capture a rank)
#   window        perfkit run --capture-range=nvtx:train_step,skip=10,count=5
#                 -- torchrun ...: every rank's window opens at the same step
# ddp_python_check.py reads each capture; module_sum and python_sum per
# rank and diagnose go to $OUT/readers.txt. A table is printed last.
#
#   tests/gpu/ddp_python.sh [BUILD]     BUILD as for tests/gpu/run.sh
#   STEPS=30  PARTS="modules modules_rank window"
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
STEPS=${STEPS:-30}
PARTS=${PARTS:-modules modules_rank window}
W=$(mktemp -d)
LOG=$OUT/ddp_python.log
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
# Never NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
: >"$LOG"
ONE=()
[ "$(nvidia-smi -L 2>/dev/null | wc -l)" -lt 2 ] && ONE=(--one-gpu)
TRAIN=("$SRC/ddp_train.py" --steps "$STEPS" "${ONE[@]}")
TORCHRUN=(torchrun --standalone --nproc_per_node=2)
PY=(--pytorch=modules --python-sampling)
RESULTS=()
result() { RESULTS+=("$(printf '%-4s  %-24s %s' "$2" "$1" "$3")"); }

step() { # NAME COMMAND...: run it when PARTS names it; log it
	local name=$1 rc
	shift
	[[ " $PARTS " == *" ${name%%:*} "* ]] || return 1
	echo "=== $name: $*" >>"$LOG"
	timeout -k 5 300 "$@" >"$W/$name.log" 2>&1
	rc=$?
	cat "$W/$name.log" >>"$LOG"
	result "$name" "$([ $rc = 0 ] && echo PASS || echo FAIL)" \
		"exit $rc; $(grep -h 'step_ms\|capture windows\|error' "$W/$name.log" | tr '\n' ' ' | cut -c1-150)"
	return 0
}

check() { # NAME ARGS...: ddp_python_check.py ARGS, its last line the result
	python3 "$SRC/ddp_python_check.py" "${@:2}" >"$W/$1.check" 2>&1
	cat "$W/$1.check" >>"$LOG"
	result "$1" "$(tail -1 "$W/$1.check" | cut -c1-4)" "$(tail -1 "$W/$1.check")"
}

readers() { # CAPTURE: what a user reads, per rank, into $OUT/readers.txt
	local f=$1 b
	b=$(basename "$f" .sqlite)
	for r in 0 1; do
		"$PERFKIT" report --report=module_sum --rank "$r" "$f" >"$W/$b.module_sum.rank$r.txt" 2>&1
		"$PERFKIT" report --report=python_sum --rank "$r" "$f" >"$W/$b.python_sum.rank$r.txt" 2>&1
	done
	"$PERFKIT" diagnose "$f" >"$W/$b.diagnose.txt" 2>&1
	for t in "$W/$b".*.txt; do echo "== $(basename "$t")"; cat "$t"; done >>"$OUT/readers.txt"
	result "$b:readers" "$(grep -q '^module' "$W/$b.module_sum.rank1.txt" && echo PASS || echo FAIL)" \
		"$(grep -c . "$W/$b.module_sum.rank0.txt") / $(grep -c . "$W/$b.module_sum.rank1.txt") module_sum lines"
}

step modules "$PERFKIT" run -f "${PY[@]}" -o "$W/ddp2_py.sqlite" -- "${TORCHRUN[@]}" "${TRAIN[@]}" &&
	{ check modules:check modules "$W/ddp2_py.sqlite"; readers "$W/ddp2_py.sqlite"; }
step modules_rank "${TORCHRUN[@]}" --no-python "$PERFKIT" run -f "${PY[@]}" -o "$W/ddp2_py_rank%r.sqlite" -- \
	python3 "${TRAIN[@]}" && check modules_rank:check modules "$W"/ddp2_py_rank0.sqlite "$W"/ddp2_py_rank1.sqlite
step window "$PERFKIT" run -f --capture-range=nvtx:train_step,skip=10,count=5 -o "$W/ddp2_window.sqlite" -- \
	"${TORCHRUN[@]}" "${TRAIN[@]}" && { check window:check window 10 5 "$W/ddp2_window.sqlite"; "$PERFKIT" diagnose "$W/ddp2_window.sqlite" >>"$OUT/readers.txt" 2>&1; }
(cd "$W" && tar cJf "$OUT/ddp_python_captures.tar.xz" ./*.sqlite 2>/dev/null)
for f in "$W"/*.check; do echo "== $(basename "$f")"; cat "$f"; done
printf '%s\n' "${RESULTS[@]}"
