#!/usr/bin/env bash
# Exports every format of every report of every fixture into one folder, so
# that two builds can be compared byte for byte (a refactoring must leave the
# folders identical):
#   scripts/export-all-fixtures.sh BUILD_DIR OUT_DIR
#   diff -r OUT_BEFORE OUT_AFTER
# ONLY=traces exports only the Chrome and Perfetto traces (whole, narrowed
# by time and by an NVTX range), for a change to them alone.
# HTML pages are exported without gnuplot's version line varying: both runs
# use the gnuplot on PATH. Exit status of each command is kept in its file.
set -uo pipefail
build=${1:?usage: export-all-fixtures.sh BUILD_DIR OUT_DIR}
out=${2:?usage: export-all-fixtures.sh BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
pk="$build/cli/perfkit"
[ -x "$pk" ] || { echo "export-all-fixtures: no $pk" >&2; exit 2; }
only=${ONLY:-}
mkdir -p "$out"

# Every capture under tests/data (the nsys exports among them), and any
# shared nsys exports beside the tree.
mapfile -t fixtures < <(find "$root/tests/data" -name '*.sqlite' | sort)
for f in "$root"/../shared/nsys-exports/*.sqlite; do
  [ -f "$f" ] && fixtures+=("$f")
done

# Runs one command, keeping its standard output, error and exit status.
keep() {
  local name=$1; shift
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
}

# The traces of capture f as b.*: whole, narrowed by time, and inside the
# capture's most frequent NVTX range when it has one.
traces() {
  local f=$1 b=$2 range
  keep "$b.chrome" "$pk" report --format=chrome "$f"
  keep "$b.chrome-window" "$pk" report --format=chrome --from=1ms --to=50ms "$f"
  keep "$b.perfetto" "$pk" report --format=perfetto -o "$out/$b.pftrace" "$f"
  keep "$b.perfetto-window" "$pk" report --format=perfetto --from=1ms --to=50ms \
    -o "$out/$b.window.pftrace" "$f"
  range=$(sqlite3 -readonly "$f" "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s
    ON s.id = n.textId WHERE n.eventType = 59 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1" \
    2>/dev/null)
  if [ -n "$range" ]; then
    keep "$b.chrome-range" "$pk" report --format=chrome --range="$range" "$f"
    keep "$b.perfetto-range" "$pk" report --format=perfetto --range="$range" \
      -o "$out/$b.range.pftrace" "$f"
  fi
}

reports=$("$pk" report --list | awk '{print $1}' | paste -sd, -)
for f in "${fixtures[@]}"; do
  # A name unique across folders: tests/data/ddp/two_gpus/x.sqlite -> ddp_two_gpus_x
  b=${f#"$root"/tests/data/}; b=${b%.sqlite}; b=${b//\//_}; b=${b#../shared/}
  traces "$f" "$b"
  [ "$only" = traces ] && continue
  for fmt in text csv json; do
    keep "$b.report.$fmt" "$pk" report --report="$reports" --format="$fmt" "$f"
    keep "$b.diagnose.$fmt" "$pk" diagnose --format="$fmt" "$f"
    keep "$b.roofline.$fmt" "$pk" roofline --format="$fmt" "$f"
  done
  keep "$b.overview" "$pk" report "$f"
  keep "$b.folded-gpu" "$pk" report --format=folded --weight=gpu "$f"
  keep "$b.folded-api" "$pk" report --format=folded --weight=api "$f"
  keep "$b.html" "$pk" report --format=html -o "$out/$b.page.html" "$f"
done

data="$root/tests/data"
# Jobs: the per-rank captures of one run read as one job, by files and by folder.
for d in ddp ddp/two_gpus; do
  n=${d//\//_}
  keep "job.$n.chrome" "$pk" report --format=chrome "$data/$d/ddp2_rank0.sqlite" "$data/$d/ddp2_rank1.sqlite"
  keep "job.$n.perfetto" "$pk" report --format=perfetto -o "$out/job.$n.pftrace" \
    "$data/$d/ddp2_rank0.sqlite" "$data/$d/ddp2_rank1.sqlite"
done
if [ "$only" = traces ]; then
  sed -i "s#$out/##g" "$out"/*.out "$out"/*.err 2>/dev/null
  echo "exported $(ls "$out" | wc -l) files to $out"
  exit 0
fi

# Comparisons: each naive capture against its optimized one, the repeated
# captures as a baseline, and the gate on both.
for w in hash_embedding rollout batched_forces transformer; do
  for fmt in text json html; do
    keep "diff.$w.$fmt" "$pk" diff --format="$fmt" "$data/${w}_naive.sqlite" "$data/${w}_optimized.sqlite"
  done
done
keep baseline.save "$pk" baseline save "$data/hash_embedding_optimized.sqlite" \
  "$data/hash_embedding_optimized_2.sqlite" -o "$out/baseline.json"
for f in hash_embedding_optimized_3 hash_embedding_naive; do
  keep "gate.$f" "$pk" gate --baseline "$out/baseline.json" "$data/$f.sqlite"
done
# Jobs: the per-rank captures of one run read as one job, by files and by folder.
for d in ddp ddp/two_gpus; do
  n=${d//\//_}
  for fmt in text json; do
    keep "job.$n.report.$fmt" "$pk" report --report="$reports" --format="$fmt" "$data/$d/ddp2_rank0.sqlite" "$data/$d/ddp2_rank1.sqlite"
    keep "job.$n.diagnose.$fmt" "$pk" diagnose --format="$fmt" "$data/$d/ddp2_rank0.sqlite" "$data/$d/ddp2_rank1.sqlite"
  done
  keep "job.$n.rank1" "$pk" report --rank=1 "$data/$d/ddp2_straggler.sqlite"
  keep "job.$n.diagnose.rank1" "$pk" diagnose --rank=1 "$data/$d/ddp2_straggler.sqlite"
done
# Paths of this run's own files appear in some outputs; make them relative.
sed -i "s#$out/##g" "$out"/*.out "$out"/*.err 2>/dev/null
echo "exported $(ls "$out" | wc -l) files to $out"
