#!/usr/bin/env bash
# test_gate_refuses_baseline_without_keys.sh - a baseline whose "keys" is
# empty is refused by gate with one line and status 2: against it every
# key of the capture was "added", none compared, and the gate passed ("12
# keys within budget"). The baseline is one `perfkit baseline save` wrote
# of a real capture, its keys emptied; the same file with its keys still
# gates the capture (and a slower copy of it fails), so that the refusal
# is the empty keys' alone.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
cap=$D/clean_loop.sqlite

run baseline save -o "$TMP/baseline.json" "$cap"
expect_status "baseline save" 0
python3 - "$TMP/baseline.json" "$TMP/empty.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
assert b["keys"], "the saved baseline has keys"
b["keys"] = {}
json.dump(b, open(sys.argv[2], "w"), indent=2)
PY

run gate --baseline="$TMP/empty.json" "$cap"
expect_status "gate against a baseline without keys" 2
expect_one_error_line "gate against a baseline without keys" \
	"baseline .*empty\.json: \"keys\" is empty: there is nothing to gate against"
expect_that "gate against a baseline without keys prints no verdict" [ ! -s "$TMP/out" ]
run gate --format=json --baseline="$TMP/empty.json" "$cap"
expect_status "gate json against a baseline without keys" 2

# the same baseline with its keys: compared, and a slower copy fails
run gate --baseline="$TMP/baseline.json" "$cap"
expect_status "gate against the baseline with its keys" 0
expect_out "gate against the baseline with its keys" "^gate passed: [1-9][0-9]* keys within budget"
cp "$cap" "$TMP/slow.sqlite"
sqlite3 "$TMP/slow.sqlite" "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 3 * (end - start)"
run gate --baseline="$TMP/baseline.json" "$TMP/slow.sqlite"
expect_status "gate of a slower copy against the baseline with its keys" 1
finish
