# bash completion for kgate(1).  Installed as
# $datadir/bash-completion/completions/kgate, loaded on demand.
#
# The commands and flags mirror the usage text in core/cli/main.c;
# tests/integration/packaging.sh fails when a flag is missing here.

_kgate_backends="bubblewrap slirp-filter seatbelt"

# One candidate per line, so that file names with spaces stay whole.
_kgate_reply()
{
    mapfile -t COMPREPLY < <(compgen "$@")
}

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
        _kgate_reply -W 'init network doctor run plugins audit setup hook mcp --version --help' -- "$cur"
        return
    fi

    local cmd=${words[1]} i
    case $cmd in
    init)
        _kgate_reply -W '--force' -- "$cur"
        ;;
    network)
        if [ "$cword" -eq 2 ]; then
            _kgate_reply -W 'off open restricted' -- "$cur"
        elif [ "${words[2]}" = restricted ]; then
            _kgate_reply -A hostname -- "$cur"
        fi
        ;;
    doctor)
        case $prev in
        --backend)
            _kgate_reply -W "$_kgate_backends" -- "$cur"
            return
            ;;
        esac
        _kgate_reply -W '--json --backend' -- "$cur"
        ;;
    plugins)
        _kgate_reply -W '--json' -- "$cur"
        ;;
    setup)
        _kgate_reply -W 'claude-code gemini codex --project --remove' -- "$cur"
        ;;
    hook)
        [ "$cword" -eq 2 ] && _kgate_reply -W 'claude-code gemini codex' -- "$cur"
        ;;
    mcp)
        if [ "$prev" = --backend ]; then
            _kgate_reply -W "$_kgate_backends" -- "$cur"
            return
        fi
        _kgate_reply -W '--backend' -- "$cur"
        ;;
    audit)
        if [ "$prev" = --since ]; then
            return
        elif [[ $cur == -* ]]; then
            _kgate_reply -W '--since' -- "$cur"
        elif [ "$cword" -eq 2 ]; then
            _kgate_reply -W 'verify runs show refusals' -- "$cur"
        else
            _kgate_reply -f -- "$cur"
            compopt -o filenames 2>/dev/null
        fi
        ;;
    run)
        # Everything after "--" is the sandboxed command: complete it as if
        # it had been typed on its own.
        for ((i = 2; i < cword; i++)); do
            if [ "${words[i]}" = -- ]; then
                if declare -F _command_offset >/dev/null 2>&1; then
                    _command_offset $((i + 1))
                elif [ $((i + 1)) -eq "$cword" ]; then
                    _kgate_reply -c -- "$cur"
                else
                    _kgate_reply -f -- "$cur"
                fi
                return
            fi
        done
        case $prev in
        --allow-path)
            _kgate_reply -f -- "$cur"
            compopt -o filenames 2>/dev/null
            return
            ;;
        --allow-net)
            _kgate_reply -A hostname -- "$cur"
            return
            ;;
        --backend)
            _kgate_reply -W "$_kgate_backends" -- "$cur"
            return
            ;;
        esac
        _kgate_reply -W '--allow-path --allow-net --backend --dry-run --events-fd --pty --no-pty --quiet --' -- "$cur"
        ;;
    esac
}

complete -F _kgate kgate
