#!/usr/bin/env bash
# nouserns.sh: the two stand-ins of lib.sh for places without user
# namespaces (another agent's bwrap --disable-userns sandbox; Docker's
# default seccomp profile) really lack them, as root and as the
# unprivileged uid, and the bubblewrap backend says so and starts nothing
# there.  Every environment check prints a marker first (the command did
# run inside), and has a control outside (the same command works there).
#
# These assert the bubblewrap findings only (doctor --backend bubblewrap,
# run --backend bubblewrap), never the overall verdict: another backend
# (Landlock) may well be READY in the same places.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_nouserns
need_cmd python3

OUT=$KG_TMP/out
ERR=$KG_TMP/err
has() { grep -q -- "$1" "$2" || { echo "no '$1' in:"; cat "$2"; return 1; }; }
hasnt() { ! grep -q -- "$1" "$2" || { echo "'$1' in:"; cat "$2"; return 1; }; }
json() { python3 -c "import json,sys; d=json.load(open('$OUT')); sys.exit(0 if ($1) else 1)" ||
    { echo "not ($1) in:"; cat "$OUT"; return 1; }; }
finding() { echo "any(f['id'] == '$1' and f['verdict'] == '$2' for f in d['findings'])"; }

for who in $(test_users); do
    use_user "$who"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"

    RC=0
    as_user unshare -U true 2>"$ERR" || RC=$?
    check "control: outside, unshare -U works" [ "$RC" -eq 0 ]

    for env in disable_userns seccomp_nouserns; do
        run_in() { "in_$env" "$@"; }
        RC=0
        run_in sh -c 'echo inside; exec unshare -U true' >"$OUT" 2>"$ERR" || RC=$?
        check "$env: the command ran inside (marker)" has '^inside$' "$OUT"
        check "$env: unshare -U fails there" [ "$RC" -ne 0 ]
        # bwrap makes its user namespace with clone(CLONE_NEWUSER), not unshare.
        RC=0
        run_in sh -c 'echo inside; exec bwrap --unshare-user --ro-bind / / true' >"$OUT" 2>"$ERR" || RC=$?
        check "$env: bwrap --unshare-user fails there (marker first)" \
            sh -c "grep -q '^inside\$' '$OUT' && [ $RC -ne 0 ]"

        RC=0
        run_in "$KGATE_BIN" doctor --backend bubblewrap >"$OUT" 2>"$ERR" || RC=$?
        check "$env: doctor ran (bubblewrap was loaded)" has '^backend: bubblewrap' "$OUT"
        check "$env: doctor: bubblewrap BLOCKED for user namespaces" \
            has '^  BLOCKED   bwrap could not create a user namespace' "$OUT"
        check "$env: doctor: its trial failed" has '^userns_trial: failed$' "$OUT"
        check "$env: doctor: exit 1 for bubblewrap" [ "$RC" -eq 1 ]
        RC=0
        run_in "$KGATE_BIN" doctor --backend bubblewrap --json >"$OUT" 2>"$ERR" || RC=$?
        check "$env: doctor --json: userns.unavailable BLOCKED" json "$(finding userns.unavailable BLOCKED)"
        check "$env: doctor --json: no userns.works" json "not $(finding userns.works READY)"

        RC=0
        run_in "$KGATE_BIN" run --backend bubblewrap -- echo launched >"$OUT" 2>"$ERR" || RC=$?
        check "$env: run --backend bubblewrap refuses (125)" [ "$RC" -eq 125 ]
        check "$env: run: nothing launched" hasnt launched "$OUT"
        check "$env: run: one kgate: line" sh -c "[ \$(wc -l <'$ERR') -eq 1 ] && grep -q '^kgate: ' '$ERR'"
    done

    # Controls: the same kgate commands outside.
    RC=0
    as_user "$KGATE_BIN" doctor --backend bubblewrap --json >"$OUT" 2>"$ERR" || RC=$?
    check "control: outside, doctor --json: userns.works READY" json "$(finding userns.works READY)"
    RC=0
    as_user "$KGATE_BIN" run --backend bubblewrap -- echo launched >"$OUT" 2>"$ERR" || RC=$?
    check "control: outside, run --backend bubblewrap works" sh -c "[ $RC -eq 0 ] && grep -q '^launched\$' '$OUT'"
done
finish
