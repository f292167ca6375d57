# test_run_help_names_output_patterns.sh - `perfkit run --help` names every
# -o pattern the expander accepts (the list its own refusal gives) and the
# default output name; each pattern the help names is accepted.
. "$(dirname "$0")/cli_lib.sh"
cd "$TMP"

run run --help
expect_status "run --help" 0
output_line=$(grep -E '^ +-o, --output=FILE' "$TMP/out")
[ -n "$output_line" ] && pass "run --help has -o" || fail "run --help has no -o line"
grep -q 'default perfkit-PROGRAM-N\.sqlite' <<<"$output_line" &&
	pass "-o names the default output" || fail "-o does not name the default: $output_line"

# the patterns the code knows, as its refusal of an unknown one lists them
run run -o 'x-%y.sqlite' -- true
expect_status "-o with an unknown pattern" 2
known=$(grep -o '%[a-z%]\({[A-Z]*}\)\?' "$TMP/err" | grep -v '^%y$' | sort -u)
[ "$(wc -l <<<"$known")" -ge 5 ] && pass "the refusal lists $(echo $known)" ||
	fail "the refusal lists too few patterns: $(cat "$TMP/err")"
for pattern in $known; do
	grep -qF -- "$pattern" <<<"$output_line" && pass "run --help names $pattern" ||
		fail "run --help does not name $pattern: $output_line"
done

# every pattern the help names expands: the run gets past -o (here it stops
# later, at the collector or the program, never at "-o:")
for pattern in $(grep -o '%[a-z%]\({[A-Z]*}\)\?' <<<"$output_line" | sort -u); do
	spelled=${pattern/\{VAR\}/\{HOME_SHORT\}}
	HOME_SHORT=h RANK=0 run run -o "x-$spelled.sqlite" -- /nonexistent-program
	if grep -q '^perfkit: -o:' "$TMP/err"; then
		fail "-o x-$spelled.sqlite is refused: $(cat "$TMP/err")"
	else
		pass "-o x-$spelled.sqlite is accepted"
	fi
done

finish
