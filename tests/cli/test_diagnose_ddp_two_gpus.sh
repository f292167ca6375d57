#!/usr/bin/env bash
# The straggler on two GPUs (tests/data/ddp/two_gpus, 2 x H200: one rank a
# GPU): in the run where rank 1 spins 20 ms on the host before each backward
# pass, diagnose names rank 1 the straggler, and the time rank 0 waited for
# it per step agrees with the capture's own NCCL kernel rows
# (tests/tools/ddp_waits.py) and with what the program itself measured: the
# step grew by what rank 0 waits more than in the even run, within 10%. In
# the even run no rank is the straggler. The programs' step times are what
# ddp_train.py printed when the captures were made (step_ms.txt beside them).
set -u
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA/ddp/two_gpus
even=$D/ddp2_even.sqlite
late=$D/ddp2_straggler.sqlite

for run in even late; do
	eval f=\$$run
	run diagnose --format=json "$f"
	expect_status "diagnose $run" 0
	cp "$TMP/out" "$TMP/$run.json"
done

expect_that "late: rank 1 is the straggler" python3 -c '
import json, sys
s = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "straggler"]
assert len(s) == 1 and [x["rank"] for x in s[0]["ranks"]] == [1] and s[0]["share_rank"] == 0, s' \
	"$TMP/late.json"
expect_that "late: rank 0's wait per step as its NCCL kernels' rows show it, within 10%" \
	python3 "$PERFKIT_SOURCE/tests/tools/ddp_waits.py" "$late" "$TMP/late.json" 1
expect_that "even: no straggler" python3 -c '
import json, sys
assert not [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "straggler"]' \
	"$TMP/even.json"

# Rank 0's waiting per step in each run, by the rows (its NCCL kernels
# running longer than rank 1's of the same collective), in the window
# diagnose found for it; against the growth of the step the program timed.
expect_that "the time rank 0 lost per step to the straggler is the step's growth, within 10%" \
	python3 - "$even" "$TMP/even.json" "$late" "$TMP/late.json" "$D/step_ms.txt" <<'PY'
import json, sqlite3, sys

def waited_per_step(capture, diagnosis):
    d = json.load(open(diagnosis))
    db = sqlite3.connect(capture)
    pid = dict(db.execute("SELECT rank, globalPid FROM PERFKIT_PROCESS_INFO WHERE rank IS NOT NULL"))
    def nccl(rank):
        return db.execute("SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
                          " ON s.id = k.demangledName WHERE s.value GLOB 'ncclDevKernel*'"
                          " AND k.globalPid = ? ORDER BY k.start", (pid[rank],)).fetchall()
    w = {r["rank"]: r["window"] for r in d["ranks"]}[0]
    k0, k1 = nccl(0), nccl(1)
    assert len(k0) == len(k1), (len(k0), len(k1))
    waited = sum(max(0, (e0 - a0) - (e1 - a1)) for (a0, e0), (a1, e1) in zip(k0, k1)
                 if w["start_ns"] <= a0 < w["end_ns"])
    return waited / w["iterations"]

steps = {}
for line in open(sys.argv[5]):
    if not line.startswith("#") and line.strip():
        run, _, rank, _, ms = line.split()
        steps[(run, int(rank))] = float(ms) * 1e6
grown = steps[("straggler", 0)] - steps[("even", 0)]
more = waited_per_step(sys.argv[3], sys.argv[4]) - waited_per_step(sys.argv[1], sys.argv[2])
print("rank 0 waits %.3f ms more per step; its step grew %.3f ms" % (more / 1e6, grown / 1e6))
assert grown > 0 and abs(more - grown) <= 0.1 * grown, (more, grown)
PY
finish
