#!/usr/bin/env bash
# test_diagnose_thresholds_one_object.sh - `diagnose --thresholds FILE`
# takes a file of one JSON object and nothing after it but white space. A
# second value after the object (`{"severity.high":0.3} {"x":1}`), or text
# behind a NUL byte, was accepted and the first object applied alone: now
# one line says where the object ends, and the exit status is 2. An object
# alone, with a trailing newline, still applies.
. "$(dirname "$0")/cli_lib.sh"

capture="$PERFKIT_TEST_DATA/clean_loop.sqlite"
object='{"severity.high":0.3}'

printf '%s {"x":1}\n' "$object" >"$TMP/two.json"
run diagnose --thresholds "$TMP/two.json" "$capture"
expect_status "a second JSON value after the object" 2
expect_one_error_line "a second JSON value after the object" \
	"two.json: text after the JSON object \\(at byte $((${#object} + 1))\\)"

printf '%s\n\0{"severity.high":0.9}' "$object" >"$TMP/nul.json"
run diagnose --thresholds "$TMP/nul.json" "$capture"
expect_status "text behind a NUL byte" 2
expect_one_error_line "text behind a NUL byte" "nul.json: text after the JSON object"

printf '%s trailing' "$object" >"$TMP/words.json"
run diagnose --thresholds "$TMP/words.json" "$capture"
expect_status "words after the object" 2
expect_one_error_line "words after the object" "words.json: text after the JSON object"

# one object and white space applies, as --set applies the same value (one
# that changes the findings: the default gives other severities)
printf '{"severity.low":0.5}\n\n' >"$TMP/one.json"
run diagnose --format=json --thresholds "$TMP/one.json" "$capture"
expect_status "one object and white space" 0
cp "$TMP/out" "$TMP/by_file.json"
run diagnose --format=json --set severity.low=0.5 "$capture"
expect_that "the file's value applies as --set's does" cmp -s "$TMP/out" "$TMP/by_file.json"
run diagnose --format=json "$capture"
differs() { ! cmp -s "$1" "$2"; }
expect_that "the value changes the findings" differs "$TMP/out" "$TMP/by_file.json"

finish
