#!/usr/bin/env bash
# test_diagnose_step_per_framework.sh - the step `perfkit diagnose` takes as
# its window, on real captures of programs nobody tuned it for (the corpus,
# tests/data/corpus, and two Nsight Systems exports): XLA's runs of the
# jitted step rather than its compiler passes; never a range a library puts
# around its own calls (CUB's scan, MPI's sends); without NVTX, the period of
# the repeating launch sequence rather than a kernel of the warm-up; and
# never a window without GPU work. What a window should hold is computed
# from the captures' own rows (sqlite3) and from what the programs were
# written to do (tests/gpu/programs/expected.json, written before capture),
# never from what diagnose printed.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
C=$D/corpus
EXPECTED=$PERFKIT_SOURCE/tests/gpu/programs/expected.json

# window NAME FILE: diagnose --format=json of FILE into $TMP/NAME.json
window() {
	run diagnose --format=json "$2"
	expect_status "diagnose $1" 0
	cp "$TMP/out" "$TMP/$1.json"
}

# check NAME FILE WHAT: the Python on stdin passes, given diagnose's JSON of
# FILE (window NAME FILE), FILE, expected.json and NAME.
check() {
	if python3 - "$TMP/$1.json" "$2" "$EXPECTED" "$1"; then pass "$1: $3"; else fail "$1: $3"; fi
}

for f in jax_jit_mlp hf_gpt2_infer_b1 phases_no_nvtx triton_softmax; do
	[ -f "$C/$f.sqlite" ] || { fail "corpus capture $f.sqlite (configure the build to unpack it)"; finish; }
done

# JAX: XLA marks each run of a compiled program with a range
# "XlaModule:#hlo_module=NAME,program_id=ID#"; its compiler passes and the
# modules it compiles to autotune GEMMs have ranges too, and launch no GPU
# work (the passes) or are not the program (autotuning). The step is the
# jitted train_step's runs, the first on each thread left out.
window jax_jit_mlp "$C/jax_jit_mlp.sqlite"
check jax_jit_mlp "$C/jax_jit_mlp.sqlite" "the window is the runs of jit_train_step, its compilation outside" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
runs = db.execute("""SELECT n.start, n.globalTid FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
    WHERE n.eventType IN (59, 60) AND s.value GLOB 'XlaModule:#*hlo_module=jit_train_step,program_id=*'
    ORDER BY n.start""").fetchall()
threads = {t for _, t in runs}
n = len(runs) - len(threads)
assert n > 0, runs
assert w["source"] == 'XLA module "jit_train_step" x %d' % n, (w["source"], n)
assert w["iterations"] == n, w
second = sorted(s for s, t in runs if t == runs[0][1])[1]
assert w["start_ns"] == second, (w["start_ns"], second)
# the kernels those runs launched (calls starting inside them, one process) run in the window
launched = db.execute("""WITH r AS (SELECT n.start, n.end, n.globalTid >> 24 AS p,
      row_number() OVER (PARTITION BY n.globalTid ORDER BY n.start) AS k
    FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
    WHERE n.eventType IN (59, 60) AND s.value GLOB 'XlaModule:#*hlo_module=jit_train_step,program_id=*')
  SELECT min(g.start), max(g.end), count(*) FROM r JOIN CUPTI_ACTIVITY_KIND_DRIVER a
    ON a.start >= r.start AND a.start < r.end AND a.globalTid >> 24 = r.p
  JOIN CUPTI_ACTIVITY_KIND_KERNEL g ON g.correlationId = a.correlationId WHERE r.k > 1""").fetchone()
assert launched[2] > 0, launched
assert w["start_ns"] <= launched[0] and launched[1] <= w["end_ns"], (w, launched)
# XLA's compiler passes run before the first run, outside the window
passes = db.execute("""SELECT max(n.end) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
    WHERE s.value GLOB 'XlaOptimizeLlvmIr:#*'""").fetchone()[0]
assert passes is not None and passes < w["start_ns"], (passes, w)
PY

# The mark survives another compilation: the same capture with the program
# renumbered (a program id is XLA's per compilation) is compared per
# iteration, by diff and by gate against a baseline of the original.
cp "$C/jax_jit_mlp.sqlite" "$TMP/jax_renumbered.sqlite"
sqlite3 "$TMP/jax_renumbered.sqlite" "UPDATE StringIds SET value = replace(value, 'program_id=', 'program_id=9')
	WHERE value GLOB 'XlaModule:#*hlo_module=jit_train_step,program_id=*'"
