#!/usr/bin/env bash
# test_report_perfetto_cleared_state.sh - a Perfetto trace whose sequence
# clears its incremental state again and again holds the same events as the
# ordinary trace. The writer holds its interned strings to a budget (16 MiB)
# and past it clears the state and interns anew; perfetto_small_budget
# (tests/tools) is the same writer with a budget of 4 KiB, which real
# captures pass every few hundred events. Both traces of each capture
# decode with protoc and pass tests/tools/check_perfetto_trace.py, and its
# list of their events, every interned id resolved in the state it was
# given in (names, categories, argument names and values), is the same.
. "$(dirname "$0")/cli_lib.sh"

proto_dir="$PERFKIT_SOURCE/report/export/perfetto"
check="$PERFKIT_SOURCE/tests/tools/check_perfetto_trace.py"
small="$PERFKIT_TEST_TOOLS/perfetto_small_budget"

if built_without_perfetto; then
	skip "the cleared state" "built without protobuf-c"
	finish
	exit
fi
command -v protoc >/dev/null || { echo "FAIL: protoc is needed (scripts/install-deps.sh)" >&2; exit 1; }

# events NAME CAPTURE TRACE: TRACE decoded and checked, its events in $TMP/NAME.events
events() {
	protoc --proto_path="$proto_dir" --decode=perfetto.protos.Trace perfetto_subset.proto \
		<"$3" >"$TMP/$1.txt" 2>"$TMP/$1.decode-err" &&
		python3 "$check" "$2" "$TMP/$1.txt" --events "$TMP/$1.events" >/dev/null
}

for f in transformer_naive.sqlite corpus/hf_gpt2_train.sqlite nsys/cloverleaf-cuda.sqlite \
	ddp/ddp2_even.sqlite; do
	capture=$PERFKIT_TEST_DATA/$f
	name=$(basename "$f" .sqlite)
	run report --format=perfetto -o "$TMP/$name.pftrace" "$capture"
	expect_status "$name: the ordinary trace" 0
	"$small" "$capture" "$TMP/$name.small.pftrace" 2>"$TMP/err"
	status=$?
	expect_status "$name: the trace with a small budget" 0
	expect_that "$name: the ordinary trace decodes and matches the capture" \
		events "$name" "$capture" "$TMP/$name.pftrace"
	expect_that "$name: the small budget's trace decodes and matches the capture" \
		events "$name.small" "$capture" "$TMP/$name.small.pftrace"
	# a clearing is a packet with a clock snapshot; the first one starts
	# the sequence
	clears=$(grep -c "^ *clock_snapshot {" "$TMP/$name.small.txt")
	expect_that "$name: the small budget's trace clears its state (${clears}x)" [ "$clears" -gt 10 ]
	expect_that "$name: both traces hold the same events" \
		cmp -s "$TMP/$name.events" "$TMP/$name.small.events"
done
finish
