#!/usr/bin/env bash
# run_refuse.sh: every refusal of `kgate run` (issue 3 "Before exec", spec
# "Exit codes"), as root and as an unprivileged uid.  Each refusal must
# exit with its code (125, 126 or 127), print exactly one line on stderr
# starting with "kgate:" that names what was refused, write the audit line
# of its kind and no launch line, print nothing on stdout, and start
# nothing: the program would print a marker and leave a file.  Each group
# has a neighbour that must run, so a refusal means something.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3

LOG() { printf '%s' "$KG_HOME/.kgate/audit.log"; }

# r ARGS...: kgate ARGS as the test user; RC, stdout and stderr in files.
r() {
    RC=0
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}
# prog [KGATE OPTIONS]: runs the marker program under kgate.
prog() {
    rm -f "$MARK" "$(LOG)"
    r run "$@" -- sh -c 'echo kgrefuse-ran-4417; touch "$0"' "$MARK"
}

# refused CODE KIND DESC PATTERN...: the last prog was refused with CODE,
# an audit line of KIND (or "-": no log expected), and a kgate: line that
# matches every PATTERN (grep -E).
refused() {
    local code=$1 kind=$2 desc=$3
    shift 3
    check "$desc: exit $code (got $RC)" [ "$RC" -eq "$code" ]
    check "$desc: exactly one stderr line" [ "$(wc -l <"$KG_TMP/err")" -eq 1 ]
    check "$desc: it starts with kgate:" grep -q '^kgate: ' "$KG_TMP/err"
    local p
    for p in "$@"; do
        check "$desc: the line names '$p'" grep -Eq -- "$p" "$KG_TMP/err"
    done
    check "$desc: stdout is empty" [ ! -s "$KG_TMP/out" ]
    check "$desc: the program did not start" [ ! -e "$MARK" ]
    if [ "$kind" != - ]; then
        check "$desc: one audit line, kind $kind, with a reason" python3 -c '
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(L) == 1 and L[0]["kind"] == sys.argv[2] and L[0]["reason"] else 1)
' "$(LOG)" "$kind"
    fi
}

# ran DESC: the last prog ran.
ran() {
    check "$1: runs (exit 0, got $RC)" [ "$RC" -eq 0 ]
    check "$1: its output arrived" grep -qx kgrefuse-ran-4417 "$KG_TMP/out"
    check "$1: its marker exists" [ -e "$MARK" ]
    check "$1: a launch line" grep -q '"kind":"launch"' "$(LOG)"
}

# landlock_works: this kernel has Landlock (the forced Landlock box can run).
landlock_works() {
    [ "$(landlock_abi)" -ge 1 ]
}

# proj_file TEXT: the project's .kgate.yaml.
proj_file() {
    printf '%s\n' "$1" >"$KG_PROJ/.kgate.yaml"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/.kgate.yaml"
}

# The test plugin "good" (tests/unit/plugins) plans /bin/true whatever the
# policy says: a backend that cannot answer for the home refusal, so that
# the core's own check is tested alone (bubblewrap refuses the same case
# too, in other words, which would hide the core's check being gone).
TPDIR=$KG_TMP/tp
mkdir -p "$TPDIR"
install -m 0644 "$KGATE_BUILD_ROOT/tests/unit/plugins/tp_good.so" "$TPDIR/"
chmod 0755 "$TPDIR"
# dry_good: a dry run through the test plugin, as r() does for kgate.
dry_good() {
    RC=0
    KGATE_PLUGIN_PATH=$TPDIR kg run --backend good --dry-run -- true \
        >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}

BASE_CONFIG='network: off
macos_profile: strict
deny_exec: [curl, kgrefuse-denied]
allow_paths: [/var/tmp]
pass_env: [KGREFUSE_KEPT_TOKEN]'

