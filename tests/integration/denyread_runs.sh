#!/usr/bin/env bash
# denyread_runs.sh: issue 12 §3.  A file covered by deny_read must never
# become readable in a later run, whatever an earlier run did to the tree.
# Each scenario is played as the attacker: run 1 prepares (it prints a
# marker first, so the run is shown to have happened), the user then
# writes the secret on the host, run 2 tries to read it.  Where kgate
# cannot show the file is safe, run 2 must refuse: exit 125, exactly one
# `kgate:` line naming the path, nothing started, no launch line in the
# audit log.  Each refusal has its control: the same run without the
# attacker's preparation starts and reads nothing.  docs/escapes.md,
# "deny_read across runs".
. "$(dirname "$0")/lib.sh"
need_bwrap

# kgrun SCRIPT: kgate run of sh -c SCRIPT as the test user; output in $OUT,
# status in $RC.
kgrun() {
    OUT=$(as_user "$KGATE_BIN" run --no-pty -- sh -c "$1" 2>&1)
    RC=$?
}
launches() { grep -c '"kind":"launch"' "$KG_HOME/.kgate/audit.log" 2>/dev/null || echo 0; }
has() { [[ $OUT == *"$1"* ]] || { printf 'no "%s" in: %s\n' "$1" "$OUT" | head -5; return 1; }; }
lacks() { [[ $OUT != *"$1"* ]] || { printf 'unexpected "%s" in: %s\n' "$1" "$OUT" | head -5; return 1; }; }
status() { [ "$RC" -eq "$1" ] || { echo "status $RC, wanted $1: $OUT" | head -5; return 1; }; }
# The refusal: 125, one line, kgate: first, naming $1, the run never ran.
refused() {
    status 125 && [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 1 ] &&
        [[ $OUT == kgate:* ]] && has "$1" && lacks run2-ran
}
# The user, on the host, writes the secret into NAME (in place, as an
# editor that truncates and writes does).
user_writes() {
    as_user sh -c "printf '%s\n' '$SECRET' > '$1'"
}

fresh() {
    use_user "$1"
    SECRET=secret-$RANDOM$RANDOM
    write_config <<EOF
deny_read: [config/secrets.env, .env, secrets]
EOF
    as_user mkdir -p config
    as_user sh -c 'echo ok > config/other'
}

for who in $(test_users); do
    # --- renames of the file and of its parents ----------------------------
    fresh "$who"
    user_writes config/secrets.env
    kgrun 'echo run1; mv config/other other.moved && echo sibling-renamed;
           mv config config.moved; mv config/secrets.env s.moved;
           ln config/secrets.env s.link; cp -a config c.copy; true'
    check "rename: run 1 ran (marker)" has run1
    check "rename: control, a file next to the cover can be renamed" has sibling-renamed
    check "rename: the parent cannot be renamed (busy)" has "Device or resource busy"
    check "rename: the parent is still in place on the host" test -f "$KG_PROJ/config/secrets.env"
    check "rename: the file is still in place on the host" \
        grep -q "$SECRET" "$KG_PROJ/config/secrets.env"
    kgrun 'echo run2-ran; grep -r secret- . 2>/dev/null; true'
    check "rename: run 2 ran (marker)" has run2-ran
    check "rename: run 2 finds the secret nowhere in the project" lacks "$SECRET"

    # --- a hard link made before the user filled the name --------------------
    fresh "$who"
    kgrun 'echo run1; touch .env && ln .env .cache-x && echo linked'
    check "hard link: run 1 made the link (marker)" has linked
    user_writes .env
    n=$(launches)
    kgrun 'echo run2-ran; cat .cache-x'
    check "hard link: run 2 is refused, one line naming .env" refused "$KG_PROJ/.env"
    check "hard link: the secret was not read" lacks "$SECRET"
    check "hard link: no launch line in the audit log" test "$(launches)" -eq "$n"
    rm -f "$KG_PROJ/.cache-x"
    kgrun 'echo run2-ran; cat .env; echo end'
    check "hard link: control, without the link run 2 runs" has run2-ran
    check "hard link: control, .env is not read" lacks "$SECRET"
    # Refused, not shown empty: a tool is told the file is held back
    # (docs/one-view.md).
    check "hard link: control, .env cannot be opened (EACCES)" \
        has ".env: Permission denied"

    # --- a symlink at the name -----------------------------------------------
    fresh "$who"
    kgrun 'echo run1; ln -s .cache-y .env && echo linked'
    check "symlink: run 1 made the link (marker)" has linked
    user_writes .env # lands in .cache-y
    n=$(launches)
    kgrun 'echo run2-ran; cat .cache-y'
    check "symlink: run 2 is refused, one line naming .env" refused ".env"
    check "symlink: the secret was not read" lacks "$SECRET"
    check "symlink: no launch line in the audit log" test "$(launches)" -eq "$n"

    # --- a symlinked parent made before the file existed ----------------------
    fresh "$who"
    as_user rm -rf config
    kgrun 'echo run1; mkdir real && ln -s real config && echo linked'
    check "symlinked parent: run 1 made the link (marker)" has linked
    user_writes config/secrets.env # lands in real/secrets.env
    kgrun 'echo run2-ran; cat real/secrets.env'
    check "symlinked parent: run 2 is refused, naming the path" refused "config"
    check "symlinked parent: the secret was not read" lacks "$SECRET"

    # --- a denied directory prepared before it existed -----------------------
    fresh "$who"
    kgrun 'echo run1; mkdir secrets && touch secrets/key && ln secrets/key .cache-z &&
           ln -s ../.cache-w secrets/out && echo prepared'
    check "directory: run 1 prepared it (marker)" has prepared
    user_writes secrets/key
    # Both entries are refused; which one the line names first follows the
    # directory's own order (readdir), which differs between filesystems.
    # Each is named once the other is gone.
    kgrun 'echo run2-ran; cat .cache-z'
    check "directory: the secret was not read" lacks "$SECRET"
    if [[ $OUT == *"secrets: out"* ]]; then
        check "directory: a symlink that leads out is refused" refused "secrets: out"
        rm -f "$KG_PROJ/secrets/out"
        kgrun 'echo run2-ran; cat .cache-z'
        check "directory: run 2 is refused, naming the entry with two links" \
            refused "secrets: key has 2 hard links"
        check "directory: the secret was not read (again)" lacks "$SECRET"
        rm -f "$KG_PROJ/.cache-z"
    else
        check "directory: run 2 is refused, naming the entry with two links" \
            refused "secrets: key has 2 hard links"
        rm -f "$KG_PROJ/.cache-z"
        kgrun 'echo run2-ran'
        check "directory: a symlink that leads out is refused" refused "secrets: out"
        rm -f "$KG_PROJ/secrets/out"
    fi
    as_user ln -s key "$KG_PROJ/secrets/in"
    kgrun 'echo run2-ran; ls secrets; cat secrets/key; echo end'
    check "directory: control, with neither it runs" has run2-ran
    check "directory: control, the directory is covered" lacks "$SECRET"
done
finish
