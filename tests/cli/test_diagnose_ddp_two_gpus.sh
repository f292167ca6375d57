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
	run report --report=rank_sum --format=json "$f"
	cp "$TMP/out" "$TMP/${run}_ranks.json"
done

expect_that "late: rank 1 is the straggler; rank 0's time lost is a share of rank 0's window" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [f for f in d["findings"] if f["rule"] == "straggler"]
assert len(s) == 1 and [x["rank"] for x in s[0]["ranks"]] == [1] and s[0]["share_rank"] == 0, s
w = {r["rank"]: r["window"] for r in d["ranks"]}[0]
share = s[0]["time_ns"] / (w["end_ns"] - w["start_ns"])
assert abs(s[0]["share"] - share) < 1e-5 and abs(s[0]["ranks"][0]["share"] - share) < 1e-5, (s[0], share)' \
	"$TMP/late.json"
expect_that "late: rank 0's wait per step as its NCCL kernels' rows show it, within 10%" \
	python3 "$PERFKIT_SOURCE/tests/tools/ddp_waits.py" "$late" "$TMP/late.json" 1
expect_that "even: no straggler" python3 -c '
import json, sys
assert not [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "straggler"]' \
	"$TMP/even.json"

# Exposed communication is split into the waiting for later ranks (the
# straggler's time) and the transfers, and the finding's time is the
# transfers'. Late run: rank 0's exposed communication (rank_sum) less what
# it waited for rank 1 (the straggler finding's time) is at most the
# transfers, and at least that plus the waiting that had compute beside it
# (at most rank 0's hidden communication); the change says to look at rank
# 1 first, and the advice about the transfers comes after.
expect_that "late: the exposed communication is the transfers; the waiting is rank 1's doing" python3 - \
	"$TMP/late.json" "$TMP/late_ranks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["Rank"]: r for r in json.load(open(sys.argv[2]))["reports"][0]["rows"]}
e = [f for f in d["findings"] if f["rule"] == "exposed_communication"][0]
s = [f for f in d["findings"] if f["rule"] == "straggler"][0]
assert [x["rank"] for x in e["ranks"]] == [0] and e["share_rank"] == 0, e["ranks"]
exposed, hidden, waited = rows[0]["Exposed Comm (ns)"], rows[0]["Hidden Comm (ns)"], s["time_ns"]
assert max(0, exposed - waited) - 1000 <= e["time_ns"] <= exposed - waited + hidden + 1000, (e["time_ns"], exposed, waited, hidden)
assert e["severity"] in ("info", "low"), e["severity"]
c = e["change"]
assert c.startswith("Most of the exposed communication is waiting for later ranks at the collectives "
                    "(the most, rank 0's for rank 1)"), c
see = c[c.index("shorten what rank 1 does before them (see "):c.index(").")]
assert "straggler" in see and "cpu_bound" in see, see
rest = c.index("The rest on rank 0")
assert "compress" not in c[:rest] and "overlap" not in c[:rest], c
PY

# Even run: no straggler, yet rank 0 waits for rank 1 at the collectives;
# the exposed communication says how long per step, as the NCCL kernels'
# rows show it (rank 0's kernel running longer than rank 1's of the same
# collective), within 10%, and as a share of rank 0's median step.
expect_that "even: rank 0's waiting for rank 1 named, as its kernels' rows show it" python3 - \
	"$even" "$TMP/even.json" "$TMP/even_ranks.json" "$PERFKIT_SOURCE/tests/tools" <<'PY'
