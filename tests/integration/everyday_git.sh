#!/usr/bin/env bash
# everyday_git.sh: an agent's everyday git loop works in both boxes (issue
# 41), as root and as the unprivileged uid, with kgate init's deny_read
# [.env] and a .env at the project's top, not ignored by the project:
#   - git commit inside is the user's (author from the user's ~/.gitconfig),
#     although the home is hidden;
#   - nothing of ~/.gitconfig but the allowed keys is readable inside (a
#     credential helper, an insteadOf URL with a token, an alias);
#   - git status inside shows only the user's changes: no placeholder
#     (.envrc, .kgate.yaml, .mcp.json, .devcontainer.json) and no .env;
#     git add -A, git add ., git stash -u and git commit leave them out;
#   - git clean -fdx removes none of them, and the run goes on;
#   - a write to .env fails (bubblewrap covered it with /dev/null, where the
#     write succeeded and the data was lost), rm and mv of it fail, and the
#     host's .env is unchanged after;
#   - after the run the commits hold only the user's files and the host's
#     git status is what it was before;
#   - read_paths: [~/.gitconfig] shows the user's whole file at ~/.gitconfig
#     in every box (the Landlock box's HOME is a directory of the run).
# The boxes: bubblewrap; the Landlock box forced with --backend landlock;
# and the Landlock box kgate picks by itself inside bwrap --disable-userns
# (lib.sh's stand-in for a container without user namespaces).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_nouserns
need_cmd git python3
ABI=$(landlock_abi)
[ "$ABI" -ge 1 ] || skip_all "Landlock is not enabled in this kernel"

has() { grep -q -- "$1" "$2" || { echo "no '$1' in:"; cat "$2"; return 1; }; }
hasnt() { ! grep -q -- "$1" "$2" || { echo "'$1' in:"; cat "$2"; return 1; }; }
same() { [ "$1" = "$2" ] || { printf 'got  [%s]\nwant [%s]\n' "$1" "$2"; return 1; }; }
hgit() { as_user git -c safe.directory='*' "$@"; }

# What the agent does.  STATUS-0 is git status before any work: empty.
INSIDE='
echo M-start
echo "STATUS-0 [$(git status --porcelain | tr "\n" " ")]"
echo work >work.txt
git add -A && git commit -qm "agent work" && echo M-committed
git log -1 --format="AUTHOR %an <%ae>"
echo M-secret
git config --get credential.helper && echo LEAK-helper
git config --get-regexp "^url\." && echo LEAK-url
git config --get alias.pwn && echo LEAK-alias
grep -rs TOKEN123 "$HOME" && echo LEAK-token
grep -qs -e TOKEN123 -e helper "$REAL_HOME/.gitconfig" && echo LEAK-gitconfig
echo M-envw; (echo KEY=1 >>.env) 2>/dev/null && echo LEAK-envw
(echo KEY=1 >.env) 2>/dev/null && echo LEAK-envtrunc
echo M-envmv; mv .env moved.env 2>/dev/null && echo LEAK-envmv
rm -f .env 2>/dev/null; [ -e .env ] || echo LEAK-envrm
echo M-stash; echo more >more.txt
git stash -u -q && echo OK-stashed && git stash pop -q && echo OK-popped
git add . && git commit -qm "more work" && echo M-committed-2
echo "STATUS-1 [$(git status --porcelain | tr "\n" " ")]"
echo junk >junk.o
echo M-clean; git clean -fdxq 2>/dev/null; echo "CLEAN-RC $?"
[ -e junk.o ] && echo LEFT-junk
echo M-end
'

# setup WHO: a home with the user's ~/.gitconfig (identity and secrets),
# kgate init's config with the network off, and a project with one commit
# and a .env.
setup() {
    use_user "$1"
    cat >"$KG_HOME/.gitconfig" <<'EOF'
[user]
	name = Ann User
	email = ann@example.com
[init]
	defaultBranch = trunk
[credential]
	helper = store --file=/somewhere/TOKEN123-store
[url "https://TOKEN123@git.example/"]
	insteadOf = https://git.example/
[alias]
	pwn = !echo TOKEN123
EOF
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    kg init >/dev/null
    kg network off >/dev/null
    echo "A=1" >"$KG_PROJ/.env"
    echo readme >"$KG_PROJ/README"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    hgit init -q
    hgit add README
    hgit -c user.name=Host -c user.email=host@example.com commit -qm init
}

