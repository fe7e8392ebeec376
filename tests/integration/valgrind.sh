#!/usr/bin/env bash
# The real kgate binary under valgrind, on the paths every command takes:
# a run (with masking), doctor, plugins, a block and a refusal, as root and
# as the unprivileged uid.  Exit status 99 is valgrind's (a memory error or
# a definite leak); anything else is kgate's own and must be the expected
# one.
. "$(dirname "$0")/lib.sh"
need_cmd valgrind
need_bwrap
VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99)

vg() { as_user "${VG[@]}" "$KGATE_BIN" "$@"; }

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    out=$(vg run --no-pty -- sh -c 'echo hello; echo ghp_0123456789abcdefghijklmnop' 2>&1)
    rc=$?
    check "run: clean under valgrind (exit 0)" test "$rc" = 0
    check "run: output still masked" sh -c 'printf "%s" "$1" | grep -qx "ghp_\*\*\*"' _ "$out"
    vg doctor >/dev/null 2>&1
    check "doctor: clean under valgrind (exit 0)" test "$?" = 0
    vg plugins --json >/dev/null 2>&1
    check "plugins --json: clean under valgrind" test "$?" = 0
    vg run --no-pty -- curl http://198.18.0.1/ >/dev/null 2>&1
    check "a blocked run: clean under valgrind (exit 126)" test "$?" = 126
    KG_CWD=$KG_HOME vg run --no-pty -- true >/dev/null 2>&1
    check "a refused run: clean under valgrind (exit 125)" test "$?" = 125
    printf 'network: sideways\n' | write_config
    vg run --no-pty -- true >/dev/null 2>&1
    check "a broken config: clean under valgrind (exit 125)" test "$?" = 125
done
finish
