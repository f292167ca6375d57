#!/usr/bin/env bash
# record_cost_check.sh - are host times without perfkit's own cost right?
#
# perfkit reports host times both as measured and with its recording cost
# removed (report/analysis/core/record_cost.h: `perfkit peaks` measures the
# cost per launch and per other call on this machine). This checks that
# against the programs' own untraced runs: each program of the corpus
# (tests/gpu/programs) runs ROUNDS times untraced and under `perfkit run`,
# interleaved, and the captures of the first round are kept; the step
# perfkit predicts without its cost is read from them
# (`perfkit diagnose`'s step_ns_unrecorded). Run on the GPU machine from
# the repository root:
#
#   bench/record_cost_check.sh [BUILD [NAME...]]
#
# BUILD is perfkit staged as tests/gpu/run.sh --stage makes it (default
# .gpu/collector). Writes $OUT/record_cost/{steps.tsv,peaks.json,NAME.sqlite}
# and $OUT/record_cost.log; prints every round, then the medians last.
set -u

BUILD=$(cd "${1:-.gpu/collector}" && pwd) || exit 2
shift $(($# > 0 ? 1 : 0))
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=(graph_eager alloc_churn phases_no_nvtx hf_gpt2_infer_b1 pageable_sync_copies)
ROUNDS=${ROUNDS:-7}
SRC=$(cd "${SRC:-$(dirname "$0")/../tests/gpu/programs}" && pwd) || exit 2
OUT=${OUT:-$(mktemp -d)}
DIR=$OUT/record_cost
LOG=$OUT/record_cost.log
PERFKIT=$BUILD/cli/perfkit
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || NVCC=nvcc
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
mkdir -p "$DIR"
: >"$LOG"
W=$(mktemp -d)
BIN=$W/bin
mkdir -p "$BIN"

# the cost per call first: captures made after it carry it (PERFKIT_PEAKS)
"$PERFKIT" peaks --refresh -F json >"$DIR/peaks.json" 2>>"$LOG" || echo "peaks failed" >>"$LOG"

command_of() {
	case $1 in
	graph_eager) CMD=("$BIN/graph_chain") ;;
	alloc_churn) CMD=("$BIN/alloc_churn") ;;
	phases_no_nvtx | pinned_overlap) CMD=("$BIN/$1") ;;
	pageable_pinned) CMD=(python3 "$SRC/pageable_sync_copies.py" --pinned) ;;
	*) CMD=(python3 "$SRC/$1.py") ;;
	esac
}
for src in graph_chain alloc_churn phases_no_nvtx; do
	"$NVCC" -arch=sm_90 -O2 -o "$BIN/$src" "$SRC/$src.cu" -ldl >>"$LOG" 2>&1 || echo "build $src failed" >>"$LOG"
done

step_ms() { awk '$1 == "step_ms" { v = $2 } END { print (v == "" ? "-" : v) }' "$1"; }

printf 'program\tround\tuntraced_ms\ttraced_ms\n' >"$DIR/steps.tsv"
for r in $(seq 1 "$ROUNDS"); do
	for name in "${NAMES[@]}"; do
		command_of "$name"
		(cd "$W" && timeout -k 5 60 "${CMD[@]}") >"$W/u.log" 2>&1
		cat "$W/u.log" >>"$LOG"
		cap=$W/cap.sqlite
		[ "$r" = 1 ] && cap=$DIR/$name.sqlite
		(cd "$W" && timeout -k 5 90 "$PERFKIT" run -f -o "$cap" -- "${CMD[@]}") >"$W/t.log" 2>&1
		cat "$W/t.log" >>"$LOG"
		printf '%s\t%s\t%s\t%s\n' "$name" "$r" "$(step_ms "$W/u.log")" "$(step_ms "$W/t.log")" >>"$DIR/steps.tsv"
	done
done
cat "$DIR/steps.tsv"
# The table: the programs' own step times (medians of the rounds, with the
# range), and the share of the traced step perfkit says is left without its
# recording (diagnose's step_ns_unrecorded over step_ns, from the first
# round's capture) against the share the untraced runs show.
python3 - "$DIR/steps.tsv" "$PERFKIT" "$DIR" <<'EOF' | tee "$DIR/table.txt"
import csv, json, os, statistics, subprocess, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("%-22s %6s %22s %22s %7s %7s %6s" % ("program", "rounds", "untraced_ms (range)", "traced_ms (range)",
                                          "actual", "perfkit", "error"))
for name in dict.fromkeys(r["program"] for r in rows):
    u = [float(r["untraced_ms"]) for r in rows if r["program"] == name and r["untraced_ms"] != "-"]
    t = [float(r["traced_ms"]) for r in rows if r["program"] == name and r["traced_ms"] != "-"]
    if not u or not t:
        print("%-22s no times" % name)
        continue
    actual = statistics.median(u) / statistics.median(t)
    said = None
    out = subprocess.run([sys.argv[2], "diagnose", "-F", "json", os.path.join(sys.argv[3], name + ".sqlite")],
                         capture_output=True, text=True)
    if out.returncode == 0:
        v = json.loads(out.stdout).get("verdict") or {}
        if v.get("step_ns_unrecorded"):
            said = v["step_ns_unrecorded"] / v["step_ns"]
    print("%-22s %6d %8.4f (%.4f-%.4f) %8.4f (%.4f-%.4f) %7.3f %7s %6s" % (
        name, len(u), statistics.median(u), min(u), max(u), statistics.median(t), min(t), max(t), actual,
        "-" if said is None else "%.3f" % said, "-" if said is None else "%+.0f%%" % (100 * (said / actual - 1))))
EOF
rm -rf "$W"
