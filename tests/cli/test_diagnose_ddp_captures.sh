# test_diagnose_ddp_captures.sh - `perfkit diagnose` of a job on the real
# captures of a 2-rank PyTorch DDP job, in both folders: tests/data/ddp
# (made by tests/gpu/ddp_job.sh, both ranks sharing one GPU, NCCL over
# sockets) and tests/data/ddp/two_gpus (2 x H200, one GPU a rank); one run
# even, one with rank 1 spinning 20 ms on the host before each backward
# pass. The rules of one process run on each rank in its own window and are
# merged; the job's rules name the straggler, and only in the late run.
# What is checked comes from the captures' own rows (asked with sqlite3),
# from the other reports or from how the runs were made, never from a
# number written down here. Captures of one process (every older fixture,
# a rank of an MPI job exported by Nsight Systems) get no job findings and
# diagnose as before.
. "$(dirname "$0")/cli_lib.sh"

# one rank of an MPI job, exported by Nsight Systems (beside the checkout of main)
mpi="${PERFKIT_NSYS_EXPORTS:-$PERFKIT_SOURCE/../shared/nsys-exports}/saxpy-mpi-cuda-rank0.sqlite"
JOB_RULES="straggler rank_imbalance exposed_communication small_collectives collective_bandwidth"

# setting KEY: its default, as --list-settings prints it
setting() { "$PERFKIT" diagnose --list-settings | awk -v k="$1" '$1 == k { print $2 }'; }

# json NAME ARGS...: diagnose --format=json into $TMP/NAME.json
json() {
	local name=$1
	shift
	run diagnose --format=json "$@"
	expect_status "diagnose $name" 0
	cp "$TMP/out" "$TMP/$name.json"
}

# The checks of one folder's captures, their names and files tagged by the
# folder ($tag-late.json); the body is not indented, for its here-documents.
check_folder() {
local ddp=$1 tag
local even="$ddp/ddp2_even.sqlite" late="$ddp/ddp2_straggler.sqlite"
tag=$(basename "$ddp")
[ -f "$even" ] && [ -f "$late" ] || { fail "DDP captures in $ddp"; return; }

json $tag-late "$late"
json $tag-even "$even"
run report --report=rank_sum --format=json "$late"
cp "$TMP/out" "$TMP/$tag-late_ranks.json"
run report --report=rank_sum --format=json "$even"
cp "$TMP/out" "$TMP/$tag-even_ranks.json"

expect_that "$tag: a job: each rank diagnosed in its own window, the loop rank_sum finds" python3 - \
	"$TMP/$tag-late.json" "$TMP/$tag-late_ranks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["Rank"]: r for r in json.load(open(sys.argv[2]))["reports"][0]["rows"]}
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
for r in d["ranks"]:
    assert r["process"].startswith("rank %d \u00b7 " % r["rank"]), r
    assert r["window"]["source"] == rows[r["rank"]]["Window Source"], (r, rows[r["rank"]])
    assert r["window"]["end_ns"] - r["window"]["start_ns"] == rows[r["rank"]]["Window (ns)"], r
# a rule of one process said once for the ranks that have it, with each one's share
for f in d["findings"]:
    assert f["ranks"] and all(0 <= x["share"] <= 1 for x in f["ranks"]), f
    if f["per_rank"]:
        assert f["evidence"].startswith("On rank %d: " % f["share_rank"]), f["evidence"][:40]
        assert f["share"] == max(x["share"] for x in f["ranks"]), f
        assert f["every_rank"] == (len(f["ranks"]) == 2), f
PY

# What the capture shows rank 0 waited for rank 1, from the NCCL kernels'
# rows alone (tests/tools/ddp_waits.py says how): the time rank 0's kernels
# run longer than rank 1's of the same collectives, per step of rank 0's
# window. Not the 20 ms rank 1 spins: where both ranks share one GPU, it
# time-slices them (a kernel of one starts ~2.25 ms after the other's even
# in the even run, which start times would count as waiting), and once
# rank 1's host runs ahead of its GPU its spinning no longer delays its GPU
# work, so only the first steps of the window show it.
expect_that "$tag: late: rank 1 is the straggler" python3 -c '
import json, sys
s = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "straggler"]
assert len(s) == 1 and [x["rank"] for x in s[0]["ranks"]] == [1] and s[0]["share_rank"] == 0, s
assert s[0]["evidence"].startswith("Rank 1 arrived last at "), s[0]["evidence"]
assert not s[0]["per_rank"] and s[0]["severity"] in ("medium", "high"), s[0]' "$TMP/$tag-late.json"
expect_that "$tag: late: what rank 0 waited per step agrees within 10% with its NCCL kernels' rows" \
	python3 "$PERFKIT_SOURCE/tests/tools/ddp_waits.py" "$late" "$TMP/$tag-late.json" 1

