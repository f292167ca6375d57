#!/usr/bin/env bash
# window_rounds.sh - does a capture window cost anything outside itself?
# ROUNDS interleaved rounds of the PyTorch loop window_torch.py, each
# SECONDS long: an untraced run, and runs under
# --capture-range=nvtx:step,skip=SKIP,count=20 with each --trace of TRACES
# (the default's, then e.g. kernels alone: which kinds leave a cost
# behind). Every run prints its mean step time per block of BLOCK steps;
# each round pairs the windowed run's blocks before its window and after
# it with the untraced run of the same round, and after with before in
# the same process, which no drift of the machine between runs can move.
# The order within a round alternates, so a machine that drifts within a
# round favours no run.
#
#   tests/gpu/window_rounds.sh [BUILD]
#   ROUNDS (7), SECONDS_RUN (12), SKIP (4000), BLOCK (100), TRACES ("default"),
#   PIN=CPUS (taskset -c CPUS)
# Logs go to $OUT/window_rounds_logs.tar.gz, the table to $OUT/window_rounds.txt.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
PERFKIT=$BUILD/cli/perfkit
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
ROUNDS=${ROUNDS:-7} SECS=${SECONDS_RUN:-12} SKIP=${SKIP:-4000} BLOCK=${BLOCK:-100}
TRACES=${TRACES:-default}
W=$(mktemp -d)
OUTDIR=${OUT:-$W}
mkdir -p "$OUTDIR"
pin=()
[ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
steps=("${pin[@]}" python3 "$SRC/window_torch.py" --block "$BLOCK" --seconds "$SECS")
ok=PASS

run() { # ROUND ARM
	local f=$W/r$1_$2
	if [ "$2" = untraced ]; then
		"${steps[@]}" >"$f.txt" 2>"$f.err"
		return
	fi
	local trace=()
	[ "$2" != default ] && trace=(--trace="$2")
	rm -f "$W"/cap.sqlite*
	if ! "$PERFKIT" run -f -o "$W/cap.sqlite" "${trace[@]}" \
		--capture-range=nvtx:step,skip="$SKIP",count=20 -- "${steps[@]}" >"$f.txt" 2>"$f.err"; then
		ok=FAIL
		echo "window_rounds: round $1 $2: perfkit run failed: $(tail -1 "$f.err")" >&2
		return
	fi
	local line
	line=$(python3 "$SRC/window_check.py" "$W/cap.sqlite")
	echo "$line" >"$f.check"
	for p in windows=1 nvtx_steps=20 outside=0; do
		[[ " $line " == *" $p "* ]] || { ok=FAIL; echo "window_rounds: round $1 $2: the capture lacks '$p'" >&2; }
	done
}

arms=(untraced $TRACES)
for ((r = 1; r <= ROUNDS; r++)); do
	order=("${arms[@]}")
	if ((r % 2 == 0)); then # reversed
		order=()
		for ((i = ${#arms[@]} - 1; i >= 0; i--)); do order+=("${arms[$i]}"); done
	fi
	for a in "${order[@]}"; do run "$r" "$a"; done
	echo "window_rounds: round $r done" >&2
done
tar -C "$W" -czf "$OUTDIR/window_rounds_logs.tar.gz" --exclude='cap.sqlite*' .
{
	python3 - "$W" "$SRC" "$ROUNDS" "$SKIP" "$TRACES" <<'PY'
import os, statistics, sys
sys.path.insert(0, sys.argv[2])
from window_blocks import blocks, ci, ms, split
d, rounds, skip, traces = sys.argv[1], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
def med(v):
    return statistics.median(v) if v else float("nan")
print("%-10s %-26s %8s %24s" % ("--trace", "against", "rounds", "median ratio (range)"))
for t in traces:
    rows = {"before / untraced": [], "after / untraced": [], "after / before, same run": []}
    pooled = {"untraced": [], "before": [], "after": []}
    for r in range(1, rounds + 1):
        u = ms(blocks(os.path.join(d, "r%d_untraced.txt" % r))[1:])
        before, _, after = split(blocks(os.path.join(d, "r%d_%s.txt" % (r, t))), skip + 1, skip + 20)
        b, a = ms(before), ms(after)
        if not (u and b and a):
            print("round %d %s: too few blocks (untraced %d, before %d, after %d)" % (r, t, len(u), len(b), len(a)))
            continue
        rows["before / untraced"].append(med(b) / med(u))
        rows["after / untraced"].append(med(a) / med(u))
        rows["after / before, same run"].append(med(a) / med(b))
        pooled["untraced"] += u; pooled["before"] += b; pooled["after"] += a
    for k, v in rows.items():
        if v:
            print("%-10s %-26s %8d %10.4f (%.4f-%.4f)" % (t, k, len(v), med(v), min(v), max(v)))
    for k, v in pooled.items():
        if v:
            m, lo, hi = ci(v)
            print("%-10s %-26s %8s %10.4f ms (%.4f-%.4f), %d blocks" % (t, "pooled " + k, "", m, lo, hi, len(v)))
PY
	echo "window_rounds: $ok"
} | tee "$OUTDIR/window_rounds.txt"
[ "$ok" = PASS ]
