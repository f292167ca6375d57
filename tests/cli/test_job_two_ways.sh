#!/usr/bin/env bash
# One 2-rank DDP job on two GPUs captured two ways (tests/data/ddp/two_gpus):
# in one file by one `perfkit run -- torchrun ...`, and as one file per rank
# (`torchrun --no-python perfkit run -o 'ddp2_rank%r.sqlite' ...`), two runs
# of the same program. Read as a job, the per-rank files report byte for
# byte what their `perfkit merge` reports, in every report; against the
# one-file capture, everything that does not depend on timing is the same
# for each rank: its kernels by name and count, its NCCL collectives by
# kind, size, calls and bytes, its NVTX ranges by name and count. (Times
# differ between two runs: an all-reduce's kernel lasts as long as it waits
# for the other rank.)
set -u
. "$(dirname "$0")/cli_lib.sh"
D=$(cd "$(dirname "$0")/../data/ddp/two_gpus" && pwd)
ONE=$D/ddp2_even.sqlite
RANKS=("$D/ddp2_rank0.sqlite" "$D/ddp2_rank1.sqlite")

run merge -o "$TMP/merged.sqlite" "${RANKS[@]}"
expect_status "merge of the per-rank files" 0
for r in $("$PERFKIT" report --list | awk '{ print $1 }'); do
	"$PERFKIT" report --format=json --report="$r" "${RANKS[@]}" >"$TMP/job.json" 2>/dev/null
	"$PERFKIT" report --format=json --report="$r" "$TMP/merged.sqlite" >"$TMP/merged.json" 2>/dev/null
	# the overview's File row names each input: the job's files, the merged capture
	python3 - "$TMP/job.json" "$TMP/merged.json" >"$TMP/same" <<'PY'
import json, sys
def load(p):
    d = json.load(open(p))
    for rep in d.get("reports", []):
        rep["rows"] = [r for r in rep.get("rows", []) if r.get("Item") != "File"]
    return d
print("same" if load(sys.argv[1]) == load(sys.argv[2]) else "differ")
PY
	expect_that "$r of the per-rank files as a job equals their merge's" grep -qx same "$TMP/same"
done

# what does not depend on timing, per rank: columns picked by name
columns() { # FILE... -- REPORT RANK COLUMNS
	local files=() report rank cols
	while [ "$1" != -- ]; do files+=("$1"); shift; done
	report=$2 rank=$3 cols=$4
	"$PERFKIT" report --format=csv --report="$report" --rank="$rank" "${files[@]}" 2>/dev/null |
		python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
cols = sys.argv[1].split(",")
for line in sorted(",".join(r[c] for c in cols) for r in rows):
    print(line)' "$cols"
}

for rank in 0 1; do
	for spec in "cuda_gpu_kern_sum:Name,Instances" "nccl_sum:Kind,Message Size,Rank,Calls,Bytes,Type" \
		"nvtx_sum:Range,Instances"; do
		set -- "${spec%%:*}" "${spec#*:}"
		columns "$ONE" -- "$1" "$rank" "$2" >"$TMP/one.txt"
		columns "${RANKS[@]}" -- "$1" "$rank" "$2" >"$TMP/two.txt"
		expect_that "rank $rank: $1 ($2) of the one-file capture has rows" test -s "$TMP/one.txt"
		expect_that "rank $rank: $1 ($2) the same captured both ways" cmp -s "$TMP/one.txt" "$TMP/two.txt"
	done
done
finish
