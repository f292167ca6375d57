# test_report_ddp_captures.sh - the reports of a job on the real captures of
# a 2-rank PyTorch DDP job (tests/data/ddp, made by tests/gpu/ddp_job.sh:
# NCCL 2.28 with its NVTX payloads; one run even, one with rank 1 made late
# by 20 ms of host work before each backward pass). What is checked comes
# from the captures' own rows (asked with sqlite3) or from how the runs were
# made, never from a number written down here.
. "$(dirname "$0")/cli_lib.sh"

ddp="$PERFKIT_TEST_DATA/ddp"
even="$ddp/ddp2_even.sqlite"
late="$ddp/ddp2_straggler.sqlite"
[ -f "$even" ] && [ -f "$late" ] || { echo "FAIL: no DDP captures in $ddp" >&2; exit 1; }

# count FILE SQL
count() { sqlite3 "$1" "$2"; }
pid_of_rank() { count "$1" "SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = $2"; }
nccl_kernels() { # FILE RANK
	count "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
		WHERE s.value GLOB 'ncclDevKernel*' AND k.globalPid = $(pid_of_rank "$1" "$2")"
}
steps_of() { # FILE RANK: its train_step ranges, the first (the warm-up) left out
	count "$1" "SELECT count(*) - 1 FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
		WHERE s.value = 'train_step' AND n.globalTid >> 24 = $(pid_of_rank "$1" "$2") >> 24"
}

for f in "$even" "$late"; do
	name=$(basename "$f" .sqlite)
	run report --report=rank_sum,nccl_sum --format=json "$f"
	expect_status "$name: rank_sum, nccl_sum" 0
	cp "$TMP/out" "$TMP/$name.json"
	expect_that "$name: two ranks, the launcher none, each with its own loop" python3 - "$TMP/$name.json" \
		"$(steps_of "$f" 0)" "$(steps_of "$f" 1)" <<'PY'
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
rows = reps["rank_sum"]["rows"]
assert [r["Rank"] for r in rows] == [0, 1], rows
assert [r["Steps"] for r in rows] == [int(sys.argv[2]), int(sys.argv[3])], rows
for r in rows:
    assert r["Process"].startswith("rank %d \u00b7 " % r["Rank"]) and "GPU 0 (GPU-" in r["Process"], r
    assert r["Window Source"] == 'NVTX range "train_step" x %d' % r["Steps"], r
    assert r["Communication (ns)"] > 0 and r["Hidden Comm (ns)"] <= r["Communication (ns)"], r
    assert r["GPU Busy (ns)"] + r["Idle (ns)"] == r["Window (ns)"], r
PY
	expect_that "$name: every NCCL kernel matched to its call with its message size" python3 - \
		"$TMP/$name.json" "$(nccl_kernels "$f" 0)" "$(nccl_kernels "$f" 1)" <<'PY'
import json, sys
r = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}["nccl_sum"]
assert r["calls_unmatched"] == 0 and r["sizes_unknown"] == 0, r
for rank, want in ((0, int(sys.argv[2])), (1, int(sys.argv[3]))):
    got = sum(x["Calls"] for x in r["rows"] if x["Rank"] == rank)
    assert got == want, (rank, got, want)
# both ranks of a collective move the same bytes, over a communicator of 2
by = {}
for x in r["rows"]:
    by.setdefault((x["Kind"], x["Message Size"]), {})[x["Rank"]] = x
for key, ranks in by.items():
    assert ranks[0]["Bytes"] == ranks[1]["Bytes"] and ranks[0]["Calls"] == ranks[1]["Calls"], key
    assert ranks[0]["Ranks"] == 2, key
ar = by[("AllReduce", "16-256 MiB")][0]
assert abs(ar["Bus BW (GB/s)"] - ar["Alg BW (GB/s)"]) < 1e-9  # 2(n-1)/n = 1 for n = 2
PY
done
expect_that "the late rank's job steps longer, and only its rank waits less" python3 - \
	"$TMP/ddp2_even.json" "$TMP/ddp2_straggler.json" <<'PY'
