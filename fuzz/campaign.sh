#!/usr/bin/env bash
# The fuzzing campaign: runs each target under AddressSanitizer + UBSan for a
# time or a number of executions, one target at a time (one core), resuming
# from the committed corpus, and records what it reached in fuzz/progress.tsv
# so that later sessions carry the count on (the goal: 10M executions per
# target). docs/reliability.md describes the results and the steps.
#
#   fuzz/campaign.sh [-e libfuzzer|afl] [-t SECONDS | -r EXECUTIONS] [TARGET...]
#   fuzz/campaign.sh -i DIR TARGET   takes in a run made elsewhere by
#                                    fuzz/parallel.sh (another machine's cores)
#
# Per target it
#   - fuzzes with the corpus fuzz/corpus/<target> plus a working corpus in
#     <build>/campaign/<target> (kept between runs on this machine);
#   - merges the inputs that reached new code into fuzz/corpus/<target>
#     (libFuzzer -merge=1; over the size budget the corpus is re-minimised);
#   - files each new crash under fuzz/crashes/<target>/open/, unless an open
#     crash already fails with the same report line, or it fails no more
#     (not replayed by CI until it is fixed: then move it up to
#     fuzz/crashes/<target>/, where the replay test keeps it fixed);
#   - adds its executions to progress.tsv and records the coverage (libFuzzer's
#     "cov", covered edges of the instrumented code), the crashes found (open
#     + fixed) and fixed (replayed by CI), the seconds fuzzed and the date.
# FUZZ_LIBFUZZER_FLAGS adds libFuzzer flags (e.g. -use_value_profile=1, which
# helps the option parsers past their numeric comparisons).
# Commit fuzz/corpus, fuzz/crashes and fuzz/progress.tsv afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=libfuzzer seconds=60 runs="" import="" budget_kb=${FUZZ_CORPUS_BUDGET_KB:-512}
usage() {
  echo "usage: $0 [-e libfuzzer|afl] [-t SECONDS | -r EXECUTIONS] [TARGET...] | -i DIR TARGET" >&2
  exit 2
}
while getopts "e:t:r:i:h" opt; do
  case $opt in
    e) engine=$OPTARG ;;
    t) seconds=$OPTARG ;;
    r) runs=$OPTARG ;;
    i) import=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
# The sanitizers' options and each target's flags (fuzz/settings.sh).
. fuzz/settings.sh
targets=${*:-$(fuzz_targets)}
if [ -n "$import" ]; then
  [ $# = 1 ] && [ -d "$import/log" ] || usage
  [ "$engine" = libfuzzer ] || usage
fi
case $engine in
  libfuzzer) build=build-fuzz ;;
  afl) build=build-afl; command -v afl-fuzz >/dev/null || { echo "$0: afl-fuzz missing (fuzz/install-deps.sh)" >&2; exit 2; } ;;
  *) usage ;;
esac
[ -x "$build/fuzz/fuzz_${targets%% *}" ] || fuzz/build.sh "$engine"
merger=build-fuzz/fuzz  # libFuzzer's -merge also folds AFL++'s queue in
progress=fuzz/progress.tsv
[ -f "$progress" ] ||
  printf 'target\texecutions\tedges\tcrashes_found\tcrashes_fixed\tseconds\tengines\tlast_run\n' >"$progress"

field() { awk -F'\t' -v t="$1" -v c="$2" '$1 == t { print $c }' "$progress"; }
count_files() { { find "$1" -maxdepth 1 -type f 2>/dev/null || true; } | wc -l; }

# Why the harness crashes on an input, from a run with stderr kept (the
# fuzzing run sends the harness's stderr, invariant messages included, to
# /dev/null): the broken invariant, else the report's SUMMARY line (kind
# and place, the same for every input that meets one bug). Empty when it no
# longer crashes. The input runs 20 times in one process: a failure may need
# what earlier runs left behind (SQLite's recycled page buffers), as it had
# under the fuzzer.
crash_reason() {
  "$merger/fuzz_$1" -runs=20 -timeout=10 "$2" 2>&1 | grep -m1 -E 'invariant failed|^SUMMARY: ' || true
}

