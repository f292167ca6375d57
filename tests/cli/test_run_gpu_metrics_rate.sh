#!/usr/bin/env bash
# `perfkit run --gpu-metrics[=HZ]` takes 1,000 to 100,000 samples a second
# (10,000 when no rate is given) and hands the rate to the collector in
# PERFKIT_GPU_METRICS; a rate outside that range, one that is no number, or
# --gpu-metrics with --metrics (both hold the GPU's counters) is one line on
# stderr and status 2, before anything is captured. No GPU is needed: the
# program only prints the rate it was given.
set -u
. "$(dirname "$0")/cli_lib.sh"

cd "$TMP"
refused "--gpu-metrics=500, below the range" \
	"--gpu-metrics: '500' is not a rate between 1000 and 100000" --gpu-metrics=500
refused "--gpu-metrics=100001, above the range" \
	"--gpu-metrics: '100001' is not a rate between 1000 and 100000" --gpu-metrics=100001
refused "--gpu-metrics=abc, no number" \
	"--gpu-metrics: 'abc' is not a rate" --gpu-metrics=abc
refused "--gpu-metrics=1000x, trailing letters" \
	"--gpu-metrics: '1000x' is not a rate" --gpu-metrics=1000x
refused "--gpu-metrics with --metrics" \
	"--gpu-metrics and --metrics cannot be used together" --gpu-metrics --metrics=memory

if built_without_cupti; then
	skip "the accepted rates" "built without CUPTI: perfkit run captures nothing"
	finish
	exit
fi

# accepted HZ WANT: a run with --gpu-metrics=HZ (no = when HZ is empty)
# exits 0 and the program sees PERFKIT_GPU_METRICS=WANT.
accepted() {
	local opt=--gpu-metrics${1:+=$1}
	run run -f -o "$TMP/rate.sqlite" "$opt" -- sh -c 'printf "%s" "$PERFKIT_GPU_METRICS"'
	expect_status "$opt" 0
	if [ "$(cat "$TMP/out")" = "$2" ]; then pass "$opt: the collector is told $2 a second"
	else fail "$opt: the collector is told '$(cat "$TMP/out")', wanted $2"; fi
}
accepted 1000 1000
accepted 100000 100000
accepted "" 10000
run run -f -o "$TMP/rate.sqlite" -- sh -c 'printf "%s" "${PERFKIT_GPU_METRICS-unset}"'
if [ "$status" -eq 0 ] && [ "$(cat "$TMP/out")" = unset ]; then pass "no --gpu-metrics: no sampling asked for"
else fail "no --gpu-metrics: the program saw PERFKIT_GPU_METRICS='$(cat "$TMP/out")'"; fi
finish