import json, sys
def ranks(path):
    return {r["name"]: r for r in json.load(open(path))["reports"]}["rank_sum"]["rows"]
even, late = ranks(sys.argv[1]), ranks(sys.argv[2])
# 20 ms of host work a step on rank 1: every rank's step takes longer
for e, l in zip(even, late):
    assert l["Step Med (ns)"] > e["Step Med (ns)"] * 1.05, (e, l)
# the late rank's GPU idles while it works on the host; the other's waits in the all-reduce
assert late[1]["Idle (%)"] > late[0]["Idle (%)"], late
PY

run report --report=cuda_gpu_kern_sum --format=csv --rank=1 "$late"
expect_status "--rank=1" 0
expect_that "--rank=1 counts rank 1's kernels" test "$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$TMP/out")" -eq \
	"$(count "$late" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = $(pid_of_rank "$late" 1)")"
run report --rank=2 "$late"
expect_status "--rank=2" 2
expect_one_error_line "--rank=2" 'ddp2_straggler\.sqlite has no rank 2 \(ranks 0-1\)$'
run diagnose --rank=0 --format=json "$late"
expect_status "diagnose --rank=0" 0
run report --format=chrome -o "$TMP/late.json" "$late"
expect_that "chrome: a process per rank" python3 - "$TMP/late.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e.get("name") == "process_name")
ranks = [n for n in names if n.startswith("rank ")]
assert len(ranks) == 2 and ranks[0].startswith("rank 0 \u00b7 ") and ranks[1].startswith("rank 1 \u00b7 "), names
PY
run report --format=html -o "$TMP/late.html" "$late"
expect_status "html" 0
expect_that "html: the Ranks section" grep -q 'id="rank_sum"' "$TMP/late.html"

# the per-rank captures of another run: each one rank, numbered by its
# launcher; read together, one job whose ranks --rank picks
for r in 0 1; do
	run report --report=rank_sum --format=csv "$ddp/ddp2_rank$r.sqlite"
	expect_that "ddp2_rank$r.sqlite is rank $r" test "$(sed -n '2p' "$TMP/out" | cut -d, -f1)" = "$r"
done
run report --report=rank_sum --format=csv "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "rank_sum of the per-rank captures as one job" 0
expect_that "the job of two files has ranks 0 and 1" test "$(sed -n '2,$p' "$TMP/out" | cut -d, -f1 | tr '\n' ' ')" = "0 1 "
run report --report=rank_sum --format=csv --rank=1 "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "--rank=1 of the per-rank captures" 0
expect_that "--rank=1 of the job of two files: rank 1 alone" test "$(sed -n '2,$p' "$TMP/out" | cut -d, -f1 | tr '\n' ' ')" = "1 "
run report --rank=2 "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "--rank=2 of the per-rank captures" 2
expect_one_error_line "--rank=2 of the per-rank captures" 'has no rank 2 \(ranks 0-1\)$'

# A communicator's id is a 64-bit hash, past 2^63 as often as not (the
# two-GPU job's is: its payloads' last byte of the id, little-endian, from
# 0x80): one rank's own capture still knows its communicator, and that it
# is of 2 ranks, from NCCL's payloads alone
two=$ddp/two_gpus/ddp2_rank0.sqlite
expect_that "the two-GPU job's communicator id is past 2^63" test "$(count "$two" "SELECT DISTINCT
	hex(substr(n.binaryData, 40, 1)) >= '80' FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
	WHERE s.value = 'ncclAllReduce'")" = 1
run report --report=nccl_sum --format=csv "$two"
expect_that "one rank's capture: every collective over its communicator of 2 ranks" test \
	"$(sed -n '2,$p' "$TMP/out" | cut -d, -f12 | sort -u | tr '\n' ' ')" = "2 "
finish
