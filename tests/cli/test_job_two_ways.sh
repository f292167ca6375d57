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
# for the other rank.) And the one-file capture split into a file per rank
# reads as the one-file capture itself, exactly.
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

# Exactly, on one run: the one-file capture split into one file per rank
# (each rank's rows alone, the tables of no process whole in both, the
# launcher's rows in neither) reads as a job just as the one-file capture
# reads, in every report and in diagnose: but for the File row, the
# launcher's own CUDA calls (cuda_api_sum, against the one-file capture
# without them) and correlation ids, which every merge renumbers per capture.
# split SRC DST PID...: SRC with the rows of those processes alone
split() {
	local src=$1 dst=$2 keep sql="" t c
	shift 2
	keep=$(IFS=,; echo "$*")
	cp "$src" "$dst"
	for t in $(sqlite3 "$dst" "SELECT name FROM sqlite_master WHERE type = 'table'"); do
		for c in globalPid globalTid; do
			[ -n "$(sqlite3 "$dst" "SELECT 1 FROM pragma_table_info('$t') WHERE name = '$c'")" ] &&
				sql="$sql DELETE FROM \"$t\" WHERE (($c >> 24) & 16777215) NOT IN ($keep);"
		done
	done
	sqlite3 "$dst" "$sql"
}
pid_of_rank() { sqlite3 "$ONE" "SELECT pid FROM PROCESSES WHERE globalPid =
	(SELECT globalPid FROM PERFKIT_PROCESS_INFO WHERE rank = $1)"; }
p0=$(pid_of_rank 0)
p1=$(pid_of_rank 1)
expect_that "the one-file capture holds a launcher beside its two ranks" \
	[ "$(sqlite3 "$ONE" "SELECT count(*) FROM PROCESSES WHERE pid NOT IN ($p0, $p1)")" = 1 ]
split "$ONE" "$TMP/split-0.sqlite" "$p0"
split "$ONE" "$TMP/split-1.sqlite" "$p1"
split "$ONE" "$TMP/no-launcher.sqlite" "$p0" "$p1"
# same_json A B: equal but for the File row, the file named and CorrId
same_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if k not in ("file", "CorrId") and x.get("Item") != "File"}
    if isinstance(x, list):
        return [strip(v) for v in x if not (isinstance(v, dict) and v.get("Item") == "File")]
    return x
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
PY
}
for r in $("$PERFKIT" report --list | awk '{ print $1 }'); do
	truth=$ONE
	[ "$r" != cuda_api_sum ] || truth=$TMP/no-launcher.sqlite
	"$PERFKIT" report --format=json --report="$r" "$TMP/split-0.sqlite" "$TMP/split-1.sqlite" \
		>"$TMP/split.json" 2>/dev/null
	"$PERFKIT" report --format=json --report="$r" "$truth" >"$TMP/one.json" 2>/dev/null
	expect_that "$r of the one-file capture split per rank is the one-file capture's" \
		same_json "$TMP/split.json" "$TMP/one.json"
done
"$PERFKIT" diagnose --format=json "$TMP/split-0.sqlite" "$TMP/split-1.sqlite" >"$TMP/split.json" 2>/dev/null
"$PERFKIT" diagnose --format=json "$TMP/no-launcher.sqlite" >"$TMP/one.json" 2>/dev/null
expect_that "diagnose of the one-file capture split per rank is the one-file capture's" \
	same_json "$TMP/split.json" "$TMP/one.json"

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