run diff --format=json "$C/jax_jit_mlp.sqlite" "$TMP/jax_renumbered.sqlite"
expect_status "diff of jax_jit_mlp and its program renumbered" 0
# per iteration: the verdict's step is one of the XLA module's runs on both sides
expect_out "diff of jax_jit_mlp and its program renumbered compares per iteration" 'per step of XLA module .{0,2}jit_train_step.{0,2} x [0-9]+ \(BASE [0-9]+ steps, NEW [0-9]+\)'
expect_out "diff of jax_jit_mlp and its program renumbered: by the runs of jit_train_step" \
	'"Capture":"NEW".*XLA module \\"jit_train_step\\"'
run baseline save -o "$TMP/jax_baseline.json" "$C/jax_jit_mlp.sqlite"
expect_status "baseline of jax_jit_mlp" 0
run gate --baseline="$TMP/jax_baseline.json" --format=json "$TMP/jax_renumbered.sqlite"
expect_status "gate of jax_jit_mlp renumbered" 0
expect_out "gate of jax_jit_mlp renumbered compares per iteration" '"Per":"iteration"'

# Hugging Face GPT-2 decoding without NVTX of its own: PyTorch's argmax runs
# CUB's scan, and CUB (domain CCCL) puts an NVTX range around it, once per
# token. A library's own range is not the program's step: the step is one
# decode forward, found by the period of the launches (one argmax each).
window hf_gpt2_infer_b1 "$C/hf_gpt2_infer_b1.sqlite"
check hf_gpt2_infer_b1 "$C/hf_gpt2_infer_b1.sqlite" "the step is one decode forward, not CUB's range, its slow warm-up outside" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
steps = json.load(open(sys.argv[3]))["programs"][sys.argv[4]]["steps"]
cccl = [r[0] for r in db.execute("""SELECT DISTINCT coalesce(s.value, n.text) FROM NVTX_EVENTS n
    LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.domainId IN
    (SELECT d.domainId FROM NVTX_EVENTS d LEFT JOIN StringIds ds ON ds.id = d.textId
     WHERE d.eventType = 75 AND coalesce(ds.value, d.text) = 'CCCL')""")]
assert cccl, "the capture has CUB's ranges"
assert not w["source"].startswith("NVTX range") and not any(c in w["source"] for c in cccl), w["source"]
argmax = db.execute("""SELECT k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
    ON s.id = k.demangledName WHERE s.value LIKE '%ArgMaxOps%' ORDER BY k.start""").fetchall()
