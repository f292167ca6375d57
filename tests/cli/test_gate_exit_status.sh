# test_gate_exit_status.sh - `perfkit baseline save`, `perfkit gate` and
# `perfkit diff` on captures written with known kernel times: exit status 0
# for a pass, 1 for a regression (naming the key), 2 for every bad input, and
# JUnit XML that is well-formed and valid against tests/schema/junit.xsd.
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_TEST_TOOLS:?}" "${PERFKIT_SOURCE:?}"

write() { # PATH COMMAND GPU WALL_NS [NAME COUNT NS]...
	"$PERFKIT_TEST_TOOLS/write_kernel_store" "$@" || { echo "FAIL: cannot write $1" >&2; exit 1; }
}

H100="NVIDIA H100 80GB HBM3"
# Three repeated runs of 10 steps: gemm ~1 ms, softmax 0.5 ms each step, a little jitter.
write "$TMP/base1.sqlite" "./train --steps=10" "$H100" 40000000 gemm 10 1000000 softmax 10 500000
write "$TMP/base2.sqlite" "./train --steps=10" "$H100" 41000000 gemm 10 1020000 softmax 10 505000
write "$TMP/base3.sqlite" "./train --steps=10" "$H100" 39500000 gemm 10 990000 softmax 10 498000
write "$TMP/same.sqlite" "/ci/bin/train --steps=10" "$H100" 40500000 gemm 10 1010000 softmax 10 501000
# gemm twice as slow.
write "$TMP/slow.sqlite" "./train --steps=10" "$H100" 50000000 gemm 10 2000000 softmax 10 500000
# Half the launches: the same per launch, then gemm twice as slow.
write "$TMP/same_short.sqlite" "./train --steps=5" "$H100" 20000000 gemm 5 1000000 softmax 5 500000
write "$TMP/slow_short.sqlite" "./train --steps=5" "$H100" 25000000 gemm 5 2000000 softmax 5 500000
write "$TMP/other_program.sqlite" "./infer" "$H100" 40000000 gemm 10 1000000
write "$TMP/other_gpu.sqlite" "./train" "NVIDIA A100-SXM4-40GB" 40000000 gemm 10 1000000
# A kernel name that needs escaping in every format.
write "$TMP/odd_base.sqlite" "./train" "$H100" 40000000 "$(printf 'k<T>&"x"\001')" 10 1000000
write "$TMP/odd_slow.sqlite" "./train" "$H100" 80000000 "$(printf 'k<T>&"x"\001')" 10 3000000

bl="$TMP/baseline.json"
run baseline save -o "$bl" "$TMP/base1.sqlite" "$TMP/base2.sqlite" "$TMP/base3.sqlite"
expect_status "baseline save" 0
expect_out "baseline save" "keys over 3 captures of 'train' on '$H100'"

run gate --baseline "$bl" "$TMP/same.sqlite"
expect_status "gate on a repeated run" 0
expect_out "gate on a repeated run" "gate passed"

# Fewer launches of the same kernels: per iteration and per launch nothing moved.
run gate --baseline "$bl" "$TMP/same_short.sqlite"
expect_status "gate on a shorter run" 0
expect_out "gate on a shorter run compares per iteration" "per iteration of kernel \"gemm\""
run gate --baseline "$bl" "$TMP/slow_short.sqlite"
expect_status "gate on a shorter run with a 2x slower kernel" 1
expect_out "gate on a shorter run names the kernel per launch" "^FAIL kernel:gemm: 2 ms/launch vs 1 ms "

run gate --baseline "$bl" --junit="$TMP/fail.xml" "$TMP/slow.sqlite"
expect_status "gate on a 2x slower kernel" 1
expect_out "gate on a 2x slower kernel" "^FAIL kernel:gemm: "
expect_out "gate on a 2x slower kernel names it in the total" "^FAIL gpu_time: .*grew most: gemm \+"

run gate --baseline "$bl" --format=json "$TMP/slow.sqlite"
expect_status "gate json" 1
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["Key"]: r for rep in doc["reports"] if rep["name"] == "gate" for r in rep["rows"]}
assert rows["kernel:gemm"]["Result"] == "FAIL", rows["kernel:gemm"]
assert rows["kernel:softmax"]["Result"] == "pass", rows["kernel:softmax"]
assert "kernel:gemm" in rows["kernel:gemm"]["Message"]
PY
then pass "gate json rows"; else fail "gate json rows"; fi

# Every key's own budget wins over the global 5 %.
python3 - "$bl" "$TMP/loose.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for k in b["keys"].values():
    k["max_regression"] = "200%"
json.dump(b, open(sys.argv[2], "w"))
PY
run gate --baseline "$TMP/loose.json" "$TMP/slow.sqlite"
expect_status "gate with per-key budgets of 200%" 0
run gate --baseline "$bl" --max-regression=200% "$TMP/slow.sqlite"
expect_status "gate with a global budget of 200%" 0

