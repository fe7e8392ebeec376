#!/usr/bin/env bash
# mount_race.sh: issue 12 §2.  A program in one sandbox swaps a name that
# kgate checks before it launches (race, a protect_paths entry that did not
# exist at that sandbox's launch: a missing built-in one is a placeholder
# nobody can create, protected.c) with a symlink to ".." as fast as it can,
# while hundreds of other launches happen in the same project.  Each
# launch tries to read the real home's ~/.ssh/id_rsa through race.  The
# control runs the construction kgate used before (lstat, then bwrap binds
# by path) against the same racer and must leak at least once, or the race
# was not raced and the test proves nothing.  docs/bubblewrap.md ("Mount
# sources and destinations").
#
# Each user races twice: with the home on /tmp's filesystem, and with the
# home on a tmpfs of its own.  The second is the case that leaked where the
# first did not: bwrap, tricked into binding the real home over the
# sandbox's home, passed a check that only asked for "a tmpfs mount" there.
# The tmpfs is mounted in a mount namespace of this test's own (root only).
if [ "$(id -u)" -eq 0 ] && [ -z "${KG_RACE_NS:-}" ] && command -v unshare >/dev/null; then
    KG_RACE_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
need_bwrap
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "$PY is not installed"
RACER=$(cd "$(dirname "$0")" && pwd)/mount_racer.py

LAUNCHES=${KGATE_RACE_LAUNCHES:-150} # per user
CONTROL_MAX=${KGATE_RACE_CONTROL:-150}

setup() {
    use_user "$1"
    SECRET=secret-$RANDOM$RANDOM
    mkdir -p "$KG_HOME/.ssh"
    echo "$SECRET" >"$KG_HOME/.ssh/id_rsa"
    chown -R "$KG_UID:$KG_GID" "$KG_HOME"
    printf 'protect_paths: [race]\n' | write_config
    cp "$RACER" "$KG_PROJ/racer.py"
    chmod a+r "$KG_PROJ/racer.py"
    rm -f "$KG_PROJ/stop" "$KG_TMP/refusals.$KG_WHO"
}

