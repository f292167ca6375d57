#!/usr/bin/env bash
# roofline_and_cost.sh - on the GPU machine: the tensor-core roofline and
# what recording costs the host (issue 34, items 9 and 6).
#
#   tests/gpu/run.sh --stage BUILD .gpu/collector   (CPU machine, a CUDA build)
#   tests/gpu/roofline_and_cost.sh [BUILD]          (GPU machine, repo root;
#                                                    BUILD defaults to .gpu/collector)
#
# 1. `perfkit peaks --refresh` (into a private HOME under $OUT): the tensor
#    ceilings per precision and the recording cost per launch and per call
#    (perfkit-peaks --record-cost with and without the collector, 7 rounds).
# 2. tests/gpu/roofline_gemm.py under `perfkit run --metrics=roofline`:
#    BF16 products (NVTX "bf16_gemm") and FP32 products with TF32 off
#    ("fp32_gemm"), 2 N^3 FLOPs each. Checked: the BF16 range's tensor BF16
#    FLOPs are the products' (within 2%), the FP32 range has no tensor
#    FLOPs and its FP32 FLOPs are the products' (within 5%); `perfkit
#    roofline` prints the BF16 tensor ceiling and no "0 GB/s".
# 3. bench/gpu/launch_loop empty and a tiny PyTorch op loop, untraced and
#    under `perfkit run`, 7 interleaved rounds, medians: the measured cost
#    per launch against `perfkit peaks`' record_launch_ns, and diagnose's
#    launch_bound evidence of a traced run (per call as measured and without
#    perfkit's cost) against the untraced per-launch time.
# Logs go to $OUT; a short table is printed last.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
LOOP=$BUILD/bench/gpu/launch_loop
ROUNDS=7
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
export HOME=$OUT/home
mkdir -p "$HOME"
LOG=$OUT/roofline_and_cost.log
: >"$LOG"
TABLE=()
row() { TABLE+=("$(printf '%-4s  %-40s %s' "$1" "$2" "$3")"); }
log() { printf '%s\n' "$*" | tee -a "$LOG"; }

nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,driver_version --format=csv >>"$LOG" 2>&1
# which tensor operation counters this GPU's profiler offers (ncu's list:
# the collector takes the first candidate of each precision it finds)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$NCU" --query-metrics --chip gh100 2>/dev/null | grep -E "^sm__ops_path_tensor|^sm__inst_executed_pipe_tensor" \
	>"$OUT/ncu_tensor_metrics.txt" || log "ncu --query-metrics: not available"

# --- 1. ceilings and recording cost ---------------------------------------------
log "== perfkit peaks --refresh"
timeout -k 5 600 "$PERFKIT" peaks --refresh >"$OUT/peaks.txt" 2>"$OUT/peaks.err"
cat "$OUT/peaks.txt" "$OUT/peaks.err" >>"$LOG"
"$PERFKIT" peaks --format=json >"$OUT/peaks.json" 2>>"$LOG"
peak() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['peaks'].get(sys.argv[2], ''))" "$OUT/peaks.json" "$1" 2>/dev/null; }
REC_LAUNCH=$(peak record_launch_ns)
REC_CALL=$(peak record_api_call_ns)
if [ -n "$(peak tensor_bf16_flops_per_s)" ] && [ -n "$(peak tensor_fp16_flops_per_s)" ] &&
	[ -n "$(peak tensor_tf32_flops_per_s)" ] && [ -n "$(peak tensor_fp64_flops_per_s)" ]; then
	row PASS "peaks: tensor ceilings" "$(grep -i tensor "$OUT/peaks.txt" | awk '{printf "%s %s; ", $1, $(NF-1)}')"
else
	row FAIL "peaks: tensor ceilings" "a tensor precision is missing (peaks.json)"
fi
if [ -n "$REC_LAUNCH" ] && [ -n "$REC_CALL" ]; then
	row PASS "peaks: recording cost" "launch ${REC_LAUNCH} ns, call ${REC_CALL} ns"
else
	row FAIL "peaks: recording cost" "not measured (peaks.err)"
fi

