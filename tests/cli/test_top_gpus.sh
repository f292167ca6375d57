#!/usr/bin/env bash
# test_top_gpus.sh - `perfkit top` on a capture of two GPUs shows one row
# per GPU, with the kernels the capture ran on each (asked of the capture
# with sqlite3). The capture is a job made of two real single-GPU captures
# by tests/tools/make_job, whose second rank's kernels and copies the test
# moves to device 1 (with a TARGET_INFO_GPU row for it): both captures ran
# on one H100, and a job on two GPUs is what the panel is for. Ranks that
# each call their own GPU device 0 keep a row each (by UUID). A capture of
# one GPU keeps its layout: no panel.
. "$(dirname "$0")/cli_lib.sh"

command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
. "$(dirname "$0")/tmux_lib.sh"

a="$PERFKIT_TEST_DATA/cases/case_steady_50.sqlite"
b="$PERFKIT_TEST_DATA/cases/case_steady_44_slow.sqlite"
job="$TMP/two_gpus.sqlite"
"$PERFKIT_TEST_TOOLS/make_job" "$job" "$a" "$b" || { echo "FAIL: cannot make the job" >&2; exit 1; }
sqlite3 "$job" "
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1 WHERE globalPid >> 24 = 2552;
	UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 1 WHERE globalPid >> 24 = 2552;
	INSERT INTO TARGET_INFO_GPU (id, name, uuid) VALUES (1, 'second GPU', 'GPU-00000001');" ||
	{ echo "FAIL: cannot move rank 1 to device 1" >&2; exit 1; }
k0=$(sqlite3 "$job" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0")
k1=$(sqlite3 "$job" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1")


replay_top "$job"
wait_for "replay runs to the end" "replay finished"
wait_for "a GPU panel" "GPUs (2)"
expect_that "GPU 0's row counts its kernels" grep -qE "GPU 0 +NVIDIA H100 80GB HBM3 +busy +[0-9]+% \| kernels $k0 " "$TMP/screen"
expect_that "GPU 1's row counts its kernels" grep -qE "GPU 1 +second GPU +busy +[0-9]+% \| kernels $k1 " "$TMP/screen"
expect_that "NVML metrics of a capture not live here: N/A" grep -qE "GPU 1 .*util N/A \| memory N/A \| power N/A" "$TMP/screen"
keys q

# Ranks isolated with CUDA_VISIBLE_DEVICES each call their GPU device 0: a
# copy of the two-GPU DDP capture (tests/data/ddp/two_gpus) whose rank 1
# rows and GPU say device 0, its process's GPU 0 being its own UUID. The
# GPUs are told apart by UUID, one row each with its rank's kernels, named
# by the UUID as their numbers are the same.
iso="$TMP/isolated.sqlite"
cp "$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_straggler.sqlite" "$iso"
r1=$(sqlite3 "$iso" "SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = 1")
u1=$(sqlite3 "$iso" "SELECT uuid FROM PERFKIT_PROCESS_GPUS WHERE globalPid = $r1 AND deviceId = 1")
u0=$(sqlite3 "$iso" "SELECT g.uuid FROM PERFKIT_PROCESS_GPUS g JOIN PERFKIT_PROCESS_INFO p
	ON p.globalPid = g.globalPid WHERE p.rank = 0 AND g.deviceId = 0")
sqlite3 "$iso" "
	UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0 WHERE globalPid = $r1;
	UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 0 WHERE globalPid = $r1;
	UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET deviceId = 0 WHERE globalPid = $r1;
	DELETE FROM PERFKIT_PROCESS_GPUS WHERE globalPid = $r1;
	INSERT INTO PERFKIT_PROCESS_GPUS (globalPid, deviceId, uuid) VALUES ($r1, 0, '$u1');
	UPDATE TARGET_INFO_GPU SET id = 0 WHERE uuid = '$u1';" ||
	{ echo "FAIL: cannot isolate rank 1" >&2; exit 1; }
i0=$(sqlite3 "$iso" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN PERFKIT_PROCESS_INFO p
	ON p.globalPid = k.globalPid WHERE p.rank = 0")
i1=$(sqlite3 "$iso" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = $r1")
replay_top "$iso"
wait_for "isolated ranks: replay runs to the end" "replay finished"
wait_for "isolated ranks: a row per GPU" "GPUs (2)"
expect_that "rank 0's GPU: its row, named by its UUID, with its kernels" \
	grep -qE "GPU 0 +GPU-${u0:4:8} NVIDIA H200 +busy +[0-9]+% \| kernels $i0 " "$TMP/screen"
expect_that "rank 1's GPU, device 0 too: its own row and kernels" \
	grep -qE "GPU 0 +GPU-${u1:4:8} NVIDIA H200 +busy +[0-9]+% \| kernels $i1 " "$TMP/screen"
keys q

replay_top "$a"
wait_for "one GPU: replay runs to the end" "replay finished"
expect_that "one GPU: no panel" bash -c "! grep -q 'GPUs (' '$TMP/screen'"
keys q
finish
