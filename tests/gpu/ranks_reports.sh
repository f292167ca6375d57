#!/usr/bin/env bash
# ranks_reports.sh - on a GPU machine of two or more GPUs (device kind
# nvidia-h200-x2): `perfkit peaks` measures peer-to-peer bandwidth, and the
# job reports read a real 2-rank DDP job, one GPU a rank, against it.
#
#   tests/gpu/ranks_reports.sh [BUILD]     BUILD as for tests/gpu/run.sh
#
# 1. perfkit peaks --refresh: with several GPUs p2p_bytes_per_s is there
#    and above zero, with a pair each way per other GPU; with one it is not.
# 2. tests/gpu/ddp_job.sh (its captures into $OUT), then for each capture:
#    the peaks stored into it (--store), rank_sum and nccl_sum printed; every
#    NCCL kernel matched to its call with its message size, the link's
#    bandwidth beside each bus bandwidth, no bus bandwidth above 1.5 times
#    the link's.
# Prints the tables and a PASS/FAIL line per check; exit 1 on any FAIL.
set -u
BUILD=$(cd "${1:-.gpu/collector}" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
export OUT
fails=0
check() { # NAME COMMAND...
	if "${@:2}"; then echo "PASS  $1"; else echo "FAIL  $1"; fails=$((fails + 1)); fi
}
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
echo "GPUs: $NGPU"

"$PERFKIT" peaks --refresh --format=json >"$OUT/peaks.json" 2>"$OUT/peaks.log"
check "peaks runs" test -s "$OUT/peaks.json"
"$PERFKIT" peaks
check "peer-to-peer bandwidth with $NGPU GPUs" python3 - "$OUT/peaks.json" "$NGPU" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
p2p = d["peaks"].get("p2p_bytes_per_s")
pairs = d.get("p2p", [])
if n < 2:
    assert p2p is None and pairs == [], (p2p, pairs)
else:
    assert p2p and p2p > 1e9, p2p
    assert len(pairs) == 2 * (n - 1), pairs
    for p in pairs:
        print("  GPU %d -> GPU %d  %.1f GB/s%s" % (p["src"], p["dst"], p["bytes_per_s"] / 1e9,
              "" if p["peer_access"] else " (no peer access)"))
PY

"$SRC/ddp_job.sh" "$BUILD" >"$OUT/ddp_job.out" 2>&1
tail -8 "$OUT/ddp_job.out"
for f in "$OUT"/ddp2_even.sqlite "$OUT"/ddp2_straggler.sqlite; do
	[ -f "$f" ] || { echo "FAIL  $(basename "$f"): not captured"; fails=$((fails + 1)); continue; }
	"$PERFKIT" peaks --store "$f" >/dev/null
	"$PERFKIT" report --report=rank_sum,nccl_sum "$f"
	"$PERFKIT" report --report=nccl_sum --format=json "$f" >"$f.nccl.json"
	check "$(basename "$f"): every NCCL kernel with its call and size, against the link" \
		python3 - "$f.nccl.json" "$NGPU" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
assert r["calls_unmatched"] == 0 and r["sizes_unknown"] == 0, r
assert r["rows"], "no NCCL collectives"
if int(sys.argv[2]) >= 2:
    for x in r["rows"]:
        assert x["Link BW (GB/s)"], x
        assert x["Bus/Link (%)"] is None or x["Bus/Link (%)"] < 150, x
PY
done
for f in "$OUT"/ddp2_even.sqlite "$OUT"/ddp2_straggler.sqlite; do
	[ -f "$f" ] || continue
	"$PERFKIT" diagnose "$f"
	"$PERFKIT" diagnose --format=json "$f" >"$f.diag.json"
	case $f in
	*straggler*)
		check "$(basename "$f"): rank 1 the straggler, rank 0's wait per step within 10% of its kernels' rows" \
			python3 "$SRC/../tools/ddp_waits.py" "$f" "$f.diag.json" 1 ;;
	*)
		check "$(basename "$f"): no straggler" python3 -c '
import json, sys
assert "straggler" not in [x["rule"] for x in json.load(open(sys.argv[1]))["findings"]]' "$f.diag.json" ;;
	esac
	[ "$NGPU" -ge 2 ] && check "$(basename "$f"): collectives judged against the measured link" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "collective_bandwidth" not in [x["rule"] for x in d["not_run"]], d["not_run"]' "$f.diag.json"
done
exit $((fails > 0))
