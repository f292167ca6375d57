#!/usr/bin/env bash
# Measures how fast each fuzz target runs under libFuzzer, before and after a
# change: two builds of the harnesses, each fuzzing for the same seconds from
# a fresh copy of the same corpus, one process at a time (one core), and
# prints a table of executions per second (wall clock) and per CPU second
# (what the process itself used: steadier on a shared machine).
#
#   fuzz/rate.sh [-t SECONDS] [-c CORPUS_ROOT] BEFORE_DIR [TARGET...]
#
# BEFORE_DIR holds the older harnesses (fuzz_<target>), e.g. those of
# build-fuzz/fuzz from a worktree of an older commit built with
# fuzz/build.sh; the newer ones are this tree's build-fuzz/fuzz. The older
# ones run as the campaign ran them then: ASAN_OPTIONS=$BEFORE_ASAN_OPTIONS,
# their scratch files in /tmp and no flags beyond the dictionary and the
# campaign's limits; the newer ones as fuzz/campaign.sh runs them now
# (fuzz/settings.sh). Nothing is written to the corpus: each run fuzzes a
# copy, which it grows.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30 corpus_root=fuzz/corpus
usage() { echo "usage: $0 [-t SECONDS] [-c CORPUS_ROOT] BEFORE_DIR [TARGET...]" >&2; exit 2; }
while getopts "t:c:h" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    c) corpus_root=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
before_dir=$1; shift
after_dir=build-fuzz/fuzz
before_asan=${BEFORE_ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
. fuzz/settings.sh
targets=${*:-$(fuzz_targets)}
after_asan=$ASAN_OPTIONS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run BIN TARGET ASAN_OPTIONS TMPDIR FLAGS...: prints "executions cpu_seconds".
run() {
  local bin=$1 target=$2 asan=$3 tmp=$4; shift 4
  rm -rf "$work/corpus"
  cp -r "$corpus_root/$target" "$work/corpus"
  # A run that stops early (a crash, a leak, a timeout) says so: its rate
  # is of the seconds before it stopped.
  if ! ASAN_OPTIONS=$asan TMPDIR=$tmp /usr/bin/time -f '%U %S' -o "$work/time" \
       "$bin" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" "$@" "$work/corpus" \
       >"$work/log" 2>&1; then
    { echo "$0: $bin stopped early:"; grep -E 'ERROR|SUMMARY|invariant|Test unit' "$work/log"; } >&2
  fi
  echo "$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1) \
$(tail -1 "$work/time" | awk '{ print $1 + $2 }')"
}

per() { awk -v n="$1" -v d="$2" 'BEGIN { printf "%.0f", (d > 0 ? n / d : 0) }'; }

printf '%-11s %12s %12s %8s %14s %14s %8s\n' target "before/s" "after/s" speedup \
  "before/cpu-s" "after/cpu-s" speedup
for t in $targets; do
  [ -x "$before_dir/fuzz_$t" ] && [ -x "$after_dir/fuzz_$t" ] ||
    { echo "$0: no fuzz_$t in $before_dir or $after_dir" >&2; exit 2; }
  dict=$(fuzz_dict "$t")
  # shellcheck disable=SC2046 # flag lists, split on spaces
  read -r bn bcpu < <(run "$before_dir/fuzz_$t" "$t" "$before_asan" /tmp \
    -timeout=10 -rss_limit_mb=4096 -close_fd_mask=3 ${dict:+-dict=$dict})
  # shellcheck disable=SC2046
  read -r an acpu < <(run "$after_dir/fuzz_$t" "$t" "$after_asan" "${TMPDIR:-}" \
    $(fuzz_libfuzzer_flags "$t"))
  bw=$(per "${bn:-0}" "$seconds") aw=$(per "${an:-0}" "$seconds")
  bc=$(per "${bn:-0}" "$bcpu") ac=$(per "${an:-0}" "$acpu")
  printf '%-11s %12s %12s %7sx %14s %14s %7sx\n' "$t" "$bw" "$aw" \
    "$(awk -v a="$aw" -v b="$bw" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')" "$bc" "$ac" \
    "$(awk -v a="$ac" -v b="$bc" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
done
