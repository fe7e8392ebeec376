#!/bin/bash
# landlock_exec.sh: issue 41 in the Landlock box (docs/landlock.md, "A
# program made in the run").  With the default configuration (deny_read:
# [.env]) and a .env at the root, the project root has no execute right of
# its own, and nothing made during the run could be executed anywhere
# Landlock grants it no rule: ./configure, autoconf's conftest, ./a.out, a
# venv's bin/pip.  And a parallel recursive mkdir failed at random (the
# supervisor continued a call whose parent was missing; another thread made
# it; the kernel then refused under Landlock).  In the three places the
# Landlock box runs, as root and as an unprivileged uid:
#   - work: cc into a new subdirectory and at the root, run; a shell script
#     made in the run; a configure script made in the run that compiles and
#     runs conftest and writes config.status; the same program rebuilt and
#     run in a loop; a symbolic link to a made program (node_modules/.bin);
#     a venv's bin/python and bin/pip; 32 threads x recursive mkdir of one
#     deep path (as node does it), 100 rounds, never a failure;
#   - attacks, after a marker each: .env read, executed (mode 0755, by
#     name, through a symbolic link, a hard link), a hook written,
#     .git/config written; a thread flipping the exec's path between a
#     program made in the run and .env (tests/helpers/unrace.c exec); the
#     secret never comes out;
#   - .env absent at launch: making it is refused, nothing is left.
. "$(dirname "$0")/lib.sh"
need_nouserns
need_cmd cc git
[ -x "${KGATE_TEST_UNRACE:-}" ] || skip_all "tests/helpers/unrace.c was not built"
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3"
"$PY" -c 'import venv, ensurepip' 2>/dev/null || skip_all "python3 has no venv/ensurepip (python3-venv)"

# n threads each make the same deep path, per round a new one, the way
# node's recursive mkdir does (npm install): mkdir the path first, its
# parent on ENOENT, then again (Python's makedirs looks at the parent
# first, with stat, which the supervisor never sees: it would not race).
# Prints how many rounds had a thread fail.
MKRACE='
import errno, os, sys, threading
rounds, n = int(sys.argv[1]), int(sys.argv[2])
fails, first = 0, ""
def mkdirp(p):
    try:
        os.mkdir(p)
    except FileExistsError:
        if not os.path.isdir(p): raise
    except FileNotFoundError:
        mkdirp(os.path.dirname(p))
        try:
            os.mkdir(p)
        except FileExistsError:
            if not os.path.isdir(p): raise
for r in range(rounds):
    path = "race%d/node_modules/a/b/c/d/e" % r
    gate, bad = threading.Barrier(n), []
    def work():
        gate.wait()
        try:
            mkdirp(path)
        except OSError as e:
            bad.append(e)
    ts = [threading.Thread(target=work) for _ in range(n)]
    for t in ts: t.start()
    for t in ts: t.join()
    if bad or not os.path.isdir(path):
        fails += 1
        first = first or (str(bad[0]) if bad else "missing")
print("MKRACE rounds=%d fails=%d %s" % (rounds, fails, first))
'

WORK='
echo M-start
mkdir -p sub/dir && cc -o sub/dir/prog main.c && ./sub/dir/prog; echo "PROG-SUB $?"
cc -o prog main.c && ./prog; echo "PROG-ROOT $?"
cc main.c && ./a.out; echo "AOUT $?"
printf "#!/bin/sh\necho script-ran\n" >made.sh && chmod +x made.sh && ./made.sh
cat >configure <<EOF
#!/bin/sh
printf "int main(void){return 0;}\n" >conftest.c
cc -o conftest conftest.c || exit 2
if ./conftest; then echo "checking whether we can run C compiled programs... yes"
else echo "configure: error: cannot run C compiled programs"; exit 1; fi
rm -f conftest conftest.c
printf "#!/bin/sh\necho config.status-ran\n" >config.status && chmod +x config.status
./config.status
EOF
chmod +x configure && ./configure; echo "CONFIGURE $?"
for i in 1 2 3 4 5; do cc -o prog main.c && ./prog; echo "LOOP $?"; done
mkdir -p node_modules/pkg/bin node_modules/.bin &&
    printf "#!/bin/sh\necho bin-ran\n" >node_modules/pkg/bin/cli &&
    chmod +x node_modules/pkg/bin/cli && ln -s ../pkg/bin/cli node_modules/.bin/cli &&
    node_modules/.bin/cli
'"$PY"' -m venv .venv && .venv/bin/python -c "print(\"venv-python-ran\")" &&
    .venv/bin/pip --version >/dev/null && echo OK-pip
'"$PY"' mkrace.py 100 32
echo M-read-env; cat .env 2>/dev/null
echo M-exec-env; ./.env 2>/dev/null
echo M-exec-env-sym; ln -s .env envsym && ./envsym 2>/dev/null
echo M-exec-env-sub; mkdir -p s2 && ln -s ../.env s2/e && s2/e 2>/dev/null
echo M-link-env; ln .env envhard 2>/dev/null && echo LEAK-link-env
echo M-hook; (echo "echo hooked" >.git/hooks/pre-commit) 2>/dev/null && echo LEAK-hook
echo M-gitconfig; (echo x >>.git/config) 2>/dev/null && echo LEAK-gitconfig
echo M-race-exec; cc -o harmless main.c && ./unrace exec .env 200
echo M-end
'

