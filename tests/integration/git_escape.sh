#!/usr/bin/env bash
# git_escape.sh: issue 12 section 1 on Linux (bubblewrap), as root and as
# an unprivileged uid.  A sandboxed program plants, with a real git, each
# route by which host git could run a command of its choosing (fsmonitor,
# hooks, rebase exec lines); then the user's everyday git commands run on
# the host and must not run it.  Each route has a control: the same plant
# made without kgate does run the marker on the host, so each check can
# fail.  Ordinary git work inside keeps working, and a second box runs
# beside the user's git.  docs/escapes.md ("Host git") describes the design.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git

git_marks

fails() { ! "$@" >/dev/null 2>&1; }
has() { # has PATTERN CMD...: CMD's stdout+stderr matches PATTERN
    local pat=$1 out
    shift
    out=$("$@" 2>&1)
    printf '%s\n' "$out" | grep -q -- "$pat" || {
        printf 'no "%s" in:\n%s\n' "$pat" "$out" | head -20
        return 1
    }
}

# The everyday git commands of the user, on the host, in directory $1.
host_git() {
    local d=$1
    (
        export KG_CWD=$d
        as_user git status
        as_user git log -1 --oneline
        as_user git diff
        as_user git commit -q --allow-empty -m host
        as_user git -c protocol.file.allow=always fetch -q "$KG_HOME/src"
        as_user git -c protocol.file.allow=always submodule status --recursive
        KG_CWD=$KG_HOME/src as_user git -c protocol.file.allow=always fetch -q "$d"
        [ -z "${EXTRA:-}" ] || as_user sh -c "$EXTRA"
    ) >/dev/null 2>&1
    true
}

# A fresh home: a source repository (src) and the project (proj), a
# repository with one commit and src as the submodule "sub".
fresh() {
    use_user "$KG_WHO_NOW"
    rm -f "$M"
    as_user sh -e -c '
        git init -q ../src
        git -C ../src commit -q --allow-empty -m src
        git init -q .
        echo one > f.txt
        git add f.txt
        git commit -q -m one
        git -c protocol.file.allow=always submodule -q add ../src sub
        git commit -q -m sub'
}

# What a planted git directory looks like: config that runs the marker
# (FSM, from git_marks).

# route NAME DIR SETUP PLANT: DIR is where the user runs git afterwards
# (relative to the home); SETUP runs on the host first; PLANT runs in the
# project, once without kgate (the control) and once inside the box.
route() {
    local name=$1 dir=$2 setup=$3 plant=$4 out
    fresh
    as_user sh -c "$setup" >/dev/null 2>&1
    as_user sh -c "$plant" >/dev/null 2>&1
    as_user sh -c "${LATER:-true}" >/dev/null 2>&1
    rm -f "$M"
    host_git "$KG_HOME/$dir"
    check "control: $name, planted without kgate, runs on the host" ran

    fresh
    as_user sh -c "$setup" >/dev/null 2>&1
    out=$(kg run -- sh -c "$plant" 2>&1)
    as_user sh -c "${LATER:-true}" >/dev/null 2>&1
    rm -f "$M"
    host_git "$KG_HOME/$dir"
    check "$name: planted inside, never runs on the host" not_ran
    LAST_OUT=$out
}

# A git directory that runs the marker, at $1 (made with git itself).
PLANT_GITDIR='mk() { git init -q "$1" && git -C "$1" config core.fsmonitor "$FSM" &&
    git -C "$1" commit -q --allow-empty -m x; }'

