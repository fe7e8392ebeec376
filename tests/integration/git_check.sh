#!/usr/bin/env bash
# git_check.sh: issue 26, the check after the run (core/protect/gitguard.c) as its
# attacker, in both boxes (bubblewrap, and the Landlock box forced with
# --backend landlock), as root and as an unprivileged uid.  The project
# records a gitlink "nested" that is not checked out (an empty directory,
# as a submodule before git submodule update), so nothing pins it; the
# program makes nested/.git name a git directory of its own with
# core.fsmonitor set, in each of the ways the check once misread, and
# writes a marker to show that it did.  Then the user's git runs on the
# host and must not run the fsmonitor.  Each route has a control: the same
# plant without kgate does run it.  Also core.hooksPath (issue 26, 2): the
# hooks directory the repository names is as read-only as .git/hooks.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git

git_marks

has() { # has PATTERN TEXT
    printf '%s\n' "$2" | grep -q -- "$1" || {
        printf 'no "%s" in:\n%s\n' "$1" "$2" | head -20
        return 1
    }
}

# The project: one commit and a gitlink "nested" that is not checked out.
fresh() {
    use_user "$KG_WHO_NOW"
    rm -f "$M"
    as_user sh -e -c '
        git init -q .
        echo one > f.txt && git add f.txt && git commit -q -m one
        git init -q ../n && git -C ../n commit -q --allow-empty -m n
        git update-index --add --cacheinfo 160000,$(git -C ../n rev-parse HEAD),nested
        git commit -q -m nested && mkdir nested work'
}

# The user's everyday git on the host, in the project.
host_git() {
    (
        as_user git status
        as_user git diff
        as_user git commit -q --allow-empty -m host
    ) >/dev/null 2>&1
    true
}

# A git directory at work/$1 that runs the marker (made with git itself),
# in a subdirectory: the Landlock box cannot create in the project root.
# Each plant ends by writing work/planted, so a test shows its run happened.
PLANT='mk() { git init -q work/evil && git -C work/evil config core.fsmonitor "$FSM" &&
    git -C work/evil commit -q --allow-empty -m x && mv work/evil/.git "work/$1" && rm -rf work/evil; }'

# route NAME PLANT [PATTERN]: the control, then the plant in each box.
route() {
    local name=$1 plant="$PLANT; $2 && touch work/planted" out box
    fresh
    as_user sh -c "$plant" >/dev/null 2>&1
    rm -f "$M"
    host_git
    check "control: $name, planted without kgate, runs on the host" ran
    for box in bwrap landlock; do
        fresh
        local force=()
        [ "$box" = landlock ] && force=(--backend landlock)
        out=$(kg run "${force[@]}" -- sh -c "$plant" 2>&1)
        check "$box: $name: the plant ran inside" test -e "$KG_PROJ/work/planted"
        check "$box: $name: the run is told" has "kgate: git: .*nested.* was planted" "$out"
        rm -f "$M"
        host_git
        check "$box: $name: never runs on the host" not_ran
    done
}

