#!/bin/bash
# protected_paths.sh: every built-in protected path (core/protect/protected.c, read
# through tests/helpers/protected-table.c), absent at launch and present,
# attacked from inside the bubblewrap box and the Landlock box (forced with
# --backend landlock, as landlock.sh does): create, mkdir, write,
# rename-away and symlink-replace all fail; each attempt prints a marker
# and appends to a file in the project first, so a box that did not run
# never passes.  Afterwards the host's project holds what it held before
# (a missing name is missing again: the placeholder is gone).  The
# controls run the same attacks with every name in unprotect_paths: there
# they land, so the checks can fail.  .git/commondir is left out: present,
# the launch is refused, and git_escape.sh attacks it.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3 git mv
TABLE=${KGATE_TEST_PROTECTED_TABLE:-}
[ -x "$TABLE" ] || skip_all "tests/helpers/protected-table was not built"
ABI=$(landlock_abi)
[ "$ABI" -ge 1 ] || skip_all "Landlock is not enabled in this kernel"

mapfile -t ENTRIES < <("$TABLE" | grep -v '^git ')
[ "${#ENTRIES[@]}" -ge 17 ] || skip_all "the table helper printed ${#ENTRIES[@]} entries"

# The attacks on one entry: "$1" is dir or file, "$2" the name, "$3" its
# number.  Every attempt that succeeds prints LEAK-<n>-<attempt>.
ATTACK='
rn() { mv -T "$1" "$2" 2>/dev/null; } # across mounts mv copies, then fails to remove
attack() {
    k=$1 n=$2 i=$3
    echo "M-$i"; echo "ran-$i" >>w/ran
    if [ "$k" = dir ]; then
        mkdir "$n" 2>/dev/null && echo "LEAK-$i-mkdir"
        mkdir "$n/sub" 2>/dev/null && echo "LEAK-$i-mkdir-in"
        (echo planted >"$n/settings.json") 2>/dev/null && echo "LEAK-$i-create"
        (echo planted >>"$n/orig") 2>/dev/null && echo "LEAK-$i-write"
    else
        (set -C; echo planted >"$n") 2>/dev/null && echo "LEAK-$i-create"
        mkdir "$n" 2>/dev/null && echo "LEAK-$i-mkdir"
        (echo planted >>"$n") 2>/dev/null && echo "LEAK-$i-write"
        (echo planted >"$n") 2>/dev/null && echo "LEAK-$i-truncate"
    fi
    rn "$n" "w/away-$i" && echo "LEAK-$i-rename-away"
    mkdir -p "w/evil-$i" && echo planted >"w/evil-$i/settings.json"
    ln -s "$PWD/w/evil-$i" "w/link-$i"
    rn "w/link-$i" "$n" && echo "LEAK-$i-symlink-replace"
    { rm -rf "$n" && ln -s -T "$PWD/w/evil-$i" "$n"; } 2>/dev/null &&
        echo "LEAK-$i-rm-and-link"
    echo "E-$i"
}
'

# The script the program runs: the attacks, one line per entry.
inside_script() {
    local i=0 kind name
    printf '%s\n' "$ATTACK" "echo M-start"
    for e in "${ENTRIES[@]}"; do
        read -r kind name <<<"$e"
        i=$((i + 1))
        printf 'attack %s %q %d\n' "$kind" "$name" "$i"
    done
    echo "echo M-end"
}

# A project with a git repository and the workspace w/ (the Landlock box
# splits the project root: nothing new can be made there, even a marker).
# present: every entry made, holding "# orig"; absent: every entry gone.
make_project() {
    local state=$1 kind name
    git init -q "$KG_PROJ"
    mkdir "$KG_PROJ/w"
    for e in "${ENTRIES[@]}"; do
        read -r kind name <<<"$e"
        rm -rf "${KG_PROJ:?}/$name"
        [ "$state" = present ] || continue
        if [ "$kind" = dir ]; then
            mkdir "$KG_PROJ/$name" && echo "# orig" >"$KG_PROJ/$name/orig"
        else
            echo "# orig" >"$KG_PROJ/$name"
        fi
    done
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
}

# The project holds what make_project left, entry for entry.
unchanged() {
    local state=$1 kind name p
    for e in "${ENTRIES[@]}"; do
        read -r kind name <<<"$e"
        p=$KG_PROJ/$name
        if [ "$state" = absent ]; then
            [ -e "$p" ] || [ -L "$p" ] && { echo "# $name: left behind"; return 1; }
        elif [ -L "$p" ]; then
            echo "# $name: replaced by a link"; return 1
        elif [ "$kind" = dir ]; then
            [ "$(ls -A "$p")" = orig ] && [ "$(cat "$p/orig")" = "# orig" ] ||
                { echo "# $name: changed"; return 1; }
        else
            [ -f "$p" ] && [ "$(cat "$p")" = "# orig" ] || { echo "# $name: changed"; return 1; }
        fi
    done
    return 0
}

