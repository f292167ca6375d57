# perfkit-completion.bash - bash completion for perfkit, installed as
# share/bash-completion/completions/perfkit. It asks the perfkit being
# completed for its commands (--list-cmds), a command's options (help
# --options CMD, from the table --help prints) and the report names
# (report --list), so it never falls behind the binary.

_perfkit()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local perfkit=${COMP_WORDS[0]} cmd="" i

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) [[ $cmd == run || $cmd == top ]] && return 0 ;; # the program's own words
		-*) ;;
		*) [[ -z $cmd ]] && cmd=${COMP_WORDS[i]} ;;
		esac
	done
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$("$perfkit" --list-cmds 2>/dev/null) help --help --version" -- "$cur"))
		return 0
	fi
	if [[ $cmd == help ]]; then
		COMPREPLY=($(compgen -W "$("$perfkit" --list-cmds 2>/dev/null)" -- "$cur"))
		return 0
	fi
	# The option a value is for: bash splits "--report=over" at '=' into
	# "--report" "=" "over" (unless '=' was taken out of COMP_WORDBREAKS).
	local opt=$prev value=$cur head=""
	if [[ $cur == = ]]; then
		value=""
	elif [[ $prev == = && COMP_CWORD -ge 2 ]]; then
		opt=${COMP_WORDS[COMP_CWORD-2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*} value=${cur#*=} head=$opt=
	fi
	# --report=NAME,NAME: complete the name after the last comma
	if [[ $cmd == report && ( $opt == --report || $opt == -r ) ]]; then
		[[ $value == *,* ]] && head=$head${value%,*},
		local reports
		reports=$("$perfkit" report --list 2>/dev/null | awk '{ print $1 }')
		COMPREPLY=($(compgen -P "$head" -W "$reports" -- "${value##*,}"))
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$perfkit" help --options "$cmd" 2>/dev/null)" -- "$cur"))
		# "--output=" waits for its value: no space after it
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return 0
	fi
	# anything else is a file (-o default below)
	COMPREPLY=()
}
complete -o default -o bashdefault -F _perfkit perfkit
