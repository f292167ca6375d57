#!/usr/bin/env bash
# window_long.sh - a 10-minute PyTorch run captured with
# --capture-range=nvtx:step,skip=1000,count=20: its capture must hold
# exactly steps 1001 to 1020 (26 kernels a step, nothing outside the
# window), and the steps outside the window must run as fast as the same
# program's untraced steps. The traced run sits between two untraced runs
# of SECONDS_UNTRACED each, so that drift of the machine shows.
# window_torch.py prints the mean step time of every block of BLOCK
# steps; the table compares the blocks of the untraced runs with the
# traced run's blocks that hold no window step.
#
#   tests/gpu/window_long.sh [BUILD]          all of it, in the foreground
#   tests/gpu/window_long.sh start [BUILD]    in its own session, for a
#                                             machine that ends a command
#                                             sooner than the run (setsid)
#   tests/gpu/window_long.sh finish           wait for it, then the table
# SECONDS_TRACED (600), SECONDS_UNTRACED (60), BLOCK (100 steps: nine
# blocks before the window, after the first's warm-up);
# the run's files stay in LONG_DIR (/tmp/perfkit_window_long), the
# capture's summary and the table are copied to $OUT.
set -u
SRC=$(cd "$(dirname "$0")" && pwd)
LONG_DIR=${LONG_DIR:-/tmp/perfkit_window_long}
MODE=all
case ${1:-} in start | finish | run) MODE=$1; shift ;; esac

run_all() {
	local build perfkit
	build=$(cd "${1:-.gpu/collector}" && pwd)
	perfkit=$build/cli/perfkit
	export LD_LIBRARY_PATH=$build/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export PYTHONUNBUFFERED=1
	local steps=(python3 "$SRC/window_torch.py" --block "${BLOCK:-100}")
	"${steps[@]}" --seconds "${SECONDS_UNTRACED:-60}" >"$LONG_DIR/before.txt" 2>"$LONG_DIR/before.err"
	"$perfkit" run -f -o "$LONG_DIR/long.sqlite" --capture-range=nvtx:step,skip=1000,count=20 -- \
		"${steps[@]}" --seconds "${SECONDS_TRACED:-600}" >"$LONG_DIR/traced.txt" 2>"$LONG_DIR/traced.err"
	echo "$?" >"$LONG_DIR/traced.status"
	"${steps[@]}" --seconds "${SECONDS_UNTRACED:-60}" >"$LONG_DIR/after.txt" 2>"$LONG_DIR/after.err"
	touch "$LONG_DIR/done"
}

finish() {
	local out=${OUT:-$LONG_DIR} line ok=PASS
	mkdir -p "$out"
	while [ ! -e "$LONG_DIR/done" ]; do sleep 5; done
	line=$(python3 "$SRC/window_check.py" "$LONG_DIR/long.sqlite")
	for p in windows=1 opened=nvtx:step_#1001 closed=nvtx:step_#1020_end kernels=520 nvtx_steps=20 outside=0; do
		[[ " $line " == *" $p "* ]] || { ok=FAIL; echo "window_long: the capture lacks '$p'" >&2; }
	done
	# one file: the device tool returns few
	tar -C "$LONG_DIR" -czf "$out/window_long_logs.tar.gz" --exclude='long.sqlite*' .
	{
		echo "capture: $line"
		echo "perfkit run: status $(cat "$LONG_DIR/traced.status"); $(grep -i "window" "$LONG_DIR/traced.err" | tail -2 | tr '\n' ' ')"
		python3 - "$LONG_DIR" "$SRC" <<'PY'
import os, statistics, sys
sys.path.insert(0, sys.argv[2])
from window_blocks import blocks, ci, ms, split
d = sys.argv[1]
untraced = ms(blocks(os.path.join(d, "before.txt"))[1:] + blocks(os.path.join(d, "after.txt"))[1:])
traced = blocks(os.path.join(d, "traced.txt"))
# before and after the window apart: a cost that began with the window's
# opening and outlived its closing would show only after it
before, window, after = split(traced, 1001, 1020)
outside = ms(before + after)
steps = traced[-1][0] + traced[-1][1] - 1 if traced else 0
print("%-34s %7s %10s %22s" % ("steps", "blocks", "ms/step", "95% interval of median"))
for name, v in (("untraced, before and after", untraced), ("traced, outside the window", outside),
                ("traced, before the window", ms(before)), ("traced, after the window", ms(after))):
    if not v:
        continue
    m, lo, hi = ci(v)
    print("%-34s %7d %10.4f %10.4f-%.4f" % (name, len(v), m, lo, hi))
for b in window:
    print("%-34s %7d %10.4f" % ("traced, block of steps %d-%d" % (b[0], b[0] + b[1] - 1), 1, b[2]))
mu, mo = statistics.median(untraced), statistics.median(outside)
print("traced run: %d steps; outside its window %+.2f%% a step against untraced" % (steps, 100 * (mo - mu) / mu))
PY
		echo "window_long: $ok"
	} | tee "$out/window_long.txt"
	[ "$ok" = PASS ]
}

case $MODE in
start)
	rm -rf "$LONG_DIR" && mkdir -p "$LONG_DIR"
	setsid "$0" run "$@" </dev/null >"$LONG_DIR/run.log" 2>&1 &
	echo "window_long: started in $LONG_DIR"
	;;
run) run_all "$@" ;;
finish) finish ;;
all)
	rm -rf "$LONG_DIR" && mkdir -p "$LONG_DIR"
	run_all "$@"
	finish
	;;
esac
