# bash completion for kgate(1).  Installed as
# $datadir/bash-completion/completions/kgate, loaded on demand.
#
# The commands and flags mirror the usage text in core/main.c;
# tests/integration/packaging.sh fails when a flag is missing here.

_kgate_backends="bubblewrap slirp-filter seatbelt"

_kgate()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -n = || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    if [ "$cword" -eq 1 ]; then
        COMPREPLY=($(compgen -W 'init network doctor run plugins --version --help' -- "$cur"))
        return
    fi

    local cmd=${words[1]} i
    case $cmd in
    init)
        COMPREPLY=($(compgen -W '--force' -- "$cur"))
        ;;
    network)
        if [ "$cword" -eq 2 ]; then
            COMPREPLY=($(compgen -W 'off open restricted' -- "$cur"))
        elif [ "${words[2]}" = restricted ]; then
            COMPREPLY=($(compgen -A hostname -- "$cur"))
        fi
        ;;
    doctor)
        case $prev in
        --backend)
            COMPREPLY=($(compgen -W "$_kgate_backends" -- "$cur"))
            return
            ;;
        esac
        COMPREPLY=($(compgen -W '--json --backend' -- "$cur"))
        ;;
    plugins)
        COMPREPLY=($(compgen -W '--json' -- "$cur"))
        ;;
    run)
        # Everything after "--" is the sandboxed command: complete it as if
        # it had been typed on its own.
        for ((i = 2; i < cword; i++)); do
            if [ "${words[i]}" = -- ]; then
                if declare -F _command_offset >/dev/null 2>&1; then
                    _command_offset $((i + 1))
                elif [ $((i + 1)) -eq "$cword" ]; then
                    COMPREPLY=($(compgen -c -- "$cur"))
                else
                    COMPREPLY=($(compgen -f -- "$cur"))
                fi
                return
            fi
        done
        case $prev in
        --allow-path)
            COMPREPLY=($(compgen -f -- "$cur"))
            compopt -o filenames 2>/dev/null
            return
            ;;
        --allow-net)
            COMPREPLY=($(compgen -A hostname -- "$cur"))
            return
            ;;
        --backend)
            COMPREPLY=($(compgen -W "$_kgate_backends" -- "$cur"))
            return
            ;;
        esac
        COMPREPLY=($(compgen -W '--allow-path --allow-net --backend --dry-run --pty --no-pty --' -- "$cur"))
        ;;
    esac
}

complete -F _kgate kgate
