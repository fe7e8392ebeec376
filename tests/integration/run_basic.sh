#!/usr/bin/env bash
# run_basic.sh: `kgate run` at the call site (issue 3), as root and as an
# unprivileged uid: git in a git project, exit codes unchanged, a symlink
# into $HOME does not leak, writes outside the project fail, the one-shot
# flags widen one run only and are audited, read_paths are read-only,
# allow_paths are writable, stdin and large output pass through intact.
# run_fs.sh covers the mount layout itself (tmpfs home, deny_read, --dry-run).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git python3 sha256sum

# Outside dirs must be on the real (read-only inside) root, not under /tmp
# or /var/tmp, which the sandbox replaces: a write there would fail for the
# wrong reason.  /var/lib as root (the CI case), else the runner's home.
KG_VT=$(mktemp -d /var/lib/kgate-run-basic.XXXXXX 2>/dev/null ||
    mktemp -d "$HOME/kgate-run-basic.XXXXXX")
chmod 0755 "$KG_VT"
at_exit 'rm -rf "$KG_VT"'

# r ARGS...: kgate ARGS as the test user; RC, and stdout/stderr in files.
r() {
    RC=0
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}
out_is() { [ "$(cat "$KG_TMP/out")" = "$1" ]; }
rc_is() { [ "$RC" -eq "$1" ]; }
# rc_err CODE PATTERN: exit CODE and PATTERN in stderr.
rc_err() { [ "$RC" -eq "$1" ] && grep -q -- "$2" "$KG_TMP/err"; }

