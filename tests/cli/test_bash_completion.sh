# test_bash_completion.sh - cli/perfkit-completion.bash completes the
# commands, each command's options (as its --help lists them) and the report
# names of `report --list`, asking the perfkit being completed.
. "$(dirname "$0")/cli_lib.sh"

# complete WORD...: COMPREPLY for the command line WORD... (the last word
# being completed), one per line in $TMP/out
complete_line() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _perfkit
		((${#COMPREPLY[@]} == 0)) || printf "%s\n" "${COMPREPLY[@]}"' _ "$PERFKIT_SOURCE/cli/perfkit-completion.bash" "$PERFKIT" "$@" \
		>"$TMP/out" 2>"$TMP/err"
	status=$?
}

complete_line ""
for cmd in $("$PERFKIT" --list-cmds); do
	grep -qx "$cmd" "$TMP/out" && pass "completes the command $cmd" || fail "does not complete $cmd"
done
complete_line di
[ "$(sort "$TMP/out" | tr '\n' ' ')" = "diagnose diff " ] && pass "di completes to diagnose and diff" ||
	fail "di completes to $(cat "$TMP/out")"

for cmd in $("$PERFKIT" --list-cmds); do
	complete_line "$cmd" --
	missing=""
	for option in $("$PERFKIT" "$cmd" --help | grep -oE '^ +(-[A-Za-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+'); do
		grep -qE -- "^$option=?$" "$TMP/out" || missing="$missing $option"
	done
	[ -z "$missing" ] && pass "completes every option of $cmd" || fail "$cmd: does not complete$missing"
done
complete_line run --outp
[ "$(cat "$TMP/out")" = "--output=" ] && pass "--outp completes to --output=" ||
	fail "--outp completes to '$(cat "$TMP/out")'"

# report names, after --report= (as bash splits it at '=') and after a comma
"$PERFKIT" report --list | awk '{ print $1 }' | sort >"$TMP/names"
complete_line report --report =
sort "$TMP/out" | cmp -s - "$TMP/names" && pass "--report= completes every report name" ||
	fail "--report= completes $(tr '\n' ' ' <"$TMP/out")"
complete_line report --report = overview,cuda_gpu_k
[ "$(cat "$TMP/out")" = "overview,cuda_gpu_kern_sum" ] && pass "completes the name after a comma" ||
	fail "after a comma: '$(cat "$TMP/out")'"

# after run's --, the words are the program's: files, not options
complete_line run -- python --
[ ! -s "$TMP/out" ] && pass "no perfkit options for the program's words" ||
	fail "offers $(tr '\n' ' ' <"$TMP/out") after --"

finish
