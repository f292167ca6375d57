#!/usr/bin/env bash
# export.sh - what the whole-capture exports cost: for stores of 250k and 1M
# kernel launches written through the writer API (bench_export --write),
# the time (wall and CPU), store MB per second, output size and peak RSS of
# the Chrome JSON trace, the native Perfetto trace, the folded stacks and the
# HTML report, each in its own process; the Perfetto row also gives its size,
# wall time and CPU time as shares of the Chrome trace's (goal: size at most
# 0.2, time at most 0.33). Peak RSS that stays flat from 250k to 1M shows the
# exports stream. One table.
#
#   bench/export.sh [BUILD]   BUILD: a build folder (default: build)
set -euo pipefail
BUILD=${1:-build}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
header=--header
for n in 250000 1000000; do
	"$BUILD/bench/bench_export" --write "$n" "$W/store.sqlite"
	"$BUILD/bench/bench_export" $header "$W/store.sqlite"
	header=
done
