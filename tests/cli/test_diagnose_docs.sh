#!/usr/bin/env bash
# test_diagnose_docs.sh - docs/diagnose.md stays in step with the code: every
# setting `perfkit diagnose --list-settings` prints is in the settings table
# with the default it prints, and every rule id diagnose can report is
# documented (as a heading or in backticks). diagnose lists only the rules
# that fired or could not run, so the ids come from the rule tables in
# report/analysis/rules/rules_*.c (an entry's id may name several rules: "a+b"), from the ids
# the rule files pass to diag__add/diag__skip, and from what diagnose reports
# on the captures in tests/data/.
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_SOURCE:?}" "${PERFKIT_TEST_DATA:?}"
DOC=$PERFKIT_SOURCE/docs/diagnose.md

if [ ! -f "$DOC" ]; then
	fail "docs/diagnose.md exists"
	finish
fi

# ---- settings ----------------------------------------------------------
run diagnose --list-settings
expect_status "diagnose --list-settings" 0
nkeys=0
while read -r key value _; do
	[ -n "$key" ] || continue
	nkeys=$((nkeys + 1))
	# the table row: | `key` | default | meaning |
	row=$(grep -F -- "| \`$key\` |" "$DOC" | head -n 1)
	if [ -z "$row" ]; then
		fail "setting $key is in the settings table of docs/diagnose.md"
		continue
	fi
	doc_value=$(awk -F'|' '{ gsub(/[ \t]/, "", $3); print $3 }' <<<"$row")
	# a whole number (a size in bytes) is printed in full, as written
	if [[ "$doc_value" =~ ^[0-9]+$ ]]; then
		if [ "$value" = "$doc_value" ]; then pass "setting $key documented with default $value"
		else fail "setting $key: docs/diagnose.md says default '$doc_value', --list-settings prints $value"; fi
		continue
	fi
	# a fraction: %g's 6 significant digits, so the two agree to that precision
	if awk -v a="$doc_value" -v b="$value" 'BEGIN {
		if (a !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) exit 1
		d = a - b; if (d < 0) d = -d
		m = b < 0 ? -b : b
		exit !(d <= 1e-5 * m || (m == 0 && d == 0))
	}'; then
		pass "setting $key documented with default $value"
	else
		fail "setting $key: docs/diagnose.md says default '$doc_value', --list-settings prints $value"
	fi
done <"$TMP/out"
if [ "$nkeys" -ge 10 ]; then pass "--list-settings lists $nkeys settings"
else fail "--list-settings lists settings (got $nkeys)"; fi

# ---- rule ids ----------------------------------------------------------
# Rule table entries: { "id", "title", fn }, ids joined by '+'.
table_ids=$(grep -hoE '^[[:space:]]*\{ "[a-z0-9_+]+"' "$PERFKIT_SOURCE"/report/analysis/rules/rules_*.c |
	sed -E 's/^[^"]*"([^"]*)"/\1/' | tr '+' '\n')
# The ids a finding or a skip is filed under (the call may span lines).
call_ids=$(cat "$PERFKIT_SOURCE"/report/analysis/rules/rules_*.c | tr '\n\t' '  ' |
	grep -oE 'diag__(add|skip)\( *ctx, *"[a-z0-9_]+"' | sed -E 's/.*"([^"]*)"/\1/')
# What diagnose reports on the real captures.
reported_ids=
for capture in "$PERFKIT_TEST_DATA"/*.sqlite; do
	run diagnose --format=json "$capture"
	if [ "$status" -ne 0 ]; then
		fail "diagnose --format=json $(basename "$capture") exits 0"
		continue
	fi
	reported_ids+=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for x in d["findings"] + d["not_run"]:
    print(x["rule"])' "$TMP/out")$'\n'
done

ntable=$(sort -u <<<"$table_ids" | grep -c .)
if [ "$ntable" -ge 10 ]; then pass "rule tables name $ntable rules"
else fail "rule tables in report/analysis/rules/rules_*.c name rules (got $ntable)"; fi

for id in $(printf '%s\n%s\n%s\n' "$table_ids" "$call_ids" "$reported_ids" | grep . | sort -u); do
	if grep -qE -- "^#+ .*\\b$id\\b" "$DOC" || grep -qF -- "\`$id\`" "$DOC"; then
		pass "rule $id documented"
	else
		fail "rule $id is documented in docs/diagnose.md (a heading or \`$id\`)"
	fi
	# an id diagnose files findings under must be in a rule table
	if ! grep -qxF -- "$id" <<<"$table_ids"; then
		fail "rule $id (from diag__add/diag__skip or diagnose's output) is in a rule table"
	fi
done
finish