not() { ! "$@"; }

all_names() {
    local kind name sep=
    for e in "${ENTRIES[@]}"; do
        read -r kind name <<<"$e"
        printf '%s%s' "$sep" "$name"
        sep=', '
    done
}

# test_box USER BOX STATE [control]
test_box() {
    local who=$1 box=$2 state=$3 control=${4:-}
    use_user "$who"
    if [ -n "$control" ]; then
        write_config <<EOF
network: off
unprotect_paths: [$(all_names), .git/commondir]
EOF
    else
        write_config <<<"network: off"
    fi
    make_project "$state"
    local tag="$box $state${control:+ (control: unprotected)}"
    local force=()
    [ "$box" = landlock ] && force=(--backend landlock)
    OUT=$KG_TMP/out.$who.$box.$state$control ERR=$OUT.err
    kg run "${force[@]}" -- sh -c "$(inside_script)" >"$OUT" 2>"$ERR"
    RC=$?
    local n=${#ENTRIES[@]}
    check "$tag: the run happened (every attack's marker, in the output and in the project)" \
        sh -c "[ \$(grep -c '^E-' '$OUT') -eq $n ] && grep -qx M-end '$OUT' &&
               [ \$(grep -c '^ran-' '$KG_PROJ/w/ran') -eq $n ]"
    if [ -z "$control" ]; then
        check "$tag: kgate ran the box it was meant to (exit 0)" [ "$RC" -eq 0 ]
        check "$tag: no attack succeeded" sh -c "! grep '^LEAK-' '$OUT'"
        check "$tag: the host's project is as it was" unchanged "$state"
    else
        # Without the protection every entry falls to the same attacks, in
        # the Landlock box too: its supervisor gives the split project root
        # back (docs/landlock.md).  Without the supervisor only those below
        # .git do, the root staying split by .git itself.
        local want=$n
        [ "$box" = landlock ] && [ -n "${KGATE_LANDLOCK_NO_SUPERVISOR:-}" ] &&
            want=$(printf '%s\n' "${ENTRIES[@]}" | grep -c ' \.git/')
        check "$tag: $want entries are created or replaced" \
            sh -c "[ \$(grep -E '^LEAK-[0-9]+-(create|mkdir|rename-away)$' '$OUT' |
                         cut -d- -f2 | sort -u | wc -l) -eq $want ]"
        check "$tag: and the host's project shows it" not unchanged "$state"
    fi
    [ -z "$control" ] && grep '^LEAK-' "$OUT" | head -5 | sed 's/^/# /'
    if [ -n "$control" ]; then
        for i in $(seq "$n"); do
            grep -qE "^LEAK-$i-(create|mkdir|rename-away)$" "$OUT" ||
                echo "# held without protection: ${ENTRIES[$((i - 1))]}"
        done
    fi
    [ -s "$ERR" ] && sed 's/^/# stderr: /' "$ERR" | head -5
}

# Two runs share a placeholder: the one that ends first leaves it (an
# unlink on the host would detach it from the other run's box), the other
# run still cannot create the name, and the last to end removes it.
test_shared() {
    local who=$1 box=$2 force=()
    [ "$box" = landlock ] && force=(--backend landlock)
    use_user "$who"
    write_config <<<"network: off"
    make_project absent
    local outa=$KG_TMP/shared-a.$who.$box
    kg run "${force[@]}" -- sh -c "$ATTACK"'
        echo A-waiting; while [ ! -e w/go ]; do sleep 0.1; done
        attack dir .claude 1; attack file .mcp.json 2; echo A-end' >"$outa" 2>&1 &
    local job=$!
    poll 300 grep -qx A-waiting "$outa"
    check "$box shared: the first run holds a placeholder" [ -d "$KG_PROJ/.claude" ]
    kg run "${force[@]}" -- sh -c 'echo B >w/b' >/dev/null 2>&1
    check "$box shared: the second run ran" [ -s "$KG_PROJ/w/b" ]
    check "$box shared: the second run, ending first, left the placeholder" \
        [ -d "$KG_PROJ/.claude" ]
    : >"$KG_PROJ/w/go"
    wait_bounded 120 "$job"
    check "$box shared: the first run attacked after the second ended" \
        sh -c "grep -qx A-end '$outa' && grep -qx E-2 '$outa'"
    check "$box shared: and nothing landed" sh -c "! grep '^LEAK-' '$outa'"
    check "$box shared: the last run removed the placeholders" \
        sh -c "[ ! -e '$KG_PROJ/.claude' ] && [ ! -e '$KG_PROJ/.mcp.json' ]"
}

for who in $(test_users); do
    for box in bubblewrap landlock; do
        test_shared "$who" "$box"
    done
done

for who in $(test_users); do
    for box in bubblewrap landlock; do
        for state in absent present; do
            test_box "$who" "$box" "$state"
        done
        test_box "$who" "$box" absent control
    done
done
finish
