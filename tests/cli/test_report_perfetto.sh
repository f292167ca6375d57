#!/usr/bin/env bash
# test_report_perfetto.sh - the native Perfetto trace (--format=perfetto) of
# every real capture in tests/data and of the nsys exports in shared/, of
# stores with hostile names, no events, only API calls and overlapping
# ranges, and of narrowed windows: each decodes with protoc against
# perfkit's subset of Perfetto's protos, and tests/tools/check_perfetto_trace.py
# compares it with the capture (one slice per kernel, copy, memset, API call
# and NVTX range with its times; flows paired; interned ids defined; slices
# nested per track). A build without protobuf-c says so in one line.
. "$(dirname "$0")/cli_lib.sh"

proto_dir="$PERFKIT_SOURCE/report/export/perfetto"
check="$PERFKIT_SOURCE/tests/tools/check_perfetto_trace.py"

run report --format=perfetto -o "$TMP/probe.pftrace" "$PERFKIT_TEST_DATA/gpu_work.sqlite"
if grep -q "built without protobuf-c" "$TMP/err"; then
	expect_status "perfetto without protobuf-c" 2
	expect_err_line "perfetto without protobuf-c" \
		"perfkit: built without protobuf-c: --format=perfetto is unavailable"
	[ -e "$TMP/probe.pftrace" ] && fail "no file is made without protobuf-c" || pass "no file made"
	finish
	exit
fi
command -v protoc >/dev/null || { echo "FAIL: protoc is needed (scripts/install-deps.sh)" >&2; exit 1; }

# export_and_check NAME CAPTURE [CHECK_ARGS] [-- REPORT_ARGS...]
export_and_check() {
	local name=$1 capture=$2 check_args=$3
	shift 3
	run report --format=perfetto "$@" -o "$TMP/$name.pftrace" "$capture"
	expect_status "$name perfetto export" 0
	if protoc --proto_path="$proto_dir" --decode=perfetto.protos.Trace perfetto_subset.proto \
		<"$TMP/$name.pftrace" >"$TMP/$name.txt" 2>"$TMP/$name.decode-err" &&
		python3 "$check" "$capture" "$TMP/$name.txt" $check_args; then
		pass "$name perfetto trace decodes and matches the capture"
	else
		head -c 600 "$TMP/$name.decode-err" >&2
		fail "$name perfetto trace decodes and matches the capture"
	fi
}

captures=("$PERFKIT_TEST_DATA"/*.sqlite)
for f in "$PERFKIT_SOURCE"/../shared/nsys-exports/*.sqlite; do
	[ -f "$f" ] && captures+=("$f")
done
for f in "${captures[@]}"; do
	export_and_check "$(basename "$f" .sqlite)" "$f" ""
done

# Names with quotes, newlines, ESC and invalid UTF-8: decoded strictly as
# UTF-8 by the checker, the bad bytes shown as U+FFFD, the rest kept.
store="$TMP/names.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }
export_and_check names "$store" ""
if grep -q 'name: "line1\\nline2"' "$TMP/names.txt" && grep -q '\\357\\277\\275\\357\\277\\275utf8' "$TMP/names.txt"; then
	pass "hostile names kept, invalid bytes replaced"
else
	fail "hostile names kept, invalid bytes replaced"
fi

for kind in empty api-only overlap; do
	"$PERFKIT_TEST_TOOLS/write_report_store" "$TMP/$kind.sqlite" --edge="$kind" ||
		{ echo "FAIL: cannot write the $kind store" >&2; exit 1; }
	export_and_check "$kind" "$TMP/$kind.sqlite" ""
done
if grep -q 'name: "overlapping slices"' "$TMP/overlap.txt"; then
	pass "ranges that do not nest go to an overlap track"
else
	fail "ranges that do not nest go to an overlap track"
fi

# --from/--to/--range narrow the trace as they narrow the Chrome trace: a
# 5 ms window from the middle kernel of gpu_work (times count from the
# capture's start, the first clock snapshot of the full trace).
f="$PERFKIT_TEST_DATA/gpu_work.sqlite"
base=$(grep -m1 -A3 'clock_id: 6' "$TMP/gpu_work.txt" | sed -n 's/.*timestamp: //p' | head -1)
mid=$(sqlite3 "$f" "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1 OFFSET (SELECT count(*) / 2 FROM CUPTI_ACTIVITY_KIND_KERNEL)")
from=$((mid - base))
export_and_check window "$f" --window --from="$from" --to=$((from + 5000000))
whole=$(grep -c TYPE_SLICE_BEGIN "$TMP/gpu_work.txt")
part=$(grep -c TYPE_SLICE_BEGIN "$TMP/window.txt")
if [ "$part" -gt 0 ] && [ "$part" -lt "$whole" ]; then
	pass "--from/--to keep part of the slices ($part of $whole)"
else
	fail "--from/--to keep part of the slices ($part of $whole)"
fi
range=$(sqlite3 "$f" "SELECT s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59 LIMIT 1" 2>/dev/null)
if [ -n "$range" ]; then
	export_and_check range "$f" --window --range="$range"
fi
run report --format=perfetto --range=no-such-range -o "$TMP/none.pftrace" "$f"
expect_status "unknown --range" 2

finish
