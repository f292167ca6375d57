#!/usr/bin/env bash
# test_job_time_base.sh - captures of different hosts put on one time base.
# A real capture and a copy of it rewritten as another host's would be
# (every time of its capture clock moved back by a known offset, its clock
# pairs with it, its realtime clock off by a known error, both its clocks
# drifting by a known rate, its host renamed) merge with the copy's kernels
# back on the original's: within 10 us when the hosts' realtime clocks
# agree (clock pairs); off by the realtime error when they do not and no
# collective says otherwise, which the merge then does not claim to know;
# two captures of one host never move apart. With the per-rank captures of
# a real DDP job on two GPUs (tests/data/ddp/two_gpus), the collectives
# find the realtime error and a drift of 50 ppm too, and a communicator
# only one rank is in does not mislead them: rank 0's kernels within 10 us
# of where they were, the stated error covering what is left, the job's
# span what it was; the overview (merged or by map and reduce) and
# diagnose's header say the time base and the error.
. "$(dirname "$0")/cli_lib.sh"
. "$(dirname "$0")/../tools/job_captures.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
meta() { sqlite3 "$1" "SELECT value FROM PERFKIT_META WHERE key = '$2'"; }

# with_clocks SRC DST: SRC, with the clock pair a perfkit capture of its
# time records when SRC predates PERFKIT_CLOCKS (its capture clock is the
# realtime clock: start and end of the run, from its metadata)
with_clocks() {
	cp "$1" "$2"
	if [ -z "$(sqlite3 "$2" "SELECT name FROM sqlite_master WHERE name = 'PERFKIT_CLOCKS'")" ]; then
		sqlite3 "$2" "CREATE TABLE PERFKIT_CLOCKS (globalPid INTEGER NOT NULL, host TEXT,
			at TEXT, realtimeNs INTEGER, timestampNs INTEGER);
		INSERT INTO PERFKIT_CLOCKS SELECT p.globalPid, h.value, 'start', s.value, s.value
			FROM PROCESSES p, PERFKIT_META s, PERFKIT_META h
			WHERE s.key = 'start_ns' AND h.key = 'host';
		INSERT INTO PERFKIT_CLOCKS SELECT p.globalPid, h.value, 'end', s.value + d.value,
			s.value + d.value FROM PROCESSES p, PERFKIT_META s, PERFKIT_META d, PERFKIT_META h
			WHERE s.key = 'start_ns' AND d.key = 'duration_ns' AND h.key = 'host'"
	fi
}

# le A B: both numbers known, A at most B
le() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ]; }

# misaligned MERGED: the largest distance in ns between a kernel of host 1
# and the same kernel (by order of start) of host 0
misaligned() {
	sqlite3 "$1" "WITH k AS (SELECT globalPid >> 48 AS h, start, row_number() OVER
		(PARTITION BY globalPid >> 48 ORDER BY start, end) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL)
		SELECT max(abs(b.start - a.start)) FROM k a JOIN k b ON a.n = b.n AND a.h = 0 AND b.h = 1"
}

src="$D/torch_train.sqlite"
with_clocks "$src" "$TMP/a.sqlite"
as_other_host "$TMP/a.sqlite" "$TMP/b.sqlite" 3700000000 0
run merge -o "$TMP/ab.sqlite" "$TMP/a.sqlite" "$TMP/b.sqlite"
expect_status "merge of two hosts with clock pairs" 0
expect_out "merge of two hosts with clock pairs" "host node-b: 1 capture, moved \+3700000.000 us"
expect_out "merge of two hosts with clock pairs" "time base: clock pairs; estimated alignment error: unknown"
got=$(misaligned "$TMP/ab.sqlite")
expect_that "clock pairs put the other host's kernels back (off by $got ns)" le "$got" 10000
expect_that "meta: clock pairs" [ "$(meta "$TMP/ab.sqlite" time_base)" = "clock pairs" ]
expect_that "meta: the error is not claimed" [ -z "$(meta "$TMP/ab.sqlite" time_error_ns)" ]
expect_that "durations are kept" [ "$(sqlite3 "$TMP/ab.sqlite" \
	"SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")" = \
	"$(( 2 * $(sqlite3 "$src" "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL") ))" ]

# the hosts' realtime clocks 2 ms apart: clock pairs alone cannot see it
as_other_host "$TMP/a.sqlite" "$TMP/c.sqlite" 3700000000 2000000
run merge -o "$TMP/ac.sqlite" "$TMP/a.sqlite" "$TMP/c.sqlite"
expect_status "merge of hosts whose clocks disagree" 0
expect_that "without collectives the realtime error stays" [ "$(misaligned "$TMP/ac.sqlite")" = 2000000 ]
expect_that "and no error is claimed" [ -z "$(meta "$TMP/ac.sqlite" time_error_ns)" ]

