# test_report_ddp_captures.sh - the reports of a job on the real captures of
# a 2-rank PyTorch DDP job, in both folders: tests/data/ddp (made by
# tests/gpu/ddp_job.sh, the two ranks sharing one GPU, NCCL over sockets)
# and tests/data/ddp/two_gpus (2 x H200, one GPU a rank, NVLink); NCCL 2.28
# with its NVTX payloads; one run even, one with rank 1 made late by 20 ms
# of host work before each backward pass. What is checked comes from the
# captures' own rows (asked with sqlite3) or from how the runs were made,
# never from a number written down here.
. "$(dirname "$0")/cli_lib.sh"

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
gpu_of() { # FILE RANK: "GPU <device> (GPU-<uuid's first group>)" of the GPU its kernels ran on
	count "$1" "SELECT 'GPU ' || k.deviceId || ' (GPU-' || substr(g.uuid, 5, 8) || ')'
		FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PERFKIT_PROCESS_GPUS g
		ON g.globalPid = k.globalPid AND g.deviceId = k.deviceId
		WHERE k.globalPid = $(pid_of_rank "$1" "$2") LIMIT 1"
}

check_folder() {
local ddp=$1 tag
local even="$ddp/ddp2_even.sqlite" late="$ddp/ddp2_straggler.sqlite"
tag=$(basename "$ddp")
[ -f "$even" ] && [ -f "$late" ] || { fail "DDP captures in $ddp"; return; }
for f in "$even" "$late"; do
	name=$tag-$(basename "$f" .sqlite)
	run report --report=rank_sum,nccl_sum --format=json "$f"
	expect_status "$name: rank_sum, nccl_sum" 0
	cp "$TMP/out" "$TMP/$name.json"
	expect_that "$name: two ranks, the launcher none, each with its own loop on its GPU" python3 - "$TMP/$name.json" \
		"$(steps_of "$f" 0)" "$(steps_of "$f" 1)" "$(gpu_of "$f" 0)" "$(gpu_of "$f" 1)" <<'PY'
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
rows = reps["rank_sum"]["rows"]
assert [r["Rank"] for r in rows] == [0, 1], rows
assert [r["Steps"] for r in rows] == [int(sys.argv[2]), int(sys.argv[3])], rows
for r in rows:
    assert r["Process"].startswith("rank %d \u00b7 " % r["Rank"]), r
    assert r["Process"].endswith(" \u00b7 " + sys.argv[4 + r["Rank"]]), (r["Process"], sys.argv[4:])
    assert r["Window Source"] == 'NVTX range "train_step" x %d' % r["Steps"], r
    assert r["Communication (ns)"] > 0 and r["Hidden Comm (ns)"] <= r["Communication (ns)"], r
    assert r["GPU Busy (ns)"] + r["Idle (ns)"] == r["Window (ns)"], r
PY
	expect_that "$name: every NCCL kernel matched to its call with its message size" python3 - \
		"$TMP/$name.json" "$(nccl_kernels "$f" 0)" "$(nccl_kernels "$f" 1)" \
		"$(steps_of "$f" 0)" "$(steps_of "$f" 1)" <<'PY'
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
# DDP broadcasts the model's parameters once, then all-reduces every
# gradient (as many bytes) once a step: each train_step range, the
# warm-up's too
params = by[("Broadcast", "16-256 MiB")]
for rank, steps in ((0, int(sys.argv[4]) + 1), (1, int(sys.argv[5]) + 1)):
    assert by[("AllReduce", "16-256 MiB")][rank]["Bytes"] == steps * params[rank]["Bytes"], (rank, steps)
PY
done
expect_that "$tag: the late rank's job steps longer, and only its rank waits less" python3 - \
	"$TMP/$tag-ddp2_even.json" "$TMP/$tag-ddp2_straggler.json" <<'PY'
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
expect_status "$tag: --rank=1" 0
expect_that "$tag: --rank=1 counts rank 1's kernels" test "$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$TMP/out")" -eq \
	"$(count "$late" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = $(pid_of_rank "$late" 1)")"
run report --rank=2 "$late"
expect_status "$tag: --rank=2" 2
expect_one_error_line "$tag: --rank=2" 'ddp2_straggler\.sqlite has no rank 2 \(ranks 0-1\)$'
run diagnose --rank=0 --format=json "$late"
expect_status "$tag: diagnose --rank=0" 0
run report --format=chrome -o "$TMP/$tag-late.json" "$late"
expect_that "$tag: chrome: a process per rank" python3 - "$TMP/$tag-late.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e.get("name") == "process_name")
ranks = [n for n in names if n.startswith("rank ")]
assert len(ranks) == 2 and ranks[0].startswith("rank 0 \u00b7 ") and ranks[1].startswith("rank 1 \u00b7 "), names
PY
run report --format=html -o "$TMP/$tag-late.html" "$late"
expect_status "$tag: html" 0
expect_that "$tag: html: the Ranks section" grep -q 'id="rank_sum"' "$TMP/$tag-late.html"

# gpu_idle_sum and critical_path of a job: a block of rows per rank, each
# rank in its own window (its own loop, its own GPU's work), as diagnose
# analyses it, not the two ranks' steps taken as one loop; --rank keeps
# one block. On each folder's even run.
devices_of() { # FILE RANK: the devices its kernels ran on
	count "$1" "SELECT group_concat(d) FROM (SELECT DISTINCT deviceId AS d FROM CUPTI_ACTIVITY_KIND_KERNEL
		WHERE globalPid = $(pid_of_rank "$1" "$2") ORDER BY 1)"
}
for f in "$even"; do
	name=$tag/$(basename "$f" .sqlite)
	run report --report=gpu_idle_sum,critical_path --format=json "$f"
	expect_status "$name: gpu_idle_sum, critical_path" 0
	cp "$TMP/out" "$TMP/idle.json"
	run report --report=gpu_idle_sum,critical_path --format=json --rank=1 "$f"
	expect_status "$name: gpu_idle_sum, critical_path --rank=1" 0
	expect_that "$name: gpu_idle_sum and critical_path rank by rank, each rank's steps its own" python3 - \
		"$TMP/idle.json" "$TMP/out" "$(steps_of "$f" 0)" "$(steps_of "$f" 1)" \
		"$(devices_of "$f" 0)" "$(devices_of "$f" 1)" <<'PY'
