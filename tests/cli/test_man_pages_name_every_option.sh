# test_man_pages_name_every_option.sh - the build made perfkit.1 and a
# perfkit-CMD.1 for every command; each page names every option its
# command's --help lists, perfkit.1 every command, and man reads each page
# without a warning.
. "$(dirname "$0")/cli_lib.sh"

man_dir=$PERFKIT_BUILD/cli/man
# troff to plain words: \- is -, font changes and \& go
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$1"; }

[ -f "$man_dir/perfkit.1" ] && pass "perfkit.1 built" || fail "no $man_dir/perfkit.1"
for cmd in $("$PERFKIT" --list-cmds); do
	page=$man_dir/perfkit-$cmd.1
	if [ ! -f "$page" ]; then
		fail "no man page for $cmd ($page)"
		continue
	fi
	grep -q "perfkit-$cmd(1)" <(plain "$man_dir/perfkit.1") && pass "perfkit.1 names perfkit-$cmd(1)" ||
		fail "perfkit.1 does not name perfkit-$cmd(1)"
	"$PERFKIT" "$cmd" --help >"$TMP/help"
	missing=""
	n=0
	for option in $(grep -oE '^ +(-[A-Za-z], )?--[a-z0-9-]+' "$TMP/help" | grep -oE -- '-(-[a-z0-9-]+|[A-Za-z])'); do
		n=$((n + 1))
		grep -qE -- "(^|[^a-z0-9-])$option([^a-z0-9-]|$)" <(plain "$page") || missing="$missing $option"
	done
	# a command without options (recover) lists none, not even -h
	grep -q '^usage: ' "$TMP/help" && [ -z "$missing" ] && pass "perfkit-$cmd.1 names its $n options" ||
		fail "perfkit-$cmd.1 lacks$missing (of $n)"
	# the page is the build's current one: what the binary prints now
	cmp -s "$page" <("$PERFKIT" help --man "$cmd") && pass "perfkit-$cmd.1 is current" ||
		fail "perfkit-$cmd.1 differs from 'perfkit help --man $cmd'"
	if command -v groff >/dev/null; then
		warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$warnings" ] && pass "groff reads perfkit-$cmd.1 cleanly" ||
			fail "groff warns on perfkit-$cmd.1: $warnings"
	fi
done

finish