# Captures of one host never move against each other, whatever their
# lengths: a host whose clock pairs show a rate that moves its times by
# 2 ns over its run, and two captures of it, one of a hundredth of the
# run's length, move by the same mapping (each judged by its own length,
# the short one would be left without the rate).
as_other_host "$TMP/a.sqlite" "$TMP/b1.sqlite" 3700000000 0
sqlite3 "$TMP/b1.sqlite" "UPDATE PERFKIT_CLOCKS SET realtimeNs = realtimeNs + 2 WHERE at = 'end'"
cp "$TMP/b1.sqlite" "$TMP/b2.sqlite"
# another run of the program on that host (its own pid in its metadata: a
# copy of one capture would be refused as that capture twice), whose
# process shares the first's pid as well (--force: merge refuses a pid of
# one host in two captures at the same time otherwise)
sqlite3 "$TMP/b2.sqlite" "UPDATE PERFKIT_META SET value = value / 100 WHERE key = 'duration_ns';
	UPDATE PERFKIT_META SET value = value + 1 WHERE key = 'pid'"
run merge --force -o "$TMP/abb.sqlite" "$TMP/a.sqlite" "$TMP/b1.sqlite" "$TMP/b2.sqlite"
expect_status "merge of a host's two captures of different lengths" 0
# the same kernel of both (each its host's index above the pid bits)
apart=$(sqlite3 "$TMP/abb.sqlite" "WITH k AS (SELECT globalPid >> 48 AS h, start, row_number() OVER
	(PARTITION BY globalPid >> 48 ORDER BY start, end) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL)
	SELECT max(abs(b.start - a.start)) FROM k a JOIN k b ON a.n = b.n AND a.h = 1 AND b.h = 2")
expect_that "a host's captures of different lengths do not move apart ($apart ns)" [ "$apart" = 0 ]

# The collectives of a real DDP job, one capture per rank on two GPUs
# (tests/data/ddp/two_gpus): rank 0's capture rewritten as host node-b's
# (the first capture's host is the time base, so rank 1's stays).
rank0=$D/ddp/two_gpus/ddp2_rank0.sqlite
rank1=$D/ddp/two_gpus/ddp2_rank1.sqlite
cp "$rank0" "$TMP/r0-own.sqlite"
cp "$rank1" "$TMP/r1.sqlite"
# the truth: the same merge on the one host they ran on, nothing moved
"$PERFKIT" merge -o "$TMP/ddp-one.sqlite" "$TMP/r1.sqlite" "$TMP/r0-own.sqlite" >/dev/null ||
	{ echo "FAIL: merge of the truth" >&2; exit 1; }

# left MERGED: the largest and the mean distance in ns of rank 0's kernels
# from where they are in the truth
left() {
	sqlite3 -separator ' ' "$1" "ATTACH '$TMP/ddp-one.sqlite' AS one;
		WITH a AS (SELECT start, row_number() OVER (ORDER BY start, end) n
			FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid >> 48 = 1),
		b AS (SELECT start, row_number() OVER (ORDER BY start, end) n FROM one.CUPTI_ACTIVITY_KIND_KERNEL
			WHERE globalPid IN (SELECT globalPid FROM one.PROCESSES ORDER BY rowid DESC LIMIT 1))
		SELECT max(abs(a.start - b.start)), CAST(round(abs(avg(a.start - b.start))) AS INTEGER)
		FROM a JOIN b USING (n)"
}

# ddp_case NAME ERROR_NS PPM [R0 R1]: rank 0 as node-b's with its
# realtime clock ERROR_NS ahead and both its clocks PPM ppm fast, merged
# after rank 1 (or R0 and R1, the captures to merge)
ddp_case() {
	local name=$1 m="$TMP/ddp-$2-$3.sqlite" error max mean r0=${4:-$TMP/r0.sqlite} r1=${5:-$TMP/r1.sqlite}
	[ -n "${4:-}" ] || as_other_host "$TMP/r0-own.sqlite" "$TMP/r0.sqlite" 3700000000 "$2" "$3"
	run merge -o "$m" "$r1" "$r0"
	expect_status "$name: merge" 0
	expect_out "$name" "time base: collectives"
	error=$(meta "$m" time_error_ns)
	read -r max mean <<<"$(left "$m")"
	expect_that "$name: rank 0's kernels within 10 us of the truth (at most $max ns off, $mean on average)" \
		le "$max" 10000
	expect_that "$name: the stated error ($error ns) covers what is left ($max ns)" le "$max" "$error"
	# the job's span: rank 0's start and end, back on rank 1's clock
	expect_that "$name: the job lasts what it lasted ($(meta "$m" duration_ns) ns against \
$(meta "$TMP/ddp-one.sqlite" duration_ns))" python3 -c 'import sys; sys.exit(abs(int(sys.argv[1]) -
		int(sys.argv[2])) > 10000)' "$(meta "$m" duration_ns)" "$(meta "$TMP/ddp-one.sqlite" duration_ns)"
	last=$m
}
ddp_case "realtime clocks 2 ms apart" 2000000 0
ddp_case "both of node-b's clocks 50 ppm fast" 2000000 50

