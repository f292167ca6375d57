#!/usr/bin/env bash
# test_diagnose_corpus_expectations.sh - what `perfkit diagnose` says of the
# corpus (tests/data/corpus, the DDP captures) against what was written of
# each program before it was captured (tests/gpu/programs/expected.json,
# EXPECTED.md): the step holds GPU work, the verdict's bound, the first
# finding and its change, no advice naming what the program does already
# or what its step is not bound by, no finding it must not have, and the
# straggler before the waiting rank's findings. The disagreements still
# open are listed, with why, in tests/gpu/programs/open_disagreements.txt;
# one not listed fails the test, and so does a listed one that holds now.
. "$(dirname "$0")/cli_lib.sh"
P=$PERFKIT_SOURCE/tests/gpu/programs

[ -f "$PERFKIT_TEST_DATA/corpus/hf_gpt2_train.sqlite" ] ||
	{ fail "corpus captures (configure the build to unpack them)"; finish; }
if python3 "$PERFKIT_SOURCE/tests/tools/corpus_check.py" "$PERFKIT" \
	--require step,bound,first,change,not_advice,not_rule,order,gain \
	--known "$P/open_disagreements.txt" >"$TMP/table" 2>&1; then
	pass "every expectation holds but the open ones ($(grep -c ' ok ' "$TMP/table") checks hold, $(grep -c ' open ' "$TMP/table") open)"
else
	grep -E ' (FAIL|closed|stale) ' "$TMP/table" >&2
	fail "the corpus' expectations (the lines above)"
fi

# The checker itself must see a disagreement: the same captures against an
# expectation that no advice mentions "the" cannot hold.
python3 - "$P/expected.json" "$TMP/expected.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["programs"] = {"graph_eager": dict(d["programs"]["graph_eager"], advice_must_not_mention=["the"])}
json.dump(d, open(sys.argv[2], "w"))
PY
if CORPUS_EXPECTED="$TMP/expected.json" python3 "$PERFKIT_SOURCE/tests/tools/corpus_check.py" "$PERFKIT" \
	--require not_advice >"$TMP/table2" 2>&1; then
	fail "the checker finds a banned word every change has"
else
	pass "the checker finds a banned word every change has"
fi
finish
