#!/bin/bash
# unotify_links.sh: issue 40, defects 1 and 2.  Defect 1: the Landlock
# box's supervisor (sdk/linux/kgl-unotify.c) makes the hard links asked
# for in the directories it manages; it must judge the file to link by
# where its inode really lies, never by the path it was asked by.  Played as the
# attacker from inside the box, in the three places the Landlock box runs
# (forced on the host, inside bwrap --disable-userns, under a Docker-like
# seccomp filter), as root and as an unprivileged uid:
#   - a protected file or one below a protected directory (.git/hooks/
#     pre-commit, .claude/settings.json, .git/modules/sub/config) and a
#     file below a deny_read directory (secrets/key), linked into the
#     project root five ways: `ln -L /proc/$$/fd/3` after `exec 3<FILE`;
#     an O_PATH descriptor linked through /proc/PID/fd/N and through
#     /proc/self/fd/N with AT_SYMLINK_FOLLOW (the supervisor must read
#     "self" as the caller); the same descriptor with
#     linkat(AT_EMPTY_PATH); `ln -L` through a symbolic link at the root.  Each is refused
#     after its marker, and afterwards every file still has one name and
#     its own text (so no later run can write through a name left behind);
#   - a file of a read_paths directory (readable, not writable, on the
#     project's file system) linked in the same ways: refused too (a new
#     name in the root would be writable);
#   - controls: the same ways work on a file made at the root, on
#     one of a directory present at launch, and on an O_TMPFILE, so each
#     refusal is the check's and not a way that never works.
# Defect 2: the two runs of a deny_read file given a second name (below).
# docs/landlock.md "The supervisor", docs/threat-model.md.
. "$(dirname "$0")/lib.sh"
need_nouserns
need_cmd python3
ABI=$(landlock_abi)
[ "$ABI" -ge 2 ] || skip_all "Landlock ABI 2 (link across directories) is not here"