import json, re, sys
sys.dont_write_bytecode = True  # no cache beside the sources
sys.path.insert(0, sys.argv[4])
from ddp_waits import waited_per_step
d = json.load(open(sys.argv[2]))
rows = {r["Rank"]: r for r in json.load(open(sys.argv[3]))["reports"][0]["rows"]}
waited = waited_per_step(sys.argv[1], sys.argv[2])
e = [f for f in d["findings"] if f["rule"] == "exposed_communication"][0]
m = re.search(r"Rank 0 waits at the collectives for rank 1: ([0-9.]+) (ms|us) per step \(([0-9]+)% of its median step\)", e["evidence"])
assert m, e["evidence"]
got = float(m.group(1)) * (1e6 if m.group(2) == "ms" else 1e3)
print("rank 0 waited %.3f ms per step by its kernels' rows, %.3f ms by the finding" % (waited / 1e6, got / 1e6))
assert waited > 0 and abs(got - waited) <= 0.1 * waited, (got, waited)
assert abs(int(m.group(3)) - 100 * got / rows[0]["Step Med (ns)"]) <= 1, (m.group(3), rows[0])
assert "(the most, rank 0's for rank 1)" in e["change"], e["change"]
PY

# Rank 0 waits at the collectives, spinning in its NCCL kernels, and its
# compute beside them runs slower (a GEMM 93 us against 50 us alone): that
# is the wait's doing, not more compute of its own, so neither run has a
# rank imbalance. A copy of the even run whose rank 1 kernels (not NCCL's)
# the test makes twice as long has one, on rank 1.
for run in even late; do
	expect_that "$run: no rank imbalance (rank 0's slower compute is its waiting)" python3 -c '
import json, sys
assert "rank_imbalance" not in [f["rule"] for f in json.load(open(sys.argv[1]))["findings"]]' "$TMP/$run.json"
done
cp "$even" "$TMP/slow1.sqlite"
sqlite3 "$TMP/slow1.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 2 * (end - start)
	WHERE globalPid = (SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = 1)
	AND demangledName NOT IN (SELECT id FROM StringIds WHERE value GLOB 'ncclDevKernel*')" ||
	{ echo "FAIL: cannot slow rank 1" >&2; exit 1; }
run diagnose --format=json "$TMP/slow1.sqlite"
expect_that "rank 1's kernels twice as long: the imbalance is rank 1's, the same work slower" python3 -c '
import json, re, sys
f = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "rank_imbalance"]
assert len(f) == 1 and [x["rank"] for x in f[0]["ranks"]] == [1], f
m = re.search(r"per step: rank 0 ([0-9.]+) ms, rank 1 ([0-9.]+) ms", f[0]["evidence"])
assert m and float(m.group(2)) > 1.3 * float(m.group(1)), f[0]["evidence"]
assert "as many kernels on each" in f[0]["evidence"] and ("rank 1" + chr(39) + "s GPU") in f[0]["change"], f[0]' "$TMP/out"

# --rank says which rank the diagnosis is of, as rank_sum names it; all
# ranks chosen is the whole job, named by its file alone
run diagnose --rank=1 "$late"
expect_status "diagnose --rank=1" 0
label=$(python3 -c '
import json, sys
print([r["Process"] for r in json.load(open(sys.argv[1]))["reports"][0]["rows"] if r["Rank"] == 1][0])' \
	"$TMP/late_ranks.json")
expect_that "--rank=1: the header names rank 1, its host and GPU" \
	test "$(head -n 1 "$TMP/out")" = "perfkit diagnose: $late, $label"
run diagnose --rank=1 --format=json "$late"
expect_that "--rank=1: JSON says which ranks were chosen" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["chosen_ranks"] == [1]' "$TMP/out"
run diagnose --rank=0,1 "$late"
expect_that "--rank=0,1 of two ranks: the file alone" test "$(head -n 1 "$TMP/out")" = "perfkit diagnose: $late"

# Rank 0's waiting per step in each run, by the rows (its NCCL kernels
# running longer than rank 1's of the same collective), in the window
# diagnose found for it; against the growth of the step the program timed.
expect_that "the time rank 0 lost per step to the straggler is the step's growth, within 10%" \
	python3 - "$even" "$TMP/even.json" "$late" "$TMP/late.json" "$D/step_ms.txt" "$PERFKIT_SOURCE/tests/tools" <<'PY'
import sys
sys.dont_write_bytecode = True  # no cache beside the sources
sys.path.insert(0, sys.argv[6])
from ddp_waits import waited_per_step

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