setup() {
    use_user "$1"
    printf 'int main(void){return 3;}\n' >"$KG_PROJ/main.c"
    printf '%s\n' "$MKRACE" >"$KG_PROJ/mkrace.py"
    cp "$KGATE_TEST_UNRACE" "$KG_PROJ/unrace"
    git -C "$KG_PROJ" init -q .
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
}

test_exec() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    setup "$2"
    # A program, executable by its mode: only the box may refuse it, and
    # once executed it needs no read of its own (a script's interpreter
    # would be refused reading it, hiding a wrong exec).  Its text holds
    # the marker too, so a read shows as well.
    printf '#include <stdio.h>\nint main(void){puts("ENV-SECRET-RAN");return 0;}\n' >"$KG_TMP/env.c"
    cc -o "$KG_PROJ/.env" "$KG_TMP/env.c"
    chmod 0755 "$KG_PROJ/.env"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/.env"
    local cfg_sum env_id
    cfg_sum=$(sha256sum <"$KG_PROJ/.git/config")
    env_id=$(stat -c '%i %Y' "$KG_PROJ/.env")
    OUT=$KG_TMP/exec.$where.$2.out
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c "$WORK" >"$OUT" 2>&1
    check "$where: the run happened (first and last marker)" \
        sh -c "grep -qx M-start '$OUT' && grep -qx M-end '$OUT'"
    check "$where: cc -o sub/dir/prog, then ./sub/dir/prog runs" grep -qx "PROG-SUB 3" "$OUT"
    check "$where: cc -o prog at the root, then ./prog runs" grep -qx "PROG-ROOT 3" "$OUT"
    check "$where: cc main.c, then ./a.out runs" grep -qx "AOUT 3" "$OUT"
    check "$where: a shell script made in the run runs" grep -qx script-ran "$OUT"
    check "$where: configure made in the run runs conftest" \
        grep -qx "checking whether we can run C compiled programs... yes" "$OUT"
    check "$where: configure's config.status runs, configure exits 0" \
        sh -c "grep -qx config.status-ran '$OUT' && grep -qx 'CONFIGURE 0' '$OUT'"
    check "$where: rebuilt and run five times" [ "$(grep -cx 'LOOP 3' "$OUT")" = 5 ]
    check "$where: a link in node_modules/.bin to a made script runs" grep -qx bin-ran "$OUT"
    check "$where: a venv's bin/python and bin/pip run" \
        sh -c "grep -qx venv-python-ran '$OUT' && grep -qx OK-pip '$OUT'"
    grep '^MKRACE' "$OUT" | sed "s/^/# $where $2: /"
    check "$where: 32 threads x mkdir -p of one path, 100 rounds: no failure" \
        grep -q '^MKRACE rounds=100 fails=0 ' "$OUT"
    for m in read-env exec-env exec-env-sym exec-env-sub link-env hook gitconfig race-exec; do
        check "$where: refused after its marker: $m" \
            sh -c "grep -qx M-$m '$OUT' && ! grep -q LEAK-$m '$OUT'"
    done
    grep '^RACE' "$OUT" | sed "s/^/# $where $2: /"
    check "$where: race (exec flipped to .env): both ways ran, .env never ran" \
        grep -q '^RACE exec tries=[0-9]* ok=[1-9][0-9]* refused=[1-9][0-9]* breach=0$' "$OUT"
    check "$where: .env neither read nor executed (its text never came out)" \
        sh -c "! grep -q 'ENV-SECRET' '$OUT'"
    check "$where: .env is still the user's (its inode), no hard link of it, no hook" \
        sh -c "[ \"\$(stat -c '%i %Y' '$KG_PROJ/.env')\" = '$env_id' ] && [ ! -e '$KG_PROJ/envhard' ] && [ ! -e '$KG_PROJ/.git/hooks/pre-commit' ]"
    check "$where: .git/config unchanged" [ "$(sha256sum <"$KG_PROJ/.git/config")" = "$cfg_sum" ]
    check "$where: the programs made are in the project after the run" \
        sh -c "[ -x '$KG_PROJ/prog' ] && [ -x '$KG_PROJ/sub/dir/prog' ] && [ -x '$KG_PROJ/config.status' ]"
    check "$where: no temporary name of the supervisor is left" \
        sh -c "! find '$KG_PROJ' -name '.kgate-exec.*' | grep -q ."
}

# .env absent at launch: it cannot be made (it would be readable by the
# run and by whoever trusts it afterwards), as a file or a program.
test_absent() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    setup "$2"
    OUT=$KG_TMP/absent.$where.$2.out
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c '
        echo M-start
        echo M-make-env; (echo x >.env) 2>/dev/null && echo LEAK-make-env
        echo M-cc-env; cc -o .env main.c 2>/dev/null && echo LEAK-cc-env
        echo M-end' >"$OUT" 2>&1
    check "$where: absent .env: the run happened" \
        sh -c "grep -qx M-start '$OUT' && grep -qx M-end '$OUT'"
    for m in make-env cc-env; do
        check "$where: absent .env: refused after its marker: $m" \
            sh -c "grep -qx M-$m '$OUT' && ! grep -q LEAK-$m '$OUT'"
    done
    check "$where: absent .env: none was made" [ ! -e "$KG_PROJ/.env" ]
}

for who in $(test_users); do
    for where in host disable seccomp; do
        test_exec "$where" "$who"
        test_absent "$where" "$who"
    done
done
finish
