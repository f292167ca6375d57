# test_readme_front_door.sh - README.md is a front door: at most 250 lines,
# opening with the two set-up commands (the main job, and the tests exactly
# as CI runs them: .ci/run), each naming a script that is there.
. "$(dirname "$0")/cli_lib.sh"

readme=$PERFKIT_SOURCE/README.md
lines=$(wc -l <"$readme")
[ "$lines" -le 250 ] && pass "README.md is $lines lines" || fail "README.md is $lines lines (at most 250)"

# the first two lines after the title that are not blank are the two commands
mapfile -t first < <(sed -n '2,$p' "$readme" | grep -v '^[[:space:]]*$' | head -2)
main_job=$(sed 's/^ *//; s/ *#.*//' <<<"${first[0]}")
tests=$(sed 's/^ *//; s/ *#.*//' <<<"${first[1]}")
[ "$main_job" = "scripts/quickstart.sh" ] && pass "first command: $main_job" ||
	fail "the first command is '${first[0]}', not scripts/quickstart.sh"
[ -x "$PERFKIT_SOURCE/scripts/quickstart.sh" ] && pass "scripts/quickstart.sh is there" ||
	fail "scripts/quickstart.sh is missing or not executable"
ci=$(grep -E '^[^#]*tests/run\.sh' "$PERFKIT_SOURCE/.ci/run" | sed 's/^ *//; s/exec //')
[ -n "$tests" ] && [ "$tests" = "$ci" ] && pass "second command is CI's: $tests" ||
	fail "the second command '$tests' is not what .ci/run runs ('$ci')"
for script in $tests; do
	case $script in
	*/*) [ -x "$PERFKIT_SOURCE/$script" ] && pass "$script is there" || fail "$script is missing" ;;
	esac
done

# what the README says the main job's example writes is what run names it
grep -q 'perfkit-python-1\.sqlite' "$readme" && pass "README names the default output" ||
	fail "README does not name perfkit-python-1.sqlite"
run run --help
grep -q 'perfkit-PROGRAM-N\.sqlite' "$TMP/out" && pass "run --help names the default output" ||
	fail "run --help does not name perfkit-PROGRAM-N.sqlite"

# The example's output is real: each line the README shows under
# "$ perfkit diagnose" is in what diagnose prints for the capture it names
# (a "[...]" marks words left out: each part on either side is there).
capture=$(grep -o 'perfkit diagnose tests/data/[a-z_]*\.sqlite' "$readme" | head -1 | cut -d' ' -f3)
[ -n "$capture" ] && [ -f "$PERFKIT_SOURCE/$capture" ] && pass "the example names $capture" ||
	fail "README's example names no capture of tests/data"
run diagnose "$PERFKIT_SOURCE/$capture"
shown=$(sed -n '/^    \$ perfkit diagnose /,/^$/p' "$readme" | sed '1d; /^$/d; s/^    //')
[ -n "$shown" ] && pass "the example shows $(wc -l <<<"$shown") lines" || fail "no example output in README"
while IFS= read -r line; do
	while IFS= read -r part; do
		part=$(sed 's/^ *//; s/ *$//' <<<"$part")
		[ -z "$part" ] || grep -qF -- "$part" "$TMP/out" || fail "not in diagnose's output: '$part'"
	done < <(sed 's/\[\.\.\.\]/\n/g' <<<"$line")
done <<<"$shown"
pass "every line of the example is diagnose's"

finish
