#!/usr/bin/env bash
# test_diagnose_job_own_rules_on_chosen_ranks.sh - diagnose of a job larger
# than job.every_rank_up_to runs the rules of one process on the ranks its
# verdict and its job's rules are about, not on every rank: a job of 12
# ranks, copies of the two real DDP ranks' captures (tests/data/ddp), is
# diagnosed alone on at most three ranks, the slowest step among them,
# while the job's rules and the header's windows read all 12; its findings
# of one process's rules name only those ranks. The job read from its
# captures (map and reduce) says byte for byte what its merged capture
# says; with job.every_rank_up_to raised to 12 every rank is diagnosed
# alone and the job's rules find what they found.
set -u
. "$(dirname "$0")/cli_lib.sh"
. "$PERFKIT_SOURCE/tests/tools/job_captures.sh"
D=$PERFKIT_TEST_DATA/ddp

job=$TMP/job
mkdir -p "$job"
for r in $(seq 0 11); do
	rank_copy "$D/ddp2_rank$((r % 2)).sqlite" "$job/rank$r.sqlite" "$r"
done

run diagnose --format=json "$job"
expect_status "diagnose of a 12-rank job" 0
cp "$TMP/out" "$TMP/chosen.json"
run diagnose "$job"
expect_out "the header names the ranks diagnosed alone" "^ranks diagnosed alone: [1-3] of 12, rank [0-9]+ \("

expect_that "own rules on at most three ranks, the slowest step among them; every rank's window" \
	python3 - "$TMP/chosen.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
chosen = {r["rank"]: r["why"] for r in d["diagnosed_ranks"]}
assert 1 <= len(chosen) <= 3, chosen
assert len(d["ranks"]) == 12, len(d["ranks"])
# the verdict is the slowest rank's: its step, by its window over its iterations
step = {r["rank"]: (r["window"]["end_ns"] - r["window"]["start_ns"]) / max(r["window"]["iterations"], 1)
        for r in d["ranks"]}
slowest = max(step, key=step.get)
assert any("slowest" in w for w in chosen.values()), chosen
assert step[[r for r, w in chosen.items() if "slowest" in w][0]] == step[slowest], (chosen, step)
own = [f for f in d["findings"] if f["per_rank"]]
assert own, "no finding of one process's rules"
for f in own:
    assert {x["rank"] for x in f["ranks"]} <= set(chosen), (f["rule"], f["ranks"], chosen)
    assert not f["every_rank"], f["rule"]
# the job's rules read every rank
e = [f for f in d["findings"] if f["rule"] == "exposed_communication"]
assert e and len(e[0]["ranks"]) == 12 and e[0]["every_rank"], e
PY

# the same choice of the merged capture, read as one store
"$PERFKIT" merge -o "$TMP/merged.sqlite" "$job" >/dev/null 2>&1 || fail "merge of the 12 ranks"
run diagnose --format=json "$TMP/merged.sqlite"
expect_that "the job by map and reduce says what its merged capture says" python3 - "$TMP/chosen.json" "$TMP/out" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("file")
assert a == b, [k for k in a if a[k] != b.get(k)]
PY

run diagnose --format=json --set job.every_rank_up_to=12 "$job"
expect_status "diagnose of every rank alone" 0
expect_that "job.every_rank_up_to=12: every rank diagnosed alone, the job's rules unchanged" \
	python3 - "$TMP/chosen.json" "$TMP/out" <<'PY'
import json, sys
chosen, every = (json.load(open(p)) for p in sys.argv[1:3])
assert "diagnosed_ranks" not in every, every.get("diagnosed_ranks")
assert any(f["per_rank"] and f["every_rank"] and len(f["ranks"]) == 12 for f in every["findings"])
job = lambda d: {f["rule"]: (f["share"], f["time_ns"], [x["rank"] for x in f["ranks"]])
                 for f in d["findings"] if not f["per_rank"]}
assert job(chosen) == job(every), (job(chosen), job(every))
PY

finish
