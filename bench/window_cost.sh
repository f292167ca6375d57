#!/usr/bin/env bash
# window_cost.sh - what a launch costs before and after a capture window,
# in one process: bench/gpu/launch_loop's window mode (N empty launches,
# an NVTX range "window" and a cudaProfilerStart/Stop pair around 100
# more, N again) untraced, under `perfkit run --capture-range=RANGE`
# (nvtx:window, or cudaProfilerApi) with each --trace of TRACES (nvtx is
# added to each for nvtx:), and under --start-paused (the injection, no
# window ever opened).
# A cost that a window leaves behind shows as after/before above the
# untraced run's; the ratio within one process is free of the drift
# between runs. ROUNDS interleaved rounds, the order reversed every other
# round; the table holds each arm's medians and the median of its rounds'
# ratios with their range (with 7 rounds or more, the range holds the
# median with at least 98% confidence).
#
#   bench/window_cost.sh [BUILD]
#   ROUNDS (15), N (20000), RANGE (nvtx:window), TRACES ("default kernels
#   api"), PIN=CPUS,
#   EXTRA="NAME=ENV=VALUE ..." more arms: the default capture with one
#   environment variable set
# Raw values go to $OUT/window_cost_raw.tsv.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
PERFKIT=$BUILD/cli/perfkit
LOOP=$BUILD/bench/gpu/launch_loop
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ROUNDS=${ROUNDS:-15} N=${N:-20000} RANGE=${RANGE:-nvtx:window}
W=$(mktemp -d)
OUTDIR=${OUT:-$W}
mkdir -p "$OUTDIR"
RAW=$OUTDIR/window_cost_raw.tsv
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
arms=(untraced paused)
for t in ${TRACES:-default kernels api}; do arms+=("trace:$t"); done
for e in ${EXTRA:-}; do arms+=("env:$e"); done
printf 'round\tarm\tbefore_us\tafter_us\twindow_kernels\n' >"$RAW"

run() { # ROUND ARM
	local arm=$2 out status kernels=-
	rm -f "$W"/cap.sqlite*
	case $arm in
	untraced) out=$("${pin[@]}" "$LOOP" window "$N" 2>"$W/err") ;;
	paused) out=$("$PERFKIT" run -f -o "$W/cap.sqlite" --start-paused -- "${pin[@]}" "$LOOP" window "$N" 2>"$W/err") ;;
	trace:default) out=$("$PERFKIT" run -f -o "$W/cap.sqlite" --capture-range="$RANGE" -- \
		"${pin[@]}" "$LOOP" window "$N" 2>"$W/err") ;;
	trace:*)
		local t=${arm#trace:}
		[[ $RANGE == nvtx:* ]] && t=$t,nvtx
		out=$("$PERFKIT" run -f -o "$W/cap.sqlite" --trace="$t" --capture-range="$RANGE" -- \
			"${pin[@]}" "$LOOP" window "$N" 2>"$W/err") ;;
	env:*)
		local kv=${arm#env:*=}
		out=$(env "$kv" "$PERFKIT" run -f -o "$W/cap.sqlite" --capture-range="$RANGE" -- \
			"${pin[@]}" "$LOOP" window "$N" 2>"$W/err") ;;
	esac
	status=$?
	if [ "$status" != 0 ]; then
		echo "window_cost: round $1 $arm exited $status: $(tail -1 "$W/err")" >&2
		return
	fi
	if [ "$arm" != untraced ] && [ "$arm" != paused ]; then
		# the window's kernels, and how long detaching CUPTI after it took
		kernels=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
k = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
d = db.execute("SELECT value FROM PERFKIT_COUNTERS WHERE name = ?", ("cupti_detach_ns",)).fetchone()
print("%d/%s" % (k, "%.1fms" % (d[0] / 1e6) if d else "-"))' "$W/cap.sqlite" 2>/dev/null || echo none)
	fi
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$arm" \
		"$(awk '$1 == "before_us" { print $2 }' <<<"$out")" \
		"$(awk '$1 == "after_us" { print $2 }' <<<"$out")" "$kernels" >>"$RAW"
}

for ((r = 1; r <= ROUNDS; r++)); do
	order=("${arms[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#arms[@]} - 1; i >= 0; i--)); do order+=("${arms[$i]}"); done
	fi
	for a in "${order[@]}"; do run "$r" "$a"; done
done
python3 - "$RAW" <<'PY'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by = collections.defaultdict(dict)
for r, arm, b, a, k in rows:
    if b and a:
        by[arm][int(r)] = (float(b), float(a), k)
u = by.get("untraced", {})
def med(v):
    return statistics.median(v) if v else float("nan")
def rng(v):
    return "%.3f (%.3f-%.3f)" % (med(v), min(v), max(v)) if v else "-"
print("%-22s %6s %10s %10s %22s %22s %s" % ("arm", "rounds", "before_us", "after_us",
      "after/before", "before/untraced", "kernels in window/detach"))
for arm, d in by.items():
    ab = [a / b for b, a, _ in d.values()]
    bu = [d[r][0] / u[r][0] for r in d if r in u]
    ks = sorted({k for _, _, k in d.values()})
    print("%-22s %6d %10.3f %10.3f %22s %22s %s" % (arm, len(d), med([x[0] for x in d.values()]),
          med([x[1] for x in d.values()]), rng(ab), rng(bu), ",".join(ks)))
PY
