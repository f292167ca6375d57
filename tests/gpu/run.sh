#!/usr/bin/env bash
# run.sh - the capture path proven on a GPU: small programs that know what
# they did run under `perfkit run`, and each capture is checked against
# those numbers (check_capture.py); a PyTorch loop is compared with
# torch.profiler. Prints a PASS/FAIL table last; logs and small captures go
# to $OUT (run.log, fixtures.tar).
#
#   tests/gpu/run.sh --stage BUILD DEST   (CPU machine) copy what the run
#                                         needs from a build into DEST
#   tests/gpu/run.sh [BUILD]              (GPU machine, repo root) run it;
#                                         BUILD defaults to .gpu/collector
#
# BUILD mirrors a build tree: cli/perfkit, collectors/libperfkit-inject.so,
# tests/gpu/gpu_work, bench/gpu/*, workloads/* and lib/ (libraries the GPU
# machine lacks, e.g. libcjson.so.1).
set -u

stage() {
	local build=$1 dest=$2 f
	mkdir -p "$dest"/{cli,collectors,tests/gpu,bench/gpu,workloads,lib}
	cp "$build/cli/perfkit" "$dest/cli/"
	# `perfkit peaks` runs the program beside it (tests/gpu/ranks_reports.sh)
	cp "$build/cli/perfkit-peaks" "$dest/cli/"
	cp "$build/collectors/libperfkit-inject.so" "$dest/collectors/"
	# every program built for the GPU tests (gpu_work, gpu_faults, pm_kernels, ...)
	for f in "$build"/tests/gpu/*; do
		[ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dest/tests/gpu/"
	done
	cp "$build"/bench/gpu/launch_loop "$build"/bench/gpu/lib*.so "$dest/bench/gpu/"
	# the Python hook (--pytorch, --python-sampling), found beside the binary
	cp -r "$build/python" "$dest/"
	for f in "$build"/workloads/*; do
		[ -f "$f" ] && [ -x "$f" ] && cp "$f" "$dest/workloads/"
	done
	# Debian libraries the GPU machine lacks, found from what perfkit links.
	for f in $(ldd "$dest/cli/perfkit" "$dest/collectors/libperfkit-inject.so" |
		awk '/libcjson|libprotobuf-c/ {print $3}' | sort -u); do
		cp -L "$f" "$dest/lib/"
	done
}

if [ "${1:-}" = --stage ]; then
	stage "$2" "$3"
	exit
fi

BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PERFKIT=$BUILD/cli/perfkit
GPU_WORK=$BUILD/tests/gpu/gpu_work
W=$(mktemp -d)
LOG=$OUT/run.log
# CUPTI: the toolkit folder, wherever this machine keeps it.
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
LIMIT=${LIMIT:-90} # seconds one run may take before it counts as hung
WORKLOAD_LIMIT=${WORKLOAD_LIMIT:-120}
mkdir -p "$W/fixtures"
: >"$LOG"
RESULTS=()
STATUS=0

log() { printf '%s\n' "$*" >>"$LOG"; }
result() { # NAME PASS|FAIL DETAIL
	RESULTS+=("$(printf '%-4s  %-34s %s' "$2" "$1" "$3")")
}

# perfkit_run NAME [run options] -- PROGRAM ARGS: capture into $W/NAME.sqlite;
# the program's status lands in $STATUS, its output in $W/NAME.log.
perfkit_run() {
	local name=$1
	shift
	log "=== $name: perfkit run $*"
	(cd "$W" && timeout -k 5 "$LIMIT" "$PERFKIT" run -o "$W/$name.sqlite" -f "$@") >"$W/$name.log" 2>&1
	STATUS=$?
	cat "$W/$name.log" >>"$LOG"
	log "--- $name: exit status $STATUS"
}

expect_status() { # NAME WANT
	if [ "$STATUS" = "$2" ]; then result "$1:status" PASS "exit $STATUS"
	else result "$1:status" FAIL "exit $STATUS, want $2"; fi
}

check() { # NAME CAPTURE CHECK ARGS...
	local name=$1 line res test detail
	shift
	while read -r line; do
		log "$name: $line"
		read -r res test detail <<<"$line"
		result "$name:$test" "$res" "$detail"
	done < <(python3 "$SRC/check_capture.py" "$@" 2>&1 | sed -n 's/^\(PASS\|FAIL\) /&/p;t;s/^/FAIL python /p')
}

test_work() {
	perfkit_run work -- "$GPU_WORK" work 200 8
	expect_status work 0
	check work "$W/work.sqlite" work 200 8
	perfkit_run trace_cuda --trace=cuda -- "$GPU_WORK" work 50 2
	expect_status trace_cuda 0
	check trace_cuda "$W/trace_cuda.sqlite" trace_cuda 50
}

# The default trace keeps the program's own driver calls (as cuBLAS and
# Triton launch) and leaves out every call no report reads; api-all keeps
# those too.
test_driver() {
	perfkit_run driver -- "$GPU_WORK" driver 500
	expect_status driver 0
	check driver "$W/driver.sqlite" driver 500
	perfkit_run driver_all --trace=cuda,nvtx,memory,api-all -- "$GPU_WORK" driver 500
	expect_status driver_all 0
	check driver_all "$W/driver_all.sqlite" driver 500 api-all
}

test_reset() {
	# A long flush interval: only the cudaDeviceReset flush can save these.
	perfkit_run reset --flush-interval=60000 -- "$GPU_WORK" reset 300
	expect_status reset 0
	check reset "$W/reset.sqlite" kernels 300
}

test_crashes() {
	local spec mode want
	for spec in exit:3 abort:134 segv:139 sigterm:143 sigint:130 sigkill:137 _exit:4 running:143; do
		mode=${spec%%:*} want=${spec#*:}
		perfkit_run "crash_$mode" -- "$GPU_WORK" crash "$mode" 100
		expect_status "crash_$mode" "$want"
		if [ "$mode" = running ]; then check "crash_$mode" "$W/crash_$mode.sqlite" running 100 "$want"
		else check "crash_$mode" "$W/crash_$mode.sqlite" crash 100 "$want"; fi
	done
}

# Each process records its place in a job: a rank given through torchrun's
# variables, its host, GPUs and clock pairs.
test_job() {
	perfkit_run job -- env RANK=3 WORLD_SIZE=4 LOCAL_RANK=1 "$GPU_WORK" crash exit 10
	expect_status job 3
	check job "$W/job.sqlite" job 3 4 1 torchrun
}

# --gpu-metrics: a program's end, whichever way, keeps its status, its
# kernels and its samples.
test_gpu_metrics() {
	local spec mode want
	for spec in exit:3 abort:134 segv:139 sigterm:143; do
		mode=${spec%%:*} want=${spec#*:}
		perfkit_run "gm_$mode" --gpu-metrics -- "$GPU_WORK" crash "$mode" 100
		expect_status "gm_$mode" "$want"
		check "gm_$mode" "$W/gm_$mode.sqlite" gpu_metrics 100 "$want"
	done
}

test_fork() {
	perfkit_run fork -- "$GPU_WORK" fork 100 50
	expect_status fork 0
	check fork "$W/fork.sqlite" fork 100 50
}

test_other_subscriber() {
	perfkit_run subscriber -- env LD_PRELOAD="$BUILD/bench/gpu/libcount_consumer.so" \
		COUNT_CONSUMER_SUBSCRIBE=1 "$GPU_WORK" crash exit 10
	expect_status subscriber 3
	if grep -q "perfkit: another profiler (CUPTI subscriber) holds this process; running untraced" \
		"$W/subscriber.log"; then result subscriber:message PASS "one line, program ran on"
	else result subscriber:message FAIL "message missing"; fi
}

# Two GPUs and a peer copy between them: run only where there are two.
test_peer() {
	[ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ] || { log "peer: one GPU here, skipped"; return; }
	perfkit_run peer -- "$GPU_WORK" peer 30
	expect_status peer 0
	check peer "$W/peer.sqlite" peer 30
}

# A well-behaved program: its capture becomes the fixture on which diagnose
# must find nothing above low severity.
test_clean() {
	perfkit_run clean -- "$GPU_WORK" clean 40
	expect_status clean 0
	check clean "$W/clean.sqlite" clean 40
}

test_no_cuda() {
	perfkit_run no_cuda -- /bin/true
	expect_status no_cuda 0
	if grep -q "made no CUDA calls" "$W/no_cuda.log"; then result no_cuda:note PASS "note printed"
	else result no_cuda:note FAIL "note missing"; fi
	check no_cuda "$W/no_cuda.sqlite" empty
}

test_preload() {
	local f
	mkdir -p "$W/preload"
	log "=== preload: LD_PRELOAD=libperfkit-inject.so gpu_work crash exit 20"
	(cd "$W/preload" && timeout -k 5 "$LIMIT" env -u CUDA_INJECTION64_PATH -u PERFKIT_OUTPUT_DIR \
		LD_PRELOAD="$BUILD/collectors/libperfkit-inject.so" "$GPU_WORK" crash exit 20) >>"$LOG" 2>&1
	STATUS=$?
	expect_status preload 3
	f=$(ls "$W"/preload/perfkit-gpu_work-*.sqlite 2>/dev/null | head -1)
	if [ -n "$f" ]; then check preload "$f" kernels 20
	else result preload:file FAIL "no perfkit-gpu_work-PID.sqlite written"; fi
}

test_torch() {
	local want steps=20
	log "=== torch.profiler run"
	timeout -k 5 "$LIMIT" python3 "$SRC/torch_train.py" profiler $steps >"$W/torch_profiler.log" 2>&1
	cat "$W/torch_profiler.log" >>"$LOG"
	want=$(awk '$1 == "kernels" { print $2 }' "$W/torch_profiler.log")
	perfkit_run torch -- python3 "$SRC/torch_train.py" plain $steps
	expect_status torch 0
	check torch "$W/torch.sqlite" torch "${want:-0}" $((steps + 3))
	torch_nvtx_diagnosis
}

# Why torch.cuda.nvtx ranges do or do not arrive: how torch links NVTX, and
# whether pointing NVTX at CUPTI directly changes anything.
torch_nvtx_diagnosis() {
	local tdir d
	log "=== torch NVTX diagnosis"
	tdir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>>"$LOG")
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' >>"$LOG" 2>&1
	ls "$tdir/lib" 2>/dev/null | grep -i -e nvtx -e nvToolsExt >>"$LOG"
	for lib in "$tdir"/lib/libtorch_cuda.so "$tdir"/_C*.so; do
		[ -f "$lib" ] && { log "ldd $lib:"; ldd "$lib" | grep -i -e nvtx -e nvToolsExt >>"$LOG"; }
	done
	python3 -c 'import torch.cuda.nvtx as n; print("nvtx module", n._nvtx)' >>"$LOG" 2>&1
	d=$W/nvtx_cupti
	mkdir -p "$d"
	CUDA_INJECTION64_PATH=$BUILD/collectors/libperfkit-inject.so PERFKIT_OUTPUT_DIR=$d \
		NVTX_INJECTION64_PATH=/usr/local/cuda/lib64/libcupti.so \
		timeout -k 5 "$LIMIT" python3 "$SRC/torch_train.py" plain 5 >>"$LOG" 2>&1
	for f in "$d"/proc-*.sqlite; do
		[ -f "$f" ] && python3 -c 'import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print("NVTX rows with NVTX_INJECTION64_PATH=libcupti:", db.execute("select count(*) from NVTX_EVENTS").fetchone()[0])' "$f" >>"$LOG" 2>&1
	done
}

# Captures of the reference workloads, both variants, kept small: they become
# the tests/data/ fixtures that CI's reports, diagnoses and gates run on.
WORKLOAD_CAPTURES=(
	"hash_embedding --rows=100K --iters=8"
	"rollout --timesteps=20 --realizations=4 --iters=2"
	"batched_forces --batch=16 --iters=10"
	"transformer --steps=4 --iters=1 --layers=2"
)
capture_workloads() {
	local spec bin name variant
	[ "${SKIP_WORKLOADS:-0}" = 1 ] && return
	for spec in "${WORKLOAD_CAPTURES[@]}"; do
		set -- $spec
		bin=$BUILD/workloads/$1
		shift
		[ -x "$bin" ] || { result "workload:$(basename "$bin")" FAIL "not built"; continue; }
		for variant in naive optimized; do
			name=$(basename "$bin")_$variant
			LIMIT=$WORKLOAD_LIMIT perfkit_run "wl_$name" -- "$bin" --variant=$variant "$@"
			if [ "$STATUS" = 0 ] && [ -f "$W/wl_$name.sqlite" ]; then
				cp "$W/wl_$name.sqlite" "$W/fixtures/$name.sqlite"
				result "workload:$name" PASS "$(du -h "$W/wl_$name.sqlite" | cut -f1)"
			else
				result "workload:$name" FAIL "exit $STATUS"
			fi
		done
	done
	capture_repeats
}

# Two more captures of one variant, for the gate's "repeated runs of the same
# program pass" test (tests/cli/test_gate_workload_captures.sh).
capture_repeats() {
	local i name=hash_embedding_optimized
	for i in 2 3; do
		LIMIT=$WORKLOAD_LIMIT perfkit_run "wl_${name}_$i" -- "$BUILD/workloads/hash_embedding" \
			--variant=optimized ${WORKLOAD_CAPTURES[0]#hash_embedding }
		if [ "$STATUS" = 0 ] && [ -f "$W/wl_${name}_$i.sqlite" ]; then
			cp "$W/wl_${name}_$i.sqlite" "$W/fixtures/${name}_$i.sqlite"
			result "workload:${name}_$i" PASS "repeat $i"
		else
			result "workload:${name}_$i" FAIL "exit $STATUS"
		fi
	done
}

# Captures with hardware metrics, for CI's roofline and metric-based
# diagnoses: rollout (the memory-bound FP32 seed) with the full roofline set,
# both variants, and its naive variant with the one-pass memory set.
capture_metrics() {
	local set variant name
	for set in roofline memory; do
		for variant in naive optimized; do
			[ "$set" = memory ] && [ "$variant" = optimized ] && continue
			name=rollout_${variant}_$set
			LIMIT=$WORKLOAD_LIMIT perfkit_run "wl_$name" --metrics=$set -- "$BUILD/workloads/rollout" \
				--variant=$variant ${WORKLOAD_CAPTURES[1]#rollout }
			local rows
			rows=$(python3 -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM PERFKIT_KERNEL_METRICS").fetchone()[0])' \
				"$W/wl_$name.sqlite" 2>/dev/null)
			if [ "$STATUS" = 0 ] && [ "${rows:-0}" -gt 0 ]; then
				cp "$W/wl_$name.sqlite" "$W/fixtures/$name.sqlite"
				result "workload:$name" PASS "$rows launches with metrics"
			else
				result "workload:$name" FAIL "exit $STATUS, ${rows:-no} metric rows"
			fi
			# replayed launches are no unfinished kernels
			local incomplete
			incomplete=$(python3 -c 'import sqlite3,sys
r=sqlite3.connect(sys.argv[1]).execute("SELECT value FROM PERFKIT_COUNTERS WHERE name=?",("incomplete_kernels",)).fetchone()
print(r[0] if r else 0)' "$W/wl_$name.sqlite" 2>/dev/null)
			[ "${incomplete:-x}" = 0 ] && result "workload:${name}_incomplete" PASS "0 incomplete kernels" ||
				result "workload:${name}_incomplete" FAIL "incomplete_kernels ${incomplete:-unreadable}"
		done
	done
}

log "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
if [ -n "${ONLY:-}" ]; then # ONLY="test_crashes ...": run just those
	for t in $ONLY; do "$t"; done
	SKIP_WORKLOADS=1
else
test_work
test_driver
test_reset
test_crashes
test_job
test_gpu_metrics
test_fork
test_other_subscriber
test_no_cuda
test_clean
test_peer
test_preload
test_torch
capture_workloads
capture_metrics
fi
for f in work torch clean; do
	[ -f "$W/$f.sqlite" ] && cp "$W/$f.sqlite" "$W/fixtures/gpu_$f.sqlite"
done
tar -C "$W/fixtures" -cf "$OUT/fixtures.tar" .

pass=0 fail=0
printf '\n%-4s  %-34s %s\n' RES TEST DETAIL | tee -a "$LOG"
for r in "${RESULTS[@]}"; do
	printf '%s\n' "$r" | tee -a "$LOG"
	case $r in PASS*) pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
done
printf '%d passed, %d failed\n' "$pass" "$fail" | tee -a "$LOG"
rm -rf "$W"
[ "$fail" = 0 ]
