#!/usr/bin/env bash
# test_diff_job_every_rank_and_api.sh - `perfkit diff` of two jobs shows the
# kernel, copy, range and API rows of every rank (it showed the slowest
# rank's only), and its CUDA API calls section is counted from the
# captures and labelled by the one noise rule of the other sections: a
# label never contradicts its row's Delta, the same capture is "same"
# everywhere, and a call made slower (an edited copy of a real capture: no
# real pair changes one call alone) is "slower" one way and "faster" the
# other.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
J=$D/ddp/two_gpus
BASE=$J/ddp2_even.sqlite
NEW=$J/ddp2_straggler.sqlite

# What one rank of a capture holds, in SQL: kernels, copies and memsets,
# NVTX ranges, runtime and driver calls.
rank_counts() { # FILE RANK
	sqlite3 -readonly "$1" "
	WITH p AS (SELECT globalPid AS gp FROM PERFKIT_PROCESS_INFO WHERE rank = $2)
	SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = (SELECT gp FROM p)),
	(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE globalPid = (SELECT gp FROM p))
	+ (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE globalPid = (SELECT gp FROM p)),
	(SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND \"end\" IS NOT NULL
		AND ((globalTid >> 24) << 24) = (SELECT gp FROM p)),
	(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE ((globalTid >> 24) << 24) = (SELECT gp FROM p))
	+ (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER WHERE ((globalTid >> 24) << 24) = (SELECT gp FROM p))"
}
# The kernel keys (name and launch shape) one rank has in either capture.
rank_kernel_keys() { # RANK
	sqlite3 -readonly "$BASE" "ATTACH '$NEW' AS n;
	SELECT count(*) FROM (
	SELECT coalesce(d.value, s.value, ''), k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ
	FROM main.CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN main.StringIds d ON d.id = k.demangledName
	LEFT JOIN main.StringIds s ON s.id = k.shortName
	WHERE k.globalPid = (SELECT globalPid FROM main.PERFKIT_PROCESS_INFO WHERE rank = $1)
	UNION
	SELECT coalesce(d.value, s.value, ''), k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ
	FROM n.CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN n.StringIds d ON d.id = k.demangledName
	LEFT JOIN n.StringIds s ON s.id = k.shortName
	WHERE k.globalPid = (SELECT globalPid FROM n.PERFKIT_PROCESS_INFO WHERE rank = $1))"
}

# ---- two jobs: every rank's rows ----------------------------------------
run diff --format=json "$BASE" "$NEW"
expect_status "diff of two 2-rank jobs" 0
if python3 - "$TMP/out" "$(rank_counts "$BASE" 0)" "$(rank_counts "$BASE" 1)" \
	"$(rank_counts "$NEW" 0)" "$(rank_counts "$NEW" 1)" "$(rank_kernel_keys 0)" "$(rank_kernel_keys 1)" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rep = {r["name"]: r["rows"] for r in doc["reports"]}
base = {0: list(map(int, sys.argv[2].split("|"))), 1: list(map(int, sys.argv[3].split("|")))}
new = {0: list(map(int, sys.argv[4].split("|"))), 1: list(map(int, sys.argv[5].split("|")))}
keys = {0: int(sys.argv[6]), 1: int(sys.argv[7])}
for i, sec in enumerate(("diff_kernels", "diff_copies", "diff_ranges", "diff_api")):
    assert {r["Rank"] for r in rep[sec]} == {"rank 0", "rank 1"}, sec
    for rank in (0, 1):
        rows = [r for r in rep[sec] if r["Rank"] == "rank %d" % rank]
        got = (sum(r["Base Count"] for r in rows), sum(r["New Count"] for r in rows))
        assert got == (base[rank][i], new[rank][i]), (sec, rank, got, base[rank][i], new[rank][i])
        if sec == "diff_kernels":
            assert len(rows) == keys[rank], (rank, len(rows), keys[rank])
        # one noise rule: no label contradicts its Delta
        for r in rows:
            if r["Change"] in ("slower", "more calls"):
                assert r["Delta/iter (ns)"] > 0, r
            if r["Change"] in ("faster", "fewer calls"):
                assert r["Delta/iter (ns)"] < 0, r
PY
then pass "every rank's kernels, copies, ranges and API calls, counted as the captures hold them"
else fail "every rank's kernels, copies, ranges and API calls, counted as the captures hold them"; fi
run diff "$BASE" "$NEW"
expect_out "the API section in text" "CUDA API calls \(by name\) \(diff_api\)"
expect_out "a row of rank 1 among the kernels" "^rank 1 +[a-z ]+ +-?[0-9,]+ .*ncclDevKernel_AllReduce"

# ---- the API section's labels ------------------------------------------
H=$D/hash_embedding_optimized.sqlite
run diff --format=json "$H" "$H"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = [r for rep in doc["reports"] if rep["name"] == "diff_api" for r in rep["rows"]]
assert rows and all(r["Change"] == "same" and r["Delta/iter (ns)"] == 0 for r in rows), rows[:3]
PY
then pass "a capture against itself: every API call the same"
else fail "a capture against itself: every API call the same"; fi
cp "$H" "$TMP/slow_launch.sqlite"
sqlite3 "$TMP/slow_launch.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = start + 4 * (\"end\" - start)
	WHERE nameId IN (SELECT id FROM StringIds WHERE value GLOB 'cudaLaunchKernel_v[0-9]*')"
total=$(sqlite3 -readonly "$TMP/slow_launch.sqlite" "SELECT coalesce(sum(\"end\" - start), 0)
	FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN
	(SELECT id FROM StringIds WHERE value GLOB 'cudaLaunchKernel_v[0-9]*')")
expect_that "the copy holds launches ($total ns)" test "$total" -gt 0
for way in slower faster; do
	if [ $way = slower ]; then run diff --format=json "$H" "$TMP/slow_launch.sqlite"
	else run diff --format=json "$TMP/slow_launch.sqlite" "$H"; fi
	if python3 - "$TMP/out" "$way" "$total" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["Name"]: r for rep in doc["reports"] if rep["name"] == "diff_api" for r in rep["rows"]}
row = rows["cudaLaunchKernel"]
edited = row["New Total (ns)"] if sys.argv[2] == "slower" else row["Base Total (ns)"]
assert edited == int(sys.argv[3]), (row, sys.argv[3])
assert row["Change"] == sys.argv[2], row
assert (row["Delta/iter (ns)"] > 0) == (sys.argv[2] == "slower"), row
# the other calls did not change
assert all(r["Change"] == "same" for n, r in rows.items() if n != "cudaLaunchKernel"), rows
PY
	then pass "cudaLaunchKernel 4x longer: $way, the rest the same"
	else fail "cudaLaunchKernel 4x longer: $way, the rest the same"; fi
done
finish