for who in $(test_users); do
    use_user "$who"
    printf '%s\n' "$BASE_CONFIG" | write_config
    # Where the program would leave its marker: the working directory
    # for runs in a project, the real home for the home-scope refusals
    # (where a started program could write).
    MARK=$KG_PROJ/kgrefuse-ran
    mkdir -p "$KG_PROJ/sub"
    outside=$(mktemp -d "$KG_TMP/outside.XXXXXX")
    ln -s "$KG_HOME" "$KG_TMP/homelink-$who"
    ln -s / "$KG_TMP/rootlink-$who"
    ln -s "$(dirname "$KG_HOME")" "$KG_TMP/uplink-$who"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME" "$outside"

    # The working directory: never the home, an ancestor of it, or a path
    # that resolves to one.
    KG_CWD=$KG_PROJ prog
    ran "the project"
    MARK=$KG_PROJ/sub/kgrefuse-ran
    KG_CWD=$KG_PROJ/sub prog
    ran "a directory inside the project"
    MARK=$outside/kgrefuse-ran
    KG_CWD=$outside prog
    ran "a project outside the home"
    MARK=$KG_HOME/kgrefuse-ran
    for cwd in "$KG_HOME" / /tmp "$(dirname "$KG_HOME")" "$KG_TMP/homelink-$who" \
        "$KG_TMP/rootlink-$who" "$KG_TMP/uplink-$who"; do
        KG_CWD=$cwd prog
        refused 125 refuse "cwd $cwd" 'refusing to run in' 'home'
    done
    # $HOME itself spelled through a symlink, run in the real home.
    saved=$KG_HOME
    KG_HOME=$KG_TMP/homelink-$who KG_CWD=$saved prog
    KG_HOME=$KG_TMP/homelink-$who refused 125 refuse "HOME through a symlink, cwd the real home" \
        'refusing to run in'
    KG_HOME=$saved
    # The same refusals by the core alone: with the test plugin, a dry
    # run prints its plan (/bin/true) unless the core refuses first.
    KG_CWD=$KG_PROJ dry_good
    check "control: the test backend plans a project (exit 0, got $RC)" [ "$RC" -eq 0 ]
    check "control: its plan is printed" grep -qx /bin/true "$KG_TMP/out"
    for cwd in "$KG_HOME" / "$(dirname "$KG_HOME")" "$KG_TMP/homelink-$who"; do
        KG_CWD=$cwd dry_good
        refused 125 - "the core alone (test backend), cwd $cwd" 'refusing to run in' 'home'
    done
    MARK=$KG_PROJ/kgrefuse-ran
    # No usable HOME at all: nothing to hide, nothing to log into.
    rm -f "$MARK"
    RC=0
    as_user env HOME=relative/home "$KGATE_BIN" run -- sh -c 'echo kgrefuse-ran-4417' \
        >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
    refused 125 - "a relative HOME" 'HOME'

    # A project file may only narrow.
    proj_file 'network: off
