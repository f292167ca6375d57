#!/usr/bin/env bash
# test_ranks_hosts_of_job.sh - a job read from captures of several hosts
# names no rank by the job's list of hosts. Its run metadata names every
# host ("nid001608, nid008553"); a rank whose capture does not record its
# own host (an Nsight Systems export, whose host is the export's system
# environment) has none known in the job, and the job's ranks are not taken
# to share a host. On the two nsys exports of tests/data/nsys (two hosts of
# Perlmutter), each alone naming its host, read by map and reduce and from
# their merged capture (two runs months apart, taken as one job: --force);
# and on the per-rank captures of
# the two-GPU DDP run (tests/data/ddp/two_gpus), copies whose hosts only
# their run metadata names, told apart, with a measured link stored: the
# link between hosts is the network, so collective_bandwidth does not run.
. "$(dirname "$0")/cli_lib.sh"

N="$PERFKIT_TEST_DATA/nsys"
a="$N/saxpy-mpi-cuda-rank0.sqlite"
b="$N/cloverleaf-cuda.sqlite"
host_of() { sqlite3 "$1" "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'"; }
ha=$(host_of "$a")
hb=$(host_of "$b")
[ -n "$ha" ] && [ -n "$hb" ] && [ "$ha" != "$hb" ] || { echo "FAIL: the exports name two hosts" >&2; exit 1; }

run report --report=rank_sum --format=json "$a"
expect_that "one export alone: its rank on its host" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
assert [r["Process"].split(" \u00b7 ")[1] for r in rows] == [sys.argv[2]], rows' "$TMP/out" "$ha"

run report --force --report=rank_sum --format=json "$a" "$b"
expect_status "rank_sum of the two exports as one job" 0
expect_that "the job of two hosts: no rank named by the job's hosts" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
assert [r["Rank"] for r in rows] == [0, 1], rows
for r in rows:
    assert sys.argv[2] not in r["Process"] and sys.argv[3] not in r["Process"], r["Process"]
    assert r["Process"].startswith("rank %d \u00b7 GPU " % r["Rank"]), r["Process"]' "$TMP/out" "$ha" "$hb"
# read by map and reduce above; its merged capture names them the same
cp "$TMP/out" "$TMP/mapped.json"
"$PERFKIT" merge --force -o "$TMP/merged.sqlite" "$a" "$b" >/dev/null 2>&1
run report --report=rank_sum --format=json "$TMP/merged.sqlite"
expect_that "the merged capture of two hosts: the same ranks, named the same" cmp -s \
	<(grep -v '"File"' "$TMP/out") <(grep -v '"File"' "$TMP/mapped.json")
run report --force --format=chrome -o "$TMP/trace.json" "$a" "$b"
expect_that "chrome: no process named by the job's hosts" python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("name") == "process_name":
        n = e["args"]["name"]
        assert sys.argv[2] not in n and sys.argv[3] not in n, n' "$TMP/trace.json" "$ha" "$hb"

D="$PERFKIT_TEST_DATA/ddp/two_gpus"
for r in 0 1; do
	cp "$D/ddp2_rank$r.sqlite" "$TMP/h$r.sqlite"
	sqlite3 "$TMP/h$r.sqlite" "UPDATE PERFKIT_PROCESS_INFO SET host = NULL;
		UPDATE PERFKIT_META SET value = 'host$r' WHERE key = 'host';
		CREATE TABLE IF NOT EXISTS PERFKIT_PEAKS (key TEXT PRIMARY KEY, value REAL, text TEXT);
		INSERT INTO PERFKIT_PEAKS VALUES ('p2p_bytes_per_s', 50e9, NULL)" ||
		{ echo "FAIL: cannot make the copies" >&2; exit 1; }
done
run diagnose --format=json "$TMP/h0.sqlite" "$TMP/h1.sqlite"
expect_status "diagnose of the ranks of two hosts" 0
expect_that "two hosts: the link is not judged against peer-to-peer copies" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["rank"] for r in d["ranks"]] == [0, 1], d["ranks"]
r = {s["rule"]: s["reason"] for s in d["not_run"]}.get("collective_bandwidth", "")
assert r.startswith("the ranks are on several hosts"), d["not_run"]' "$TMP/out"
finish
