#!/bin/bash
# unotify.sh: the Landlock box's supervisor (sdk/linux/kgl-unotify.c,
# docs/landlock.md "The supervisor").  The project root and .git hold
# protected names, so Landlock grants them entry by entry; the supervisor
# gives them back.  In the three places the Landlock box runs (forced on
# the host, inside bwrap --disable-userns, under a Docker-like seccomp
# filter), as root and as an unprivileged uid:
#   - work: create, write, mkdir -p, cc, rename, delete, link at the root,
#     git add/commit/checkout/merge/stash in a repository made outside, and
#     git init/add/commit at the root of a project with deny_read: [.env];
#   - attacks: write, replace, rename away, delete or create each kind of
#     protected name (present and absent), a hook, .git/config, a hard
#     link and a rename of the deny_read file; two threads racing the
#     supervisor (tests/helpers/unrace.c).  Every refusal prints a marker
#     first, so a box that did not run never passes;
#   - without the supervisor (KGATE_LANDLOCK_NO_SUPERVISOR=1, the box as it
#     was) the root stays closed and doctor says why.
. "$(dirname "$0")/lib.sh"
need_nouserns
need_cmd git cc python3
ABI=$(landlock_abi)
[ "$ABI" -ge 2 ] || skip_all "Landlock ABI 2 (rename across directories) is not here"
[ -x "${KGATE_TEST_UNRACE:-}" ] || skip_all "tests/helpers/unrace.c was not built"

GITENV='export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_NOSYSTEM=1'

# The work a developer does at the root of a repository, then the attacks.
WORK='
'"$GITENV"'
echo M-start
echo x >new.c && echo OK-new
mkdir src && echo OK-mkdir
mkdir -p deep/a/b && echo z >deep/a/b/f && echo OK-mkdirp
cc -o prog main.c && ./prog; echo "PROG $?"
git add new.c && git commit -qm c1 && echo OK-commit
B=$(git symbolic-ref --short HEAD)
git checkout -qb br && echo y >>new.c && git commit -qam c2 && git checkout -q "$B" && git merge -q br && echo OK-merge
echo w >>new.c && git stash -q && git stash pop -q && echo OK-stash
mv new.c renamed.c && echo OK-rename
ln renamed.c hard.c && ln -s renamed.c soft.c && echo OK-links
rm renamed.c hard.c soft.c && rmdir src && echo OK-rm
echo M-w-envrc; (echo x >.envrc) 2>/dev/null && echo LEAK-w-envrc
echo M-mv-envrc; mv .envrc gone 2>/dev/null && echo LEAK-mv-envrc
echo M-rm-envrc; rm -f .envrc 2>/dev/null; [ -e .envrc ] || echo LEAK-rm-envrc
echo M-replace-envrc; echo evil >e2; mv -f e2 .envrc 2>/dev/null && echo LEAK-replace-envrc
echo M-link-over-envrc; ln -f e2 .envrc 2>/dev/null && echo LEAK-link-over-envrc
echo M-w-kgate; (echo x >.kgate.yaml) 2>/dev/null && echo LEAK-w-kgate
echo M-c-mcp; (echo x >.mcp.json) 2>/dev/null && echo LEAK-c-mcp
echo M-rm-mcp; rm -f .mcp.json 2>/dev/null; [ -e .mcp.json ] || echo LEAK-rm-mcp
echo M-mkdir-claude; rmdir .claude 2>/dev/null; mkdir .claude/x 2>/dev/null && echo LEAK-mkdir-claude
echo M-sym-devc; ln -sf /tmp .devcontainer.json 2>/dev/null && echo LEAK-sym-devc
echo M-hook; (echo x >.git/hooks/pre-commit) 2>/dev/null && echo LEAK-hook
echo M-gitconfig; (echo x >>.git/config) 2>/dev/null && echo LEAK-gitconfig
echo M-gitconfig-mv; cp .git/config c2 && mv -f c2 .git/config 2>/dev/null && echo LEAK-gitconfig-mv
echo M-mv-git; mv .git gitx 2>/dev/null && echo LEAK-mv-git
echo M-mv-hooks; mv .git/hooks .git/h2 2>/dev/null && echo LEAK-mv-hooks
echo M-race-open; ./unrace open .envrc 3000
echo M-race-rename; ./unrace rename .envrc 3000
echo M-race-parent; ./unrace parent .git/hooks 2000
echo M-end
'