expect_that "$tag: late: what rank 1 did more before the collectives is its 20 ms of host work, and the change says so" \
	python3 - "$TMP/$tag-late.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
s = [f for f in d["findings"] if f["rule"] == "straggler"][0]
m = re.search(r"What it did more: host work outside CUDA calls while its GPU sat idle, ([0-9.]+) (ms|us) per late collective", s["evidence"])
assert m, s["evidence"]
ms = float(m.group(1)) * (1 if m.group(2) == "ms" else 1e-3)
assert 16 <= ms <= 24, ms  # the run spun 20 ms
assert "host work rank 1 does" in s["change"] and "In PyTorch: " in s["change"], s["change"]
assert all(t["name"].startswith("AllReduce of ") for t in s["top"]), s["top"]
PY

# exposed communication: on the ranks where rank_sum's Exposed share
# reaches the setting; the finding's time is the exposed transfers, the
# exposed communication less the waiting for later ranks
expect_that "$tag: late and even: communication exposed where rank_sum measures it; no imbalance" \
	python3 - "$(setting exposed_comm.min_share)" "$TMP/$tag-late.json" "$TMP/$tag-late_ranks.json" \
	"$TMP/$tag-even.json" "$TMP/$tag-even_ranks.json" <<'PY'
import json, sys
min_share = float(sys.argv[1])
for diagnosis, ranks in ((sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5])):
    d = json.load(open(diagnosis))
    rows = {r["Rank"]: r for r in json.load(open(ranks))["reports"][0]["rows"]}
    rules = [f["rule"] for f in d["findings"]]
    assert "rank_imbalance" not in rules, rules
    e = [f for f in d["findings"] if f["rule"] == "exposed_communication"][0]
    want = [r for r in sorted(rows) if rows[r]["Exposed Comm (ns)"] >= min_share * rows[r]["Window (ns)"]]
    assert [x["rank"] for x in e["ranks"]] == want, (e["ranks"], want)
    assert e["change"].count("In PyTorch") == 1 and "DistributedDataParallel" in e["change"], e["change"]
    for x in e["ranks"]:
        assert 0 <= x["time_ns"] <= rows[x["rank"]]["Exposed Comm (ns)"], (x, rows[x["rank"]])
PY

expect_that "$tag: even: no straggler" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "straggler" not in [f["rule"] for f in d["findings"]]
assert "straggler" not in [s["rule"] for s in d["not_run"]]' "$TMP/$tag-even.json"

# the margin is a setting: above every wait, no collective is late (the
# longest wait, as rank 0's kernel running longer than rank 1's of the
# same collective, against the shorter median step of the two ranks)
margin=$(python3 - "$late" "$TMP/$tag-late_ranks.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
pid = dict(db.execute("SELECT rank, globalPid FROM PERFKIT_PROCESS_INFO WHERE rank IS NOT NULL"))
k = [db.execute("SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
                " ON s.id = k.demangledName WHERE s.value GLOB 'ncclDevKernel*'"
                " AND k.globalPid = ? ORDER BY k.start", (pid[r],)).fetchall() for r in (0, 1)]
wait = max(abs(a[0] - b[0]) for a, b in zip(*k))
step = min(r["Step Med (ns)"] for r in json.load(open(sys.argv[2]))["reports"][0]["rows"])
print(1.01 * wait / step)
PY
)
run diagnose --format=json --set straggler.min_wait_share="$margin" "$late"
expect_that "$tag: late: no straggler when no wait reaches the margin" python3 -c '
import json, sys
assert "straggler" not in [f["rule"] for f in json.load(open(sys.argv[1]))["findings"]]' "$TMP/out"

# small collectives: the DDP loop makes none per step (its gradients go in
# 32 MiB buckets); with the bar lowered, the barrier's 4-byte all-reduce
run diagnose --format=json --set small_collectives.min_per_iteration=0.01 "$late"
expect_that "$tag: small collectives: none per step, the barrier's once the bar is lowered" python3 - \
	"$TMP/$tag-late.json" "$TMP/out" <<'PY'
