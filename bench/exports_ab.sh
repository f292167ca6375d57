#!/usr/bin/env bash
# exports_ab.sh - the Chrome and Perfetto traces of two builds on the same
# large captures, issue 35's measure of a change to the exports: gpu_work
# made 1,250 and 12,500 times as long (1M and 10M kernels, 2.2M and 22M API
# calls; scale_captures.sh's export_capture, kept in EXPORTS_DIR), each
# export run by both builds in interleaved rounds (A B, then B A, ...), the
# CPU time (user + system, the figure that holds on a shared machine) of
# each run, each build's median of it and of the wall time (issue 35's
# goals are wall times on two cores); and whether the two builds wrote the
# same bytes.
#
#   bench/exports_ab.sh BUILD_BEFORE BUILD_AFTER
#   AB_MULTS="1250 12500"  the captures' multiples ("" for none)
#   AB_CAPTURES="A.sqlite B.sqlite"  real captures measured as they are, after
#     the multiples (e.g. tests/data/ddp/ddp2_even.sqlite)
#   AB_ROUNDS=3            rounds of each export
#   AB_FORMATS="chrome perfetto"  (also folded, html)
#   AB_PARALLEL=1          run A and B of a round at once (one core each)
#   EXPORTS_DIR=/tmp/perfkit-scale-exports  where captures and traces go
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=$(cd "${1:?usage: exports_ab.sh BUILD_BEFORE BUILD_AFTER}" && pwd)/cli/perfkit
B=$(cd "${2:?usage: exports_ab.sh BUILD_BEFORE BUILD_AFTER}" && pwd)/cli/perfkit
read -r -a MULTS <<<"${AB_MULTS-1250 12500}"
read -r -a FILES <<<"${AB_CAPTURES:-}"
read -r -a FORMATS <<<"${AB_FORMATS:-chrome perfetto}"
ROUNDS=${AB_ROUNDS:-3}
PARALLEL=${AB_PARALLEL:-0}
DIR=${EXPORTS_DIR:-/tmp/perfkit-scale-exports}
for p in "$A" "$B"; do
	[ -x "$p" ] || { echo "exports_ab: no $p" >&2; exit 2; }
done
command -v sqlite3 >/dev/null || { echo "exports_ab: needs the sqlite3 shell" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "exports_ab: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
mkdir -p "$DIR"
W=$(mktemp -d "$DIR/ab.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$ROOT/tests/tools/job_captures.sh"
. "$ROOT/bench/scale_captures.sh"

# run WHICH FMT CAPTURE: one export, its CPU seconds appended to $W/WHICH.FMT.MULT
run() {
	local which=$1 fmt=$2 capture=$3 bin out
	bin=$([ "$which" = A ] && echo "$A" || echo "$B")
	out=$W/$which.$fmt
	/usr/bin/time -f "%U %S %e" -o "$W/time.$which" "$bin" report -f --format="$fmt" -o "$out" \
		"$capture" >/dev/null 2>"$W/err.$which" ||
		{ echo "exports_ab: $which $fmt failed: $(head -c 300 "$W/err.$which")" >&2; exit 1; }
	awk '{ printf "%.2f\n", $1 + $2 }' "$W/time.$which" >>"$W/$which.$fmt.$key"
	awk '{ printf "%.2f\n", $3 }' "$W/time.$which" >>"$W/$which.$fmt.$key.wall"
}

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# "median (min-max)" of a file of numbers
spread() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "A: $A"
echo "B: $B"
rows=()
captures=() labels=()
for mult in "${MULTS[@]}"; do
	captures+=("$(export_capture "$DIR" "$mult")")
	labels+=("gpu_work x$mult")
done
for f in "${FILES[@]}"; do
	[ -f "$f" ] || { echo "exports_ab: no capture $f" >&2; exit 2; }
	captures+=("$f")
	labels+=("$(basename "$f" .sqlite)")
done
for i in "${!captures[@]}"; do
	capture=${captures[$i]} key=$i
	for fmt in "${FORMATS[@]}"; do
		for ((r = 0; r < ROUNDS; r++)); do
			order="A B"
			[ $((r % 2)) = 1 ] && order="B A"
			if [ "$PARALLEL" = 1 ]; then
				for w in $order; do run "$w" "$fmt" "$capture" & done
				wait
			else
				for w in $order; do run "$w" "$fmt" "$capture"; done
			fi
		done
		same=$(cmp -s "$W/A.$fmt" "$W/B.$fmt" && echo yes || echo NO)
		rm -f "$W/A.$fmt" "$W/B.$fmt"
		rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "${labels[$i]}" "$fmt" \
			"$(paste -sd' ' "$W/A.$fmt.$key")" "$(paste -sd' ' "$W/B.$fmt.$key")" \
			"$(awk -v a="$(median "$W/A.$fmt.$key")" -v b="$(median "$W/B.$fmt.$key")" \
				'BEGIN { printf "%.2f -> %.2f (%.2fx)", a, b, a / b }')" \
			"$(awk -v a="$(median "$W/A.$fmt.$key.wall")" -v b="$(median "$W/B.$fmt.$key.wall")" \
				-v sa="$(spread "$W/A.$fmt.$key.wall")" -v sb="$(spread "$W/B.$fmt.$key.wall")" \
				'BEGIN { printf "%s -> %s (%.2fx)", sa, sb, a / b }')" "$same")")
	done
done
echo
echo "CPU s (user + sys) per run, $ROUNDS interleaved rounds; median A -> median B, of the CPU"
echo "time and of the wall time (its range in brackets; which a second thread shortens;"
echo "meaningless with AB_PARALLEL=1)"
echo "| capture | export | A runs (CPU) | B runs (CPU) | CPU median | wall median (range) | same bytes |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
