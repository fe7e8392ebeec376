#!/bin/sh
# The generated profile under the real kernel: sandbox-exec must accept it,
# run a program, allow the project and deny $HOME, for both base profiles.
# Seatbelt exists only on macOS: elsewhere this test skips (77).  On a Mac
# without sandbox-exec it skips too, unless KGATE_MUST_WORK=1 (CI).
set -u
SB_RUN="$1"

if [ "$(uname -s)" != Darwin ]; then
    echo "skip: Seatbelt exists only on macOS"
    exit 77
fi
if [ ! -x /usr/bin/sandbox-exec ]; then
    echo "no /usr/bin/sandbox-exec"
    [ "${KGATE_MUST_WORK:-0}" = 1 ] && exit 1
    exit 77
fi

fail=0
check() { # description, expected status (0 or nonzero), command...
    what="$1"; want="$2"; shift 2
    "$@" >/dev/null 2>&1
    got=$?
    if [ "$want" = 0 ] && [ "$got" != 0 ]; then
        echo "FAIL: $what: exit $got, wanted success"; fail=1
    elif [ "$want" != 0 ] && [ "$got" = 0 ]; then
        echo "FAIL: $what: succeeded, wanted a denial"; fail=1
    else
        echo "ok: $what"
    fi
}

# A fake home under the real temp tree, resolved as the kernel spells it:
# the temp allow must not reopen it (design note 001).
base="$(cd "$(mktemp -d)" && pwd -P)"
home="$base/home"
proj="$home/proj"
mkdir -p "$proj"
echo secret > "$home/secret"
echo token > "$proj/.env"
TMPDIR="$(cd "${TMPDIR:-/tmp}" && pwd -P)"
export TMPDIR

for mode in "" --strict; do
    run="$SB_RUN $mode $home $proj $proj/.env --"
    check "$mode true runs" 0 $run /usr/bin/true
    check "$mode write in the project" 0 $run /usr/bin/touch "$proj/made"
    check "$mode read in the project" 0 $run /bin/cat "$proj/made"
    check "$mode read a secret in home" 1 $run /bin/cat "$home/secret"
    check "$mode write in home" 1 $run /usr/bin/touch "$home/planted"
    check "$mode read deny_read" 1 $run /bin/cat "$proj/.env"
    check "$mode write /private/tmp" 0 $run /usr/bin/touch "/private/tmp/kgate-sb-$$"
    rm -f "/private/tmp/kgate-sb-$$" "$proj/made"
    if [ -e "$home/planted" ]; then echo "FAIL: $mode planted file exists"; fail=1; fi
done
rm -rf "$base"
exit $fail