# The racer, inside a sandbox of this project (network off, the default
# protections).  race does not exist at its launch, so it may create it.
start_racer() {
    as_user "$KGATE_BIN" run --no-pty -- sh -c \
        'mkdir race && ln -s .. swap && exec /usr/bin/python3 racer.py race swap stop' \
        >"$KG_TMP/racer.$KG_WHO" 2>&1 &
    RACER_PID=$!
    for _ in $(seq 100); do
        grep -q racing "$KG_TMP/racer.$KG_WHO" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

stop_racer() {
    touch "$KG_PROJ/stop"
    wait "$RACER_PID"
    grep swaps "$KG_TMP/racer.$KG_WHO"
    rm -rf "$KG_PROJ/race" "$KG_PROJ/swap" "$KG_PROJ/stop"
}

# N launches of kgate, each trying to read the home's key through race.
# Counts: leaked, ran (no leak), refused (125, the race seen).  A leak needs
# a launch that got past every check, so the count only means something
# when some did: past N, go on (up to 4N) until at least 5 ran.  Only a
# few percent run while the racer swaps, and 150 launches once saw none
# (the racer now rests between bursts, mount_racer.py).
kgate_launches() {
    LEAKS=0 RAN=0 REFUSED=0 OTHER=0
    local i=0 out rc
    while [ "$i" -lt "$LAUNCHES" ] ||
        { [ "$RAN" -lt 5 ] && [ "$i" -lt $((4 * LAUNCHES)) ]; }; do
        i=$((i + 1))
        out=$(as_user "$KGATE_BIN" run --no-pty -- sh -c \
            'if cat race/.ssh/id_rsa 2>/dev/null; then
                echo; echo "leaked mounts:"; cat /proc/self/mountinfo
                ls -lain . race/; fi; echo ran' 2>&1)
        rc=$?
        if [[ $out == *"$SECRET"* ]]; then
            LEAKS=$((LEAKS + 1))
            # What the leaking sandbox saw, for the one who has to fix it.
            echo "# leak at launch $i (rc $rc):"
            echo "$out" | sed 's/^/#   /'
        elif [ "$rc" -eq 125 ] && [[ $out == kgate:* ]]; then
            REFUSED=$((REFUSED + 1))
            echo "$out" | head -1 >>"$KG_TMP/refusals.$KG_WHO"
        elif [ "$rc" -eq 0 ] && [[ $out == *ran* ]]; then
            RAN=$((RAN + 1))
        else
            OTHER=$((OTHER + 1))
            echo "# unexpected (rc $rc): $out" | head -3
        fi
    done
    LAUNCHES_DONE=$i
    echo "# [$KG_WHO] kgate: $i launches, $LEAKS leaks, $RAN ran, $REFUSED refused (125), $OTHER other"
    local r=$KG_TMP/refusals.$KG_WHO
    touch "$r"
    echo "# [$KG_WHO] refused by: the core (symlink at race) $(grep -c 'through a symlink' "$r")," \
        "launch, source $(grep -c 'since kgate checked it' "$r")," \
        "launch, destination $(grep -c 'not the one kgate checked' "$r")," \
        "bwrap's own check $(grep -c 'could not set up' "$r")"
}

# The old construction: lstat says race is a directory, then bwrap binds
# it by path.  Stops at the first leak.
control_launches() {
    CLEAKS=0 CTRIES=0
    local out p=$KG_PROJ
    while [ "$CTRIES" -lt "$CONTROL_MAX" ]; do
        [ -d "$p/race" ] && [ ! -L "$p/race" ] || continue
        CTRIES=$((CTRIES + 1))
        out=$(as_user bwrap --unshare-user --unshare-pid --die-with-parent \
            --ro-bind / / --tmpfs /tmp --tmpfs "$KG_HOME" --bind "$p" "$p" \
            --ro-bind "$p/race" "$p/race" \
            -- cat "$p/race/.ssh/id_rsa" 2>/dev/null)
        if [[ $out == *"$SECRET"* ]]; then
            CLEAKS=$((CLEAKS + 1))
            break
        fi
    done
    echo "# [$KG_WHO] control (bind by path): $CLEAKS leak after $CTRIES launches"
}

plain_runs() {
    [[ $(as_user "$KGATE_BIN" run --no-pty -- echo marker-ran) == marker-ran ]]
}
nonzero() { [ "$1" -gt 0 ]; }
zero() { [ "$1" -eq 0 ]; }

# The tmpfs the later rounds' homes are made on.
tmpfs_base() {
    mkdir -p "$KG_TMP/tmpfs" &&
        mount -t tmpfs -o mode=0755 kgate-race "$KG_TMP/tmpfs" &&
        [ "$(stat -f -c %T "$KG_TMP/tmpfs")" = tmpfs ]
}
ROUNDS=disk
if [ -n "${KG_RACE_NS:-}" ] && tmpfs_base; then
    ROUNDS="disk tmpfs"
    at_exit 'umount -l "$KG_TMP/tmpfs" 2>/dev/null'
elif [ -n "${KGATE_MUST_WORK:-}" ]; then
    echo "not ok - the tmpfs round needs root and a mount namespace"
    KG_FAIL=$((KG_FAIL + 1))
else
    echo "# the tmpfs round needs root and a mount namespace: not run"
fi
# A third round with `network: restricted` (bubblewrap's box composed with
# the slirp-filter network stage, which launches bwrap from its own helper
# and checks the mounts with the same code).  An address, not a name, in allow_hosts: nothing is looked
# up and no packet is sent.
slirp_ready
if [ -n "$SLIRP" ]; then
    ROUNDS="$ROUNDS restricted"
elif [ -n "${KGATE_MUST_WORK:-}" ]; then
    echo "not ok - the restricted round needs slirp4netns, nft, dnsmasq and /dev/net/tun"
    KG_FAIL=$((KG_FAIL + 1))
else
    echo "# the restricted round needs slirp4netns, nft, dnsmasq and /dev/net/tun: not run"
fi

for round in $ROUNDS; do
for who in $(test_users); do
    unset KG_HOME_BASE
    if [ "$round" != disk ] && mountpoint -q "$KG_TMP/tmpfs" 2>/dev/null; then
        KG_HOME_BASE=$KG_TMP/tmpfs
    fi
    setup "$who"
    if [ "$round" = restricted ]; then
        printf 'network: restricted\nallow_hosts: [198.18.0.9]\nprotect_paths: [race]\n' |
            write_config
    fi
    echo "# [$who] round: $round (home in ${KG_HOME_BASE:-$KG_TMP})"
    check "a plain launch runs (marker)" plain_runs
    check "the racer runs inside a sandbox" start_racer
    control_launches
    check "control: binding by path leaks the home at least once" nonzero "$CLEAKS"
    kgate_launches
    check "no kgate launch read the home ($LEAKS of $LAUNCHES_DONE)" zero "$LEAKS"
    check "launches still ran while the racer ran ($RAN)" nonzero "$RAN"
    check "no launch ended any other way ($OTHER)" zero "$OTHER"
    if [ "$round" = restricted ]; then
        check "the launches that ran were bubblewrap's box in slirp-filter's network" \
            grep -q '"backend":"bubblewrap+slirp-filter"' "$KG_HOME/.kgate/audit.log"
    fi
    stop_racer
    check "after the racer, a launch runs" plain_runs
done
done
finish
