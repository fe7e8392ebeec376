#!/usr/bin/env bash
# git_dirs.sh: issue 40, defect 3, as its attacker.  Every git directory
# the project's git would use gets what .git gets: the one a .git file
# names (git init --separate-git-dir), its submodules' (modules/NAME) and
# linked worktrees' (worktrees/NAME), and the main one a linked worktree's
# commondir names.  In both boxes (bubblewrap, and the Landlock box forced
# with --backend landlock), as root and as an unprivileged uid: the program
# plants a core.fsmonitor (or a commondir, or a hook) there and writes a
# marker to show that its run happened; then the user's git runs on the
# host and must not run the planted command.  Each route has a control:
# the same plant made without kgate does run it.  Against the code before
# issue 40, 42 of the 174 checks fail (docs/escapes.md says which).
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git

git_marks

last_commit_is() { [ "$(as_user git log --format=%s -1)" = "$1" ]; }

# The projects.  Each has one commit, and a directory "work" for plants
# (the Landlock box cannot create in the project root).
#   sep:  git init --separate-git-dir=.realgit, the .git file as git
#         writes it (an absolute name);
#   rel:  the same with the .git file relative and spelled with "..";
#   lnk:  the same, the .git file naming it through a symbolic link "lnk";
#   sub:  sep, with a submodule "sub" (its git directory .realgit/modules/sub);
#   wt:   sep, with a linked worktree "wt" (.realgit/worktrees/wt);
#   none: no repository at all.
fresh() {
    use_user "$KG_WHO_NOW"
    rm -f "$M"
    if [ "$1" = none ]; then
        as_user sh -e -c 'echo one > f.txt && mkdir work'
        return
    fi
    as_user sh -e -c '
        git init -q --separate-git-dir=.realgit .
        echo one > f.txt && git add f.txt && git commit -q -m one
        mkdir work'
    case $1 in
    rel) as_user sh -e -c 'printf "gitdir: work/../.realgit\n" > .git' ;;
    lnk) as_user sh -e -c 'ln -s .realgit lnk && printf "gitdir: lnk\n" > .git' ;;
    sub) as_user sh -e -c '
        git init -q ../subrepo && git -C ../subrepo commit -q --allow-empty -m s
        # git 2.38.1 and later refuse a local submodule unless allowed
        git -c protocol.file.allow=always submodule -q add ../subrepo sub
        git commit -q -m sub' ;;
    wt) as_user sh -e -c 'git worktree add -q wt && mkdir -p wt/work' ;;
    esac
}

# The user's everyday git on the host, in the project and in what it holds.
host_git() {
    (
        as_user git status
        as_user git diff
        as_user git commit -q --allow-empty -m host
        [ -d "$KG_PROJ/wt" ] && KG_CWD=$KG_PROJ/wt as_user git status
        [ -d "$KG_PROJ/wt" ] && KG_CWD=$KG_PROJ/wt as_user git commit -q --allow-empty -m host
    ) >/dev/null 2>&1
    true
}

# route KIND NAME PLANT: the control, then the plant in each box.  Each
# plant ends by writing work/planted, so a test shows its run happened
# (the write itself may be refused: the marker is written either way).
route() {
    local kind=$1 name=$2 plant="$3; touch work/planted" box out
    fresh "$kind"
    as_user sh -c "$plant" >/dev/null 2>&1
    rm -f "$M"
    host_git
    check "control: $name, planted without kgate, runs on the host" ran
    for box in bwrap landlock; do
        fresh "$kind"
        local force=()
        [ "$box" = landlock ] && force=(--backend landlock)
        out=$(kg run "${force[@]}" -- sh -c "$plant" 2>&1)
        check "$box: $name: the plant ran inside" test -e "$KG_PROJ/work/planted"
        rm -f "$M"
        host_git
        check "$box: $name: never runs on the host" not_ran || printf '%s\n' "$out" | head -5
    done
}

# An evil git directory at work/evil (made with git itself).
EVIL='git init -q --bare work/evil && git -C work/evil config core.fsmonitor "$FSM"'

