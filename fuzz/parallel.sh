#!/usr/bin/env bash
# parallel.sh - one target fuzzed on every core of a machine at once, for a
# machine with more cores than this one: libFuzzer's -jobs, each job from
# the committed corpus, for SECONDS. What it leaves in OUTDIR (a log per
# job, the inputs the jobs added, their crashes, the seconds fuzzed in all)
# is what `fuzz/campaign.sh -i OUTDIR TARGET` takes in here, into
# fuzz/progress.tsv, fuzz/corpus and fuzz/crashes.
#
#   fuzz/parallel.sh HARNESS TARGET SECONDS OUTDIR [JOBS]
# HARNESS: the libFuzzer build of fuzz_TARGET (build-fuzz/fuzz/fuzz_TARGET,
# with the shared libraries it needs on LD_LIBRARY_PATH); JOBS: the cores
# (default: all).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 HARNESS TARGET SECONDS OUTDIR [JOBS]" >&2; exit 2; }
harness=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
target=$2 seconds=$3 out=$4 jobs=${5:-$(nproc)}
cd "$(dirname "$0")/.."
. fuzz/settings.sh
mkdir -p "$out/log" "$out/corpus" "$out/artifacts"
out=$(cd "$out" && pwd)
# the jobs write their logs where they run: paths made whole first
flags=$(fuzz_libfuzzer_flags "$target" | sed "s|-dict=fuzz/|-dict=$PWD/fuzz/|")
seeds=$PWD/fuzz/corpus/$target
start=$(date +%s)
# shellcheck disable=SC2086 # a list of flags
(cd "$out/log" && "$harness" -jobs="$jobs" -workers="$jobs" -max_total_time="$seconds" $flags \
  -print_final_stats=1 -artifact_prefix="$out/artifacts/" "$out/corpus" "$seeds" >/dev/null 2>&1) || true
echo $(( ($(date +%s) - start) * jobs )) >"$out/seconds"
cat "$out"/log/* | sed -n 's/^stat::number_of_executed_units: *//p' | awk -v j="$jobs" \
  '{ n += $1 } END { printf "%d executions in %d jobs\n", n, j }'