deny_read: [.env]
deny_exec: [wget]
allow_paths: []
pass_env: []
macos_profile: strict'
    prog
    ran "a project file that narrows"
    for widen in 'allow_paths: [/opt]|allow_paths|/opt' \
        'allow_hosts: [198.18.0.44]|allow_hosts|198\.18\.0\.44' \
        'read_paths: [/srv]|read_paths|/srv' \
        'pass_env: [KGREFUSE_OTHER_TOKEN]|pass_env|KGREFUSE_OTHER_TOKEN' \
        'network: open|network|open' \
        'network: restricted|network|restricted' \
        'macos_profile: permissive|macos_profile|permissive'; do
        IFS='|' read -r yaml key value <<<"$widen"
        proj_file "$yaml"
        prog
        case $key in
        network | macos_profile) # kgate's own words, shown
            refused 125 refuse "project file '$yaml'" '\.kgate\.yaml' "$key: '$value'" \
                'narrow|never add' ;;
        *) # an entry of the file: its line, never its text
            refused 125 refuse "project file '$yaml'" '\.kgate\.yaml:1: ' \
                "$key: the entry is not in the user config" 'narrow|never add'
            check "project file '$yaml': the entry is not quoted" \
                bash -c "! grep -Eq -- '$value' '$KG_TMP/err'" ;;
        esac
    done
    rm -f "$KG_PROJ/.kgate.yaml"

    # kgate's own directory is never writable inside, not even when asked.
    mkdir -p "$KG_HOME/.kgate/cache"
    chown "$KG_UID:$KG_GID" "$KG_HOME/.kgate/cache"
    for a in "$KG_HOME/.kgate" "$KG_HOME/.kgate/config.yaml" "$KG_HOME/.kgate/cache"; do
        prog --allow-path "$a"
        refused 125 refuse "--allow-path $a" "allow_paths entry $a" "kgate's own"
    done
    printf '%s\nallow_paths: [~/.kgate]\n' "$(grep -v '^allow_paths' <<<"$BASE_CONFIG")" | write_config
    prog
    refused 125 refuse "allow_paths: [~/.kgate] in the user config" "kgate's own"
    printf '%s\n' "$BASE_CONFIG" | write_config

    # Nor is it the project, inside the project, or around it (issue 12,
    # section 4).  The attacker's command appends to config.yaml; the
    # control runs the same command in a project directory, where it works.
    printf '%s\n' "$BASE_CONFIG" | write_config
    cp "$KG_HOME/.kgate/config.yaml" "$KG_TMP/config.before"
    printf 'kgown\n' >"$KG_PROJ/config.yaml"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/config.yaml"
    RC=0
    KG_CWD=$KG_PROJ kg run -- sh -c 'echo kgown-appended >> config.yaml' >/dev/null 2>&1 || RC=$?
    check "control: the append works in a project (rc $RC)" \
        [ "$RC" -eq 0 -a "$(tail -n1 "$KG_PROJ/config.yaml")" = kgown-appended ]
    rm -f "$KG_PROJ/config.yaml"
    for sub in "" /cache; do
        rm -f "$(LOG)"
        RC=0
        KG_CWD=$KG_HOME/.kgate$sub kg run -- sh -c 'echo kgown-appended >> config.yaml; echo kgrefuse-ran-4417' \
            >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
        MARK=$KG_HOME/.kgate/kgrefuse-ran refused 125 refuse "cwd ~/.kgate$sub" \
            'refusing to run in' "inside kgate's own directory"
        check "cwd ~/.kgate$sub: the config is unchanged" cmp -s "$KG_TMP/config.before" "$KG_HOME/.kgate/config.yaml"
        RC=0
        KG_CWD=$KG_HOME/.kgate$sub kg doctor >"$KG_TMP/out" 2>&1 || RC=$?
        check "cwd ~/.kgate$sub: doctor agrees (BLOCKED, exit 1, got $RC)" \
            [ "$RC" -eq 1 -a "$(tail -n1 "$KG_TMP/out" | cut -d' ' -f1)" = BLOCKED ]
        check "cwd ~/.kgate$sub: doctor names kgate's own directory" grep -q "kgate's own directory" "$KG_TMP/out"
    done
    # ~/.kgate as a symlink to a directory inside a project: that project
    # holds it.
    store=$(mktemp -d "$KG_TMP/store.XXXXXX")
    mv "$KG_HOME/.kgate" "$store/kg"
    ln -s "$store/kg" "$KG_HOME/.kgate"
    chown -R "$KG_UID:$KG_GID" "$store"
    chown -h "$KG_UID:$KG_GID" "$KG_HOME/.kgate"
    rm -f "$(LOG)"
    RC=0
    KG_CWD=$store kg run -- sh -c 'echo kgown-appended >> kg/config.yaml; echo kgrefuse-ran-4417' \
        >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
    MARK=$store/kgrefuse-ran refused 125 refuse "a project that holds ~/.kgate (a symlink into it)" \
        'refusing to run in' "contains kgate's own directory"
    check "a project that holds ~/.kgate: the config is unchanged" cmp -s "$KG_TMP/config.before" "$store/kg/config.yaml"
    KG_CWD=$store/kg kg run -- true >/dev/null 2>"$KG_TMP/err" || true
    check "the symlinked ~/.kgate as cwd: refused" grep -q "inside kgate's own directory" "$KG_TMP/err"
    prog
    ran "the symlinked ~/.kgate leaves other projects alone"
    rm "$KG_HOME/.kgate"
    mv "$store/kg" "$KG_HOME/.kgate"
    # The same directory through a bind mount (another name, same inode):
    # in a private mount namespace of the test user.
    if command -v unshare >/dev/null && as_user unshare -rm true 2>/dev/null; then
        alias=$(mktemp -d "$KG_TMP/alias.XXXXXX")
        chown "$KG_UID:$KG_GID" "$alias"
        RC=0
        KG_CWD=/ as_user unshare -rm sh -c 'mount --bind "$1" "$2" && cd "$2" && exec "$3" run -- sh -c "echo kgown-appended >> config.yaml"' \
            _ "$KG_HOME/.kgate" "$alias" "$KGATE_BIN" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
        check "~/.kgate through a bind mount: refused (125, got $RC)" [ "$RC" -eq 125 ]
        check "~/.kgate through a bind mount: the line says why" \
            grep -q "inside kgate's own directory" "$KG_TMP/err"
        check "~/.kgate through a bind mount: the config is unchanged" \
            cmp -s "$KG_TMP/config.before" "$KG_HOME/.kgate/config.yaml"
    elif [ -n "${KGATE_MUST_WORK:-}" ]; then
        check "unshare -rm works for the bind mount case" false
    fi

    # Broken configs: file, line and column.
    printf 'network: off\ndeny_read: [a, b\n' | write_config
    prog
    refused 125 refuse "a YAML syntax error in the user config" \
        'config\.yaml:[0-9]+:[0-9]+: ' 'YAML syntax error'
    printf 'network: off\nkgbogus_key: 1\n' | write_config
    prog
    refused 125 refuse "an unknown key in the user config" \
        'config\.yaml:2:1: ' "unknown key 'kgbogus_key'"
    printf 'network: off\nallow_paths: /var/tmp\n' | write_config
    prog
    refused 125 refuse "a wrong type in the user config" 'config\.yaml:2:[0-9]+: ' 'allow_paths'
    printf 'network: restricted\nallow_hosts: [bad_host!]\n' | write_config
    prog
    refused 125 refuse "an invalid host name" 'config\.yaml:2:[0-9]+: ' 'bad_host!'
    # Host entries (kgate-hostspec.h): each malformed or too wide one is
    # refused with its position and reason; the valid forms run.
    hosts_refused() { # YAML-VALUE LINE:COLUMN REASON
        printf 'network: off\nallow_hosts:\n  - a.example\n  - %s\n' "$1" | write_config
        prog
        refused 125 refuse "allow_hosts entry $1" "config\\.yaml:$2: " \
            "invalid host name '.*': .*$3"
    }
    hosts_refused '"*"' 4:5 'would allow every host'
    hosts_refused '"*.com"' 4:5 'whole top-level domain'
    hosts_refused '"a.*.example"' 4:5 "'\\*' is allowed only"
    hosts_refused '"a.example:0"' 4:5 'port 0'
    hosts_refused '"a.example:65536"' 4:5 'above 65535'
    hosts_refused '"a.example:0443"' 4:5 'leading zero'
    hosts_refused '"a.example:-1"' 4:5 'sign'
    hosts_refused '"::1"' 4:5 'IPv6'
    hosts_refused '"*.198.18.0.9"' 4:5 'over an IPv4 address'
    hosts_refused 'a_b.example' 4:5 'not a host name'
    printf 'network: off\nallow_hosts:\n  - *.example.com\n' | write_config
    prog
    refused 125 refuse "an unquoted wildcard (a YAML alias)" 'config\.yaml:3:[0-9]+: ' \
        "quote an entry that starts with"
    printf 'network: off\nallow_hosts: ["*.Example.com", "api.example.org:443", "*.b.example:8443", "198.18.0.9:80"]\n' |
        write_config
    prog
    ran "valid wildcard, port and address entries"
    prog --allow-net '*.com'
    refused 125 refuse "--allow-net '*.com'" "--allow-net: invalid host name '\\*\\.com': "
    # A project file may narrow a wildcard or add a port, never widen.
    printf 'network: open\nallow_hosts: ["*.example.com", "b.example"]\n' | write_config
    proj_file 'allow_hosts: ["api.example.com:443", "*.x.example.com", "b.example:80"]'
    prog
    ran "a project file that narrows host entries"
    proj_file 'allow_hosts: [example.com]'
    prog
    refused 125 refuse "a project entry that is the wildcard's own name" \
        '\.kgate\.yaml:1: allow_hosts: the entry is not in the user config'
    proj_file 'allow_hosts: ["*.b.example"]'
    prog
    refused 125 refuse "a project entry that widens a name to a wildcard" \
        '\.kgate\.yaml:1: allow_hosts: the entry is not in the user config'
    rm -f "$KG_PROJ/.kgate.yaml"
    printf 'network: open\n' | write_config
    prog --allow-net '*.example.com:443'
    ran "--allow-net with a wildcard and a port (network open)"
    check "the launch line records it in normal form" grep -qF '"allow_hosts":["*.example.com:443"]' "$(LOG)"
    printf '%s\n' "$BASE_CONFIG" | write_config
    proj_file 'deny_read: [a'
    prog
    refused 125 refuse "a YAML syntax error in the project file" \
        '\.kgate\.yaml:[0-9]+:[0-9]+: ' 'YAML syntax error'
    proj_file 'network: off