for KG_WHO_NOW in $(test_users); do
    # ---- the git directory's own config: commondir --------------------------
    CDPLANT='mkdir .git/x && cp .git/config .git/x/config &&
        git config -f .git/x/config core.fsmonitor "$FSM" &&
        ln -s ../objects .git/x/objects && ln -s ../refs .git/x/refs &&
        echo x > .git/commondir'
    route "commondir redirect (.git/x/config with core.fsmonitor)" proj '' "$CDPLANT"
    check "commondir: the placeholder is gone after the run" \
        test ! -e "$KG_PROJ/.git/commondir"
    # A config that sets core.worktree gets no placeholder (git would ignore
    # the key): the check after the run moves the planted one aside.
    route "commondir redirect, core.worktree set (checked after the run)" proj \
        'git config core.worktree "$PWD"' "$CDPLANT"
    check "commondir: the run is told it was moved aside" \
        has "kgate: git: .*commondir was planted by the run" echo "$LAST_OUT"
    check "commondir: it lies beside, under a name git does not read" \
        test -e "$KG_PROJ/.git/commondir.kgate-quarantine"
    check "commondir: the audit log keeps it (kind git)" \
        has '"kind":"git".*commondir was planted' cat "$KG_HOME/.kgate/audit.log"
    # The next launch refuses a commondir that is there before it starts
    # (one left by a killed kgate, or made outside kgate).
    echo x >"$KG_PROJ/.git/commondir"
    kg run -- true >/dev/null 2>&1
    check "a launch in a repository with a commondir is refused (125)" test $? -eq 125
    check "and says why in one kgate: line" \
        has "^kgate: .*commondir exists" kg run -- true
    rm -f "$KG_PROJ/.git/commondir"

    # ---- .git itself ----------------------------------------------------------
    route "rename .git and put a new one in its place" proj '' "
        $PLANT_GITDIR
        mv .git .git.old; mk ."
    check "rename .git: the real one stayed where it was" test ! -e "$KG_PROJ/.git.old"
    route "replace .git by a file naming another git directory" proj '' "
        $PLANT_GITDIR
        mk evil && mv evil/.git evilgit && mv .git .git.old; printf 'gitdir: evilgit\n' > .git"
    route "empty .git and refill it" proj '' "
        $PLANT_GITDIR
        mk evil && rm -rf .git/* && cp -a evil/.git/. .git/"

    # ---- per-worktree config ----------------------------------------------------
    WTC='git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true'
    route "config.worktree (extensions.worktreeConfig on)" proj "$WTC" '
        printf "[core]\n\tfsmonitor = %s\n" "$FSM" > .git/config.worktree'
    route "config.worktree rewritten by git config --worktree" proj "$WTC" '
        git config --worktree core.fsmonitor "$FSM"'
    # planted now, read once the user turns worktreeConfig on (as git
    # sparse-checkout does)
    LATER=$WTC route "config.worktree while extensions.worktreeConfig is off" proj '' '
        printf "[core]\n\tfsmonitor = %s\n" "$FSM" > .git/config.worktree'

    # ---- linked worktrees -----------------------------------------------------------
    WT='git worktree add -q ../wt'
    route "a linked worktree's git directory (commondir)" wt "$WT" "
        $PLANT_GITDIR
        mk .git/evil && echo \$PWD/.git/evil/.git > .git/worktrees/wt/commondir"
    route "a linked worktree's config.worktree" wt "$WTC && $WT" '
        printf "[core]\n\tfsmonitor = %s\n" "$FSM" > .git/worktrees/wt/config.worktree'

    # ---- submodules and nested repositories ------------------------------------------
    route "a submodule's git directory (.git/modules/sub/config)" proj '' '
        git config -f .git/modules/sub/config core.fsmonitor "$FSM"'
    route "a submodule's hooks and config via its .git file" proj '' "
        $PLANT_GITDIR
        mk evil && mv evil/.git evilgd && printf 'gitdir: ../evilgd\n' > sub/.git"
    route "a submodule's directory renamed and replaced" proj '' "
        $PLANT_GITDIR
        mv sub sub.old && mk sub"
    # since issue 40 the directory above the pinned sub/.git is bound onto
    # itself: the rename is refused; were it not, the check after the run
    # would move the replacement's .git aside
    check "the submodule's directory stayed, or its replacement's .git was moved aside" \
        sh -c "test -e '$KG_PROJ/sub/.git.kgate-quarantine' ||
            { test ! -e '$KG_PROJ/sub.old' && test -e '$KG_PROJ/sub/.git'; }"
    route "a nested repository registered as a gitlink" proj '' "
        $PLANT_GITDIR
        mk nested && git add nested"
    check "the nested repository's .git was moved aside" \
        test -e "$KG_PROJ/nested/.git.kgate-quarantine"

    # ---- a repository where there was none (the project inside a larger one) ---------
    MONO='git init -q ../mono && mkdir ../mono/pkg'
    fresh
    as_user sh -c "$MONO"
    KG_CWD=$KG_HOME/mono/pkg as_user sh -c "$PLANT_GITDIR; mk ." >/dev/null 2>&1
    rm -f "$M"
    host_git "$KG_HOME/mono/pkg"
    check "control: a new .git in a package of a larger repository runs on the host" ran
    fresh
    as_user sh -c "$MONO"
    out=$(KG_CWD=$KG_HOME/mono/pkg kg run -- sh -c "$PLANT_GITDIR; mk ." 2>&1)
    rm -f "$M"
    host_git "$KG_HOME/mono/pkg"
    check "a new .git in a package of a larger repository: never runs on the host" not_ran
    check "and the run is told" has "kgate: git: .*pkg/.git was planted" echo "$out"

    # ---- rebase todo -------------------------------------------------------------------
    REBASE='echo two >> f.txt && git commit -qam two &&
        GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git rebase -q -i HEAD~1'
    EXTRA='git rebase --continue' route "an exec line in the rebase todo" proj "$REBASE" '
        echo "exec $FSM" >> .git/rebase-merge/git-rebase-todo'
    # without an exec line, a rebase stopped inside continues on the host
    fresh
    as_user sh -c "$REBASE" >/dev/null 2>&1
    kg run -- sh -c 'echo three > g.txt && git add g.txt && git commit -qm three' >/dev/null 2>&1
    check "a rebase without exec lines still continues on the host" \
        as_user git rebase --continue

    # ---- ordinary git work inside keeps working ------------------------------------------
    fresh
    check "inside: add, commit, branch, checkout, stash, log, submodule status" \
        kg run -- sh -e -c '
            echo two >> f.txt && git add f.txt && git commit -qm inside
            git branch topic && git checkout -q topic && git checkout -q -
            echo wip >> f.txt && git stash -q && git stash pop -q && git checkout -q f.txt
            git log --oneline | grep -q inside
            git submodule status | grep -q " sub"
            git status --short >/dev/null'
    check "the commit made inside is on the host" has inside as_user git log -1 --format=%s
    check "the branch made inside is on the host" as_user git rev-parse -q --verify topic
    check "a fresh git init and commit inside is left alone" \
        kg run -- sh -e -c 'git init -q fresh && git -C fresh commit -q --allow-empty -m f'
    check "and stays a repository" test -d "$KG_PROJ/fresh/.git"

    # ---- while a run is going on -----------------------------------------------------------
    # The box plants every route that a mount closes, says it is ready and
    # waits; the user's git runs meanwhile, and so does a second box.
    fresh
    as_user sh -c "$WTC" >/dev/null 2>&1
    as_user sh -c "$WT" >/dev/null 2>&1
    rm -f "$KG_PROJ/go"
    kg run -- sh -c "
        $PLANT_GITDIR
        mk evil
        git config --worktree core.fsmonitor \"\$FSM\"
        git config -f .git/modules/sub/config core.fsmonitor \"\$FSM\"
        printf 'gitdir: ../evil/.git\n' > sub/.git
        echo \$PWD/evil/.git > .git/worktrees/wt/commondir
        mkdir .git/x && cp .git/config .git/x/config
        git config -f .git/x/config core.fsmonitor \"\$FSM\"
        ln -s ../objects .git/x/objects; ln -s ../refs .git/x/refs
        echo x > .git/commondir
        mv .git .git.old && mk .
        touch ready
        for i in \$(seq 300); do [ -e go ] && break; sleep 0.1; done" >/dev/null 2>&1 &
    BOX=$!
    for _ in $(seq 300); do [ -e "$KG_PROJ/ready" ] && break; sleep 0.1; done
    check "the first box planted and is waiting" test -e "$KG_PROJ/ready"
    rm -f "$M"
    host_git "$KG_PROJ"
    host_git "$KG_HOME/wt"
    check "while it runs, host git runs nothing it planted" not_ran
    check "while it runs, a second box works in the same project" \
        kg run -- sh -c 'git status >/dev/null && git log -1 >/dev/null'
    touch "$KG_PROJ/go"
    wait "$BOX"
    rm -f "$M"
    host_git "$KG_PROJ"
    check "after it ends, host git runs nothing it planted" not_ran
    check "and the commondir placeholder is gone" test ! -e "$KG_PROJ/.git/commondir"
done

finish