for KG_WHO_NOW in $(test_users); do
    for kind in sep rel; do
        route $kind "$kind: core.fsmonitor with git config" 'git config core.fsmonitor "$FSM"'
        route $kind "$kind: core.fsmonitor appended to the config" \
            'printf "[core]\n\tfsmonitor = %s\n" "$FSM" >> .realgit/config'
        route $kind "$kind: a pre-commit hook" \
            'printf "#!/bin/sh\n%s\n" "$FSM" > .realgit/hooks/pre-commit; chmod +x .realgit/hooks/pre-commit'
    done
    # a commondir where there was none sends git to a config of the
    # program's choosing (the Landlock box refuses the name; bubblewrap
    # has no placeholder to mount on: the check after the run moves it)
    route sep "sep: a commondir planted" \
        "$EVIL"' && for d in objects refs HEAD; do ln -s "$PWD/.realgit/$d" work/evil/x$d; done;
         echo "$PWD/work/evil" > .realgit/commondir'
    # the git directory renamed away and replaced by one of the program's
    route sep "sep: the git directory replaced" \
        'git init -q --separate-git-dir=work/new work/n && git -C work/n config core.fsmonitor "$FSM" &&
         mv .realgit work/old && mv work/new .realgit'
    # the .git file pointed elsewhere
    route sep "sep: the .git file pointed at another git directory" \
        'cp -r .realgit work/evil && git --git-dir=work/evil config core.fsmonitor "$FSM" &&
         printf "gitdir: work/evil\n" > .git'
    # a .git file made by the run where there was none, naming a git
    # directory of the program's (the check after the run reads it)
    route none "none: a .git file made by the run" \
        'git init -q --separate-git-dir=work/evil work/x && git -C work/x config core.fsmonitor "$FSM" &&
         printf "gitdir: work/evil\n" > .git'
    # the .git file names its git directory through a symbolic link in the
    # project, which the program points at a git directory of its own
    route lnk "lnk: the symbolic link on the way retargeted" \
        'cp -r .realgit work/evil && git --git-dir=work/evil config core.fsmonitor "$FSM" &&
         rm lnk && ln -s work/evil lnk'
    # a submodule's git directory below the separate one
    route sub "sub: the submodule's config" 'git -C sub config core.fsmonitor "$FSM"'
    route sub "sub: the submodule's config appended to" \
        'printf "[core]\n\tfsmonitor = %s\n" "$FSM" >> .realgit/modules/sub/config'
    # a linked worktree's git directory below the separate one: its
    # commondir pointed at a git directory of the program's
    route wt "wt: the worktree's commondir" \
        "$EVIL"' && cp -r .realgit/objects .realgit/refs work/evil/ 2>/dev/null;
         echo "$PWD/work/evil" > .realgit/worktrees/wt/commondir'
    route wt "wt: the worktree's config.worktree" \
        'git config extensions.worktreeConfig true;
         printf "[core]\n\tfsmonitor = %s\n" "$FSM" > .realgit/worktrees/wt/config.worktree'

    # A .git file git cannot read refuses the launch (fail closed), and
    # says why in one line.
    fresh sep
    as_user sh -c '{ printf "gitdir: .realgit"; head -c 1048577 /dev/zero | tr "\0" "x"; } > .git'
    out=$(kg run -- touch work/planted 2>&1)
    rc=$?
    check "a .git file over 1 MiB: the launch is refused" test "$rc" = 125
    check "  and the program did not run" test ! -e "$KG_PROJ/work/planted"
    check "  and it says why" sh -c "printf '%s' \"\$1\" | grep -q 'cannot be read as git reads it'" _ "$out"
    as_user sh -c 'printf "gitdir: nowhere\n" > .git'
    out=$(kg run -- touch work/planted 2>&1)
    check "a .git file naming nothing: the launch is refused" test $? = 125

    # A .git that is a symbolic link is refused at the launch: the
    # built-in .git/config would resolve through it.
    fresh sep
    as_user sh -c 'rm .git && ln -s .realgit .git'
    out=$(kg run -- touch work/planted 2>&1)
    check "a .git that links to the git directory: the launch is refused" test $? = 125
    check "  and the program did not run" test ! -e "$KG_PROJ/work/planted"

    # Ordinary work inside still works with a separate git directory.
    for box in bwrap landlock; do
        fresh sep
        force=()
        [ "$box" = landlock ] && force=(--backend landlock)
        # (the identity given on the command line: the environment's does
        # not reach the box)
        out=$(kg run "${force[@]}" -- sh -c 'echo two > f.txt &&
            git -c user.name=kg -c user.email=kg@example.org commit -qam two &&
            git status --short && touch work/planted' 2>&1)
        check "$box: sep: git commit inside works" test -e "$KG_PROJ/work/planted"
        check "$box: sep: the commit is in the repository" last_commit_is two
        check "$box: sep: nothing reported" sh -c "! printf '%s' \"\$1\" | grep -q 'kgate: git:'" _ "$out"
    done
done

finish
