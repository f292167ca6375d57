#!/usr/bin/env bash
# test_report_perfetto_pack.sh - the packets pf_pack.c packs by hand (a
# track event's, nearly every packet of a trace) are protobuf-c's bytes:
# `perfkit report --format=perfetto` of every capture in tests/data
# is byte for byte the trace of perfetto_library_pack
# (tests/tools), the same writer with every packet packed by protobuf-c.
. "$(dirname "$0")/cli_lib.sh"

library="$PERFKIT_TEST_TOOLS/perfetto_library_pack"

if built_without_perfetto; then
	skip "packets packed by hand" "built without protobuf-c"
	finish
	exit
fi
[ -x "$library" ] || { fail "the tool $library was not built"; finish; exit; }

compared=0
while IFS= read -r capture; do
	name=${capture#"$PERFKIT_TEST_DATA"/}
	run report --format=perfetto -o "$TMP/perfkit.pftrace" "$capture"
	if [ "$status" -ne 0 ]; then
		fail "$name: perfkit's trace"
		continue
	fi
	if ! "$library" "$capture" "$TMP/library.pftrace" 2>"$TMP/err"; then
		status=1
		fail "$name: the library's trace"
		continue
	fi
	if cmp -s "$TMP/perfkit.pftrace" "$TMP/library.pftrace"; then
		compared=$((compared + 1))
	else
		fail "$name: the trace differs from protobuf-c's ($(cmp "$TMP/perfkit.pftrace" "$TMP/library.pftrace" | head -c 200))"
	fi
	rm -f "$TMP/perfkit.pftrace" "$TMP/library.pftrace"
done < <(find "$PERFKIT_TEST_DATA" -name '*.sqlite' | sort)
# a test that compared nothing proves nothing
if [ "$compared" -ge 50 ]; then pass "$compared captures: the same bytes as protobuf-c's"
else fail "only $compared captures compared"; fi
finish
