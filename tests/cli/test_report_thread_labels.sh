#!/usr/bin/env bash
# test_report_thread_labels.sh - the Chrome trace's thread lanes and the
# folded stacks' thread frames name a thread by what it is, not "thread
# 741": "main" for the thread whose tid is its pid, PyTorch's pt_autograd_0
# as "autograd (GPU 0)", NCCL's "NCCL Progress 0" as "NCCL proxy (GPU 0)",
# a thread whose only CUDA calls are pinned host allocations as "pin memory
# (thread N)"; the same on an nsys export. The threads are found here with
# SQL over each capture; torch_train's autograd thread gets PyTorch's OS
# name in a copy (the sqlite3 CLI), as the collector now records it.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

# lanes TRACE: "TID<TAB>name" of every thread_name event of a Chrome trace
lanes() {
	python3 - "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
for e in ev:
    if e.get("name") == "thread_name" and e.get("ph") == "M":
        print("%s\t%s" % (e["tid"], e["args"]["name"]))
PY
}

# expect_lane CAPTURE TID LABEL: the Chrome trace of CAPTURE names thread TID LABEL
expect_lane() {
	run report --format=chrome -o "$TMP/trace.json" --force "$1"
	[ "$status" -eq 0 ] || { fail "chrome trace of $(basename "$1") exits 0"; return; }
	if lanes "$TMP/trace.json" | grep -qxF "$2	$3"; then
		pass "$(basename "$1"): thread $2 is '$3' in the Chrome trace"
	else
		fail "$(basename "$1"): thread $2 is '$3' in the Chrome trace (lanes: $(lanes "$TMP/trace.json" | tr '\t\n' ': '))"
	fi
}

# expect_frame CAPTURE LABEL: a folded stack of CAPTURE has LABEL as its thread frame
expect_frame() {
	run report --format=folded --weight=api -o "$TMP/stacks.folded" --force "$1"
	[ "$status" -eq 0 ] || { fail "folded stacks of $(basename "$1") exit 0"; return; }
	if cut -d';' -f2 "$TMP/stacks.folded" | grep -qxF "$2"; then
		pass "$(basename "$1"): '$2' is a thread frame of the folded stacks"
	else
		fail "$(basename "$1"): '$2' is a thread frame of the folded stacks"
	fi
}

MAIN_SQL="SELECT DISTINCT globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME
  WHERE (globalTid & 16777215) = ((globalTid >> 24) & 16777215)"

# a DataLoader's pin-memory thread: its CUDA calls are cudaHostAlloc only
timm="$PERFKIT_TEST_DATA/corpus/timm_resnet_dataloader.sqlite"
pin=$(sqlite3 "$timm" "SELECT r.globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME r
  JOIN StringIds s ON s.id = r.nameId GROUP BY r.globalTid
  HAVING sum(s.value NOT GLOB 'cudaHostAlloc_v*') = 0")
[ -n "$pin" ] || fail "timm_resnet_dataloader has a thread calling cudaHostAlloc only"
expect_lane "$timm" "$pin" "pin memory (thread $pin)"
expect_lane "$timm" "$(sqlite3 "$timm" "$MAIN_SQL")" "main"
expect_frame "$timm" "main"
expect_frame "$timm" "pin memory (thread $pin)"

# NCCL's proxy thread, named through NVTX by NCCL
ddp="$PERFKIT_TEST_DATA/ddp/ddp2_rank0.sqlite"
proxy=$(sqlite3 "$ddp" "SELECT t.globalTid & 16777215 FROM ThreadNames t JOIN StringIds s
  ON s.id = t.nameId WHERE s.value GLOB 'NCCL Progress*'")
expect_lane "$ddp" "$proxy" "NCCL proxy (GPU 0)"

# PyTorch's autograd thread, named pt_autograd_0 by PyTorch: the thread
# other than main that launches kernels in torch_train's backward
torch="$TMP/torch_train.sqlite"
cp "$PERFKIT_TEST_DATA/torch_train.sqlite" "$torch"
autograd=$(sqlite3 "$torch" "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME
  WHERE (globalTid & 16777215) <> ((globalTid >> 24) & 16777215) GROUP BY globalTid")
[ "$(printf '%s\n' "$autograd" | wc -l)" = 1 ] || fail "torch_train has one thread besides main"
sqlite3 "$torch" "INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'pt_autograd_0');
  INSERT INTO ThreadNames (nameId, globalTid) VALUES ((SELECT max(id) FROM StringIds), $autograd);
  INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'python3');
  INSERT INTO ThreadNames (nameId, globalTid)
    SELECT (SELECT max(id) FROM StringIds), globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME
    WHERE (globalTid & 16777215) = ((globalTid >> 24) & 16777215) LIMIT 1;" ||
	fail "cannot name torch_train's threads in a copy"
expect_lane "$torch" "$((autograd & 16777215))" "autograd (GPU 0)"
# the main thread's OS name is its process's: still "main"
expect_lane "$torch" "$(sqlite3 "$torch" "$MAIN_SQL")" "main"
expect_frame "$torch" "autograd (GPU 0)"
# without the names, the same thread reads as its tid
expect_lane "$PERFKIT_TEST_DATA/torch_train.sqlite" "$((autograd & 16777215))" "thread $((autograd & 16777215))"

# an nsys export: the name MPI gave the main thread is kept beside "main"
saxpy="$PERFKIT_TEST_DATA/nsys/saxpy-mpi-cuda-rank0.sqlite"
expect_lane "$saxpy" "$(sqlite3 "$saxpy" "$MAIN_SQL")" "main (MPI Rank 0)"

finish