for KG_WHO_NOW in $(test_users); do
    # A .git file longer than a page: git strips every trailing newline.
    route "a .git file of 9000 bytes" \
        'mk gd && { printf "gitdir: ../work/gd"; head -c 9000 /dev/zero | tr "\0" "\n"; } > nested/.git'
    # A git directory whose name holds a CR (and an LF): git uses it whole.
    route "a git directory named with a CR" \
        'mk "gd$(printf "\r")x" && printf "gitdir: ../work/gd\rx\n" > nested/.git'
    route "a git directory named with an LF" \
        'mk "gd$(printf "\nx")" && printf "gitdir: ../work/gd\nx\r\n" > nested/.git'
    # Every name the check once moved to, made in advance.
    route "the quarantine names taken in advance" \
        'mk gd && printf "gitdir: ../work/gd\n" > nested/.git && mkdir nested/.git.kgate-quarantine &&
         for i in $(seq 1 99); do mkdir nested/.git.kgate-quarantine.$i; done'
    check "  and it lies under a name made after the run" \
        sh -c "ls -a '$KG_PROJ/nested' | grep -Eq '^\.git\.kgate-quarantine\.[0-9a-f]{16}$'"
    # ... and the directory left without write permission.
    route "the quarantine names taken, the directory read-only" \
        'mk gd && printf "gitdir: ../work/gd\n" > nested/.git && mkdir nested/.git.kgate-quarantine &&
         for i in $(seq 1 99); do mkdir nested/.git.kgate-quarantine.$i; done; chmod 555 nested'
    # A .git that is a symbolic link to a git directory.
    route "a .git that links to a git directory" 'mk gd && ln -s ../work/gd nested/.git'
    # A nested repository with an inert config, whose own index records a
    # gitlink to the one that runs the marker: git status enters both.
    route "a gitlink inside the nested repository's own index" \
        'mk gd && git init -q work/inner && git -C work/inner commit -q --allow-empty -m i &&
         git -C work/inner update-index --add --cacheinfo 160000,$(git --git-dir=work/gd rev-parse HEAD),deep &&
         mv work/inner/.git work/innergd && printf "gitdir: ../work/innergd\n" > nested/.git &&
         mkdir nested/deep && printf "gitdir: ../../work/gd\n" > nested/deep/.git'
done

# ---- core.hooksPath (issue 26, 2) ------------------------------------------------
# The hooks directory the repository's configuration names is kept as
# .git/hooks is: read-only, and made (empty) when missing, in both boxes.
HOOK='printf "#!/bin/sh\ntouch $M\n" > "$1/pre-commit" && chmod +x "$1/pre-commit"'
# hooks_route NAME HOOKSPATH: SETUP makes the repository; the plant writes
# a pre-commit there by every way a program would try.
hooks_route() {
    local name=$1 hp=$2 box out
    local plant="h() { $HOOK; }; touch work/planted; mkdir -p '$hp'; h '$hp' ||
        { rm -rf '$hp' || mv '$hp' '$hp.old'; mkdir -p '$hp' && h '$hp'; }"
    fresh
    as_user git config core.hooksPath "$hp"
    as_user sh -c "$plant" >/dev/null 2>&1
    rm -f "$M"
    host_git
    check "control: $name, planted without kgate, runs at the host's commit" ran
    for box in bwrap landlock; do
        fresh
        as_user git config core.hooksPath "$hp"
        local force=()
        [ "$box" = landlock ] && force=(--backend landlock)
        out=$(kg run "${force[@]}" -- sh -c "$plant; ls -d '$hp'" 2>&1)
        check "$box: $name: the plant ran inside" test -e "$KG_PROJ/work/planted"
        check "$box: $name: the hooks directory is there inside" has "^$hp\$" "$out"
        rm -f "$M"
        host_git
        check "$box: $name: the host's commit runs no planted hook" not_ran
        check "$box: $name: no hook landed" test ! -e "$KG_PROJ/$hp/pre-commit"
    done
}

for KG_WHO_NOW in $(test_users); do
    hooks_route "core.hooksPath .husky, missing at the launch" .husky
    hooks_route "core.hooksPath tools/githooks, parents missing" tools/githooks
    # one that exists with the user's hook in it keeps it, unchanged
    for box in none bwrap landlock; do
        fresh
        as_user sh -c "git config core.hooksPath .githooks && mkdir .githooks &&
            printf '#!/bin/sh\ntrue\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit"
        plant="touch work/planted; echo 'touch $M' >> .githooks/pre-commit"
        case $box in
        none) as_user sh -c "$plant" ;;
        bwrap) kg run -- sh -c "$plant" ;;
        landlock) kg run --backend landlock -- sh -c "$plant" ;;
        esac >/dev/null 2>&1
        check "$box: core.hooksPath .githooks: the plant ran" test -e "$KG_PROJ/work/planted"
        rm -f "$M"
        host_git
        if [ $box = none ]; then
            check "control: the user's hook appended to without kgate runs it" ran
        else
            check "$box: core.hooksPath .githooks: the user's hook runs nothing planted" not_ran
        fi
    done
done

finish
