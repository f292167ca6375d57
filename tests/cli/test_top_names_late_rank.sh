#!/usr/bin/env bash
# test_top_names_late_rank.sh - `perfkit top` on a finished job (here
# replayed, as `top --replay` lets a test drive it) names the rank the
# others wait for and what they wait per step, as `perfkit diagnose`'s
# straggler finding has it, beside the per-GPU busy figures: before, top
# showed each GPU busy and nothing about which rank held the others up.
# The jobs are the planted-straggler DDP captures of tests/data/ddp (rank
# 1 spins 20 ms on the host before each backward pass), on one GPU shared
# by both ranks (the line goes in the rates' title, there being no GPU
# panel) and on two GPUs (in the GPU panel's title). The late rank and
# its wait are computed from the capture's NCCL kernels
# (tests/tools/ddp_waits.py: the time one rank's kernel runs longer than
# the other's of the same collective, per step of its window); the even
# run of the same job and a capture of one process name no late rank.
. "$(dirname "$0")/cli_lib.sh"

command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
. "$(dirname "$0")/tmux_lib.sh"


# late_from_rows CAPTURE DIAGNOSIS.json: "RANK WAIT_NS", the rank the other
# waited for and that wait per step of the other's window, by the rows.
late_from_rows() {
	PYTHONPATH="$PERFKIT_SOURCE/tests/tools" python3 - "$1" "$2" <<'PY'
import sys
from ddp_waits import waited_per_step
capture, diagnosis = sys.argv[1], sys.argv[2]
w0 = waited_per_step(capture, diagnosis, 0, 1)  # rank 0 waiting for rank 1
w1 = waited_per_step(capture, diagnosis, 1, 0)
print("1 %d" % w0 if w0 > w1 else "0 %d" % w1)
PY
}

# shown_wait: the wait the screen names for rank $1, in ns ("" if none).
shown_wait() {
	sed -n "s/.*rank $1 is late: the others wait \([0-9.]*\) *\([mun]*s\) per step for it.*/\1 \2/p" \
		"$TMP/screen" | head -1 | awk '{ f = $2 == "s" ? 1e9 : $2 == "ms" ? 1e6 : $2 == "us" ? 1e3 : 1;
		printf "%d\n", $1 * f }'
}

for job in ddp/ddp2_straggler ddp/two_gpus/ddp2_straggler; do
	cap="$PERFKIT_TEST_DATA/$job.sqlite"
	"$PERFKIT" diagnose --format=json "$cap" >"$TMP/diag.json" 2>"$TMP/err" ||
		{ fail "$job: diagnose"; continue; }
	read -r late want < <(late_from_rows "$cap" "$TMP/diag.json")
	replay_top "$cap"
	wait_for "$job: replay runs to the end" "replay finished" || continue
	wait_for "$job: top names rank $late as late" "rank $late is late: the others wait" || continue
	got=$(shown_wait "$late")
	if [ -n "$got" ] && python3 -c 'import sys; g, w = map(float, sys.argv[1:]); sys.exit(not (w > 0 and abs(g - w) <= 0.1 * w))' "$got" "$want"; then
		pass "$job: the wait shown ($got ns) is the rows' ($want ns) within 10%"
	else
		fail "$job: the wait shown ('$got' ns) is the rows' ($want ns) within 10%"
		sed 's/^/    | /' "$TMP/screen" >&2
	fi
	if [ "$job" = ddp/two_gpus/ddp2_straggler ]; then
		expect_that "$job: beside the per-GPU busy figures" grep -qE "GPUs \(2\) \| rank $late is late" "$TMP/screen"
	fi
	keys q
done

for cap in "$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_even.sqlite" "$PERFKIT_TEST_DATA/gpu_work.sqlite"; do
	replay_top "$cap"
	wait_for "$(basename "$cap"): replay runs to the end" "replay finished" || continue
	# the judgement comes with the first refresh, before the end is shown
	if lacks "is late"; then pass "$(basename "$cap"): no late rank"
	else fail "$(basename "$cap"): no late rank"; sed 's/^/    | /' "$TMP/screen" >&2; fi
	keys q
done

finish