assert len(argmax) == steps["warmup"] + steps["timed"], (len(argmax), steps)
inside = [t for (t,) in argmax if w["start_ns"] <= t < w["end_ns"]]
# every timed step is in the window, one argmax each, and the first
# generation's warm-up (its tokens 15 times slower than the loop's, cuBLAS
# and the model's first calls) is not: no step in the window takes more
# than 4 times the loop's median step
assert steps["timed"] <= w["iterations"] < len(argmax) - 1 and len(inside) == w["iterations"], (w, len(inside))
periods = sorted(b - a for (a,), (b,) in zip(argmax, argmax[1:]))
median = periods[len(periods) // 2]
assert all(b - a <= 4 * median for a, b in zip(inside, inside[1:])), median
PY

# Without NVTX the step is the period of the repeating launch sequence:
# phases_no_nvtx initialises its field with init_field (3 launches), loops
# 200 times (a copy, stencil, relax, accumulate), then reduces with
# reduce_sum (3 launches) and normalize. triton_softmax compiles and warms up
# its two Triton kernels, loops (add_kernel, softmax_kernel), then checks its
# result with torch (add_kernel once more among torch's kernels). The window
# holds the loop's kernels and nothing else, the first step (the warm-up)
# left out: the loop's kernels are those launched once per step, as many
# times as the program ran steps (expected.json).
for f in phases_no_nvtx triton_softmax; do
	window $f "$C/$f.sqlite"
	check $f "$C/$f.sqlite" "the window holds the loop's kernels, its warm-up and teardown outside" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
steps = json.load(open(sys.argv[3]))["programs"][sys.argv[4]]["steps"]
n = steps["warmup"] + steps["timed"]
names = {name for name, c in db.execute("""SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k
    JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value""") if c in (n, n + 1)}
assert len(names) >= 2, names
inside = db.execute("""SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
    ON s.id = k.demangledName WHERE k.start >= ? AND k.start < ?""", (w["start_ns"], w["end_ns"])).fetchall()
assert all(v in names for (v,) in inside), [v[:60] for v in sorted({v for (v,) in inside} - names)][:3]
assert len(inside) == len(names) * (n - 1), (len(inside), len(names), n)
assert w["iterations"] == n - 1, w
PY
done

# Triton's kernels are launched through the driver API under plain Python
# names: triton_softmax's add_kernel and softmax_kernel (its source). The
# libraries PyTorch calls launch through the driver too, under names of
# their own (hf_gpt2_infer_b1's cuBLAS nvjet and cuDNN kernels): no Triton
# there. The driver's ids are asked only of programs with plain-named
# kernels (program.c), so both programs check both paths.
window hf_gpt2_infer_b1 "$C/hf_gpt2_infer_b1.sqlite"
for f in triton_softmax hf_gpt2_infer_b1; do
	check $f "$C/$f.sqlite" "Triton named for Triton's kernels, not for the libraries' driver launches" <<'PY'
import json, sqlite3, sys
frameworks = json.load(open(sys.argv[1]))["program"]["frameworks"]
db = sqlite3.connect(sys.argv[2])
driver = {v for (v,) in db.execute("""SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k
    JOIN StringIds s ON s.id = k.demangledName WHERE k.correlationId IN
    (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER)""")}
assert "pytorch" in frameworks, frameworks
if sys.argv[4] == "triton_softmax":
    assert {"add_kernel", "softmax_kernel"} <= driver, sorted(driver)[:5]
    assert "triton" in frameworks, frameworks
else:
    assert any(v.startswith("nvjet") for v in driver), sorted(driver)[:5]
    assert "triton" not in frameworks, frameworks
PY
done

# CloverLeaf (an Nsight Systems export, no NVTX): field_summary's reduction
# runs once before the hydro loop and twice after it, the fewest launches of
# any kernel, and was taken for the step. The step is one hydro step (one
# calc_dt each): the window holds all of them but the first, and not the
# summaries after the loop.
window cloverleaf "$D/nsys/cloverleaf-cuda.sqlite"
check cloverleaf "$D/nsys/cloverleaf-cuda.sqlite" "the step is one hydro step, not the field summary" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
starts = lambda pattern: [r[0] for r in db.execute("""SELECT k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k
    JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE ? ORDER BY k.start""", (pattern,))]
dt, summary = starts("%calc_dt_kernel%"), starts("%field_summary%")
assert len(dt) >= 3 and len(summary) >= 2, (dt, summary)
assert "field_summary" not in w["source"], w["source"]
assert w["iterations"] == len(dt) - 1, (w, len(dt))
assert sum(w["start_ns"] <= t < w["end_ns"] for t in dt) == len(dt) - 1, w
assert summary[-1] >= w["end_ns"], (summary, w)
PY

# One rank of an MPI job (an Nsight Systems export): its MPI calls are
# ranges of the MPI domain, launch nothing, and are not the step.
window saxpy "$D/nsys/saxpy-mpi-cuda-rank0.sqlite"
check saxpy "$D/nsys/saxpy-mpi-cuda-rank0.sqlite" "MPI's ranges are not the step" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
mpi = [r[0] for r in db.execute("""SELECT DISTINCT coalesce(s.value, n.text) FROM NVTX_EVENTS n
    LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.domainId IN
    (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'MPI')""")]
assert mpi, "the export has MPI's ranges"
assert not any('"%s"' % m in w["source"] for m in mpi), w["source"]
assert w["gpu_busy_ns"] > 0, w
PY

# Two loops one after the other (BF16 products, then FP32 ones, each about
# 0.3 s of GPU time) have no one steady state: the window is the capture.
window two_phases "$D/gpu_metrics/torch_gemm_bf16_fp32.sqlite"
check two_phases "$D/gpu_metrics/torch_gemm_bf16_fp32.sqlite" "two phases of comparable weight: the whole capture" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["window"]
assert w["iterations"] == 0 and w["start_ns"] == w["capture_start_ns"] and w["end_ns"] == w["capture_end_ns"], w
PY

# A window in which no GPU work runs is never chosen: with its kernels,
# copies and memsets gone, clean_loop's "step" ranges mark nothing, and the
# window falls back to the whole capture.
cp "$D/clean_loop.sqlite" "$TMP/no_gpu_work.sqlite"
sqlite3 "$TMP/no_gpu_work.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;
	DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET"
window no_gpu_work "$TMP/no_gpu_work.sqlite"
check no_gpu_work "$TMP/no_gpu_work.sqlite" "ranges without GPU work: no loop" <<'PY'
import json, sqlite3, sys
w = json.load(open(sys.argv[1]))["window"]
db = sqlite3.connect(sys.argv[2])
assert db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0] > 3
assert w["iterations"] == 0 and w["source"] == "whole capture", w
PY

# Every window of the corpus and of the exports holds GPU work.
for f in "$C"/*.sqlite "$D"/nsys/*.sqlite; do
	b=$(basename "$f" .sqlite)
	window "all_$b" "$f"
	check "all_$b" "$f" "the window holds GPU work" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["window"]
assert w["gpu_busy_ns"] > 0, w
PY
done

finish
