#!/usr/bin/env bash
# test_ranks_launcher_not_rank.sh - a process that a launcher numbered but
# that did no CUDA work is no rank when a process with CUDA work carries the
# same number: srun gives the torchrun agent it starts SLURM_PROCID 0, and
# torchrun numbers its workers from 0 too. On a copy of the two-GPU DDP
# capture (tests/data/ddp/two_gpus) whose launcher row the test gives rank
# 0, as srun would: rank_sum, the Chrome trace and diagnose show one rank 0,
# the worker with the GPU work, and the launcher as a process of the job.
. "$(dirname "$0")/cli_lib.sh"

src="$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_straggler.sqlite"
f="$TMP/launcher_rank0.sqlite"
cp "$src" "$f"
# the process with no GPU rows is torchrun's agent: it gets the worker's number
sqlite3 "$f" "UPDATE PERFKIT_PROCESS_INFO SET rank = 0, worldSize = 1, localRank = 0
	WHERE globalPid NOT IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)" ||
	{ echo "FAIL: cannot number the launcher" >&2; exit 1; }
agent=$(sqlite3 "$f" "SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = 0
	AND globalPid NOT IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)")
worker=$(sqlite3 "$f" "SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = 0
	AND globalPid IN (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL)")
[ -n "$agent" ] && [ -n "$worker" ] || { echo "FAIL: no agent and worker both numbered 0" >&2; exit 1; }
worker_kernels=$(sqlite3 "$f" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = $worker")

run report --report=rank_sum --format=json "$f"
expect_status "rank_sum" 0
expect_that "rank_sum: ranks 0 and 1 once each" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
assert [r["Rank"] for r in rows] == [0, 1], [(r["Rank"], r["Process"]) for r in rows]
assert rows[0]["Steps"] > 0 and rows[0]["GPU Busy (ns)"] > 0, rows[0]' "$TMP/out"

run report --report=cuda_gpu_kern_sum --format=csv --rank=0 "$f"
expect_status "--rank=0" 0
expect_that "--rank=0 is the worker: its kernels" test \
	"$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$TMP/out")" -eq "$worker_kernels"

run report --format=chrome -o "$TMP/trace.json" "$f"
expect_status "chrome" 0
expect_that "chrome: one process named rank 0, the launcher by its name and pid" python3 -c '
import json, sys
names = [e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("name") == "process_name"]
assert sum(n.startswith("rank 0 ") for n in names) == 1, names
assert sum(n.startswith("rank 1 ") for n in names) == 1, names
assert sum(" (pid %d) " % (int(sys.argv[2]) >> 24) in n for n in names) == 1, names' "$TMP/trace.json" "$agent"

run diagnose --format=json "$f"
expect_status "diagnose" 0
expect_that "diagnose: the job's ranks are 0 and 1" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]' "$TMP/out"
finish