# JUnit: one testcase per key, a failure for gemm, valid against the schema.
validate_junit() { # NAME FILE FAILURES
	if python3 - "$2" "$3" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites"
cases = root.findall("./testsuite/testcase")
failures = root.findall("./testsuite/testcase/failure")
assert len(failures) == int(sys.argv[2]), len(failures)
assert int(root.find("testsuite").get("tests")) == len(cases)
for f in failures:
    assert f.get("message"), "failure without message"
PY
	then pass "$1 well-formed"; else fail "$1 well-formed"; fi
	# scripts/install-deps.sh installs xmllint (libxml2-utils): its absence
	# is a broken set-up, not a reason to skip the schema check.
	if xmllint --noout --schema "$PERFKIT_SOURCE/tests/schema/junit.xsd" "$2" 2>"$TMP/xmllint.err"
	then pass "$1 valid against junit.xsd"
	else fail "$1 valid against junit.xsd: $(cat "$TMP/xmllint.err")"; fi
}
validate_junit "junit of a failing gate" "$TMP/fail.xml" 3
if grep -q 'name="kernel:gemm"' "$TMP/fail.xml"; then pass "junit names gemm"; else fail "junit names gemm"; fi

run baseline save -o "$TMP/odd.json" "$TMP/odd_base.sqlite"
expect_status "baseline of an odd kernel name" 0
run gate --baseline "$TMP/odd.json" --junit="$TMP/odd.xml" "$TMP/odd_slow.sqlite"
expect_status "gate on an odd kernel name" 1
validate_junit "junit with an odd kernel name" "$TMP/odd.xml" 3

# Bad input: exit 2 and one line saying what is wrong.
run gate --baseline "$bl" "$TMP/other_program.sqlite"
expect_status "baseline of another program" 2
expect_one_error_line "baseline of another program" "capture of 'infer' but the baseline .* is for 'train'"

run gate --baseline "$bl" "$TMP/other_gpu.sqlite"
expect_status "baseline of another GPU" 2
expect_one_error_line "baseline of another GPU" "captured on 'NVIDIA A100-SXM4-40GB' but the baseline"

printf '{"perfkit_baseline": 1, "keys": {' >"$TMP/broken.json"
run gate --baseline "$TMP/broken.json" "$TMP/same.sqlite"
expect_status "malformed baseline" 2
expect_one_error_line "malformed baseline" "broken.json is not valid JSON"

run gate --baseline "$TMP/absent.json" "$TMP/same.sqlite"
expect_status "missing baseline" 2
expect_one_error_line "missing baseline" "cannot read baseline .*absent.json"

run gate "$TMP/same.sqlite"
expect_status "gate without --baseline" 2
expect_one_error_line "gate without --baseline" "needs --baseline"

run gate --baseline "$bl" --max-regression=lots "$TMP/same.sqlite"
expect_status "bad --max-regression" 2
expect_one_error_line "bad --max-regression" "--max-regression expects a percentage"

head -c 4096 /dev/urandom >"$TMP/random.bin"
run gate --baseline "$bl" "$TMP/random.bin"
expect_status "gate on random bytes" 2
expect_one_error_line "gate on random bytes" "random.bin"

run baseline save -o "$TMP/mixed.json" "$TMP/base1.sqlite" "$TMP/other_program.sqlite"
expect_status "baseline of two programs" 2
expect_one_error_line "baseline of two programs" "different programs"

run baseline save "$TMP/base1.sqlite"
expect_status "baseline save without -o" 2

run baseline sav -o "$TMP/x.json" "$TMP/base1.sqlite"
expect_status "unknown baseline action" 2
expect_one_error_line "unknown baseline action" "did you mean 'save'"

# diff: the 2x slower kernel first, with its ratio; all formats. These
# stores launch gemm, then softmax, each step: the loop is marked by gemm,
# a step takes 1 + 0.5 ms of GPU time, 2 + 0.5 ms where gemm is slower.
run diff "$TMP/base1.sqlite" "$TMP/slow.sqlite"
expect_status "diff" 0
expect_out "diff verdict" "NEW's step is 1\.7x slower: 1\.5 ms → 2\.5 ms median .*\(BASE 9 steps, NEW 9\); GPU time per step 1\.5 ms → 2\.5 ms \(1\.7x more\): gemm 2\.0x slower per launch \(\+1 ms/iter\) \[100% of the step's change\]"
run diff "$TMP/base1.sqlite" "$TMP/same_short.sqlite"
expect_out "diff of a shorter run" "NEW's step takes the same wall time as BASE's \(within noise\): 1\.5 ms → 1\.5 ms median .*\(BASE 9 steps, NEW 4\); GPU time per step 1\.5 ms → 1\.5 ms$"
run diff --format=json "$TMP/base1.sqlite" "$TMP/slow.sqlite"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
k = [r for r in doc["reports"] if r["name"] == "diff_kernels"][0]["rows"]
assert k[0]["Name"] == "gemm" and k[0]["Med Ratio"] == 2.0 and k[0]["Change"] == "slower", k[0]
assert k[0]["Delta/iter (ns)"] == 1000000, k[0]
loops = [r for r in doc["reports"] if r["name"] == "diff_loops"][0]["rows"]
assert [l["Iterations"] for l in loops] == [9, 9], loops
PY
then pass "diff json puts gemm first with median ratio 2"; else fail "diff json puts gemm first with median ratio 2"; fi
run diff --format=html -o "$TMP/diff.html" "$TMP/odd_base.sqlite" "$TMP/odd_slow.sqlite"
expect_status "diff html" 0
if grep -q 'k&lt;T&gt;&amp;&quot;x&quot;' "$TMP/diff.html"; then pass "diff html escapes"; else fail "diff html escapes"; fi
run diff --format=pdf "$TMP/base1.sqlite" "$TMP/slow.sqlite"
expect_status "diff unknown format" 2
run diff "$TMP/base1.sqlite"
expect_status "diff with one capture" 2

finish
