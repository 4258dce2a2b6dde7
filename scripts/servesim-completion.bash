# bash completion for servesim. Installed as
# share/bash-completion/completions/servesim; or: source this file.
#
# Everything it offers comes from the servesim being completed, so it never
# drifts from the binary: the verbs from `servesim --help`, each verb's
# flags from `servesim VERB --help`, and the model, hardware and scenario
# ids from `servesim list`.

_servesim_ids() {   # $1 $2: the servesim command, then models|hardware|scenarios
	"$1" list 2>/dev/null | awk -v want="$2" '/^[a-z]/ { sec = $1 } /^  [^ ]/ && sec == want { print $1 }'
}

_servesim() {
	local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local IFS=$'\n'
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$("$bin" --help 2>/dev/null | awk '/^  [a-z]/ { print $1 }')
--help" -- "$cur"))
		return
	fi
	local verb=${COMP_WORDS[1]} words="" list=""
	case $prev in
	--model) list=models ;;
	--hardware|--devices) list=hardware ;;
	--format) words=$'text\njson\ncsv\nprom' ;;
	--out|--plot|--trace|--profile|--save|-o)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	esac
	if [[ -n $list ]]; then
		# comma-separated lists (--hardware h100-sxm,l40s): complete the last item
		local head=""
		[[ $cur == *,* ]] && head=${cur%,*}, && cur=${cur##*,}
		COMPREPLY=($(compgen -P "$head" -W "$(_servesim_ids "$bin" "$list")" -- "$cur"))
		compopt -o nospace 2>/dev/null
		return
	fi
	if [[ -n $words ]]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$bin" "$verb" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)" -- "$cur"))
		return
	fi
	# A scenario id, or a file (INI, result JSON, a folder).
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -W "$(_servesim_ids "$bin" scenarios)" -- "$cur") $(compgen -f -- "$cur"))
}

complete -F _servesim servesim