# File each crash artifact under fuzz/crashes/<target>/open/ by content hash,
# unless an open crash of the target already fails the same way (the same
# report line: a shallow bug is met again at every run until it is fixed).
file_crashes() {
  local target=$1; shift
  local f kind sum dest why known=() k
  dest=fuzz/crashes/$target
  for k in "$dest"/open/*; do
    [ -f "$k" ] && known+=("$(crash_reason "$target" "$k")")
  done
  for f in "$@"; do
    [ -f "$f" ] || continue
    kind=$(basename "$f"); kind=${kind%%-*}; kind=${kind%%:*}
    [ "$kind" = id ] && kind=crash
    sum=$(sha1sum "$f" | cut -c1-16)
    [ -e "$dest/$kind-$sum" ] || [ -e "$dest/open/$kind-$sum" ] && continue
    why=$(crash_reason "$target" "$f")
    # An artifact of an earlier run whose bug is fixed since (its input
    # filed and renamed under fuzz/crashes/<target>/) fails no more.
    [ -n "$why" ] || { echo "  $kind-$sum no longer fails: not filed"; continue; }
    for k in "${known[@]}"; do
      [ -n "$why" ] && [ "$k" = "$why" ] && { echo "  known $kind: $why"; continue 2; }
    done
    mkdir -p "$dest/open"
    cp "$f" "$dest/open/$kind-$sum"
    known+=("$why")
    echo "  new $kind: fuzz/crashes/$target/open/$kind-$sum: $why"
  done
}

merge_into_tree() {
  local target=$1 from=$2 bin=$merger/fuzz_$1 tmp
  [ -x "$bin" ] && [ -d "$from" ] || return 0
  "$bin" -merge=1 -close_fd_mask=3 -timeout=10 "fuzz/corpus/$target" "$from" >/dev/null 2>&1 || true
  [ "$(du -sk --apparent-size "fuzz/corpus/$target" | cut -f1)" -gt "$budget_kb" ] || return 0
  # Over the budget: keep a minimal set covering every feature, then, if
  # that is still too big, drop its largest inputs first (the working corpus
  # on this machine keeps them all).
  tmp=$(mktemp -d)
  "$bin" -merge=1 -close_fd_mask=3 -timeout=10 "$tmp" "fuzz/corpus/$target" >/dev/null 2>&1 || true
  if [ "$(count_files "$tmp")" -gt 0 ]; then
    rm -f "fuzz/corpus/$target"/*
    cp "$tmp"/* "fuzz/corpus/$target/"
  fi
  rm -rf "$tmp"
  while [ "$(du -sk --apparent-size "fuzz/corpus/$target" | cut -f1)" -gt "$budget_kb" ] &&
        [ "$(count_files "fuzz/corpus/$target")" -gt 1 ]; do
    rm -f "$(ls -S "fuzz/corpus/$target"/* | head -1)"
  done
}

for t in $targets; do
  bin=$build/fuzz/fuzz_$t
  work=$build/campaign/$t
  [ -x "$bin" ] || { echo "$0: no harness $bin" >&2; exit 2; }
  mkdir -p "$work/corpus" "$work/artifacts" "fuzz/corpus/$t"
  start=$(date +%s)
  dict=$(fuzz_dict "$t")
  dict_afl=()
  [ -n "$dict" ] && dict_afl=(-x "$dict")
  echo "== $t ($engine, ${runs:+$runs executions}${runs:-$seconds s})"
  if [ -n "$import" ]; then
    # fuzz/parallel.sh's run: a log per job, the inputs they added, their
    # crashes, and the seconds all its jobs fuzzed together
    echo "== $t (libfuzzer, taken in from $import)"
    execs=$(cat "$import"/log/* | sed -n 's/^stat::number_of_executed_units: *//p' |
      awk '{ n += $1 } END { print n + 0 }')
    edges=$(cat "$import"/log/* | grep -o 'cov: [0-9]*' | cut -d' ' -f2 | sort -n | tail -1)
    file_crashes "$t" "$import"/artifacts/*
    merge_into_tree "$t" "$import/corpus"
    start=$(( $(date +%s) - $(cat "$import/seconds") ))
  elif [ "$engine" = libfuzzer ]; then
    limit=(-max_total_time="$seconds"); [ -n "$runs" ] && limit=(-runs="$runs")
    # shellcheck disable=SC2046,SC2086 # flags lists, split on spaces
    "$bin" "${limit[@]}" $(fuzz_libfuzzer_flags "$t") ${FUZZ_LIBFUZZER_FLAGS:-} -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/corpus" "fuzz/corpus/$t" >"$work/log" 2>&1 || true
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    edges=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | cut -d' ' -f2)
    file_crashes "$t" "$work"/artifacts/*
    merge_into_tree "$t" "$work/corpus"
  else
    limit=(-V "$seconds"); [ -n "$runs" ] && limit=(-E "$runs")
    AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_AUTORESUME=1 \
    AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 ASAN_OPTIONS="$ASAN_OPTIONS:symbolize=0" \
      afl-fuzz "${limit[@]}" "${dict_afl[@]}" -t 10000 -i "fuzz/corpus/$t" -o "$work/afl" -- "$bin" \
      >"$work/log" 2>&1 || true
    stats=$work/afl/default/fuzzer_stats
    # A resumed run's counter restarts: what this run did is what it says now.
    execs=$(awk '$1 == "execs_done" { print $3 }' "$stats" 2>/dev/null)
    edges=""
    file_crashes "$t" "$work"/afl/default/crashes/id:*
    merge_into_tree "$t" "$work/afl/default/queue"
  fi
  execs=${execs:-0}
  found=$(( $(count_files "fuzz/crashes/$t") + $(count_files "fuzz/crashes/$t/open") ))
  fixed=$(count_files "fuzz/crashes/$t")
  # Campaigns of different targets may run side by side (one a core): the
  # table is read and rewritten by one of them at a time.
  exec 9>"$progress.lock"
  flock 9
  prev_execs=$(field "$t" 2); prev_edges=$(field "$t" 3); prev_secs=$(field "$t" 6)
  engines=$(field "$t" 7)
  case ",$engines," in *",$engine,"*) ;; *) engines=${engines:+$engines,}$engine ;; esac
  total=$(( ${prev_execs:-0} + execs ))
  secs=$(( ${prev_secs:-0} + $(date +%s) - start ))
  edges=${edges:-${prev_edges:-0}}
  grep -v "^$t	" "$progress" >"$progress.new" || true
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$total" "$edges" "$found" "$fixed" "$secs" \
    "$engines" "$(date -u +%F)" >>"$progress.new"
  { head -1 "$progress.new"; tail -n +2 "$progress.new" | sort; } >"$progress"
  rm -f "$progress.new"
  flock -u 9
  echo "  $execs executions (total $total), edges $edges, crashes found $found, fixed $fixed"
done
