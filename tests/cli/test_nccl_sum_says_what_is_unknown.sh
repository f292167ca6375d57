#!/usr/bin/env bash
# test_nccl_sum_says_what_is_unknown.sh - nccl_sum on the two-GPU DDP
# capture where rank 1 is late (tests/data/ddp/two_gpus): a rank that
# arrives early spends its wait inside its NCCL kernel, so the kernel times
# of rank 0 (who waits) and rank 1 (who is waited for) give bus bandwidths
# far apart for the same all-reduces; without the waiting, both ranks' are
# those of one transfer. What the report cannot fill it says in a note: no
# measured link (and how to measure one); no message size, for the reason
# the capture shows (copies the test makes with sqlite3: NCCL's payloads
# taken out, as before NCCL 2.23; NCCL's ranges taken out, as with
# NCCL_NVTX_DISABLE=1; every NVTX event taken out, as without NVTX
# tracing); no wait, for one rank of a collective alone (--rank).
. "$(dirname "$0")/cli_lib.sh"

late="$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_straggler.sqlite"

run report --report=nccl_sum --format=json "$late"
expect_status "nccl_sum" 0
cp "$TMP/out" "$TMP/late.json"
expect_that "the same all-reduces: kernel bus bandwidths far apart, without the waiting one transfer's" python3 - "$TMP/late.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
ar = {x["Rank"]: x for x in r["rows"] if x["Kind"] == "AllReduce" and x["Message Size"] == "16-256 MiB"}
assert ar[0]["Bus BW (GB/s)"] * 10 < ar[1]["Bus BW (GB/s)"], ar  # rank 0 waits in its kernels
assert ar[0]["Wait (ns)"] > 0 and ar[0]["Wait (ns)"] > ar[1]["Wait (ns)"], ar
x0, x1 = ar[0]["Xfer Bus BW (GB/s)"], ar[1]["Xfer Bus BW (GB/s)"]
assert abs(x0 - x1) <= 0.1 * max(x0, x1), (x0, x1)
# the kernel's variant, from its name, is what the column says it is
assert ar[0]["Kernel Variant"] == "RING LL" and "Algorithm" not in r["columns"], r["columns"]
assert r["waits_unknown"] == 0 and r["sizes_unknown"] == 0, r
assert r["link_unmeasured"] == len(r["rows"]), r
PY
run report --report=nccl_sum "$late"
expect_out "text: the empty link column says how to measure one" \
	'^note: Link BW and Bus/Link are empty: .*run `perfkit peaks` on a machine with several GPUs and `perfkit peaks --store FILE`$'

cp "$late" "$TMP/link.sqlite"
sqlite3 "$TMP/link.sqlite" "CREATE TABLE IF NOT EXISTS PERFKIT_PEAKS (key TEXT PRIMARY KEY, value REAL, text TEXT);
	INSERT INTO PERFKIT_PEAKS VALUES ('p2p_bytes_per_s', 400e9, NULL)"
run report --report=nccl_sum --format=json "$TMP/link.sqlite"
expect_that "a measured link: in every row, and no note" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
assert r["link_unmeasured"] == 0 and all(x["Link BW (GB/s)"] == 400 for x in r["rows"]), r' "$TMP/out"

run report --report=nccl_sum --format=json --rank=0 "$late"
expect_that "--rank=0: no other rank to wait for, and the note says so" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
assert all(x["Wait (ns)"] is None and x["Xfer Bus BW (GB/s)"] is None for x in r["rows"]), r["rows"]
assert r["waits_unknown"] == sum(x["Calls"] for x in r["rows"]), r' "$TMP/out"

# why_sizes NAME SQL PATTERN: on a copy changed by SQL, the note on sizes
# matches PATTERN and does not blame what the copy still has
why_sizes() {
	cp "$late" "$TMP/$1.sqlite"
	sqlite3 "$TMP/$1.sqlite" "$2" || { fail "$1: cannot change the copy"; return; }
	run report --report=nccl_sum "$TMP/$1.sqlite"
	expect_out "$1: why no message size" "^note: [0-9]+ NCCL kernels without a message size: $3"
	run diagnose --format=json "$TMP/$1.sqlite"
	expect_that "$1: small_collectives not run, for that reason" python3 -c '
import json, re, sys
r = {s["rule"]: s["reason"] for s in json.load(open(sys.argv[1]))["not_run"]}["small_collectives"]
assert re.match("no message sizes: " + sys.argv[2], r), r' "$TMP/out" "$3"
}
why_sizes no_payloads "UPDATE NVTX_EVENTS SET binaryData = NULL" \
	'their NCCL calls carry no NVTX payload \(NCCL before 2\.23\);?'
run report --report=nccl_sum "$TMP/no_payloads.sqlite"
expect_that "no payloads: NVTX was traced, and the note does not say otherwise" \
	bash -c "! grep -q 'not traced' '$TMP/out'"
why_sizes no_nccl_ranges "DELETE FROM NVTX_EVENTS WHERE domainId = (SELECT domainId FROM NVTX_EVENTS n
	JOIN StringIds s ON s.id = n.textId WHERE s.value = 'ncclAllReduce' LIMIT 1)" \
	'no NVTX range of domain NCCL was open at their launch \(.*NCCL_NVTX_DISABLE=1'
why_sizes no_nvtx "DELETE FROM NVTX_EVENTS" 'the capture holds no NVTX events: NVTX was not traced'
finish