import json, sys
def reps(path):
    return {r["name"]: r for r in json.load(open(path))["reports"]}
job, one = reps(sys.argv[1]), reps(sys.argv[2])
steps = {0: int(sys.argv[3]), 1: int(sys.argv[4])}
devices = {0: [int(d) for d in sys.argv[5].split(",")], 1: [int(d) for d in sys.argv[6].split(",")]}
for r in job.values():
    assert r["columns"][0] == "Rank", (r["name"], r["columns"])
win = job["gpu_idle_window"]["rows"]
assert [w["Rank"] for w in win] == [0, 1], win
for w in win:
    assert w["Device"] in devices[w["Rank"]], (w, devices)
    assert w["Steps"] == steps[w["Rank"]], (w, steps)
    assert w["Window Source"] == 'NVTX range "train_step" x %d' % steps[w["Rank"]], w
for rank in (0, 1):
    rows = [x for x in job["gpu_idle_steps"]["rows"] if x["Rank"] == rank]
    assert [x["Step"] for x in rows] == list(range(1, steps[rank] + 1)), (rank, len(rows))
    idle = sum(x["Time (ns)"] for x in job["gpu_idle_sum"]["rows"] if x["Rank"] == rank)
    assert idle == [w for w in win if w["Rank"] == rank][0]["Idle (ns)"], rank
    top = [x["#"] for x in job["gpu_idle_top"]["rows"] if x["Rank"] == rank]
    assert top == list(range(1, len(top) + 1)) and top, (rank, top)