kgbogus_project_key: x'
    prog
    refused 125 refuse "an unknown key in the project file" \
        '\.kgate\.yaml:2:1: unknown key \(not shown'
    check "an unknown key in the project file: its text is not quoted" \
        bash -c "! grep -q kgbogus_project_key '$KG_TMP/err'"
    rm -f "$KG_PROJ/.kgate.yaml"

    # (issue 26, 5) A run plants .kgate.yaml as a link to a file outside the
    # box, a second name of a project file, a FIFO or a directory; the next
    # launch, outside the box, refuses it unread and quotes nothing of it.
    # Planted in sub/ and launched there: the Landlock box (forced) cannot
    # create anything in the project root (docs/landlock.md), sub/ it can.
    # The issue's own case, the link in the project root, in bubblewrap.
    mkdir -p "$KG_HOME/.config/gh" "$KG_PROJ/sub/m"
    printf 'github.com:\n  oauth_token: gho_kgrefuseSECRET5521\n' >"$KG_HOME/.config/gh/hosts.yml"
    printf 'notes\n' >"$KG_PROJ/sub/kgrefuse-notes.txt"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/.config" "$KG_PROJ/sub"
    saved_mark=$MARK
    MARK=$KG_PROJ/sub/m/kgrefuse-ran # sub/m: writable when sub is the project, in Landlock too
    for be in bubblewrap landlock; do
        if [ "$be" = landlock ] && ! landlock_works; then
            echo "# Landlock is not enabled in this kernel: the forced Landlock box is not tested"
            continue
        fi
        for plant in 'ln -s "$1" sub/.kgate.yaml' 'ln sub/kgrefuse-notes.txt sub/.kgate.yaml' \
            'mkfifo sub/.kgate.yaml' 'mkdir sub/.kgate.yaml' 'ln -s "$1" .kgate.yaml'; do
            case $be/$plant in landlock/*' .kgate.yaml') continue ;; esac
            dir=$KG_PROJ/sub
            case $plant in *' .kgate.yaml') dir=$KG_PROJ ;; esac
            rm -rf "$dir/.kgate.yaml" "$MARK" "$(LOG)"
            if [ "$dir" = "$KG_PROJ" ]; then
                # The project root's .kgate.yaml is a protected path, kept
                # by a placeholder while absent (docs/escapes.md section 2):
                # the plant fails inside the box, and the link is then made
                # from outside, as a checkout or another tool could.
                r run --backend "$be" -- sh -c "echo kgrefuse-ran-4417; touch \"\$0\"; $plant" \
                    "$MARK" "$KG_HOME/.config/gh/hosts.yml"
                check "$be: the run that tries ($plant) ran (its marker exists)" [ -e "$MARK" ]
                check "$be: ($plant) fails inside the box (exit $RC)" [ "$RC" -ne 0 ]
                check "$be: and leaves nothing at the project's .kgate.yaml" \
                    bash -c "[ ! -e '$dir/.kgate.yaml' ] && [ ! -L '$dir/.kgate.yaml' ]"
                (cd "$dir" && sh -c "$plant" _ "$KG_HOME/.config/gh/hosts.yml")
                chown -h "$KG_UID:$KG_GID" "$dir/.kgate.yaml"
            else
                r run --backend "$be" -- sh -c "echo kgrefuse-ran-4417; touch \"\$0\"; $plant" \
                    "$MARK" "$KG_HOME/.config/gh/hosts.yml"
                ran "$be: the run that plants ($plant)"
            fi
            check "$be: ($plant) is in the real project" \
                bash -c "[ -L '$dir/.kgate.yaml' ] || [ -p '$dir/.kgate.yaml' ] ||
                    [ -d '$dir/.kgate.yaml' ] || [ \"\$(stat -c %h '$dir/.kgate.yaml')\" = 2 ]"
            KG_CWD=$dir prog --backend "$be" # a FIFO must not hang it (opened non-blocking)
            refused 125 refuse "$be: the launch after ($plant)" \
                '\.kgate\.yaml: (is a symbolic link|has 2 hard links|not a regular file)'
            check "$be: after ($plant): nothing of the linked file is quoted" \
                bash -c "! grep -Eq 'github|gho_|notes' '$KG_TMP/err'"
            rm -rf "$dir/.kgate.yaml"
            KG_CWD=$dir prog --backend "$be"
            ran "$be: with the planted file gone, the next launch"
        done
    done
    MARK=$saved_mark
    rm -f "$KG_PROJ/sub/kgrefuse-notes.txt"

    # The command.
    rm -f "$MARK"
    rm -f "$(LOG)"
    r run -- kgrefuse-no-such-command-8813 arg
    refused 127 refuse "a command that does not exist" 'kgrefuse-no-such-command-8813' 'not found'
    rm -f "$(LOG)"
    r run -- ./kgrefuse-missing-script
    refused 127 refuse "a relative path that does not exist" 'kgrefuse-missing-script'
    printf 'echo kgrefuse-ran-4417\n' >"$KG_PROJ/kgrefuse-noexec"
    chmod 0644 "$KG_PROJ/kgrefuse-noexec"
    rm -f "$(LOG)"
    r run -- ./kgrefuse-noexec
    refused 127 refuse "a file that is not executable" 'kgrefuse-noexec' 'not an executable file'
    rm -f "$(LOG)"
    r run -- ./sub
    refused 127 refuse "a directory as the command" 'sub' 'not an executable file'
    rm -f "$(LOG)"
    r run -- curl http://198.18.0.45/
    refused 126 block "a command on the deny list" 'curl'
    rm -f "$(LOG)"
    r run -- sh -c 'echo kgrefuse-ran-4417; kgrefuse-denied'
    refused 126 block "a denied command inside sh -c" 'kgrefuse-denied'

    # The backend.
    prog --backend nosuch-kg
    refused 125 refuse "an unknown backend" 'nosuch-kg' 'bubblewrap'
    prog --backend bubblewrap
    ran "the bubblewrap backend by name"
    printf 'network: restricted\nallow_hosts: [198.18.0.46]\n' | write_config
    prog --backend bubblewrap
    refused 125 refuse "restricted with hosts on bubblewrap" \
        'a host allow list needs the slirp-filter backend'
    RC=0
    kg doctor --backend bubblewrap >"$KG_TMP/out" 2>&1 || RC=$?
    check "doctor agrees: BLOCKED, exit 1 (got $RC)" \
        [ "$RC" -eq 1 -a "$(tail -n1 "$KG_TMP/out" | cut -d' ' -f1)" = BLOCKED ]
    printf 'network: restricted\nallow_hosts: []\n' | write_config
    prog
    ran "restricted with no hosts (as off)"
    r run --dry-run -- true
    check "restricted with no hosts plans --unshare-net" grep -q -- '--unshare-net' "$KG_TMP/out"
    printf '%s\n' "$BASE_CONFIG" | write_config

    # Usage errors start nothing either: exit 2 (not 125, which says a
    # launch was refused), one kgate: line first, then the usage.
    usage_err() {
        check "$1: exit 2 (got $RC)" [ "$RC" -eq 2 ]
        check "$1: the first line starts kgate:, and only it" \
            [ "$(head -n 1 "$KG_TMP/err" | cut -c1-7)" = "kgate: " -a "$(grep -c '^kgate: ' "$KG_TMP/err")" -eq 1 ]
        check "$1: then the usage of run" grep -q '^usage: kgate run ' "$KG_TMP/err"
        check "$1: nothing started" [ ! -s "$KG_TMP/out" -a ! -e "$MARK" ]
    }
    prog --kgrefuse-no-such-option
    usage_err "an unknown option"
    check "an unknown option: the line names it" \
        [ "$(grep -c "^kgate: .*kgrefuse-no-such-option" "$KG_TMP/err")" -eq 1 ]
    rm -f "$MARK"
    r run
    usage_err "no command"
    r run --
    usage_err "no command after --"
    r run --dry-run sh -c 'touch "$0"' "$MARK"
    usage_err "a command without -- before it"
    check "missing --: the line says so" grep -q "^kgate: run: '--' must come before" "$KG_TMP/err"
    # Control: the same with -- runs.
    r run -- sh -c 'touch "$0"' "$MARK"
    check "control: with -- it runs (exit 0, got $RC)" [ "$RC" -eq 0 -a -e "$MARK" ]
    rm -f "$MARK"
    r run --dry-run --help -- sh -c 'touch "$0"' "$MARK"
    check "run --help: exit 0 (got $RC)" [ "$RC" -eq 0 ]
    check "run --help: the usage on stdout, nothing on stderr" \
        [ "$(head -n 1 "$KG_TMP/out" | cut -c1-16)" = "usage: kgate run" -a ! -s "$KG_TMP/err" ]
    check "run --help: nothing started" [ ! -e "$MARK" ]

    # A refusal that quotes user text is still one line and forges nothing
    # (issue 12, section 6): newline and ESC are shown escaped.
    forged=$(printf 'kgrefuse-nosuch\nkgate: forged \033[2J')
    check "control: the forged name holds a newline and an ESC" \
        [ "$(printf '%s' "$forged" | wc -l)" -eq 1 -a "$(printf '%s' "$forged" | tr -dc '\033' | wc -c)" -eq 1 ]
    rm -f "$MARK" "$(LOG)"
    r run -- "$forged"
    refused 127 refuse "a command name with a newline and an ESC" \
        'kgrefuse-nosuch\\nkgate: forged \\e\[2J' 'not found'
    check "a forged name: no raw ESC on stderr" bash -c "! grep -q $'\033' '$KG_TMP/err'"
    rm -f "$(LOG)"
    r run -- sh -c "$(printf 'echo kgrefuse-ran-4417\nkgrefuse-denied \033]0;x\007')"
    refused 126 block "a denied command in a string with a newline and OSC" 'kgrefuse-denied'
    check "a blocked string: no raw control byte on stderr" \
        bash -c "! grep -q '[[:cntrl:]]' '$KG_TMP/err'"
    prog --allow-path "$(printf '/kgrefuse-nonexist\nkgate: forged\033[2J')"
    refused 125 refuse "an --allow-path with a newline and an ESC" \
        'kgrefuse-nonexist\\nkgate: forged\\e\[2J'
    check "an --allow-path: no raw ESC on stderr" bash -c "! grep -q $'\033' '$KG_TMP/err'"
    r "$forged"
    check "an unknown kgate command: the first line is the only kgate: line, escaped" \
        [ "$(grep -c '^kgate:' "$KG_TMP/err")" -eq 1 -a "$(head -n1 "$KG_TMP/err")" = "kgate: unknown command 'kgrefuse-nosuch\\nkgate: forged \\e[2J'" ]
    proj_file '"kgrefuse\e[2Jkey\nkgate: forged": 1'
    RC=0
    kg doctor >"$KG_TMP/out" 2>&1 || RC=$?
    check "doctor on a hostile key: BLOCKED (got $RC)" [ "$RC" -eq 1 ]
    check "doctor on a hostile key: no line starts with the forged text, no raw ESC" \
        bash -c "! grep -q '^kgate: forged' '$KG_TMP/out' && ! grep -q $'\033' '$KG_TMP/out'"
    rm -f "$KG_PROJ/.kgate.yaml"
done
finish
