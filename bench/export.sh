#!/usr/bin/env bash
# export.sh - what the whole-capture exports cost: for stores of 250k and 1M
# kernel launches written through the writer API (bench_export --write),
# the time, store MB per second, output size and peak RSS of the Chrome
# trace, the folded stacks and the HTML report, each in its own process.
# Peak RSS that stays flat from 250k to 1M shows the exports stream.
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