import json, sys
assert "small_collectives" not in [f["rule"] for f in json.load(open(sys.argv[1]))["findings"]]
f = [f for f in json.load(open(sys.argv[2]))["findings"] if f["rule"] == "small_collectives"][0]
assert f["every_rank"] and any(t["name"] == "AllReduce of 4 B" for t in f["top"]), f
PY

# the link: without a measured one nothing is judged; with one stored (a
# copy of the capture given the row `perfkit peaks --store` writes), the
# all-reduces' bus bandwidth is judged against it
expect_that "$tag: no measured link: collective_bandwidth says why it did not run" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "collective_bandwidth" not in [f["rule"] for f in d["findings"]]
r = {s["rule"]: s["reason"] for s in d["not_run"]}["collective_bandwidth"]
assert "no measured link bandwidth" in r, r' "$TMP/$tag-late.json"
run report --report=nccl_sum --format=json "$late"
cp "$TMP/out" "$TMP/$tag-nccl.json"
# links well above and well below the all-reduces' bus bandwidth, that of
# their transfers (without the waiting) and that of their kernels' times
read -r fast slow < <(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["reports"][0]["rows"]
        if r["Kind"] == "AllReduce" and r["Message Size"] == "16-256 MiB"]
print(10 * max(r["Xfer Bus BW (GB/s)"] for r in rows), min(r["Bus BW (GB/s)"] for r in rows) / 10)' \
	"$TMP/$tag-nccl.json")
for link in fast slow; do
	cp "$late" "$TMP/$tag-link.sqlite"
	sqlite3 "$TMP/$tag-link.sqlite" "CREATE TABLE IF NOT EXISTS PERFKIT_PEAKS (key TEXT PRIMARY KEY, value REAL, text TEXT);
		INSERT INTO PERFKIT_PEAKS VALUES ('p2p_bytes_per_s', ${!link}e9, NULL)"
	run diagnose --format=json "$TMP/$tag-link.sqlite"
	cp "$TMP/out" "$TMP/$tag-link-$link.json"
done
expect_that "$tag: a measured link: the all-reduces flagged against a fast one, not against a slow one" python3 - \
	"$TMP/$tag-link-fast.json" "$TMP/$tag-link-slow.json" "$TMP/$tag-nccl.json" <<'PY'
import json, re, sys
fast, slow = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = json.load(open(sys.argv[3]))["reports"][0]["rows"]
f = [f for f in fast["findings"] if f["rule"] == "collective_bandwidth"][0]
t = [t for t in f["top"] if t["name"].startswith("AllReduce 16-256 MiB")][0]
busbw = float(re.search(r"bus bandwidth ([0-9.]+) GB/s", t["name"]).group(1))
# the rule's bus bandwidth is the transfers', as nccl_sum's Xfer Bus BW
ar = [r for r in rows if r["Kind"] == "AllReduce" and r["Message Size"] == "16-256 MiB"]
xfer = [r["Xfer Bus BW (GB/s)"] for r in ar]
assert min(r["Bus BW (GB/s)"] for r in ar) <= busbw <= 1.1 * max(xfer), (busbw, ar)
assert "collective_bandwidth" not in [f["rule"] for f in slow["findings"]]
assert "collective_bandwidth" not in [s["rule"] for s in slow["not_run"]]
PY

# the per-rank captures of another run, read as one job
json $tag-files "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_that "$tag: the per-rank captures as one job: both ranks, no straggler" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
rules = [f["rule"] for f in d["findings"]]
assert "straggler" not in rules and "rank_imbalance" not in rules, rules
assert "exposed_communication" in rules, rules' "$TMP/$tag-files.json"

# --rank: one rank is a process diagnosed alone; both ranks are the job
json $tag-rank1 --rank=1 "$late"
json $tag-both --rank=0,1 "$late"
expect_that "$tag: --rank=1: one rank, no job rules; --rank=0,1: the whole job" python3 - \
	"$TMP/$tag-rank1.json" "$TMP/$tag-both.json" "$TMP/$tag-late.json" "$JOB_RULES" <<'PY'
import json, sys
one, both, whole = (json.load(open(p)) for p in sys.argv[1:4])
job = set(sys.argv[4].split())
assert "ranks" not in one
assert not job & {x["rule"] for x in one["findings"] + one["not_run"]}, one["findings"]
assert both == whole
PY