# The attacker.  linkfd WAY NAME NEW: O_PATH on NAME (no read right
# needed, nor checked by Landlock), then either linkat(fd, "", AT_FDCWD,
# NEW, AT_EMPTY_PATH) (WAY empty) or linkat through /proc/PID/fd/N (WAY
# proc) or /proc/self/fd/N (WAY self) with AT_SYMLINK_FOLLOW; prints
# "linked" or the errno.
ATTACK='
linkfd() {
    python3 -c "
import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[2], os.O_PATH)
if sys.argv[1] == \"empty\":
    r = l.linkat(fd, b\"\", -100, sys.argv[3].encode(), 0x1000)
else:
    me = \"self\" if sys.argv[1] == \"self\" else str(os.getpid())
    src = \"/proc/%s/fd/%d\" % (me, fd)
    r = l.linkat(-100, src.encode(), -100, sys.argv[3].encode(), 0x400)
print(\"linked\" if r == 0 else \"errno %d\" % ctypes.get_errno())
sys.exit(0 if r == 0 else 1)" "$@"
}
# try TAG FILE: the ways to a second name for FILE at the root: ln -L
# through /proc/$$/fd/3 (a file the program may read), the O_PATH ones,
# and ln -L through a symbolic link made at the root.
try() {
    echo "M-$1"
    if exec 3<"$2"; then
        ln -L /proc/$$/fd/3 "x-$1-procfd" 2>/dev/null && echo "LEAK-$1-procfd"
        exec 3<&-
    else
        echo "UNREADABLE-$1"
    fi
    linkfd proc "$2" "x-$1-opathproc" >/dev/null 2>&1 && echo "LEAK-$1-opathproc"
    linkfd self "$2" "x-$1-opathself" >/dev/null 2>&1 && echo "LEAK-$1-opathself"
    linkfd empty "$2" "x-$1-opath" >/dev/null 2>&1 && echo "LEAK-$1-opath"
    ln -s "$2" "s-$1" && ln -L "s-$1" "x-$1-symlink" 2>/dev/null && echo "LEAK-$1-symlink"
    rm -f "s-$1"
    for n in x-"$1"-*; do
        [ -e "$n" ] && echo payload >>"$n" 2>/dev/null
    done
    echo "E-$1"
}
# ok TAG FILE: the same ways on a file the program may write.
ok() {
    exec 3<"$2" && ln -L /proc/$$/fd/3 "y-$1-procfd" && echo "OK-$1-procfd"
    exec 3<&-
    linkfd proc "$2" "y-$1-opathproc" >/dev/null && echo "OK-$1-opathproc"
    linkfd self "$2" "y-$1-opathself" >/dev/null && echo "OK-$1-opathself"
    linkfd empty "$2" "y-$1-opath" >/dev/null && echo "OK-$1-opath"
    ln -s "$2" "t-$1" && ln -L "t-$1" "y-$1-symlink" && echo "OK-$1-symlink"
}
echo M-start
try hook .git/hooks/pre-commit
try settings .claude/settings.json
try submodule .git/modules/sub/config
try secret secrets/key
try ro "$RO/file"
echo mine >mine.c && ok root mine.c
ok granted src/s.c
python3 -c "
import ctypes, os
l = ctypes.CDLL(None, use_errno=True)
fd = os.open(\"src\", os.O_TMPFILE | os.O_WRONLY, 0o644)
os.write(fd, b\"tmp\\n\")
if l.linkat(fd, b\"\", -100, b\"y-tmpfile\", 0x1000) == 0: print(\"OK-tmpfile\")"
echo M-end
'

# The protected and denied files the run attacks, as the user left them.
VICTIMS=".git/hooks/pre-commit .claude/settings.json .git/modules/sub/config secrets/key"

setup() {
    use_user "$1"
    mkdir -p "$KG_HOME/ro"
    echo "read only" >"$KG_HOME/ro/file"
    printf 'network: off\ndeny_read: [secrets]\nread_paths: [%s]\n' "$KG_HOME/ro" | write_config
    cd "$KG_PROJ" || return 1
    git init -q .
    mkdir -p .claude .git/modules/sub secrets src
    printf '#!/bin/sh\nexit 0\n' >.git/hooks/pre-commit
    chmod +x .git/hooks/pre-commit
    echo '{}' >.claude/settings.json
    printf '[core]\n\tbare = false\n' >.git/modules/sub/config
    echo "key-$RANDOM$RANDOM" >secrets/key
    echo s >src/s.c
    cd - >/dev/null || return 1
    chown -R "$KG_UID:$KG_GID" "$KG_HOME/ro" "$KG_PROJ"
    SUMS=$(cd "$KG_PROJ" && sha256sum $VICTIMS "$KG_HOME/ro/file")
}

one_name() {
    local f
    for f in $VICTIMS "$KG_HOME/ro/file"; do
        [ "$(stat -c %h "$KG_PROJ/$f" 2>/dev/null || stat -c %h "$f")" = 1 ] ||
            { echo "$f has $(stat -c %h "$KG_PROJ/$f" 2>/dev/null) names"; return 1; }
    done
}

test_links() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    setup "$2"
    OUT=$KG_TMP/links.$where.$2.out
    in_where "$where" env RO="$KG_HOME/ro" "$KGATE_BIN" run "${force[@]}" -- \
        bash -c "$ATTACK" >"$OUT" 2>&1
    check "$where: the run happened (first and last marker)" \
        sh -c "grep -qx M-start '$OUT' && grep -qx M-end '$OUT'"
    for t in hook settings submodule secret ro; do
        check "$where: $t: the attacks ran (markers)" \
            sh -c "grep -qx M-$t '$OUT' && grep -qx E-$t '$OUT'"
        for way in procfd opathproc opathself opath symlink; do
            check "$where: $t: a second name through $way is refused" \
                sh -c "! grep -q LEAK-$t-$way '$OUT' && [ ! -e '$KG_PROJ/x-$t-$way' ] ||
                       { cat '$OUT'; false; }"
        done
    done
    check "$where: every attacked file still has one name" one_name
    check "$where: every attacked file still has its text" \
        sh -c "cd '$KG_PROJ' && [ \"\$(sha256sum $VICTIMS '$KG_HOME/ro/file')\" = '$SUMS' ]"
    check "$where: the secret never came out" \
        sh -c "! grep -qF \"\$(cat '$KG_PROJ/secrets/key')\" '$OUT'"
    check "$where: the readable ones were opened for ln -L (only secrets/key was not)" \
        sh -c "[ \"\$(grep UNREADABLE- '$OUT')\" = UNREADABLE-secret ]"
    for t in root granted; do
        for way in procfd opathproc opathself opath symlink; do
            check "$where: control: $t file linked through $way" grep -qx "OK-$t-$way" "$OUT"
        done
    done
    check "$where: control: an O_TMPFILE linked in by AT_EMPTY_PATH" grep -qx OK-tmpfile "$OUT"
}

# Defect 2: a deny_read file given a second name by an earlier run, before
# the user filled it.  Run 1 (no config/ at launch) makes config/secret.yml
# and a second link config/.x; the user then writes the secret; run 2 would
# read it through the second name (cat, or O_PATH and a reopen through
# /proc/self/fd).  Every box refuses run 2 at launch, as bubblewrap does:
# exit 125, one kgate: line naming the file, the run never started.  The
# control: without the second link run 2 starts and reads nothing.
READ2='
echo run2-ran
cat config/.x
python3 -c "
import os
fd = os.open(\"config/.x\", os.O_PATH)
print(open(\"/proc/self/fd/%d\" % fd).read())"
cat config/secret.yml
true
'

test_two_runs() {
    local where=$1 force=() box=landlock
    case $where in
    host) force=(--backend landlock) ;;
    bwrap) force=(--backend bubblewrap) box=bubblewrap where=host ;;
    esac
    use_user "$2"
    printf 'network: off\ndeny_read: [config/secret.yml]\n' | write_config
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    local out=$KG_TMP/two.$box.$1.$2 secret=secret-$RANDOM$RANDOM rc
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c \
        'echo run1; mkdir config && : >config/secret.yml && ln config/secret.yml config/.x && echo linked' \
        >"$out.1" 2>&1
    check "$1 ($box): run 1 made the second name (marker)" grep -qx linked "$out.1"
    check "$1 ($box): the file has two names on the host" \
        [ "$(stat -c %h "$KG_PROJ/config/secret.yml")" = 2 ]
    as_user sh -c "printf '%s\n' $secret >config/secret.yml"
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c "$READ2" >"$out.2" 2>&1
    rc=$?
    check "$1 ($box): run 2 is refused: 125, one kgate: line naming the file" \
        sh -c "[ $rc = 125 ] && [ \$(wc -l <'$out.2') = 1 ] && grep -q '^kgate: .*config/secret.yml has 2 hard links' '$out.2' || { cat '$out.2'; false; }"
    check "$1 ($box): run 2 never started, the secret was not read" \
        sh -c "! grep -q run2-ran '$out.2' && ! grep -q $secret '$out.2'"
    rm -f "$KG_PROJ/config/.x"
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c "$READ2" >"$out.3" 2>&1
    check "$1 ($box): control: with one name run 2 starts and reads nothing" \
        sh -c "grep -qx run2-ran '$out.3' && ! grep -q $secret '$out.3'"
}

for who in $(test_users); do
    for where in host disable seccomp; do
        test_links "$where" "$who"
        test_two_runs "$where" "$who"
    done
    if command -v bwrap >/dev/null && as_user bwrap --ro-bind / / --unshare-user -- true 2>/dev/null; then
        test_two_runs bwrap "$who"
    fi
done
finish