# --- 2. the tensor-core roofline ---------------------------------------------------
log "== perfkit run --metrics=roofline -- roofline_gemm.py"
timeout -k 5 600 "$PERFKIT" run -f --metrics=roofline -o "$OUT/gemm.sqlite" -- python3 "$SRC/roofline_gemm.py" 8 \
	>"$OUT/gemm.log" 2>&1
cat "$OUT/gemm.log" >>"$LOG"
"$PERFKIT" roofline "$OUT/gemm.sqlite" >"$OUT/roofline.txt" 2>&1
cut -c1-240 "$OUT/roofline.txt" | tee -a "$LOG"
"$PERFKIT" roofline --format=json "$OUT/gemm.sqlite" >"$OUT/roofline.json" 2>>"$LOG"
python3 - "$OUT/gemm.sqlite" "$OUT/gemm.log" "$OUT/roofline.json" >"$OUT/gemm_check.txt" 2>&1 <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")][-1]
def rng(name):
    return db.execute("SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId"
                      " WHERE coalesce(e.text, s.value) = ?", (name,)).fetchone()
def sums(name):
    a, b = rng(name)
    return db.execute(
        "SELECT count(*), total(m.tensorFlopsBF16), total(m.tensorFlopsF16), total(m.tensorFlopsTF32),"
        " total(m.tensorFlopsF64), total(m.tensorFlopsF8), total(m.flopsF32), count(m.tensorFlopsBF16),"
        " total(m.tensorInst)"
        " FROM PERFKIT_KERNEL_METRICS m JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
        " ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
        " WHERE k.start >= ? AND k.start < ?", (a, b)).fetchone()
ok = True
n, bf16, f16, tf32, f64, f8, f32, counted, inst = sums("bf16_gemm")
want = run["reps"] * 2.0 * run["bf16_n"] ** 3
print("bf16 range: %d launches measured, tensor BF16 %.4g FLOP (want %.4g: ratio %.4f), tensor inst %.4g"
      % (n, bf16, want, bf16 / want if want else 0, inst))
ok &= counted > 0 and abs(bf16 / want - 1) <= 0.02
n, bf16, f16, tf32, f64, f8, f32, counted, inst = sums("fp32_gemm")
want = run["reps"] * 2.0 * run["fp32_n"] ** 3
print("fp32 range: %d launches measured, tensor FLOPs %.4g, FP32 %.4g FLOP (want %.4g: ratio %.4f)"
      % (n, bf16 + f16 + tf32 + f64 + f8, f32, want, f32 / want if want else 0))
ok &= bf16 + f16 + tf32 + f64 + f8 == 0 and abs(f32 / want - 1) <= 0.05
rows = json.load(open(sys.argv[3]))["reports"][0]["rows"]
for r in sorted(rows, key=lambda r: -r["Total Time (ns)"])[:4]:
    print("  %-60.60s %10.1f GFLOP/s  roof %5.1f%%  %s" % (r["Kernel"], r["GFLOP/s"] or 0, r["Roof (%)"], r["Class"]))
print("PASS" if ok else "FAIL")
PY
cat "$OUT/gemm_check.txt" >>"$LOG"
if tail -1 "$OUT/gemm_check.txt" | grep -q PASS; then
	row PASS "roofline: tensor FLOPs by precision" "$(head -2 "$OUT/gemm_check.txt" | sed 's/ launches measured//' | tr '\n' ';' | cut -c1-160)"
else
	row FAIL "roofline: tensor FLOPs by precision" "gemm_check.txt"
fi
if head -1 "$OUT/roofline.txt" | grep -q "tensor cores BF16" && ! grep -q " 0 GB/s" "$OUT/roofline.txt"; then
	row PASS "roofline: ceilings" "$(head -1 "$OUT/roofline.txt" | cut -c1-150)"
else
	row FAIL "roofline: ceilings" "$(head -1 "$OUT/roofline.txt" | cut -c1-150)"
fi

