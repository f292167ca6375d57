#!/usr/bin/env bash
# pm_sampling.sh - sampled GPU metrics (`perfkit run --gpu-metrics`) checked
# on the GPU against what the kernels do and against ncu (what sampling
# costs is bench/gpu_metrics_cost.sh). Prints a table last; logs and
# captures go to $OUT.
#
#   tests/gpu/pm_sampling.sh [BUILD]     BUILD as for tests/gpu/run.sh
#   PARTS="one multi" (the default): one GPU's checks against ncu; the
#   several-GPU ones (where there are two or more GPUs)
#
# A DRAM-bound triad, a SIMT FP32 GEMM, a kernel of 4 blocks and
#   PyTorch BF16/FP32 matrix products run under --gpu-metrics; each
#   kernel's sampled metrics (time-weighted over its run) are compared with
#   ncu's reading of the same counters on the same kernel (DRAM within 5%),
#   tensor pipe near full in BF16 (above 80%) and near zero in FP32, few
#   SMs active for the small kernel, the PCIe link busy under pinned
#   host-to-device copies; samples are checked to lie on the trace's clock.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
PM=$BUILD/tests/gpu/pm_kernels
W=$(mktemp -d)
LOG=$OUT/pm_sampling.log
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
# Never NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PARTS=${PARTS:-one multi}
RESULTS=()
: >"$LOG"

result() { RESULTS+=("$(printf '%-4s  %-30s %s' "$2" "$1" "$3")"); }
log() { printf '%s\n' "$*" >>"$LOG"; }

capture() { # NAME PROGRAM ARGS...
	local name=$1
	shift
	log "=== $name: perfkit run --gpu-metrics $*"
	timeout -k 5 180 "$PERFKIT" run --gpu-metrics -f -o "$W/$name.sqlite" -- "$@" >>"$LOG" 2>&1
	local rc=$?
	log "--- $name: exit $rc"
	[ $rc = 0 ] && cp "$W/$name.sqlite" "$OUT/$name.sqlite" 2>/dev/null
	return $rc
}

# ncu's reading of METRICS on the first launch of kernels matching REGEX.
ncu_read() { # NAME REGEX METRICS PROGRAM ARGS...
	local name=$1 regex=$2 metrics=$3
	shift 3
	log "=== ncu $name"
	timeout -k 5 240 ncu --csv --cache-control none --clock-control none --metrics "$metrics" \
		-k "regex:$regex" -c 1 "$@" >"$W/ncu_$name.csv" 2>>"$LOG"
	log "--- ncu $name: exit $?"
	cat "$W/ncu_$name.csv" >>"$LOG"
	cp "$W/ncu_$name.csv" "$OUT/" 2>/dev/null # the reading the comparison used, kept
}

# The sampled averages of a capture over the kernels matching a name
# pattern, and the comparisons, in Python (sqlite3 is in its library).
check() { # NAME KERNEL_LIKE NCU_NAME|- EXPECT...
	python3 "$SRC/pm_check.py" "$W/$1.sqlite" "$2" "$3" "${@:4}"
}

if [[ " $PARTS " == *" one "* ]]; then
	if capture pm_stream "$PM" stream 6; then
		ncu_read stream triad dram__bytes_read.sum.pct_of_peak_sustained_elapsed,dram__bytes_write.sum.pct_of_peak_sustained_elapsed,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed "$PM" stream 1
		line=$(check pm_stream '%triad%' "$W/ncu_stream.csv" dram_vs_ncu=5 2>>"$LOG")
		result "stream:dram_vs_ncu" "${line%% *}" "${line#* }"
	else
		result stream:capture FAIL "see log"
	fi
	if capture pm_sgemm "$PM" sgemm 20; then
		ncu_read sgemm sgemm sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum.pct_of_peak_sustained_elapsed "$PM" sgemm 1
		line=$(check pm_sgemm '%sgemm%' "$W/ncu_sgemm.csv" tensor_below=5 sm_active_above=90 2>>"$LOG")
		result "sgemm:tensor_idle" "${line%% *}" "${line#* }"
	else
		result sgemm:capture FAIL "see log"
	fi
	if capture pm_small "$PM" small 10; then
		line=$(check pm_small '%spin%' - sm_active_below=10 2>>"$LOG")
		result "small:few_sms" "${line%% *}" "${line#* }"
	else
		result small:capture FAIL "see log"
	fi
	if capture pm_h2d "$PM" h2d 20; then
		line=$(check pm_h2d 'copies:1' - pcie_rx_above=50 2>>"$LOG")
		result "h2d:pcie_busy" "${line%% *}" "${line#* }"
	else
		result h2d:capture FAIL "see log"
	fi
	if capture pm_gemm python3 "$SRC/pm_gemm.py"; then
		line=$(check pm_gemm 'range:bf16_gemm' - tensor_above=80 2>>"$LOG")
		result "torch:bf16_tensor_busy" "${line%% *}" "${line#* }"
		line=$(check pm_gemm 'range:fp32_gemm' - tensor_below=5 2>>"$LOG")
		result "torch:fp32_tensor_idle" "${line%% *}" "${line#* }"
		ncu_read bf16 'gemm|xmma|cutlass|sm90' sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed python3 "$SRC/pm_gemm.py"
		log "(ncu bf16: the first product kernel, for the tensor pipe's reading)"
	else
		result torch:capture FAIL "see log"
	fi
	for f in pm_stream pm_sgemm pm_small pm_gemm; do # (pm_h2d runs no kernels)
		[ -f "$W/$f.sqlite" ] || continue
		line=$(python3 "$SRC/pm_check.py" "$W/$f.sqlite" --clock 2>>"$LOG")
		result "$f:clock_and_counts" "${line%% *}" "${line#* }"
	done
fi

# Several GPUs (PARTS multi, with two or more): one process sampling two
# GPUs while GPU 0 sends peer copies to GPU 1 (the link between them busy
# at both ends), and a 2-rank DDP job whose ranks each sample their own GPU.
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
if [[ " $PARTS " == *" multi "* ]] && [ "$NGPU" -ge 2 ]; then
	if capture pm_peer "$PM" peer 200; then
		line=$(python3 "$SRC/pm_check.py" "$W/pm_peer.sqlite" --devices 2 2>>"$LOG")
		result "peer:two_gpus_sampled" "${line%% *}" "${line#* }"
		line=$(check pm_peer 'copies:10' - device=0 nvlink_tx_above=20 2>>"$LOG")
		result "peer:gpu0_nvlink_tx_busy" "${line%% *}" "${line#* }"
		line=$(check pm_peer 'copies:10' - device=1 nvlink_rx_above=20 2>>"$LOG")
		result "peer:gpu1_nvlink_rx_busy" "${line%% *}" "${line#* }"
	else
		result peer:capture FAIL "see log"
	fi
	if capture pm_ddp torchrun --standalone --nproc_per_node=2 "$SRC/ddp_train.py" --steps 20; then
		line=$(python3 "$SRC/pm_check.py" "$W/pm_ddp.sqlite" --devices 2 2>>"$LOG")
		result "ddp:each_rank_its_gpu" "${line%% *}" "${line#* }"
	else
		result ddp:capture FAIL "see log"
	fi
elif [[ " $PARTS " == *" multi "* ]]; then
	result multi SKIP "$NGPU GPU: the several-GPU checks need two"
fi

echo
printf '%s\n' "${RESULTS[@]}"