# deny_read: [.env], no .git at launch: git init at the root, and the
# deny_read file neither read, linked, renamed nor replaced.
DENY='
'"$GITENV"'
echo M-start
git init -q . && echo ok >a.c && mkdir -p lib && echo l >lib/l.c && git add a.c lib && git commit -qm one && echo OK-git-init
cat a.c lib/l.c
cc -o prog main.c && echo OK-cc
echo M-read-env; cat .env 2>/dev/null && echo LEAK-read-env
echo M-link-env; ln .env envlink 2>/dev/null && echo LEAK-link-env
echo M-mv-env; mv .env env2 2>/dev/null && echo LEAK-mv-env
echo M-replace-env; echo e >e3; mv -f e3 .env 2>/dev/null && echo LEAK-replace-env
echo M-race-open; ./unrace open .env 2000
echo M-end
'

# race_ok MODE FILE: the race ran both ways and planted nothing.
race_ok() {
    grep -q "^RACE $1 tries=[0-9]* ok=[1-9][0-9]* refused=[1-9][0-9]* breach=0$" "$2"
}

setup_repo() {
    printf 'int main(void){return 3;}\n' >"$KG_PROJ/main.c"
    echo orig >"$KG_PROJ/.envrc"
    cp "$KGATE_TEST_UNRACE" "$KG_PROJ/unrace"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    # As the user: git refuses a repository another uid owns.
    as_user sh -c "$GITENV; git init -q . && git add main.c && git commit -qm init" >/dev/null
    check "control: the repository was made outside (one commit)" \
        [ "$(as_user git rev-list --count HEAD 2>&1)" = 1 ]
}

test_work() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    use_user "$2"
    printf 'network: off\ndeny_read: []\n' | write_config
    setup_repo
    local cfg_sum
    cfg_sum=$(sha256sum <"$KG_PROJ/.git/config")
    OUT=$KG_TMP/work.$where.$2.out
    in_where "$where" "$KGATE_BIN" doctor --json "${force[@]}" >"$KG_TMP/doc.$where.$2" 2>&1
    check "$where: doctor: fs.split READY (the supervisor gives the root back)" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(f["id"]=="fs.split" and f["verdict"]=="READY" for f in d["findings"]) else 1)' "$KG_TMP/doc.$where.$2"
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c "$WORK" >"$OUT" 2>&1
    check "$where: the run happened (first and last marker)" \
        sh -c "grep -qx M-start '$OUT' && grep -qx M-end '$OUT'"
    for m in new mkdir mkdirp commit merge stash rename links rm; do
        check "$where: works at the root: $m" grep -qx "OK-$m" "$OUT"
    done
    check "$where: cc writes prog at the root and it runs" grep -qx "PROG 3" "$OUT"
    local commits
    commits=$(as_user git rev-list --count HEAD 2>&1)
    check "$where: the commits made inside are there (count: $commits)" [ "$commits" -eq 3 ]
    for m in w-envrc mv-envrc rm-envrc replace-envrc link-over-envrc w-kgate c-mcp \
        rm-mcp mkdir-claude sym-devc hook gitconfig gitconfig-mv mv-git mv-hooks; do
        check "$where: refused after its marker: $m" \
            sh -c "grep -qx M-$m '$OUT' && ! grep -q LEAK-$m '$OUT'"
    done
    check "$where: .envrc is still the user's" [ "$(cat "$KG_PROJ/.envrc")" = orig ]
    check "$where: .git/config unchanged" [ "$(sha256sum <"$KG_PROJ/.git/config")" = "$cfg_sum" ]
    check "$where: no hook, no .mcp.json, no .kgate.yaml left" \
        sh -c "[ ! -e '$KG_PROJ/.git/hooks/pre-commit' ] && [ ! -e '$KG_PROJ/.mcp.json' ] && [ ! -e '$KG_PROJ/.kgate.yaml' ]"
    grep '^RACE' "$OUT" | sed "s/^/# $where: /"
    for m in open rename parent; do
        check "$where: race ($m): both ways ran, nothing got through" race_ok "$m" "$OUT"
    done
}

