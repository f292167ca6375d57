#!/usr/bin/env bash
# test_diagnose_own_cases.sh - on H100 captures of programs written with one
# known problem each (tests/gpu/cases/diag_cases.cu, torch_cases.py;
# captured by tests/gpu/diag_cases.sh into tests/data/cases/), `perfkit
# diagnose` names the problem each program was written to show, first or
# among the high findings, and not the neighbouring problem it was written
# apart from; the clean program gets nothing above low; no finding claims
# more time than its share's base (the window, or the GPU's busy time under
# kernel replay), in JSON or in any "share:" line of the text; and `perfkit
# diff` of the steady program's two captures finds the kernel made slower by
# the factor the capture script gave it, per launch and per iteration, not
# the difference in iteration counts.
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_SOURCE:?}" "${PERFKIT_TEST_DATA:?}"
C=$PERFKIT_TEST_DATA/cases

ncases=0
for f in "$C"/*.sqlite; do
	n=$(basename "$f" .sqlite)
	run diagnose --format=json "$f"
	if [ "$status" -ne 0 ]; then fail "diagnose $n exits 0"; continue; fi
	cp "$TMP/out" "$TMP/$n.json"
	run diagnose "$f"
	if [ "$status" -ne 0 ]; then fail "diagnose $n (text) exits 0"; continue; fi
	cp "$TMP/out" "$TMP/$n.txt"
	ncases=$((ncases + 1))
done
if [ "$ncases" -ge 16 ]; then pass "diagnose reads all $ncases case captures"
else fail "diagnose reads the case captures (got $ncases)"; fi

# The diff the steady program's check reads (below).
run diff --format=json "$C/case_steady_50.sqlite" "$C/case_steady_44_slow.sqlite"
expect_status "diff steady_50 steady_44_slow" 0
cp "$TMP/out" "$TMP/diff_steady.json"
# The capture script makes allreduce_like do --slow times the work in the
# second capture.
slow=$(grep -oE 'steady --iters=44 --slow=[0-9.]+' "$PERFKIT_SOURCE/tests/gpu/diag_cases.sh" | sed 's/.*=//')
[ -n "$slow" ] || fail "tests/gpu/diag_cases.sh gives the steady program's --slow factor"

# One python pass judges everything (its start-up is slow on small
# machines): a line "ok: ..." or "FAIL: ..." a check.
python3 - "$TMP" "${slow:-0}" >"$TMP/checks" <<'PY'
import glob, json, os, re, sys

tmp, slow = sys.argv[1], float(sys.argv[2])
cases = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(f"{tmp}/*.json")
         if not p.endswith("/diff_steady.json")}

def report(name, why):
    print(f"FAIL: {name}: {why}" if why else f"ok: {name}")

def checked(check):
    """A check that cannot read what it needs fails alone, named."""
    def run(name, *args):
        try:
            check(name, *args)
        except (KeyError, TypeError, ValueError, OSError) as e:
            report(name, f"cannot check: {type(e).__name__} {e}")
    return run

def findings(case):
    return [(f["rule"], f["severity"], round(f["share"], 3)) for f in cases[case]["findings"]]

def text_of(f):
    return "\n".join([f["evidence"], f["change"]] + [t["name"] for t in f["top"]])

@checked
def leads(name, case, rule, pattern=""):
    """The rule fires, first or among the high ones (or tied with the
    largest share), and its text (evidence, change, offenders) says what the
    program did."""
    found = cases[case]["findings"]
    f = next((f for f in found if f["rule"] == rule), None)
    if not f:
        return report(name, f"{case}: no {rule} in {findings(case)}")
    top = max(g["share"] for g in found)
    if not (f is found[0] or f["severity"] == "high" or f["share"] >= top - 1e-6):
        return report(name, f"{case}: {rule} neither first nor high in {findings(case)}")
    if pattern and not re.search(pattern, text_of(f)):
        return report(name, f"{case}: {rule} does not say /{pattern}/: {text_of(f)}")
    report(name, None)

@checked
def absent(name, case, rule):
    report(name, f"{case}: {rule} fires: {findings(case)}" if rule in [f["rule"] for f in cases[case]["findings"]] else None)

@checked
def not_run(name, case, rule, pattern):
    d = cases[case]
    reasons = [s["reason"] for s in d["not_run"] if s["rule"] == rule]
    ok = rule not in [f["rule"] for f in d["findings"]] and any(re.search(pattern, r) for r in reasons)
    report(name, None if ok else f"{case}: {rule} not listed as not run /{pattern}/: {d['not_run']}")

@checked
def calm(name, case):
    loud = [f["rule"] for f in cases[case]["findings"] if f["severity"] in ("medium", "high")]
    report(name, f"{case}: above low: {loud}" if loud else None)

UNIT = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}
SHARE = re.compile(r"\s*share: ([0-9.]+)% of the (window|GPU's busy time) \(([0-9.]+) (s|ms|us|ns)\)$")

@checked
def shares(name, case):
    """The base of every share is the window, or under kernel replay the
    GPU's busy time in it: no finding's time exceeds it, in JSON or in any
    "share:" line of the text (which rounds to 4 significant digits)."""
    d = cases[case]
    w = d["window"]
    base = w["gpu_busy_ns"] if d["kernel_replay"] else w["end_ns"] - w["start_ns"]
    if base <= 0:
        return report(name, "no base")
    for f in d["findings"]:
        if not (0 <= f["share"] <= 1 and 0 <= f["time_ns"] <= base):
            return report(name, f"{f['rule']}: {f['time_ns']} ns of a base of {base} ns (share {f['share']})")
        if abs(f["share"] - f["time_ns"] / base) > 1e-5:
            return report(name, f"{f['rule']}: share {f['share']} is not its time over the base")
    lines = [l.strip() for l in open(f"{tmp}/{case}.txt") if l.lstrip().startswith("share:")]
    if len(lines) != len(d["findings"]):
        return report(name, f"{len(lines)} share lines for {len(d['findings'])} findings")
    for l in lines:
        m = SHARE.match(l)
        if not m:
            return report(name, f"share line not understood: {l}")
        pct, time = float(m.group(1)), float(m.group(3)) * UNIT[m.group(4)]
        if pct > 100 or time > base * 1.0005 + 1:
            return report(name, f"share line beyond its base of {base} ns: {l}")
        if (m.group(2) == "window") == d["kernel_replay"]:
            return report(name, f"share line names the wrong base: {l}")
    report(name, None)

@checked
def steady_diff(name):
    """allreduce_like made `slow` times slower per launch, the others the
    same, and the iteration slower by allreduce_like's part of it times the
    factor: per iteration, not by the captures' iteration counts."""
    reports = {r["name"]: r for r in json.load(open(f"{tmp}/diff_steady.json"))["reports"]}
    kernels = {k["Name"].split("(")[0]: k for k in reports["diff_kernels"]["rows"]}
    loops = {l["Capture"]: l for l in reports["diff_loops"]["rows"]}
    verdict = reports["diff_verdict"]["rows"][0]["Verdict"]
    ar, bad = kernels.get("allreduce_like"), []
    if not ar or ar["Change"] != "slower" or abs(ar["Med Ratio"] - slow) > 0.05 * slow:
        bad.append(f"allreduce_like per launch: {ar and ar['Change']} x{ar and ar['Med Ratio']}, wanted x{slow}")
    for k in ("forward_like", "update_like"):
        if not kernels.get(k) or kernels[k]["Change"] != "same":
            bad.append(f"{k}: {kernels.get(k) and kernels[k]['Change']}, wanted same")
    base = loops["BASE"]["GPU Time/iter (ns)"]
    part = ar["Base Med (ns)"] * ar["Base Count/iter"] if ar else 0
    want = (base + part * (slow - 1)) / base
    got = loops["NEW"]["GPU Time/iter (ns)"] / base
    if abs(got - want) > 0.02:
        bad.append(f"GPU time per iteration x{got:.3f}, wanted x{want:.3f}")
    # the verdict opens with the step (issue 38), then the GPU time per step
    # and what changed it, per iteration of both loops
    if not re.search(r"GPU time per step [0-9.]+ us \u2192 [0-9.]+ us \([0-9.]+x more\): allreduce_like \+[0-9]+% per launch", verdict) \
            or "(BASE 50 steps, NEW 44)" not in verdict:
        bad.append(f"verdict: {verdict}")
    report(name, "; ".join(bad) or None)

# ---- each program's problem ------------------------------------------------
# strided: threads read addresses 33 floats apart: 32 sectors a request,
# where 4-byte words read contiguously touch 4
leads("strided gather is uncoalesced", "case_strided_memory", "uncoalesced_access",
      r"gather_strided\(.*\): loads 32\.0 sectors/request \(4\.0 if contiguous for 4-byte words\)")
not_run("strided gather without metrics says how to measure it", "case_strided",
        "uncoalesced_access", "metrics=memory")
absent("coalesced gather is not uncoalesced", "case_coalesced_memory", "uncoalesced_access")
leads("coalesced gather gets the FP16 advice, its access measured", "case_coalesced_memory",
      "fp32_memory_bound", "accesses are coalesced")
# smem: 40 KiB of shared memory per 64-thread block
absent("shared-memory kernel is not uncoalesced", "case_smem_memory", "uncoalesced_access")
for case in ("case_smem_memory", "case_smem"):
    leads(f"{case}: low occupancy from shared memory", case, "low_occupancy",
          r"smem_blur\(.*limited by shared memory")
# gemm_chain: 8 layers, each GEMM consuming the last one's output with a
# bias+ReLU between; cuBLAS runs each with its split-K reduction
for case in ("case_gemm_chain", "torch_mlp"):
    leads(f"{case} is a chain of GEMMs", case, "gemm_chain", "cannot become one batched GEMM")
    absent(f"{case} is not advised to batch", case, "batched_gemm")
leads("gemm_chain: 8 GEMMs a step, the split-K reduction part of each", "case_gemm_chain",
      "gemm_chain", r", 8\.0 per iteration")
absent("cuBLAS GEMMs are not taken for uncoalesced access", "case_gemm_chain_memory", "uncoalesced_access")
not_run("cuBLAS GEMMs left out of uncoalesced_access are counted", "case_gemm_chain_memory",
        "uncoalesced_access", "^on 2 library GEMM kernels")
# gemm_heads: 16 independent GEMMs back to back on one stream
leads("gemm_heads may be batched", "case_gemm_heads", "batched_gemm", "back to back on one stream")
absent("gemm_heads is no chain", "case_gemm_heads", "gemm_chain")
# gemm_streams: the same 16 GEMMs over 4 streams at once
leads("gemm_streams are batched as independent", "case_gemm_streams", "batched_gemm",
      "already treats them as independent")
absent("gemm_streams is no chain", "case_gemm_streams", "gemm_chain")
# host_gaps: 2 ms of host work each step with nothing queued
leads("host_gaps is CPU-bound", "case_host_gaps", "cpu_bound", "outside any CUDA call")
calm("clean program has nothing above low", "case_clean")

# ---- no share beyond its base, in every case ---------------------------------
for case in sorted(cases):
    shares(f"{case}: every share within its base", case)

# ---- steady 50 against 44 slower iterations -----------------------------------
steady_diff(f"diff finds allreduce_like x{slow} slower, per launch and per iteration")
PY
pystatus=$?
cat "$TMP/checks"
[ "$pystatus" -eq 0 ] || fail "the checks ran to their end (python exit $pystatus)"
nchecks=$(grep -c '^ok: ' "$TMP/checks")
while IFS= read -r line; do
	case $line in FAIL:*) fail "${line#FAIL: }" ;; esac
done <"$TMP/checks"
if [ "$nchecks" -ge 30 ]; then pass "the checks ran ($nchecks passed)"
else fail "the checks ran (only $nchecks passed)"; fi

finish
