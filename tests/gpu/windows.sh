#!/usr/bin/env bash
# windows.sh - capture windows on the GPU: NVTX ranges (default domain and
# a named one), cudaProfilerStart/Stop (CUDA and PyTorch), --delay and
# --duration, --start-paused with perfkit start and stop, and perfkit stop
# on a run that asked for no windows. Each capture is read by
# window_check.py (which steps its kernels came from: window_steps' step i
# runs on i blocks) and compared with what the case should hold. Prints a
# PASS/FAIL table last; logs and the captures go to $OUT.
#
#   tests/gpu/windows.sh [BUILD]   (GPU machine, repo root)
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
STEPS=$BUILD/tests/gpu/window_steps
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
LOG=$OUT/windows.log
mkdir -p "$OUT/windows"
# keep only small captures for the device tool: the rest is removed at the end
: >"$LOG"
RESULTS=()

# check NAME PATTERN...: the capture's summary line holds every pattern
check() {
	local name=$1 line ok=PASS
	shift
	line=$(python3 "$SRC/window_check.py" "$OUT/windows/$name.sqlite" 2>>"$LOG")
	echo "$name: $line" >>"$LOG"
	for p in "$@"; do
		[[ " $line " == *" $p "* ]] || { ok=FAIL; echo "$name: missing '$p'" >>"$LOG"; }
	done
	RESULTS+=("$(printf '%-18s %s  %s' "$name" "$ok" "$line")")
}

cap() { # cap NAME OPTIONS... -- PROGRAM...
	local name=$1
	shift
	echo "== $name: $*" >>"$LOG"
	timeout 120 "$PERFKIT" run -f -o "$OUT/windows/$name.sqlite" "$@" >>"$LOG" 2>&1
	echo "exit $?" >>"$LOG"
}

cap nvtx --capture-range=nvtx:step,skip=5,count=3 -- "$STEPS" nvtx 20
check nvtx windows=1 opened=nvtx:step_#6 closed=nvtx:step_#8_end steps=6,7,8 nvtx_steps=3 outside=0

cap domain --capture-range=nvtx:step@app,skip=2,count=2 -- "$STEPS" domain 10
check domain windows=1 steps=3,4 outside=0

cap profiler --capture-range=cudaProfilerApi -- "$STEPS" profiler 20 3 6 10 12
check profiler windows=2 opened=cudaProfilerStart\|cudaProfilerStart \
	closed=cudaProfilerStop\|cudaProfilerStop steps=3,4,5,6,10,11,12 outside=0

cap timed --delay=1s --duration=1s -- "$STEPS" run 3
check timed windows=1 opened=delay closed=duration outside=0

# background NAME OPTIONS... -- ACTION...: a 4 s run of window_steps with
# OPTIONS, and after 1.5 s and 2.5 s `perfkit ACTION` on it, each ACTION
# naming its target: file (the capture) or pid (perfkit run's)
background() {
	local name=$1 opts=() a1 a2 t1 t2 run
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	a1=$2 t1=$3 a2=$4 t2=$5
	echo "== $name" >>"$LOG"
	"$PERFKIT" run -f -o "$OUT/windows/$name.sqlite" "${opts[@]}" -- "$STEPS" run 4 >>"$LOG" 2>&1 &
	run=$!
	sleep 1.5
	"$PERFKIT" "$a1" "$([ "$t1" = file ] && echo "$OUT/windows/$name.sqlite" || echo $run)" >>"$LOG" 2>&1
	sleep 1
	"$PERFKIT" "$a2" "$([ "$t2" = file ] && echo "$OUT/windows/$name.sqlite" || echo $run)" >>"$LOG" 2>&1
	wait "$run"
	echo "exit $?" >>"$LOG"
}

background paused --start-paused -- start file stop pid
check paused windows=1 opened=perfkit_start closed=perfkit_stop outside=0

# perfkit stop and start on a run that asked for no windows
background stopped -- stop pid start pid
check stopped windows=2 opened=start\|perfkit_start closed=perfkit_stop\|exit outside=0

cap torch_profiler --capture-range=cudaProfilerApi -- python3 "$SRC/window_torch.py" --steps 30 --profiler 11 20
check torch_profiler windows=1 opened=cudaProfilerStart closed=cudaProfilerStop nvtx_steps=10 outside=0

cap torch_nvtx --capture-range=nvtx:step,skip=10,count=5 -- python3 "$SRC/window_torch.py" --steps 30
check torch_nvtx windows=1 nvtx_steps=5 outside=0

# a long run's 20 steps: exactly those, at 26 kernels a step
cap torch_long --capture-range=nvtx:step,skip=1000,count=20 -- python3 "$SRC/window_torch.py" --steps 1300
check torch_long windows=1 opened=nvtx:step_#1001 closed=nvtx:step_#1020_end kernels=520 nvtx_steps=20 outside=0

cap never --capture-range=nvtx:nope -- "$STEPS" nvtx 5
check never windows=0 kernels=0
grep -q "no capture window opened" "$LOG" && RESULTS+=("never_said         PASS") ||
	RESULTS+=("never_said         FAIL  (no 'no capture window opened' line)")

# every report reads a windowed capture
for f in text csv json chrome perfetto folded html; do
	"$PERFKIT" report --format=$f "$OUT/windows/torch_profiler.sqlite" >"$OUT/windows/report.$f" \
		2>>"$LOG" || RESULTS+=("report_$f          FAIL")
done
"$PERFKIT" diagnose "$OUT/windows/torch_profiler.sqlite" >"$OUT/windows/diagnose.txt" 2>>"$LOG" ||
	RESULTS+=("diagnose           FAIL")
# the device tool brings back few files: the captures go in one archive
tar -C "$OUT/windows" -cJf "$OUT/windows_captures.tar.xz" $(cd "$OUT/windows" && ls *.sqlite) 2>>"$LOG"
rm -f "$OUT"/windows/report.* "$OUT"/windows/*.sqlite
printf '%s\n' "${RESULTS[@]}"
