#!/usr/bin/env bash
# test_roofline_tensor_cores.sh - the roofline of tensor-core kernels (issue
# 34: fused_conv_mma<__half> placed at 421.6 GFLOP/s "latency-bound" because
# its tensor instructions were not counted as FLOPs, against the FP16
# CUDA-core ceiling, under a "L2 0 GB/s" ceiling).
#
# The input is the real H100 capture tests/data/rollout_optimized_roofline
# (--metrics=roofline by a collector that recorded tensor-pipe instructions
# only). A copy gains the per-precision tensor-core FLOP columns a collector
# now records, filled with the conv's work as its launch describes it: the
# kernel is an implicit GEMM of 9 taps x C input channels for each of G x G
# pixels (gridDim.x = G) of gridDim.y realisations and C = 32 output
# channels (its template argument), 2 FLOP per multiply-add, all in FP16
# on the tensor cores; every other launch measured 0 there. Expected
# figures are computed here from the copy with SQL.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

orig="$PERFKIT_TEST_DATA/rollout_optimized_roofline.sqlite"
cap="$TMP/tensor.sqlite"
cp "$orig" "$cap"
sqlite3 "$cap" "
ALTER TABLE PERFKIT_KERNEL_METRICS ADD COLUMN tensorFlopsF16 REAL;
ALTER TABLE PERFKIT_KERNEL_METRICS ADD COLUMN tensorFlopsBF16 REAL;
ALTER TABLE PERFKIT_KERNEL_METRICS ADD COLUMN tensorFlopsTF32 REAL;
ALTER TABLE PERFKIT_KERNEL_METRICS ADD COLUMN tensorFlopsF64 REAL;
ALTER TABLE PERFKIT_KERNEL_METRICS ADD COLUMN tensorFlopsF8 REAL;
UPDATE PERFKIT_KERNEL_METRICS SET tensorFlopsF16 = 0, tensorFlopsBF16 = 0, tensorFlopsTF32 = 0,
  tensorFlopsF64 = 0, tensorFlopsF8 = 0 WHERE flopsF32 IS NOT NULL;
UPDATE PERFKIT_KERNEL_METRICS SET tensorFlopsF16 = (
  SELECT 2.0 * k.gridX * k.gridX * k.gridY * 9 * 32 * 32 FROM CUPTI_ACTIVITY_KIND_KERNEL k
  WHERE k.correlationId = PERFKIT_KERNEL_METRICS.correlationId AND k.globalPid = PERFKIT_KERNEL_METRICS.globalPid)
WHERE (SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
  WHERE k.correlationId = PERFKIT_KERNEL_METRICS.correlationId AND k.globalPid = PERFKIT_KERNEL_METRICS.globalPid)
  LIKE '%fused_conv_mma<__half, 32>%';" || { echo "FAIL: cannot extend the copy" >&2; exit 1; }
[ "$(sqlite3 "$cap" "SELECT count(*) FROM PERFKIT_KERNEL_METRICS WHERE tensorFlopsF16 > 0")" -gt 0 ] ||
	{ echo "FAIL: the copy has tensor-core FLOPs" >&2; exit 1; }

# check CAPTURE PEAKS(measured|nominal): every row's rate counts the tensor
# FLOPs; the conv's roof is the FP16 tensor cores' (nominal: 4096 FLOP per
# SM per clock on sm_90, from TARGET_INFO_GPU; measured: PERFKIT_PEAKS)
check() {
	run roofline --format=json "$1"
	[ "$status" -eq 0 ] || { fail "roofline ($2 ceilings) exits 0"; return; }
	local name="roofline ($2 ceilings): tensor FLOPs counted, the conv under the FP16 tensor roof"
	python3 - "$TMP/out" "$1" "$2" <<'PY' && pass "$name" || fail "$name"
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
db = sqlite3.connect(sys.argv[2])
sums = {name: (t, f, tf, b) for name, t, f, tf, b in db.execute(
    "SELECT s.value, sum(m.durationNs), sum(m.flopsF64 + m.flopsF32 + m.flopsF16),"
    " sum(m.tensorFlopsF16 + m.tensorFlopsBF16 + m.tensorFlopsTF32 + m.tensorFlopsF64 + m.tensorFlopsF8),"
    " sum(m.dramReadBytes + m.dramWriteBytes) FROM PERFKIT_KERNEL_METRICS m"
    " JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
    " JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")}
near = lambda a, b, digits: abs(a - b) <= 0.6 * 10 ** -digits + 1e-9 * abs(b)
if sys.argv[3] == "measured":
    tensor_peak = db.execute("SELECT value FROM PERFKIT_PEAKS WHERE key = 'tensor_fp16_flops_per_s'").fetchone()[0]
    dram_peak = db.execute("SELECT value FROM PERFKIT_PEAKS WHERE key = 'dram_bytes_per_s'").fetchone()[0]
else:
    sms, clock, dram_peak = db.execute("SELECT smCount, clockRate, memoryBandwidth FROM TARGET_INFO_GPU").fetchone()
    tensor_peak = sms * 4096.0 * clock
conv = [r for r in rows if "fused_conv_mma<__half, 32>" in r["Kernel"]]
assert len(conv) == 1, [r["Kernel"] for r in rows]
for r in rows:
    t, f, tf, b = sums[r["Kernel"]]
    assert near(r["GFLOP/s"], (f + tf) / t, 1), (r["Kernel"], r["GFLOP/s"], (f + tf) / t)
    if b > 0:
        assert near(r["AI DRAM (FLOP/B)"], (f + tf) / b, 3), (r["Kernel"], r["AI DRAM (FLOP/B)"], (f + tf) / b)
t, f, tf, b = sums[conv[0]["Kernel"]]
assert tf > f, (tf, f)
roof = min(tensor_peak, (f + tf) / b * dram_peak)
want = 100 * (f + tf) / (t * 1e-9) / roof
assert near(conv[0]["Roof (%)"], want, 1), (conv[0]["Roof (%)"], want)
assert conv[0]["Class"] == ("compute-bound" if tensor_peak < (f + tf) / b * dram_peak else "memory-bound") \
    or (want < 20 and conv[0]["Class"] == "latency-bound"), conv[0]
PY
}