# text, CSV and the HTML report say which ranks
run diagnose "$late"
expect_out "$tag: text: the job's window names each rank's loop" '^window: each rank.s own loop \(of [0-9.]+ s captured\): rank 0 NVTX range "train_step" x [0-9]+ \([0-9.]+ m?s from \+[0-9.]+ s\), rank 1 '
expect_out "$tag: text: the straggler's ranks line" '^    ranks: rank 1 [0-9.]+%$'
expect_out "$tag: text: a rule of every rank" '^    ranks: every rank \(2\): rank 0 [0-9.]+%, rank 1 [0-9.]+%$'
run diagnose --format=csv "$late"
expect_that "$tag: csv: a Ranks column, rank 1 for the straggler" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["Ranks"] for r in rows if r["Rule"] == "straggler"] == ["rank 1"], rows' "$TMP/out"
run report --format=html -o "$TMP/$tag-late.html" "$late"
expect_that "$tag: html: the findings name their ranks" grep -q '<th[^>]*>Ranks</th>' "$TMP/$tag-late.html"
cp "$late" "$TMP/$tag-save.sqlite"
run diagnose --save "$TMP/$tag-save.sqlite"
expect_status "$tag: diagnose --save of a one-file job" 0
expect_that "$tag: --save: each stored finding names its ranks" test \
	"$(sqlite3 "$TMP/$tag-save.sqlite" "SELECT count(*) FROM PERFKIT_FINDINGS WHERE evidence NOT LIKE 'Ranks: %'")" -eq 0

}

check_folder "$PERFKIT_TEST_DATA/ddp"
check_folder "$PERFKIT_TEST_DATA/ddp/two_gpus"

# NCCL's kernels are no occupancy problem of the program's
ddp="$PERFKIT_TEST_DATA/ddp"
json rank0 "$ddp/ddp2_rank0.sqlite"
expect_that "low_occupancy leaves NCCL's kernels out" python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    assert not any("nccl" in t["name"] for t in f["top"] if f["rule"] == "low_occupancy"), f' "$TMP/rank0.json"

# the ranks of a capture of the whole job are diagnosed on a thread each
# (a connection each): the diagnosis and the HTML page (whose diagnosis
# runs beside its other sections) are the same bytes on one thread
for f in "$ddp/ddp2_straggler.sqlite" "$ddp/two_gpus/ddp2_even.sqlite"; do
	name=$(basename "$(dirname "$f")")-$(basename "$f" .sqlite)
	PERFKIT_THREADS=1 "$PERFKIT" diagnose --format=json "$f" >"$TMP/$name-1.json" 2>&1
	PERFKIT_THREADS=2 "$PERFKIT" diagnose --format=json "$f" >"$TMP/$name-2.json" 2>&1
	expect_that "$name: diagnose on one thread and on two the same" cmp -s "$TMP/$name-1.json" "$TMP/$name-2.json"
	expect_that "$name: the diagnosis names both ranks" python3 -c '
import json, sys
assert {r["rank"] for r in json.load(open(sys.argv[1]))["ranks"]} == {0, 1}' "$TMP/$name-2.json"
	PERFKIT_THREADS=1 "$PERFKIT" report --format=html -o "$TMP/$name-1.html" "$f" >/dev/null 2>&1
	PERFKIT_THREADS=2 "$PERFKIT" report --format=html -o "$TMP/$name-2.html" "$f" >/dev/null 2>&1
	expect_that "$name: the HTML page on one thread and on two the same" cmp -s "$TMP/$name-1.html" "$TMP/$name-2.html"
done

# captures of one process: no job, no job rule, not even as not run
[ -f "$mpi" ] || echo "skip: $mpi is not there"
for f in "$PERFKIT_TEST_DATA"/*.sqlite "$ddp/ddp2_rank0.sqlite" "$mpi"; do
	[ -f "$f" ] || continue
	name=$(basename "$f" .sqlite)
	run diagnose --format=json "$f"
	expect_that "$name: one process, no job findings" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
job = set(sys.argv[2].split())
assert "ranks" not in d and all("ranks" not in f for f in d["findings"])
assert not job & {x["rule"] for x in d["findings"] + d["not_run"]}' "$TMP/out" "$JOB_RULES"
done
finish
