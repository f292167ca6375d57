#!/usr/bin/env bash
# scale_exports.sh - issue 35's goals for the whole-capture exports, in one
# table: the Chrome and Perfetto traces and the HTML report of a capture of
# about 10 million kernels and as many API calls (a real capture's rows
# repeated with their times and correlation ids moved on: scale_captures.sh's
# multiply), and the folded stacks and the HTML report against the Chrome
# trace of real captures. Each command's wall time, CPU time (user + system:
# the figure to compare on a shared machine) and peak resident set; then,
# as the floor the exports cannot beat, SQLite's own read rate: one bare
# SELECT of the same rows, and the sort of each table by start that the
# merge needs. bench/html_against_chrome.sh times the HTML report against
# the Chrome trace on every fixture over 1 MB, in interleaved rounds.
#
#   bench/scale_exports.sh [BUILD]     (default build; bench/scale.sh calls it)
#   EXPORTS_MULT=12500   times gpu_work (800 kernels, 840 runtime and 919
#     driver calls) is repeated: 10M kernels, 22M API calls, 1.8 GB of disk
#     (made once, 70 s here, and kept in EXPORTS_DIR for the next run)
#   EXPORTS_DIR=/tmp/perfkit-scale-exports  where the big capture and the
#     exports (8.5 GB of Chrome JSON at 10M) are written
#   EXPORTS_CAPTURES="A B"  the captures of the folded/HTML against Chrome
#     rows (default tests/data/ddp/ddp2_even, transformer_naive and
#     python/py_hf_gpt2_train, whose nn.Module ranges the diagnosis reads)
#   EXPORTS_ROUNDS=1     rounds of each; the table shows the median
#   EXPORTS_BIG_HTML=0   leave out the HTML report of the big capture (at
#     10M, about 8 minutes of CPU here, 2026-11-26)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
PERFKIT=$BUILD/cli/perfkit
DATA=$ROOT/tests/data
MULT=${EXPORTS_MULT:-12500}
DIR=${EXPORTS_DIR:-/tmp/perfkit-scale-exports}
ROUNDS=${EXPORTS_ROUNDS:-1}
BIG_HTML=${EXPORTS_BIG_HTML:-1}
read -r -a CAPTURES <<<"${EXPORTS_CAPTURES:-$DATA/ddp/ddp2_even.sqlite $DATA/transformer_naive.sqlite $DATA/python/py_hf_gpt2_train.sqlite}"
[ -x "$PERFKIT" ] || { echo "scale_exports: no $PERFKIT" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "scale_exports: needs the sqlite3 shell" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scale_exports: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
mkdir -p "$DIR"
W=$(mktemp -d "$DIR/run.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$ROOT/tests/tools/job_captures.sh"
. "$ROOT/bench/scale_captures.sh"

BIG=$(export_capture "$DIR" "$MULT")

declare -A T C M # wall s, CPU s, peak MiB by "name"

# measure NAME CMD...: ROUNDS runs, the median wall time and its CPU time
measure() {
	local name=$1 r walls=()
	shift
	for ((r = 0; r < ROUNDS; r++)); do
		rm -f "$W"/out.*
		if ! /usr/bin/time -f "%e %U %S %M" -o "$W/time" "$@" >"$W/out.stdout" 2>"$W/err"; then
			echo "scale_exports: $name failed: $(head -c 300 "$W/err")" >&2
			T["$name"]=failed C["$name"]=- M["$name"]=-
			return 0
		fi
		walls+=("$(awk '{ printf "%s %.2f %d", $1, $2 + $3, $4 / 1024 }' "$W/time")")
	done
	read -r "T[$name]" "C[$name]" "M[$name]" < <(printf '%s\n' "${walls[@]}" | sort -n |
		sed -n "$(((ROUNDS + 1) / 2))p")
}

# floor NAME SQL: the time of the sqlite3 shell running SQL on the big capture
floor() {
	local t0 t1
	t0=$(date +%s.%N)
	sqlite3 "$BIG" "$2" >/dev/null
	t1=$(date +%s.%N)
	T["$1"]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') C["$1"]=- M["$1"]=-
}

kernels=$(sqlite3 "$BIG" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
calls=$(sqlite3 "$BIG" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) +
	(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER)")
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); perfkit: $PERFKIT"
echo "capture: gpu_work x$MULT: $kernels kernels, $calls API calls, $(du -mL "$BIG" | cut -f1) MiB"

measure chrome "$PERFKIT" report -f --format=chrome -o "$W/out.json" "$BIG"
chrome_mb=$(du -m "$W/out.json" 2>/dev/null | cut -f1 || echo -)
measure perfetto "$PERFKIT" report -f --format=perfetto -o "$W/out.pftrace" "$BIG"
perfetto_mb=$(du -m "$W/out.pftrace" 2>/dev/null | cut -f1 || echo -)
if [ "$BIG_HTML" = 1 ]; then
	measure html "$PERFKIT" report -f --format=html -o "$W/out.html" "$BIG"
else
	T[html]="not run" C[html]=- M[html]=-
fi
rm -f "$W"/out.*
floor "bare SELECT of every kernel and API row" \
	"SELECT total(start + end + correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL;
	 SELECT total(start + end + correlationId + globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME;
	 SELECT total(start + end + correlationId + globalTid) FROM CUPTI_ACTIVITY_KIND_DRIVER;"
floor "the same rows sorted by start" \
	"SELECT total(x) FROM (SELECT start + end + correlationId AS x FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start, end DESC);
	 SELECT total(x) FROM (SELECT start + end + correlationId AS x FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start, end DESC);
	 SELECT total(x) FROM (SELECT start + end + correlationId AS x FROM CUPTI_ACTIVITY_KIND_DRIVER ORDER BY start, end DESC);"
for f in "${CAPTURES[@]}"; do
	b=$(basename "$f" .sqlite)
	measure "chrome $b" "$PERFKIT" report -f --format=chrome -o "$W/out.json" "$f"
	measure "folded $b" "$PERFKIT" report --format=folded "$f"
	measure "html $b" "$PERFKIT" report -f --format=html -o "$W/out.html" "$f"
done

row() { # NAME GOAL
	printf '| %s | %s | %s | %s | %s |\n' "$1" "${T[$1]}" "${C[$1]}" "${M[$1]}" "$2"
}
ratio() { # A B GOAL: A's time against B's, wall and CPU
	awk -v n="$1 against $2" -v a="${T[$1]}" -v b="${T[$2]}" -v ca="${C[$1]}" -v cb="${C[$2]}" -v g="$3" 'BEGIN {
		printf "| %s | %.1fx | %.1fx | - | %s |\n", n, a / (b > 0.01 ? b : 0.01), ca / (cb > 0.01 ? cb : 0.01), g }'
}
echo
echo "Exports at scale (issue 35; median of $ROUNDS)"
echo "| export | wall s | CPU s | peak MiB | goal |"
echo "|---|---|---|---|---|"
row chrome "at most 40 s ($chrome_mb MiB written)"
row perfetto "at most 40 s and at most the Chrome trace's ($perfetto_mb MiB written)"
ratio perfetto chrome "at most 1x"
row html "at most 60 s"
row "bare SELECT of every kernel and API row" "SQLite's read floor (sqlite3 shell)"
row "the same rows sorted by start" "the merge's sort floor (sqlite3 shell)"
for f in "${CAPTURES[@]}"; do
	b=$(basename "$f" .sqlite)
	row "chrome $b" "-"
	ratio "folded $b" "chrome $b" "at most 2x"
	ratio "html $b" "chrome $b" "at most 2x"
done
