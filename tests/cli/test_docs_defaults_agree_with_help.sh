# test_docs_defaults_agree_with_help.sh - every default a command's --help
# states is the one docs/commands.md (and README.md, and the paragraph of
# docs/ on that option) states, and every option --help lists is in
# docs/commands.md (tests/cli/docs_agree_with_help.py says how).
. "$(dirname "$0")/cli_lib.sh"

status=0
python3 "$(dirname "$0")/docs_agree_with_help.py" "$PERFKIT" "$PERFKIT_SOURCE" >"$TMP/out" 2>"$TMP/err" ||
	status=$?
cat "$TMP/out"
expect_status "--help and the docs state the same defaults" 0

# The check must be able to fail: a copy of the docs whose --flush-interval
# default is changed in docs/commands.md alone is refused.
mkdir -p "$TMP/src/docs"
cp "$PERFKIT_SOURCE/README.md" "$TMP/src/"
cp "$PERFKIT_SOURCE"/docs/*.md "$TMP/src/docs/"
want=$("$PERFKIT" run --help | sed -n 's/.*--flush-interval=MS .*(default \([0-9]*\)).*/\1/p')
sed -i "/--flush-interval/s/default $want/default $((want + 1))/" "$TMP/src/docs/commands.md"
status=0
python3 "$(dirname "$0")/docs_agree_with_help.py" "$PERFKIT" "$TMP/src" >"$TMP/out" 2>"$TMP/err" ||
	status=$?
expect_status "a default changed in the docs alone" 1
grep -q -- "--flush-interval: --help says default '$want'" "$TMP/out" &&
	pass "the changed default is named" || fail "the changed default is not named: $(cat "$TMP/out")"

finish