test_deny() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    use_user "$2"
    printf 'network: off\ndeny_read: [.env]\n' | write_config
    printf 'int main(void){return 0;}\n' >"$KG_PROJ/main.c"
    echo "deny secret" >"$KG_PROJ/.env"
    cp "$KGATE_TEST_UNRACE" "$KG_PROJ/unrace"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    OUT=$KG_TMP/deny.$where.$2.out
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- sh -c "$DENY" >"$OUT" 2>&1
    check "$where: deny_read: the run happened" \
        sh -c "grep -qx M-start '$OUT' && grep -qx M-end '$OUT'"
    check "$where: deny_read: git init, add, commit at the root" grep -qx OK-git-init "$OUT"
    check "$where: deny_read: what was made at the root reads back" \
        sh -c "grep -qx ok '$OUT' && grep -qx l '$OUT'"
    check "$where: deny_read: cc at the root" grep -qx OK-cc "$OUT"
    for m in read-env link-env mv-env replace-env; do
        check "$where: deny_read: refused after its marker: $m" \
            sh -c "grep -qx M-$m '$OUT' && ! grep -q LEAK-$m '$OUT'"
    done
    check "$where: deny_read: the secret never came out" sh -c "! grep -q 'deny secret' '$OUT'"
    check "$where: deny_read: .env is still the user's, alone" \
        sh -c "[ \"\$(cat '$KG_PROJ/.env')\" = 'deny secret' ] && [ ! -e '$KG_PROJ/envlink' ] && [ ! -e '$KG_PROJ/env2' ]"
    check "$where: deny_read: race (open .env): both ways ran" race_ok open "$OUT"
}

# The box as it was: no supervisor, the root closed, doctor says why.
test_without() {
    local where=$1 force=()
    [ "$where" = host ] && force=(--backend landlock)
    use_user "$2"
    printf 'network: off\n' | write_config
    setup_repo
    OUT=$KG_TMP/without.$where.$2.out
    in_where "$where" env KGATE_LANDLOCK_NO_SUPERVISOR=1 "$KGATE_BIN" doctor --json "${force[@]}" \
        >"$KG_TMP/doc0.$where.$2" 2>&1
    check "$where: without the supervisor doctor says fs.split DEGRADED and why" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(f["id"]=="fs.split" and f["verdict"]=="DEGRADED" and "user notification" in f["text"] for f in d["findings"]) else 1)' "$KG_TMP/doc0.$where.$2"
    in_where "$where" env KGATE_LANDLOCK_NO_SUPERVISOR=1 "$KGATE_BIN" run "${force[@]}" -- \
        sh -c 'echo M-start; (echo x >new.c) 2>/dev/null && echo MADE; echo M-end' >"$OUT" 2>&1
    check "$where: without the supervisor nothing is made at the root (the old box)" \
        sh -c "grep -qx M-end '$OUT' && ! grep -q MADE '$OUT' && [ ! -e '$KG_PROJ/new.c' ]"
}

for who in $(test_users); do
    for where in host disable seccomp; do
        test_work "$where" "$who"
        test_deny "$where" "$who"
        test_without "$where" "$who"
    done
done
finish