# audit_last EXPR: evaluates a python expression over the last audit line
# (bound to `e`); true when it is true.
# The last record that is not a run's "end" (every launch is followed by
# one; the checks here are about what the launch or the refusal said).
audit_last() {
    python3 - "$KG_HOME/.kgate/audit.log" "$1" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
e = [r for r in map(json.loads, lines) if r.get("kind") != "end"][-1]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

for who in $(test_users); do
    use_user "$who"
    write_config <<EOF
network: off
read_paths: [~/.kgbasic-rc, ~/kgbasic-tools]
allow_paths: [$KG_VT/$who-cfg-allowed]
EOF
    echo "kgbasic real secret 4471" >"$KG_HOME/secret.txt"
    mkdir -p "$KG_HOME/secretdir"
    echo "kgbasic dir secret 4472" >"$KG_HOME/secretdir/inner"
    echo "kgbasic-rc line 5581" >"$KG_HOME/.kgbasic-rc"
    mkdir -p "$KG_HOME/kgbasic-tools"
    echo "kgbasic tool 5582" >"$KG_HOME/kgbasic-tools/tool.txt"
    ln -s "$KG_HOME/secret.txt" "$KG_PROJ/leak"
    ln -s "$KG_HOME/secretdir" "$KG_PROJ/dirleak"
    mkdir -p "$KG_VT/$who-cfg-allowed" "$KG_VT/$who-oneshot"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME" "$KG_VT/$who-cfg-allowed" "$KG_VT/$who-oneshot"

    # git: the ordinary case, and git's own non-zero status comes back.
    as_user git init -q .
    r run -- git status --porcelain=v1 --branch
    check "git status in a git project exits 0" rc_is 0
    check "git status prints the branch line" grep -q '^## ' "$KG_TMP/out"
    r run -- git rev-parse --verify -q HEAD
    check "git's own failure status (1: no commit yet) comes back" rc_is 1
    r run -- git no-such-subcommand-kg
    check "git's status 1 for an unknown subcommand comes back" rc_is 1
    check "and its message reaches stderr" grep -q 'no-such-subcommand-kg' "$KG_TMP/err"

    for code in 0 1 42 255; do
        r run -- sh -c "exit $code"
        check "exit code $code comes back unchanged" rc_is "$code"
    done
    r run -- sh -c 'echo kgbasic-stdout-77; echo kgbasic-stderr-78 >&2; exit 3'
    check "stdout of the program arrives" out_is kgbasic-stdout-77
    check "stderr of the program arrives" [ "$(cat "$KG_TMP/err")" = kgbasic-stderr-78 ]
    check "with its status" rc_is 3

    # A symlink from the project into $HOME shows the hidden home, not the
    # real one.
    r run -- cat leak
    check "cat through a symlink into \$HOME fails (exit 1)" rc_is 1
    check "and prints nothing of the secret" [ ! -s "$KG_TMP/out" ]
    check "and the secret is nowhere in stderr" bash -c "! grep -q 4471 '$KG_TMP/err'"
    r run -- cat dirleak/inner
    check "a symlinked directory in \$HOME does not leak (exit 1)" rc_is 1
    r run -- sh -c 'echo kgbasic-planted > leak'
    check "a write through the symlink succeeds inside (tmpfs home)" rc_is 0
    check "and the real target is untouched" \
        grep -qx "kgbasic real secret 4471" "$KG_HOME/secret.txt"

    # Writes outside the project.
    for d in /usr /opt /etc /var "$KG_VT"; do
        r run -- touch "$d/kgbasic-escape-$who"
        check "touch in $d fails (exit 1)" rc_is 1
        check "and nothing appeared in $d" [ ! -e "$d/kgbasic-escape-$who" ]
    done
    r run -- touch "$KG_PROJ/../kgbasic-beside-$who"
    check "a write beside the project succeeds inside (tmpfs home)" rc_is 0
    check "but does not reach the real home" [ ! -e "$KG_HOME/kgbasic-beside-$who" ]

    # --allow-path: writable for that one run, audited.
    oneshot=$KG_VT/$who-oneshot
    r run --allow-path "$oneshot" -- sh -c "echo kgbasic-one > '$oneshot/f1'"
    check "--allow-path makes an outside dir writable (exit 0)" rc_is 0
    check "and the write reached the real dir" grep -qx kgbasic-one "$oneshot/f1"
    check "the launch line records allow_paths" \
        audit_last "e['kind'] == 'launch' and e['allow_paths'] == ['$oneshot']"
    r run -- touch "$oneshot/f2"
    check "the next run without --allow-path cannot write there (exit 1)" rc_is 1
    check "and nothing was written" [ ! -e "$oneshot/f2" ]
    check "its launch line has no allow_paths" \
        audit_last "e['kind'] == 'launch' and 'allow_paths' not in e"
    r run --allow-path="$oneshot" -- touch "$oneshot/f3"
    check "--allow-path=PATH works too" [ "$RC" -eq 0 -a -e "$oneshot/f3" ]

    # --allow-net on a config with network off: that run becomes
    # restricted.  Without the slirp-filter backend it is refused; with it
    # the plan differs from network off.  Only literal test addresses, and
    # only --dry-run or the bubblewrap refusal: nothing connects anywhere.
    r run --dry-run -- true
    plan_off=$(cat "$KG_TMP/out")
    check "dry-run without --allow-net: exit 0" rc_is 0
    check "dry-run without --allow-net: --unshare-net" grep -q -- '--unshare-net' "$KG_TMP/out"
    r run --dry-run --allow-net 198.18.0.77 -- true
    if [ "$RC" -eq 0 ]; then
        check "dry-run with --allow-net plans something else than network off" \
            [ "$(cat "$KG_TMP/out")" != "$plan_off" ]
        check "and the plan names the allowed address" grep -q '198\.18\.0\.77' "$KG_TMP/out"
        # A host filter is here: the run itself is restricted and audited
        # so.  `true` connects nowhere; a literal address needs no lookup.
        r run --allow-net 198.18.0.77 -- true
        check "--allow-net run with a host filter: exit 0" rc_is 0
        check "its launch line: network restricted, allow_hosts, not bubblewrap" \
            audit_last "e['kind'] == 'launch' and e['network'] == 'restricted' and e['allow_hosts'] == ['198.18.0.77'] and e['backend'] != 'bubblewrap'"
        r run -- true
        check "the next run is network off again" \
            audit_last "e['kind'] == 'launch' and e['network'] == 'off' and 'allow_hosts' not in e"
    else
        check "dry-run with --allow-net: refused (125) for want of a host filter" \
            rc_err 125 'host allow list' 
    fi
    r run --backend bubblewrap --allow-net 198.18.0.77 -- true
    check "--allow-net with bubblewrap forced: 125, the run was restricted" \
        rc_err 125 'a host allow list needs the slirp-filter backend' 
    check "and the audit line records allow_hosts" \
        audit_last "e['kind'] == 'refuse' and e['allow_hosts'] == ['198.18.0.77']"

    # read_paths: readable, not writable.
    r run -- cat "$KG_HOME/.kgbasic-rc"
    check "a read_paths file under \$HOME is readable" out_is "kgbasic-rc line 5581"
    r run -- cat "$KG_HOME/kgbasic-tools/tool.txt"
    check "a read_paths directory under \$HOME is readable" out_is "kgbasic tool 5582"
    r run -- tee -a "$KG_HOME/.kgbasic-rc" </dev/null
    check "a read_paths file is not writable (exit 1)" rc_is 1
    r run -- touch "$KG_HOME/kgbasic-tools/new"
    check "a read_paths directory is not writable (exit 1)" rc_is 1
    check "the read_paths file is unchanged" \
        [ "$(cat "$KG_HOME/.kgbasic-rc")" = "kgbasic-rc line 5581" ]
    check "nothing was created in the read_paths directory" \
        [ ! -e "$KG_HOME/kgbasic-tools/new" ]
    r run -- cat "$KG_HOME/secret.txt"
    check "a file in \$HOME beside read_paths stays hidden (exit 1)" rc_is 1

    # allow_paths from the config: writable, every run.
    r run -- sh -c "echo kgbasic-cfg > '$KG_VT/$who-cfg-allowed/f'"
    check "an allow_paths dir is writable (exit 0)" rc_is 0
    check "and the write reached it" grep -qx kgbasic-cfg "$KG_VT/$who-cfg-allowed/f"

    # Stdin: binary, NUL bytes included, untouched.
    { printf 'kg\0\0\0stdin\0ghp_abcdefghijklmnopqrstuvwx\0'; head -c 3000000 /dev/urandom; } \
        >"$KG_TMP/in.bin"
    want=$(sha256sum <"$KG_TMP/in.bin" | cut -d' ' -f1)
    got=$(kg run -- sha256sum <"$KG_TMP/in.bin" | cut -d' ' -f1)
    check "stdin from a file reaches the program byte for byte" [ "$got" = "$want" ]
    got=$(cat "$KG_TMP/in.bin" | kg run -- sha256sum | cut -d' ' -f1)
    check "stdin from a pipe reaches the program byte for byte" [ "$got" = "$want" ]
    got=$(printf 'ghp_abcdefghijklmnopqrstuvwx\n' |
        kg run -- sh -c 'read -r x; [ "$x" = ghp_abcdefghijklmnopqrstuvwx ] && echo kgbasic-same')
    check "a secret-looking token on stdin reaches the program unmasked" \
        [ "$got" = kgbasic-same ]

    # Descriptors kgate inherits stay outside: through a directory one the
    # program could open the hidden home.  A closed stdin reads as EOF.
    RC=0
    kg run -- sh -c '[ ! -e /proc/self/fd/9 ] && [ ! -e /proc/self/fd/7 ]' \
        9<"$KG_HOME" 7>>"$KG_TMP/fd7" >/dev/null 2>&1 || RC=$?
    check "descriptors inherited by kgate do not reach the program" rc_is 0
    got=$(kg run -- cat /proc/self/fd/9/secret.txt 9<"$KG_HOME" 2>/dev/null)
    check "the hidden home is not readable through a leaked descriptor" [ -z "$got" ]
    kg run -- sh -c 'echo kgbasic-fd > /proc/self/fd/9/planted-fd' 9<"$KG_HOME" >/dev/null 2>&1
    check "nor writable" [ ! -e "$KG_HOME/planted-fd" ]
    r run -- cat <&-
    check "a closed stdin reads as end of file: cat exits 0" rc_is 0
    check "a closed stdin: no output, no error" [ ! -s "$KG_TMP/out" -a ! -s "$KG_TMP/err" ]

    # A project whose path needs quoting everywhere: a space, quotes, a
    # newline and a byte that is not UTF-8.
    odd=$KG_HOME/"kg odd 'q\"x"$'\n'"y"$'\xff'
    mkdir -p "$odd"
    echo kgbasic-odd >"$odd/f"
    chown -R "$KG_UID:$KG_GID" "$odd"
    RC=0
    KG_CWD=$odd kg run -- cat f >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
    check "an oddly named project runs (exit 0)" rc_is 0
    check "and its file is read there" out_is kgbasic-odd
    check "the audit line records that cwd exactly" \
        audit_last "e['kind'] == 'launch' and e['cwd'].encode('utf-8', 'surrogateescape') == b\"$KG_HOME/kg odd 'q\\\"x\\ny\\xff\""
    KG_CWD=$odd kg run -- sh -c 'echo kgbasic-odd-written > g' >/dev/null 2>&1
    check "and the write lands in the real odd project" grep -qx kgbasic-odd-written "$odd/g"

    # Large output: 190 MB of text, through a pipe (splice relay) and into
    # a file (read/write relay), against the same generator run outside.
    want=$(seq 1 25000000 | sha256sum | cut -d' ' -f1)
    want_n=$(seq 1 25000000 | wc -c)
    set -o pipefail
    RC=0
    got=$(kg run -- seq 1 25000000 | sha256sum | cut -d' ' -f1) || RC=$?
    check "large output through a pipe: exit 0" rc_is 0
    check "large output through a pipe arrives intact" [ "$got" = "$want" ]
    set +o pipefail
    RC=0
    kg run -- seq 1 25000000 >"$KG_TMP/big" || RC=$?
    check "large output into a file: exit 0" rc_is 0
    check "large output into a file: every byte ($want_n)" \
        [ "$(wc -c <"$KG_TMP/big")" -eq "$want_n" ]
    check "large output into a file arrives intact" \
        [ "$(sha256sum <"$KG_TMP/big" | cut -d' ' -f1)" = "$want" ]
    rm -f "$KG_TMP/big" "$KG_TMP/in.bin"
done
finish
