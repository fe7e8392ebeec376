#!/usr/bin/env bash
# host_tools.sh: no program kgate starts outside the box comes from a place
# a box can write (issue 40, defect 4; docs/threat-model.md "No tool from
# a place a box can write").  The attacker: a run writes
# node_modules/.bin/{bwrap,slirp4netns,dnsmasq,nft,git}, each a script
# that leaves a marker in the real home (which no box sees) and then does
# the real tool's work; the next runs and doctor have that directory first
# on PATH, as direnv's `layout node` and every `npm run` script put it.  No
# marker may ever appear, each run must have happened (its own marker),
# and doctor names the system's files.  Then a policy that would let the
# box write a directory kgate takes tools from is refused, before anything
# starts.  As root and as an unprivileged uid.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_cmd git

OUT=$KG_TMP/out
ERR=$KG_TMP/err
TOOLS="bwrap slirp4netns dnsmasq nft git"

# r ARGS...: kgate ARGS as the test user with the planted directory first
# on PATH; RC, stdout and stderr in files.
r() {
    RC=0
    as_user env PATH="$KG_PROJ/node_modules/.bin:$PATH" "$KGATE_BIN" "$@" \
        >"$OUT" 2>"$ERR" || RC=$?
}

# no_planted DESC: none of the planted tools ran.
no_planted() {
    local t
    for t in $TOOLS; do
        check "$1: the planted $t did not run" [ ! -e "$KG_HOME/planted-$t-ran" ]
    done
}

# landlock_works: this kernel has Landlock (the forced Landlock box can run).
landlock_works() {
    [ "$(landlock_abi)" -ge 1 ]
}

# The script a run plants: a marker where only the host can write, then
# the real tool, so that a kgate that ran it would still work and only the
# marker tells.
PLANT='mkdir -p node_modules/.bin
for t in '"$TOOLS"'; do
    real=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$t")
    printf "#!/bin/sh\ntouch %s/planted-%s-ran\nexec %s \"\$@\"\n" "$1" "$t" "$real" \
        >node_modules/.bin/$t
    chmod 0755 node_modules/.bin/$t
done
echo planted'

for who in $(test_users); do
    use_user "$who"
    printf 'network: off\n' | write_config
    # A repository: the git check runs host git before the program.
    as_user git init -q . && as_user git -c user.name=t -c user.email=t@t \
        commit -q --allow-empty -m init

    # The plant, from inside the box.
    RC=0
    kg run -- sh -c "$PLANT" _ "$KG_HOME" >"$OUT" 2>"$ERR" || RC=$?
    check "the box planted the tools (rc $RC)" grep -qx planted "$OUT"
    check "the planted bwrap is there, executable" [ -x "$KG_PROJ/node_modules/.bin/bwrap" ]
    # Control: the planted scripts work, and leave their marker when run.
    as_user env PATH="$KG_PROJ/node_modules/.bin:$PATH" bwrap --version >/dev/null 2>&1
    check "control: the planted bwrap leaves its marker when run" \
        [ -e "$KG_HOME/planted-bwrap-ran" ]
    rm -f "$KG_HOME"/planted-*-ran

    # The next run, with the planted directory first on PATH.
    rm -f "$KG_PROJ/ran"
    r run -- sh -c 'echo ran >ran'
    check "bubblewrap: the run happened (rc $RC: $(head -c 200 "$ERR"))" \
        [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
    no_planted "bubblewrap run"

    if landlock_works; then
        rm -f "$KG_PROJ/ran"
        r run --backend landlock -- sh -c 'echo ran >ran'
        check "landlock: the run happened (rc $RC: $(head -c 200 "$ERR"))" \
            [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
        no_planted "landlock run"
    fi

    # doctor probes thoroughly: bwrap --version and a trial; for a host
    # list, slirp4netns --version and nft in a namespace.
    r doctor
    check "doctor: names /usr/bin/bwrap as the bubblewrap tool" \
        grep -qx 'bwrap_path: /usr/bin/bwrap' "$OUT"
    check "doctor: its tool list names /usr/bin/bwrap" grep -qx 'tool bwrap: /usr/bin/bwrap' "$OUT"
    check "doctor: no tool of the project's" bash -c '! grep -q node_modules "$0"' "$OUT"
    printf 'network: restricted\nallow_hosts: [example.org]\n' | write_config
    r doctor
    check "doctor, host list: it ran (rc $RC)" grep -q '^tool nft: ' "$OUT"
    check "doctor, host list: no tool of the project's" bash -c '! grep -q node_modules "$0"' "$OUT"
    no_planted "doctor"
    printf 'network: off\n' | write_config

    # A policy that lets the box write where kgate takes its tools from
    # is refused before anything starts: as root (capabilities dropped,
    # but owner of /usr/bin) the box could replace /usr/bin/bwrap there.
    for dir in /usr/bin /usr/sbin /usr; do
        for box in bubblewrap landlock; do
            [ "$box" = landlock ] && ! landlock_works && continue
            rm -f "$KG_PROJ/ran"
            r run --backend "$box" --allow-path "$dir" -- sh -c 'echo ran >ran'
            check "$box, --allow-path $dir: refused (rc $RC)" [ "$RC" -eq 125 ]
            check "$box, --allow-path $dir: one kgate: line naming it" \
                bash -c '[ "$(wc -l <"$0")" -eq 1 ] && grep -q "^kgate: .*$1.*which the box may write" "$0"' \
                "$ERR" "$dir"
            check "$box, --allow-path $dir: nothing started" [ ! -e "$KG_PROJ/ran" ]
        done
    done
    # Control: an allowed path elsewhere runs.
    rm -f "$KG_PROJ/ran"
    r run --allow-path /var/tmp -- sh -c 'echo ran >ran'
    check "control: --allow-path /var/tmp runs (rc $RC)" [ "$RC" -eq 0 ] && [ -e "$KG_PROJ/ran" ]
    no_planted "the whole suite"
done
finish
