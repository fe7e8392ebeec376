#!/usr/bin/env bash
# audit_chain.sh: the audit log's hash chain through real `kgate run`s and
# `kgate audit verify` (issue 31, part 1), as root and as an unprivileged
# uid: an intact log verifies, each kind of tampering with the file is
# reported with exit 1 and the record named, a rotated log chains on, and
# a head that cannot be used stops the launch (fail closed) with one line.
# The unit tests (tests/unit/audit/test_audit.c) cover the same cases on the
# library with exact messages; this is the command a person runs.
. "$(dirname "$0")/lib.sh"
need_bwrap

LOG() { printf '%s' "$KG_HOME/.kgate/audit.log"; }
r() {
    RC=0
    kg "$@" >"$KG_TMP/out" 2>"$KG_TMP/err" || RC=$?
}
out_is() { [ "$(cat "$KG_TMP/out")" = "$1" ]; }
out_has() { grep -q -- "$1" "$KG_TMP/out"; }
one_kgate_line() {
    [ "$(wc -l <"$KG_TMP/err")" -eq 1 ] && grep -q '^kgate: ' "$KG_TMP/err"
}
# edit PYTHON: rewrites the log's lines (list L of bytes) in place.
edit() {
    python3 - "$(LOG)" "$1" <<'PY'
import sys
p = sys.argv[1]
L = open(p, "rb").read().split(b"\n")[:-1]
L = [l + b"\n" for l in L]
exec(sys.argv[2])
open(p, "wb").write(b"".join(L))
PY
}

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    for i in 1 2 3 4 5; do kg run -- true "kgchain-$i" >/dev/null 2>&1; done
    cp "$(LOG)" "$KG_TMP/good"
    r audit verify
    check "five runs: verify says intact (exit 0)" [ "$RC" -eq 0 ]
    check "and counts every record" out_is "intact, $(wc -l <"$(LOG)") records"
    check "the chain is SHA-256 of the line before (sha256sum agrees)" \
        sh -c '[ "$(sed -n 1p "$1" | sha256sum | cut -c1-64)" = "$(sed -n 2p "$1" | sed "s/.*\"prev\":\"\([0-9a-f]*\)\"}$/\1/")" ]' _ "$(LOG)"

    edit 'del L[1]'
    r audit verify
    check "a removed record: exit 1" [ "$RC" -eq 1 ]
    check "names record 2" out_has "record 2 does not follow"
    cp "$KG_TMP/good" "$(LOG)"
    edit 'L[1], L[2] = L[2], L[1]'
    r audit verify
    check "two records swapped: exit 1, record 2 named" \
        sh -c '[ "$1" -eq 1 ] && grep -q "record 2 does not follow" "$2"' _ "$RC" "$KG_TMP/out"
    cp "$KG_TMP/good" "$(LOG)"
    edit 'L[2] = L[2].replace(b"kgchain-2", b"kgchain-X")'
    r audit verify
    check "a forged record: exit 1, the next one named" \
        sh -c '[ "$1" -eq 1 ] && grep -q "record 4 does not follow" "$2"' _ "$RC" "$KG_TMP/out"
    cp "$KG_TMP/good" "$(LOG)"
    edit 'del L[-2:]'
    r audit verify
    check "records cut from the end: exit 1" \
        sh -c '[ "$1" -eq 1 ] && grep -q "is not the last one written" "$2"' _ "$RC" "$KG_TMP/out"
    cp "$KG_TMP/good" "$(LOG)"
    truncate -s -5 "$(LOG)"
    r audit verify
    check "a cut inside the last record: exit 1" \
        sh -c '[ "$1" -eq 1 ] && grep -q "is incomplete" "$2"' _ "$RC" "$KG_TMP/out"
    cp "$KG_TMP/good" "$(LOG)"
    r audit verify
    check "the untouched copy verifies again" [ "$RC" -eq 0 ]

    # The next record after a cut names the true predecessor: the cut
    # stays visible after kgate has written on.
    edit 'del L[-1:]'
    kg run -- true kgchain-after-cut >/dev/null 2>&1
    r audit verify
    check "a cut stays visible after the next run" \
        sh -c '[ "$1" -eq 1 ] && grep -q "does not follow" "$2"' _ "$RC" "$KG_TMP/out"
    cp "$KG_TMP/good" "$(LOG)"
    cp "$KG_TMP/good" "$KG_TMP/goodlog"
    tail -n1 "$KG_TMP/good" | sha256sum | cut -c1-64 >"$(LOG).head"

    # Rotation as logrotate does it: move, then the next run.
    mv "$(LOG)" "$(LOG).1"
    kg run -- true kgchain-rotated >/dev/null 2>&1
    r audit verify
    check "rotated: the new log verifies and follows audit.log.1" \
        sh -c '[ "$1" -eq 0 ] && grep -q "intact, .*follows the last record of .*audit.log.1" "$2"' \
        _ "$RC" "$KG_TMP/out"
    r audit verify "$(LOG).1" "$(LOG)"
    check "both files verify as one log" \
        sh -c '[ "$1" -eq 0 ] && grep -q "^intact" "$2"' _ "$RC" "$KG_TMP/out"
    r audit verify "$(LOG)" "$(LOG).1"
    check "in the wrong order they do not" [ "$RC" -eq 1 ]

    # Fail closed: a head that cannot be used stops the launch.
    rm -f "$(LOG).head"
    ln -s "$KG_TMP/elsewhere" "$(LOG).head"
    rm -f "$KG_PROJ/marker"
    r run -- sh -c 'echo ran > marker'
    check "a symlinked head: exit 125" [ "$RC" -eq 125 ]
    check "with one kgate: line naming it" \
        sh -c 'grep -q "audit.log.head" "$1"' _ "$KG_TMP/err"
    check "one line" one_kgate_line
    check "and the command did not run" [ ! -e "$KG_PROJ/marker" ]
    rm -f "$(LOG).head"
    r run -- sh -c 'echo ran > marker'
    check "control: with the head back, the same command runs" \
        [ "$RC" -eq 0 -a -e "$KG_PROJ/marker" ]
    r audit verify
    check "and the head rebuilt from the log's end keeps the chain" [ "$RC" -eq 0 ]

    r audit verify "$KG_TMP/no-such-log"
    check "a file that cannot be read: exit 1, one kgate: line" \
        sh -c '[ "$1" -eq 1 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -q "^kgate: cannot read" "$2"' \
        _ "$RC" "$KG_TMP/err"
done
finish
