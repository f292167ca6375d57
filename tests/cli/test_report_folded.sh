# test_report_folded.sh - `perfkit report --format=folded`: every line reads
# as flamegraph.pl and speedscope read folded stacks, the weights add up to
# the kernel (or API) time in the store, names cannot break a stack, the
# filters work, and bad options are refused with one line and exit 2.
. "$(dirname "$0")/cli_lib.sh"

store="$TMP/names.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }

# folded_total FILE: checks the grammar and prints the summed weight.
# flamegraph.pl takes /^(.*)\s+(\d+(?:\.\d*)?)$/ per line, speedscope
# /^(.*) (\d+)$/; both split the stack at ';'.
folded_total() {
	python3 - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8")  # must be valid UTF-8
assert data.endswith("\n"), "no final newline"
assert "\r" not in data and "\x1b" not in data
total = 0
for line in data[:-1].split("\n"):
    fg = re.match(r"^(.*)\s+(\d+(?:\.\d*)?)$", line)
    ss = re.match(r"^(.*) (\d+)$", line)
    assert fg and ss and fg.group(1) == ss.group(1), line
    frames = ss.group(1).split(";")
    assert len(frames) >= 3 and all(frames), line
    assert int(ss.group(2)) > 0, line
    total += int(ss.group(2))
print(total)
PY
}

# sql_total FILE SQL: one number from the store.
sql_total() {
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0] or 0)' "$1" "$2"
}

kernel_sql="SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"

run report --format=folded "$store"
expect_status "folded" 0
got=$(folded_total "$TMP/out") || fail "folded does not parse"
want=$(sql_total "$store" "$kernel_sql")
if [ "$got" = "$want" ]; then pass "folded total is the kernel time ($want ns)"; else fail "folded total $got, kernels $want"; fi
lines=$(wc -l <"$TMP/out")
if [ "$lines" -eq 6 ]; then pass "one stack per kernel name"; else fail "wanted 6 stacks, got $lines"; fi
# range "line1\nline2" around a launch of kernel "line1\nline2"
expect_out "line break replaced" '^process 100;thread 101;line1 line2;cudaLaunchKernel;line1 line2 [0-9]+$'
expect_out "quotes kept" ';void gemm<float, "tiled">\(int, int\);cudaLaunchKernel;'

run report --format=folded --weight=api -o "$TMP/api.folded" "$store"
expect_status "folded --weight=api -o" 0
got=$(folded_total "$TMP/api.folded") || fail "api folded does not parse"
want=$(sql_total "$store" "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME")
if [ "$got" = "$want" ]; then pass "api total is the API time ($want ns)"; else fail "api total $got, API calls $want"; fi
[ -s "$TMP/out" ] && fail "-o leaves stdout empty" || pass "-o leaves stdout empty"

run report --format=folded --range=plain_kernel "$store"
expect_status "folded --range" 0
if [ "$(wc -l <"$TMP/out")" -eq 1 ] && grep -q ';plain_kernel;cudaLaunchKernel;plain_kernel ' "$TMP/out"; then
	pass "--range keeps the launches inside the range"
else
	fail "--range: $(cat "$TMP/out")"
fi

# A real capture, when one is there: nested NVTX frames, exact totals.
capture="$PERFKIT_TEST_DATA/transformer_naive.sqlite"
if [ -f "$capture" ]; then
	run report --format=folded "$capture"
	expect_status "folded on a capture" 0
	got=$(folded_total "$TMP/out") || fail "capture folded does not parse"
	want=$(sql_total "$capture" "$kernel_sql")
	if [ "$got" = "$want" ]; then pass "capture total is its kernel time"; else fail "capture total $got, kernels $want"; fi
	expect_out "capture nests step > forward" '^transformer;[^;]+;step;forward;cu[A-Za-z]*Launch[A-Za-z]*;'
	expect_out "capture nests step > backward" '^transformer;[^;]+;step;backward;'
else
	echo "note: $capture is not there; the capture checks did not run"
fi

refuse() { # NAME PATTERN ARGS...
	local name=$1 pattern=$2
	shift 2
	run "$@"
	expect_status "$name" 2
	expect_one_error_line "$name" "$pattern"
}
refuse "unknown weight" "unknown weight 'cpu'" report --format=folded --weight=cpu "$store"
refuse "--weight with csv" "--weight applies to" report --format=csv --weight=gpu "$store"
refuse "--report with folded" "--report selects tables" report --format=folded --report=cuda_api_sum "$store"
refuse "bad --from" "'soon' is not a time" report --format=folded --from=soon "$store"
refuse "--from with html" "--from, --to and --range apply to" report --format=html --from=1ms "$store"
refuse "unknown range" "no NVTX range is named 'nope'" report --format=folded --range=nope "$store"
refuse "unknown format" "unknown format 'foldd'; did you mean 'folded'" report --format=foldd "$store"

finish