check "$cap" nominal

# the text's ceilings: the FP16 tensor cores' named (nominal without a
# measurement), no L2 ceiling that was never measured, no note of missing
# tensor FLOPs
run roofline "$cap"
head -1 "$TMP/out" | grep -q "tensor cores FP16 [0-9.]* TFLOP/s (nominal)" &&
	! head -1 "$TMP/out" | grep -q "L2" && ! grep -q "no tensor-core FLOP" "$TMP/out" &&
	pass "text: the FP16 tensor ceiling is named, nominal; no unmeasured L2 ceiling" ||
	fail "text: the FP16 tensor ceiling is named, nominal; no unmeasured L2 ceiling"

# measured ceilings (PERFKIT_PEAKS, as `perfkit peaks --store` writes them):
# the FP16 tensor roof is the measured one; the BF16 key does not stand in
sqlite3 "$cap" "
CREATE TABLE IF NOT EXISTS PERFKIT_PEAKS (key TEXT PRIMARY KEY, value REAL, text TEXT);
INSERT INTO PERFKIT_PEAKS (key, value) SELECT 'dram_bytes_per_s', 0.9 * memoryBandwidth FROM TARGET_INFO_GPU;
INSERT INTO PERFKIT_PEAKS (key, value) SELECT 'fp32_flops_per_s', smCount * 256.0 * clockRate FROM TARGET_INFO_GPU;
INSERT INTO PERFKIT_PEAKS (key, value) SELECT 'tensor_bf16_flops_per_s', smCount * 4096.0 * clockRate FROM TARGET_INFO_GPU;
INSERT INTO PERFKIT_PEAKS (key, value) SELECT 'tensor_fp16_flops_per_s', 0.7 * smCount * 4096.0 * clockRate FROM TARGET_INFO_GPU;" ||
	{ echo "FAIL: cannot add peaks to the copy" >&2; exit 1; }
check "$cap" measured
run roofline "$cap"
head -1 "$TMP/out" | grep -q "tensor cores FP16 [0-9.]* TFLOP/s (measured" &&
	! head -1 "$TMP/out" | grep -q "(nominal)" &&
	pass "text: the measured FP16 tensor ceiling is shown as measured" ||
	fail "text: the measured FP16 tensor ceiling is shown as measured"

# the capture as recorded (no tensor FLOP columns): the roofline says which
# kernels ran tensor-pipe instructions without FLOP counts, and prints no
# L2 ceiling it does not have
run roofline "$orig"
want=$(sqlite3 "$orig" "SELECT count(*) FROM (SELECT k.demangledName FROM PERFKIT_KERNEL_METRICS m
  JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid
  WHERE m.durationNs IS NOT NULL GROUP BY 1 HAVING sum(m.tensorInst) > 0)")
[ "$want" -gt 0 ] && grep -q "^$want kernel(s) ran tensor-pipe instructions, but this capture has no tensor-core FLOP" "$TMP/out" &&
	! head -1 "$TMP/out" | grep -q "L2 0 GB/s" &&
	pass "an older capture: $want kernels' missing tensor FLOPs said, no 'L2 0 GB/s'" ||
	fail "an older capture: the kernels' missing tensor FLOPs said, no 'L2 0 GB/s'"

[ "$failures" -eq 0 ]