# What is said of the time base: the overview's rows, the same by map and
# reduce as of the merged capture, and diagnose's header
"$PERFKIT" report --format=json "$last" >"$TMP/ov-merged.json"
"$PERFKIT" report --format=json "$TMP/r1.sqlite" "$TMP/r0.sqlite" >"$TMP/ov-job.json"
row() { python3 -c 'import json, sys
run = [r for r in json.load(open(sys.argv[1]))["reports"] if r["name"] == "overview_run"][0]
print("\n".join(r["Value"] for r in run["rows"] if r["Item"] == sys.argv[2]))' "$1" "$2"; }
expect_that "the overview says the time base ($(row "$TMP/ov-merged.json" "Time base"))" \
	[ "$(row "$TMP/ov-merged.json" "Time base")" = \
	"collectives ($(meta "$last" time_collectives) matched across hosts)" ]
expect_that "the overview says the alignment error ($(row "$TMP/ov-merged.json" "Alignment error"))" \
	[ "$(row "$TMP/ov-merged.json" "Alignment error")" = \
	"$(python3 -c 'import sys; print("%.3f us" % (int(sys.argv[1]) / 1e3))' "$(meta "$last" time_error_ns)")" ]
expect_that "map and reduce says the same as the merged capture" cmp -s \
	<(grep -v '"File"' "$TMP/ov-job.json") <(grep -v '"File"' "$TMP/ov-merged.json")
"$PERFKIT" report --format=json "$TMP/ddp-one.sqlite" >"$TMP/ov-one.json"
expect_that "a job of one host has no such rows" [ -z "$(row "$TMP/ov-one.json" "Time base")" ]
run diagnose "$TMP/r1.sqlite" "$TMP/r0.sqlite"
expect_status "diagnose of the two hosts' job" 0
expect_that "diagnose's header says the time base and error" \
	grep -qx "time base: $(row "$TMP/ov-merged.json" "Time base"); estimated alignment error: $(row \
	"$TMP/ov-merged.json" "Alignment error")" "$TMP/out"

# A communicator only some ranks are in (a tensor-parallel group beside
# the data-parallel one): one of rank 0's all-reduces becomes another
# communicator's (its payload names another), and rank 1, not in it, has
# no kernel of it. Known by kernel name and place, every later all-reduce
# of rank 0 would meet rank 1's next one; by communicator and place in it,
# each meets its own.
as_other_host "$TMP/r0-own.sqlite" "$TMP/r0-tp.sqlite" 3700000000 2000000
sqlite3 "$TMP/r0-tp.sqlite" "UPDATE NVTX_EVENTS SET binaryData = CAST(substr(binaryData, 1, 32) ||
	X'AAAAAAAAAAAAAAAA' || substr(binaryData, 41) AS BLOB) WHERE rowid = (SELECT n.rowid
	FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE s.value = 'ncclAllReduce'
	ORDER BY n.start LIMIT 1 OFFSET 9)"
cp "$TMP/r1.sqlite" "$TMP/r1-tp.sqlite"
sqlite3 "$TMP/r1-tp.sqlite" "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT k.rowid
	FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
	WHERE s.value LIKE 'ncclDevKernel_AllReduce%' ORDER BY k.start LIMIT 1 OFFSET 9)"
# the truth for these: rank 1 without that kernel, rank 0 as it was
cp "$TMP/r1-tp.sqlite" "$TMP/r1-tp-one.sqlite"
"$PERFKIT" merge -f -o "$TMP/ddp-one.sqlite" "$TMP/r1-tp-one.sqlite" "$TMP/r0-own.sqlite" >/dev/null
ddp_case "a communicator of rank 0 alone" 2000000 tp "$TMP/r0-tp.sqlite" "$TMP/r1-tp.sqlite"
finish