cp = job["critical_path"]["rows"]
assert [c["Rank"] for c in cp] == [0, 1], cp
for c in cp:
    assert c["Steps"] == steps[c["Rank"]] and 1 <= c["Step"] <= c["Steps"], c
    parts = [p for p in job["critical_path_parts"]["rows"] if p["Rank"] == c["Rank"]]
    assert sum(p["Time (ns)"] for p in parts) == c["Span (ns)"], c
# --rank=1: rank 1's block alone, the same rows
for name, r in one.items():
    assert r["columns"] == job[name]["columns"], name
    assert r["rows"] == [x for x in job[name]["rows"] if x["Rank"] == 1], name
PY
done

# the per-rank captures of another run: each one rank, numbered by its
# launcher; read together, one job whose ranks --rank picks
for r in 0 1; do
	run report --report=rank_sum --format=csv "$ddp/ddp2_rank$r.sqlite"
	expect_that "$tag: ddp2_rank$r.sqlite is rank $r" test "$(sed -n '2p' "$TMP/out" | cut -d, -f1)" = "$r"
done
run report --report=rank_sum --format=csv "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "$tag: rank_sum of the per-rank captures as one job" 0
expect_that "$tag: the job of two files has ranks 0 and 1" test "$(sed -n '2,$p' "$TMP/out" | cut -d, -f1 | tr '\n' ' ')" = "0 1 "
run report --report=rank_sum --format=csv --rank=1 "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "$tag: --rank=1 of the per-rank captures" 0
expect_that "$tag: --rank=1 of the job of two files: rank 1 alone" test "$(sed -n '2,$p' "$TMP/out" | cut -d, -f1 | tr '\n' ' ')" = "1 "
run report --rank=2 "$ddp/ddp2_rank0.sqlite" "$ddp/ddp2_rank1.sqlite"
expect_status "$tag: --rank=2 of the per-rank captures" 2
expect_one_error_line "$tag: --rank=2 of the per-rank captures" 'has no rank 2 \(ranks 0-1\)$'

# A communicator's id is a 64-bit hash, past 2^63 as often as not (the
# two-GPU job's is, checked below): one rank's own capture still knows its
# communicator, and that it is of 2 ranks, from NCCL's payloads alone
for r in 0 1; do
	run report --report=nccl_sum --format=json "$ddp/ddp2_rank$r.sqlite"
	expect_that "$tag: ddp2_rank$r.sqlite: every collective over its communicator of 2 ranks" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
assert rows and all(x["Ranks"] == 2 for x in rows), rows
' "$TMP/out"
done
}

check_folder "$PERFKIT_TEST_DATA/ddp"
check_folder "$PERFKIT_TEST_DATA/ddp/two_gpus"

# the id of the two-GPU job's communicator, its payloads' last byte of it
# (little-endian) from 0x80, is the one past 2^63 the checks above read
two=$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_rank0.sqlite
expect_that "the two-GPU job's communicator id is past 2^63" test "$(count "$two" "SELECT DISTINCT
	hex(substr(n.binaryData, 40, 1)) >= '80' FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId
	WHERE s.value = 'ncclAllReduce'")" = 1

run report --report=gpu_idle_sum,critical_path --format=json "$PERFKIT_TEST_DATA/transformer_naive.sqlite"
expect_that "a capture of one process: no Rank column; gpu_idle_top's list position is #" python3 -c '
import json, sys
reps = {r["name"]: r for r in json.load(open(sys.argv[1]))["reports"]}
assert not any("Rank" in r["columns"] for r in reps.values()), [r["columns"] for r in reps.values()]
assert reps["gpu_idle_top"]["columns"][0] == "#", reps["gpu_idle_top"]["columns"]
' "$TMP/out"

finish
