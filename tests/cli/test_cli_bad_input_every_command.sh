#!/usr/bin/env bash
# test_cli_bad_input_every_command.sh - every command that reads a capture
# (report, diagnose, roofline, diff on either side, gate, baseline save,
# top FILE, merge) refuses a file it cannot read the same way: one line on stderr
# naming the file, exit status 2, no crash. The files: missing, empty,
# text, a truncated copy of a real capture, a foreign SQLite database, and
# a real capture with metrics whose metrics pages were overwritten (the
# header and schema still read: only a query of those pages finds it; the
# roofline used to call it "no metrics" and exit 0). A capture without
# metrics is valid input to roofline: exit 0, as report on a capture
# without kernels.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
good="$D/gpu_work.sqlite"

: >"$TMP/empty.sqlite"
printf 'perfkit capture? no, a note\n' >"$TMP/text.sqlite"
head -c 50000 "$good" >"$TMP/truncated.sqlite"
sqlite3 "$TMP/foreign.sqlite" 'CREATE TABLE t(a)'
# the metrics table and its index of a roofline capture, overwritten
cp "$D/rollout_naive_roofline.sqlite" "$TMP/metrics_damaged.sqlite"
page=$(sqlite3 "$TMP/metrics_damaged.sqlite" "PRAGMA page_size")
for root in $(sqlite3 "$TMP/metrics_damaged.sqlite" \
	"SELECT rootpage FROM sqlite_master WHERE tbl_name = 'PERFKIT_KERNEL_METRICS'"); do
	head -c "$page" /dev/zero | tr '\0' 'x' |
		dd of="$TMP/metrics_damaged.sqlite" bs="$page" seek=$((root - 1)) conv=notrunc 2>/dev/null
done
sqlite3 "$TMP/metrics_damaged.sqlite" "SELECT count(*) FROM PERFKIT_KERNEL_METRICS" >/dev/null 2>&1 &&
	{ echo "FAIL: the metrics pages were not damaged" >&2; exit 1; }
"$PERFKIT" baseline save -o "$TMP/baseline.json" "$good" >/dev/null ||
	{ echo "FAIL: cannot save a baseline" >&2; exit 1; }

# refuse NAME FILE ARGS...: one line naming FILE, exit 2
refuse() {
	local name=$1 file=$2
	shift 2
	run "$@" </dev/null
	expect_status "$name" 2
	expect_one_error_line "$name" "$(basename "$file")"
}

# a build without ncurses has no top to ask
run top
grep -q "built without ncurses" "$TMP/err" && have_top=false || have_top=true
$have_top || skip "top FILE" "this perfkit was built without ncurses"

for f in "$TMP/missing.sqlite" "$TMP/empty.sqlite" "$TMP/text.sqlite" "$TMP/truncated.sqlite" \
	"$TMP/foreign.sqlite"; do
	b=$(basename "$f" .sqlite)
	refuse "report: $b" "$f" report "$f"
	refuse "report csv: $b" "$f" report --format=csv --report=cuda_gpu_kern_sum "$f"
	refuse "diagnose: $b" "$f" diagnose "$f"
	refuse "roofline: $b" "$f" roofline "$f"
	refuse "diff base: $b" "$f" diff "$f" "$good"
	refuse "diff new: $b" "$f" diff "$good" "$f"
	refuse "gate: $b" "$f" gate --baseline="$TMP/baseline.json" "$f"
	refuse "baseline save: $b" "$f" baseline save -o "$TMP/out.json" "$f"
	refuse "merge: $b" "$f" merge -o "$TMP/merged.sqlite" "$good" "$f"
	! $have_top || refuse "top: $b" "$f" top "$f"
done

for format in text csv json; do
	refuse "roofline $format: metrics pages damaged" "$TMP/metrics_damaged.sqlite" \
		roofline --format="$format" "$TMP/metrics_damaged.sqlite"
	grep -q "no hardware metrics" "$TMP/out" && fail "roofline $format: damage is not read as no metrics" ||
		pass "roofline $format: damage is not read as no metrics"
done

# a capture without metrics: said so, exit 0; CSV and JSON stay parseable
run roofline "$good"
expect_status "roofline on a capture without metrics" 0
expect_out "roofline on a capture without metrics" "no hardware metrics"
run roofline --format=json "$good"
expect_status "roofline json without metrics" 0
python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["reports"][0]; sys.exit(0 if r["rows"] == [] else 1)' "$TMP/out" &&
	pass "roofline json without metrics: an empty table" || fail "roofline json without metrics: an empty table"
expect_err "roofline json without metrics" "no hardware metrics"

finish
