# bash completion for stepbox(1)
_stepbox()
{
	local cur prev words cword
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		cword=$COMP_CWORD
	}
	local commands="run learn check policy env guide doctor mcp"
	local options="--policy --consume --read --write --workdir --workdir-readonly
		--allow-broad-grants --persist --persist-shared --persist-wait --unix --home-file
		--net --backend --env --unset --clean-env --timeout --grace --explain
		--enable-audit --report --limit --no-limits --verbose --quiet --help"
	if [ "$cword" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help -V --version" -- "$cur"))
		return
	fi
	# after --, the command and its arguments
	local i
	for ((i = 2; i < cword; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case $prev in
	-p | --policy | --report | -o | --output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	-r | --read | -w | --write | -C | --workdir | --persist | --persist-shared | --unix)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--backend)
		COMPREPLY=($(compgen -W "auto stacked landlock mountns seatbelt none" -- "$cur"))
		return
		;;
	--net)
		COMPREPLY=($(compgen -W "allow none tcp:" -- "$cur"))
		return
		;;
	--limit)
		COMPREPLY=($(compgen -W "memory= tasks= cpu_s= file_size= open_files= output= tmp=" -- "$cur"))
		return
		;;
	--format)
		COMPREPLY=($(compgen -W "json sbpl" -- "$cur"))
		return
		;;
	esac
	case ${COMP_WORDS[1]} in
	check) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
	learn) COMPREPLY=($(compgen -W "$options --output --rounds --" -- "$cur")) ;;
	env) COMPREPLY=($(compgen -W "$options --json --null" -- "$cur")) ;;
	doctor) COMPREPLY=($(compgen -W "$options --json" -- "$cur")) ;;
	mcp) COMPREPLY=($(compgen -W "$options --max-parallel" -- "$cur")) ;;
	policy) COMPREPLY=($(compgen -W "$options --format" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "$options --" -- "$cur")) ;;
	esac
}
complete -F _stepbox stepbox
