#!/usr/bin/env bash
# test_gate_workload_captures.sh - the gate on real H100 captures of the hash
# embedding workload (tests/data/): with the optimized variant as baseline the
# naive one fails and the kernels responsible are named; the reverse passes;
# a repeated capture of the optimized variant passes a baseline made of the
# other two; the JUnit output names the failing keys.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
opt=$D/hash_embedding_optimized.sqlite
naive=$D/hash_embedding_naive.sqlite

run baseline save "$opt" "$D/hash_embedding_optimized_2.sqlite" -o "$TMP/opt.json"
expect_status "baseline of two optimized captures" 0
run gate --baseline "$TMP/opt.json" --junit="$TMP/naive.xml" "$naive"
expect_status "naive against the optimized baseline" 1
# The optimized pipeline has one fused lookup kernel; the naive one launches
# lookup_one per table: that is what the gate must blame.
expect_out "names the per-table lookup kernel" 'FAIL gpu_time: .*grew most: lookup_one'
if grep -q '<failure' "$TMP/naive.xml" && grep -q 'name="gpu_time"' "$TMP/naive.xml"
then pass "junit holds the gpu_time failure"; else fail "junit holds the gpu_time failure"; fi

run gate --baseline "$TMP/opt.json" "$D/hash_embedding_optimized_3.sqlite"
expect_status "a repeated optimized capture passes" 0
expect_out "says it passed" '^gate passed'

# One naive capture gives the baseline no spread, so no noise allowance; the
# two programs' wall time is mostly the same setup (CUDA start, the bandwidth
# measurement) and moves a few percent from run to run: a 10% budget keeps
# that noise from deciding, while every GPU key shrinks by far more.
run baseline save "$naive" -o "$TMP/naive.json"
run gate --baseline "$TMP/naive.json" --max-regression=10% "$opt"
expect_status "optimized against the naive baseline" 0

run gate --baseline "$TMP/opt.json" "$D/transformer_naive.sqlite"
expect_status "a capture of another program" 2
expect_one_error_line "a capture of another program" "is a capture of 'transformer' but the baseline .* is for 'hash_embedding'"
finish