for who in $(test_users); do
    for box in bubblewrap landlock landlock-disable; do
        setup "$who"
        BEFORE=$(hgit status --porcelain)
        OUT=$KG_TMP/out.$who.$box
        RC=0
        case $box in
        bubblewrap | landlock)
            as_user env REAL_HOME="$KG_HOME" "$KGATE_BIN" run --backend "$box" -- sh -c "$INSIDE" \
                >"$OUT" 2>&1 || RC=$? ;;
        landlock-disable)
            in_disable_userns env REAL_HOME="$KG_HOME" "$KGATE_BIN" run -- sh -c "$INSIDE" \
                >"$OUT" 2>&1 || RC=$? ;;
        esac
        t="$who/$box"
        check "$t: the run ran to its end (markers)" \
            sh -c "[ $RC -eq 0 ] && grep -q '^M-start' '$OUT' && grep -q '^M-end' '$OUT'"
        check "$t: git status inside starts empty (no placeholder, no .env)" has '^STATUS-0 \[\]$' "$OUT"
        check "$t: git add -A && git commit works" has '^M-committed$' "$OUT"
        check "$t: the commit's author is the user's" has '^AUTHOR Ann User <ann@example.com>$' "$OUT"
        check "$t: the secrets of ~/.gitconfig are not readable (marker)" has '^M-secret$' "$OUT"
        check "$t: ... nothing leaked" hasnt 'LEAK-\(helper\|url\|alias\|token\|gitconfig\)' "$OUT"
        check "$t: a write to .env fails (marker)" has '^M-envw$' "$OUT"
        check "$t: ... neither append nor truncate went through" hasnt 'LEAK-env\(w\|trunc\)' "$OUT"
        check "$t: .env can be neither moved nor removed" hasnt 'LEAK-env\(mv\|rm\)' "$OUT"
        check "$t: git stash -u and pop work" has '^OK-popped$' "$OUT"
        check "$t: git add . && git commit works" has '^M-committed-2$' "$OUT"
        check "$t: git status after the commits is empty" has '^STATUS-1 \[\]$' "$OUT"
        check "$t: git clean -fdx ran and removed the user's junk" \
            sh -c "grep -q '^CLEAN-RC' '$OUT' && ! grep -q '^LEFT-junk' '$OUT'"

        check "$t: host: the first commit holds only work.txt" \
            same "$(hgit show --name-only --format= HEAD~1)" "work.txt"
        check "$t: host: the second only more.txt" same "$(hgit show --name-only --format= HEAD)" "more.txt"
        check "$t: host: the author is the user's" \
            same "$(hgit log -1 --format='%an <%ae>' HEAD~1)" "Ann User <ann@example.com>"
        check "$t: host: .env is unchanged" same "$(cat "$KG_PROJ/.env")" "A=1"
        check "$t: host: git status is what it was" same "$(hgit status --porcelain)" "$BEFORE"
        check "$t: host: no placeholder is left" \
            sh -c "! ls -A '$KG_PROJ' | grep -qx '\.envrc\|\.kgate\.yaml\|\.mcp\.json\|\.devcontainer\.json'"

        # read_paths: [~/.gitconfig] gives the user's whole file back, at
        # ~/.gitconfig in every box (the Landlock box's HOME is a directory
        # of the run: there it was out of git's sight).
        write_config <<EOF
network: off
deny_read: [.env]
read_paths: [~/.gitconfig]
EOF
        OUT=$KG_TMP/rp.$who.$box
        RC=0
        case $box in
        bubblewrap | landlock)
            as_user "$KGATE_BIN" run --backend "$box" -- sh -c \
                'echo M-rp; git config --get credential.helper; git config --get alias.pwn' \
                >"$OUT" 2>&1 || RC=$? ;;
        landlock-disable)
            in_disable_userns "$KGATE_BIN" run -- sh -c \
                'echo M-rp; git config --get credential.helper; git config --get alias.pwn' \
                >"$OUT" 2>&1 || RC=$? ;;
        esac
        check "$t: read_paths ~/.gitconfig: the run ran (marker)" has '^M-rp$' "$OUT"
        check "$t: read_paths ~/.gitconfig: git reads the user's whole file at ~" \
            sh -c "grep -q '^store --file=/somewhere/TOKEN123-store\$' '$OUT' && grep -q '^!echo TOKEN123\$' '$OUT'"
    done
done
finish
