#!/usr/bin/env bash
# project_file.sh: a run cannot lock the user out of their own project
# (issue 40, defect 9): `chmod 000 .kgate.yaml` from inside.  The
# bubblewrap box binds the file read-only, so the chmod fails and the next
# run runs.  The Landlock box cannot stop a chmod (Landlock has no right
# for it), so the mode changes; the next run then refuses with one kgate:
# line that says exactly what to run, and after running it the next run
# runs.  (Root reads a mode-000 file all the same: its next run runs.)
# Every run leaves a marker, so each refusal shows its run happened or not.
# As root and as an unprivileged uid.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd python3 stat

OUT=$KG_TMP/out
ERR=$KG_TMP/err
r() {
    RC=0
    kg "$@" >"$OUT" 2>"$ERR" || RC=$?
}
landlock_works() {
    [ "$(landlock_abi)" -ge 1 ]
}
mode() { stat -c %a "$KG_PROJ/.kgate.yaml"; }

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    printf 'network: off\n' >"$KG_PROJ/.kgate.yaml"
    chmod 0644 "$KG_PROJ/.kgate.yaml"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/.kgate.yaml"
    F=$KG_PROJ/.kgate.yaml

    # bubblewrap: the file is bound read-only.
    rm -f "$KG_PROJ/ran"
    r run --backend bubblewrap -- sh -c 'chmod 000 .kgate.yaml; touch ran'
    check "bubblewrap: the chmod run happened (rc $RC)" [ -e "$KG_PROJ/ran" ]
    check "bubblewrap: the mode is still 644 (got $(mode))" [ "$(mode)" = 644 ]
    rm -f "$KG_PROJ/ran"
    r run -- sh -c 'touch ran'
    check "bubblewrap: the next run runs (rc $RC)" [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]

    landlock_works || {
        check "landlock: this kernel has no Landlock (skipped)" [ -z "${KGATE_MUST_WORK:-}" ]
        continue
    }
    rm -f "$KG_PROJ/ran"
    r run --backend landlock -- sh -c 'chmod 000 .kgate.yaml; touch ran'
    check "landlock: the chmod run happened (rc $RC)" [ -e "$KG_PROJ/ran" ]
    rm -f "$KG_PROJ/ran"
    r run -- sh -c 'touch ran'
    if [ "$who" = root ]; then
        check "landlock, root: the next run runs all the same (rc $RC)" \
            [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
        chmod 0644 "$F"
        continue
    fi
    check "landlock: the mode became 000 (got $(mode))" [ "$(mode)" = 0 ]
    check "landlock: the next run refuses (125, got $RC)" [ "$RC" -eq 125 ]
    check "landlock: and did not start" [ ! -e "$KG_PROJ/ran" ]
    check "landlock: one stderr line" [ "$(wc -l <"$ERR")" -eq 1 ]
    check "landlock: it says what to run: chmod 644 $F" grep -qF "kgate: $F: its mode is 0000" "$ERR"
    check "landlock: ... ending with the command" grep -qF "run: chmod 644 $F" "$ERR"
    # The command it names mends it.
    cmd=$(sed -n 's/.*to mend it, run: //p' "$ERR")
    as_user sh -c "$cmd"
    rm -f "$KG_PROJ/ran"
    r run -- sh -c 'touch ran'
    check "landlock: after '$cmd' the next run runs (rc $RC)" [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
done
finish