# --- 3. recording cost against untraced runs ----------------------------------------
# fig PROGRAM-OUTPUT KEY: the program's own figure (per_launch_us, per_op_us)
fig() { awk -v k="$2" '$1 == k {print $2}' "$1" | tail -1; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
cat >"$OUT/tiny_op.py" <<'PY'
import time, torch
x = torch.zeros(1, device="cuda")
for _ in range(2000):
    x.add_(1)
torch.cuda.synchronize()
blocks = []
for _ in range(10):
    t = time.perf_counter()
    for _ in range(2000):
        x.add_(1)
    torch.cuda.synchronize()
    blocks.append((time.perf_counter() - t) / 2000 * 1e6)
print("per_op_us %.3f" % sorted(blocks)[5])
PY
declare -A U T
for r in $(seq 1 $ROUNDS); do
	"$LOOP" empty 20000 >"$OUT/loop_u$r.txt" 2>&1
	timeout -k 5 300 "$PERFKIT" run -f -o "$OUT/loop_t$r.sqlite" -- "$LOOP" empty 20000 >"$OUT/loop_t$r.txt" 2>&1
	python3 "$OUT/tiny_op.py" >"$OUT/tiny_u$r.txt" 2>&1
	timeout -k 5 300 "$PERFKIT" run -f -o "$OUT/tiny_t$r.sqlite" -- python3 "$OUT/tiny_op.py" >"$OUT/tiny_t$r.txt" 2>&1
	log "round $r: launch_loop $(fig "$OUT/loop_u$r.txt" per_launch_us) / $(fig "$OUT/loop_t$r.txt" per_launch_us) us," \
		"tiny op $(fig "$OUT/tiny_u$r.txt" per_op_us) / $(fig "$OUT/tiny_t$r.txt" per_op_us) us (untraced / traced)"
	[ "$r" -lt "$ROUNDS" ] && rm -f "$OUT/loop_t$r.sqlite" "$OUT/tiny_t$r.sqlite"
done
for p in loop tiny; do
	key=per_launch_us
	[ "$p" = tiny ] && key=per_op_us
	U[$p]=$(for r in $(seq 1 $ROUNDS); do fig "$OUT/${p}_u$r.txt" $key; done | median)
	T[$p]=$(for r in $(seq 1 $ROUNDS); do fig "$OUT/${p}_t$r.txt" $key; done | median)
done
for p in loop tiny; do
	cost_ns=$(awk -v t="${T[$p]}" -v u="${U[$p]}" 'BEGIN {printf "%.0f", (t - u) * 1000}')
	name="cost per launch ($p, median of $ROUNDS)"
	detail="untraced ${U[$p]} us, traced ${T[$p]} us: ${cost_ns} ns; perfkit peaks: ${REC_LAUNCH:-?} ns"
	# within 30% (or 300 ns) of what perfkit peaks measured
	if [ -n "$REC_LAUNCH" ] && awk -v a="$cost_ns" -v b="$REC_LAUNCH" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= 0.3 * b || d <= 300)}'; then
		row PASS "$name" "$detail"
	else
		row FAIL "$name" "$detail"
	fi
done
# diagnose of the last traced launch loop: the launch cost per call both ways
"$PERFKIT" diagnose --format=json "$OUT/loop_t$ROUNDS.sqlite" >"$OUT/loop_diagnose.json" 2>>"$LOG"
ev=$(python3 -c "
import json, sys
f = [f for f in json.load(open(sys.argv[1]))['findings'] if f['rule'] == 'launch_bound']
print(f[0]['evidence'] if f else '')" "$OUT/loop_diagnose.json")
log "launch_bound evidence: $ev"
without=$(printf '%s' "$ev" | sed -n 's/.*as measured, \([0-9.]*\) us without perfkit.*/\1/p')
if [ -n "$without" ]; then
	row INFO "diagnose: launch call without perfkit" "$without us (untraced program: ${U[loop]} us per launch)"
else
	row FAIL "diagnose: launch call without perfkit" "no launch_bound with the cost ($OUT/loop_diagnose.json)"
fi

echo
echo "== roofline_and_cost: logs in $OUT"
printf '%s\n' "${TABLE[@]}" | tee "$OUT/table.txt"
! grep -q '^FAIL' "$OUT/table.txt"
