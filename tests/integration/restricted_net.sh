#!/bin/bash
# restricted_net.sh: the host allow list at the packet level.
#
# Builds test hosts in network namespaces (netlab/netlab.sh), gives this
# test a private /etc/hosts and /etc/resolv.conf, and runs `kgate run` with
# `network: restricted` as root and as an unprivileged uid.  Traffic goes
# only to the lab's 198.18.0.0/24 hosts and to loopback.
#
# KGATE_SF_DRIVER=path/to/sf_driver runs the same checks through the
# backend's test driver instead of `kgate run` (for debugging the backend
# without the core); KGATE_SF_DRIVER_ARGS="--bwrap-plugin PATH" makes it
# compose the real bubblewrap plugin instead of its stand-in.

# A private mount namespace for the whole test: the lab's hosts file and
# resolver are for this test only, and vanish with it.
if [ -z "${KG_NETLAB_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
    KG_NETLAB_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kcalls.sh"

[ -n "${KG_NETLAB_INNER:-}" ] || skip_all "building test hosts needs root and unshare"
need_cmd ip slirp4netns nft dnsmasq bwrap setpriv pgrep
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is not installed"
need_bwrap

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netlab/netlab.sh"
LAB=$KG_TMP/lab
mkdir -p "$LAB"

# slirp4netns opens /dev/net/tun as the user.  udev makes it 0666; a
# machine without udev (a container, a minimal VM) may have 0600.  The
# test widens it for its own duration and puts it back.
widen_tun
[ "$TUN_MODE" != missing ] || skip_all "/dev/net/tun does not exist"
at_exit netlab_down

SLIRP_BEFORE=$(pgrep -x slirp4netns | sort | tr '\n' ' ')
DNSMASQ_BEFORE=$(pgrep -x dnsmasq | sort | tr '\n' ' ')
netlab_up "$LAB" || { echo "FAIL: could not build the test hosts"; exit 1; }
mount --bind "$LAB/hosts" /etc/hosts
mount --bind "$LAB/resolv.conf" /etc/resolv.conf

PY=/usr/bin/python3

# The backend's test driver, for the event records until `kgate run` turns
# them into audit lines.
SF_DRIVER_BIN=$(kg_reachable "${KGATE_SF_DRIVER:-${KGATE_TEST_SF_DRIVER:-$(dirname "$(dirname "$KGATE_BIN")")/tests/plugins/slirp-filter/sf_driver}}")

# sb HOSTS CMD...: one sandboxed run as the current test user, with
# allow_hosts = HOSTS (comma-separated).  SB_EVENTS=FILE: through the
# driver, with its event records appended to FILE; SB_DRIVER=1: through the
# driver.
sb() {
    local hosts=$1 h
    shift
    if [ -n "${SB_EVENTS:-}${SB_DRIVER:-}" ]; then
        local args=()
        [ -z "${SB_EVENTS:-}" ] || args+=(--events "$SB_EVENTS")
        for h in ${hosts//,/ }; do args+=(--host "$h"); done
        as_user "$SF_DRIVER_BIN" "${args[@]}" -- "$@"
    elif [ -n "${KGATE_SF_DRIVER:-}" ]; then
        local args=()
        for h in ${hosts//,/ }; do args+=(--host "$h"); done
        # shellcheck disable=SC2086 # KGATE_SF_DRIVER_ARGS: driver options
        as_user "$KGATE_SF_DRIVER" ${KGATE_SF_DRIVER_ARGS:-} "${args[@]}" -- "$@"
    else
        # Quoted: a bare * starts a YAML alias.
        local list="" sep=""
        for h in ${hosts//,/ }; do list+="$sep\"$h\""; sep=", "; done
        write_config <<EOF
network: restricted
allow_hosts: [${list}]
EOF
        kg run -- "$@"
    fi
}

dns_leak_absent() {
    local marker=$1
    # Positive control: the same datagram sent from outside the sandbox
    # does reach the sink, so an absent marker means the filter held.
    "$PY" "$HERE/netlab/probe.py" udp 198.18.0.3 53 "control-$marker" >/dev/null
    local i
    for i in $(seq 50); do grep -q "control-$marker" "$LAB/dns.log" && break; sleep 0.1; done
    grep -q "control-$marker" "$LAB/dns.log" || { echo "  control datagram lost"; return 1; }
    ! grep -q "'$marker'\|b'$marker" "$LAB/dns.log"
}

# Every way to change the filter from inside fails, and afterwards it
# still refuses 198.18.0.3 (whose address the last attempt tried to add).
# The marker shows the attempts ran.
flush_fails() {
    local out
    out=$(sb allowed.test,set-probe.test /bin/sh -c \
        'echo tried
         /usr/sbin/iptables -F 2>/dev/null && echo FLUSHED
         /usr/sbin/iptables -P OUTPUT ACCEPT 2>/dev/null && echo OPENED
         /usr/sbin/nft flush ruleset 2>/dev/null && echo NFT-FLUSHED
         /usr/sbin/nft delete table inet kgate 2>/dev/null && echo NFT-DELETED
         /usr/sbin/nft add element inet kgate any "{ 198.18.0.3 }" 2>/dev/null && echo NFT-ADDED
         /usr/bin/python3 probe.py tcp 198.18.0.3 8080' 2>"$KG_TMP/stderr")
    [ "$out" = "tried
refused" ] || { echo "  got: $out"; return 1; }
}

# The same commands do work where the filter's namespace is owned (control:
# a user+net namespace of our own), so "fails" above is the nesting.
flush_works_when_owned() {
    local out
    out=$(as_user unshare -Urn /bin/sh -c \
        '/usr/sbin/nft add table inet kgate && /usr/sbin/nft flush ruleset && echo NFT-FLUSHED' 2>&1)
    [ "$out" = NFT-FLUSHED ] || { echo "  got: $out"; return 1; }
}

# dns_absent MARKER...: none of the markers reached the lab's DNS server,
# which did receive a datagram sent from outside the sandbox afterwards
# (so its log is live and complete up to that point).
dns_absent() {
    local ctl="ctl-$RANDOM-$$" m i
    "$PY" "$HERE/netlab/probe.py" udp 198.18.0.3 53 "$ctl" >/dev/null
    for i in $(seq 50); do grep -q "$ctl" "$LAB/dns.log" && break; sleep 0.1; done
    grep -q "$ctl" "$LAB/dns.log" || { echo "  control datagram lost"; return 1; }
    for m in "$@"; do
        ! grep -q -- "$m" "$LAB/dns.log" || { echo "  $m reached the DNS server"; return 1; }
    done
}

# dns_seen MARKER: the marker reached the lab's DNS server (the control of
# a refusal: the same kind of lookup, allowed, does leave).
dns_seen() {
    local i
    for i in $(seq 30); do grep -q -- "$1" "$LAB/dns.log" && return 0; sleep 0.1; done
    echo "  $1 never reached the DNS server"
    return 1
}

# Names: an allowed name is asked upstream; a name not on the list is
# answered inside and never leaves.  Both through the system resolver.
names_follow_the_list() {
    local m="n$RANDOM$$" out
    out=$(sb "ok-$m.test" /bin/sh -c \
        "/usr/bin/python3 probe.py tcp ok-$m.test 8080; /usr/bin/python3 probe.py tcp leak-$m.test 8080" \
        2>"$KG_TMP/stderr")
    [ "$out" = "noname
noname" ] || { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    dns_seen "ok-$m" && dns_absent "leak-$m"
}

# Hand-made queries for a name not on the list, to every address a program
# might try: the resolver inside (answers NXDOMAIN itself), slirp's
# forwarder, the lab's DNS server and a lab host not on the list, over UDP
# and TCP, and from the guest address with a fixed port.  None arrives.
handmade_queries_stay() {
    local m="h$RANDOM$$" out want
    out=$(sb allowed.test /bin/sh -c "
        for s in 127.0.0.1 10.0.2.3 198.18.0.3 198.18.0.2; do
            /usr/bin/python3 dns_ask.py udp \$s u-\$s-$m.test
            /usr/bin/python3 dns_ask.py tcp \$s t-\$s-$m.test
        done
        /usr/bin/python3 dns_ask.py udp 10.0.2.3 b-$m.test 10.0.2.100:40053" 2>"$KG_TMP/stderr")
    want="answer:NXDOMAIN
answer:NXDOMAIN"
    [ "$(printf '%s\n' "$out" | head -n 2)" = "$want" ] &&
        ! printf '%s\n' "$out" | tail -n +3 | grep -q '^answer:' ||
        { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    dns_absent "$m"
}

# The resolver's own upstream queries leave from ports of this namespace:
# right after some, the program sends to 10.0.2.3:53 from every source
# port (those included, their connection entries still alive).  Only the
# resolver's packets carry the mark, so the kernel takes none of them and
# none arrives; the lookups that opened the ports did (the control).
upstream_ports_not_usable() {
    local m="s$RANDOM$$" out
    out=$(sb "*.st-$m.test" /usr/bin/python3 dns_ask.py steal "x-$m.test" "st-$m.test" 2>"$KG_TMP/stderr")
    # A port held by a live socket cannot be bound: nearly all, not all.
    local swept
    swept=$(printf '%s\n' "$out" | sed -n 's/^swept:\([0-9]*\) sent:0$/\1/p')
    [ "${swept:-0}" -gt 60000 ] ||
        { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    dns_seen "st-$m" && dns_absent "x-$m"
}

# *.name: names under it at any depth are asked upstream; name itself is
# not.  An exact name does not allow a name under it.  Each name carries a
# label of its own, so that a log line can only be its query.
wildcards_match() {
    local m="w$RANDOM$$" out
    out=$(sb "*.wild-$m.test,*.neg-$m.test,ex-$m.test" /bin/sh -c "
        for n in a1$m.wild-$m.test b2$m.c.wild-$m.test neg-$m.test ex-$m.test subx$m.ex-$m.test; do
            /usr/bin/python3 probe.py tcp \$n 8080
        done" 2>"$KG_TMP/stderr")
    [ "$(printf '%s\n' "$out" | sort -u)" = noname ] ||
        { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    dns_seen "a1$m" && dns_seen "b2$m" && dns_seen "ex-$m" && dns_absent "neg-$m" "subx$m"
}

# name:port allows only that TCP port.
port_entries() {
    local a b
    a=$(sb allowed.test:8080 "$PY" probe.py tcp allowed.test 8080 2>"$KG_TMP/stderr")
    b=$(sb allowed.test:8081 "$PY" probe.py tcp allowed.test 8080 2>"$KG_TMP/stderr")
    [ "$a" = connected ] && [ "$b" = refused ] || { echo "  got: $a / $b"; return 1; }
}

# Each refused name and connection becomes one event record, parseable as
# kgate-plugin.h says; the allowed connection none.
events_recorded() {
    local ev=$KG_TMP/events out
    : >"$ev"
    chmod 0666 "$ev"
    out=$(SB_EVENTS=$ev sb allowed.test /bin/sh -c \
        "/usr/bin/python3 probe.py tcp evil-ev.test 8080; /usr/bin/python3 probe.py tcp 198.18.0.3 8080
         /usr/bin/python3 probe.py tcp allowed.test 8080; /usr/bin/python3 probe.py tcp evil-ev.test 8080" \
        2>"$KG_TMP/stderr")
    [ "$out" = "noname
refused
connected
noname" ] && [ "$(sort "$ev")" = "net refused - 198.18.0.3 8080 unanswered
net refused evil-ev.test - 0 unlisted" ] ||
        { echo "  got: $out; events: $(cat "$ev"); stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

# Through kgate run: each refusal is a `net` audit line naming it, and one
# kgate: summary line follows the program; the allowed connection is in
# neither.
events_audited() {
    local out log=$KG_HOME/.kgate/audit.log
    rm -f "$log"
    out=$(sb allowed.test /bin/sh -c \
        "/usr/bin/python3 probe.py tcp evil-au.test 8080; /usr/bin/python3 probe.py tcp 198.18.0.3 8080
         /usr/bin/python3 probe.py tcp allowed.test 8080" 2>"$KG_TMP/stderr")
    [ "$out" = "noname
refused
connected" ] &&
        grep '"kind":"net"' "$log" | grep -q '"verdict":"refused","name":"evil-au.test","port":0[,}]' &&
        grep '"kind":"net"' "$log" | grep -q '"verdict":"refused","addr":"198.18.0.3","port":8080[,}]' &&
        [ "$(grep -c '"kind":"net"' "$log")" -eq 2 ] &&
        [ "$(grep -c '^kgate: refused 1 name: evil-au.test; 1 connection: ' "$KG_TMP/stderr")" -eq 1 ] ||
        { echo "  got: $out; audit: $(grep '"kind":"net"' "$log"); stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

# The caller's refusal channel (events.sh has the rest): each distinct
# refused name and connection is one blocked object, with the rule.
events_channel() {
    local ev=$KG_TMP/events.json
    printf 'network: restricted\nallow_hosts: ["allowed.test"]\n' | write_config
    kg run --events-fd 3 -- /bin/sh -c \
        "/usr/bin/python3 probe.py tcp evil-ch.test 8080; /usr/bin/python3 probe.py tcp evil-ch.test 8080
         /usr/bin/python3 probe.py tcp 198.18.0.3 8080; /usr/bin/python3 probe.py tcp allowed.test 8080" \
        3>"$ev" >/dev/null 2>&1
    python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
b = [x for x in o if x["type"] == "blocked"]
ok = ([x["type"] for x in o] == ["hello", "blocked", "blocked", "summary"] and
      b[0]["code"] == "net_name_refused" and b[0]["operation"] == "resolve" and
      b[0]["resource"] == {"type": "network", "host": "evil-ch.test"} and
      b[1]["code"] == "net_connect_refused" and b[1]["operation"] == "connect" and
      b[1]["resource"] == {"type": "network", "addr": "198.18.0.3", "port": 8080} and
      all(x["rule"] == {"key": "allow_hosts", "entry": None} for x in b) and
      o[-1]["blocked"] == 2 and o[-1]["started"] is True and
      o[-1]["backend"] == "bubblewrap+slirp-filter")
if not ok:
    print("  objects:", *o, sep="\n    ")
sys.exit(0 if ok else 1)' "$ev"
}

# No dnsmasq of ours is left (the helper's resolver dies with it).
no_dnsmasq_left() {
    local now
    now=$(pgrep -x dnsmasq | sort | tr '\n' ' ')
    [ "$now" = "$DNSMASQ_BEFORE" ] || { echo "  left: $now"; return 1; }
}

# No launch-time resolution: a name that does not resolve starts the
# program, whose own lookup fails.
unresolvable_runs() {
    local out
    out=$(sb nosuch.test "$PY" probe.py tcp nosuch.test 8080 2>"$KG_TMP/stderr")
    [ "$out" = noname ] || { echo "  got: $out; stderr: $(cat "$KG_TMP/stderr")"; return 1; }
}

# A malformed entry refuses the launch: 125, one kgate: line, not started.
bad_entry_aborts() {
    local rc lines kglines
    rm -f "$KG_PROJ/marker"
    sb "*.test" /usr/bin/touch "$KG_PROJ/marker" >"$KG_TMP/stdout" 2>"$KG_TMP/stderr"
    rc=$?
    lines=$(wc -l <"$KG_TMP/stderr")
    kglines=$(grep -c '^kgate:' "$KG_TMP/stderr")
    [ "$rc" -eq 125 ] && [ "$lines" -eq 1 ] && [ "$kglines" -eq 1 ] &&
        grep -q 'top-level domain' "$KG_TMP/stderr" && [ ! -e "$KG_PROJ/marker" ] || {
        echo "  rc=$rc stderr: $(cat "$KG_TMP/stderr")"
        return 1
    }
}

# The program is the caller's uid, with no capability in any set, root
# included: bwrap's plan says --cap-drop ALL, and slirp-filter runs that
# plan from inside its own namespaces, where the caller is root with every
# capability until bwrap drops them (tests/integration/layers.sh shows the
# same plan without the flag keeping them).
runs_as_real_uid() {
    local out want
    out=$(sb allowed.test /bin/sh -c 'id -u; grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status' 2>/dev/null)
    want="$KG_UID
CapInh:	0000000000000000
CapPrm:	0000000000000000
CapEff:	0000000000000000
CapBnd:	0000000000000000
CapAmb:	0000000000000000"
    [ "$out" = "$want" ] || { echo "  got: $out"; return 1; }
}

# A SIGKILLed kgate leaves no slirp4netns, helper or program behind.
# The run's processes, found from the program (its argv carries a tag of
# its own), up through its parents, never by a name alone (other runs'
# dnsmasq and slirp4netns may be there): kgate is the program's first
# ancestor with a slirp4netns child, H (the network helper, bwrap after its
# exec) its child on the way, the guard the leader of H's group, N (the
# network keeper) H's other child, the resolver N's dnsmasq child.  Sets
# RP_PROG, RP_KGATE, RP_H, RP_GUARD, RP_SLIRP, RP_N, RP_DNS, each
# "PID:STARTTIME" (so a reused pid is not taken for the process), and
# fails until all are there.
rp_id() { local st; st=$(cut -d' ' -f22 "/proc/$1/stat" 2>/dev/null) && echo "$1:$st"; }
rp_alive() { [ -n "$1" ] && [ "$(rp_id "${1%%:*}")" = "$1" ]; }
rp_child() { ps --ppid "$1" -o pid=,comm= | awk -v c="$2" '$2 == c {print $1; exit}'; }
run_procs() {
    local tag=$1 p pp prog slirp="" h="" guard n dns
    prog=$(pgrep -xf "(/usr)?/bin/sleep $tag") || return 1
    p=$prog
    while [ "${p:-1}" -gt 1 ]; do
        pp=$(ps -o ppid= -p "$p" | tr -d ' ')
        [ -n "$pp" ] || return 1
        slirp=$(rp_child "$pp" slirp4netns)
        if [ -n "$slirp" ]; then h=$p; p=$pp; break; fi
        p=$pp
    done
    [ -n "$h" ] || return 1
    guard=$(ps -o pgid= -p "$h" | tr -d ' ')
    n=$(rp_child "$h" kgate)
    [ -n "$n" ] && dns=$(rp_child "$n" dnsmasq)
    [ -n "$dns" ] && [ -n "$guard" ] && [ "$guard" != "$p" ] &&
        [ "$(ps -o ppid= -p "$guard" | tr -d ' ')" = "$p" ] || return 1
    RP_PROG=$(rp_id "$prog") RP_KGATE=$(rp_id "$p") RP_H=$(rp_id "$h")
    RP_GUARD=$(rp_id "$guard") RP_SLIRP=$(rp_id "$slirp") RP_N=$(rp_id "$n") RP_DNS=$(rp_id "$dns")
    [ -n "$RP_PROG" ] && [ -n "$RP_KGATE" ] && [ -n "$RP_H" ] && [ -n "$RP_GUARD" ] &&
        [ -n "$RP_SLIRP" ] && [ -n "$RP_N" ] && [ -n "$RP_DNS" ]
}
run_gone() {
    local x
    for x in "$@"; do ! rp_alive "$x" || return 1; done
}

# The keeper N is the event watcher itself: the stage is H, N and
# dnsmasq, no process more (a watcher of its own cost each run a fork of
# kgate's image).  events_recorded shows what it reads still arrives.
keeper_watches() {
    local tag="33.$$$RANDOM" kids rc=0
    sb allowed.test /bin/sleep "$tag" >/dev/null 2>&1 &
    local bg=$!
    poll 600 run_procs "$tag" || { echo "  the sandbox did not start"; kill "$bg"; return 1; }
    kids=$(ps --ppid "${RP_N%%:*}" -o comm= | sort | tr '\n' ' ')
    [ "$kids" = "dnsmasq " ] || { echo "  N's children: $kids"; rc=1; }
    kill "${RP_PROG%%:*}"
    wait "$bg" 2>/dev/null
    return "$rc"
}

# kill -9 of kgate alone: the guard kills the sandbox, slirp4netns and H
# die with kgate, N with H, dnsmasq with N.  The start may take long under load: up
# to 60 s (the bound of a wait that would otherwise hang).
kill9_cleans_up() {
    local tag="31.$$$RANDOM"
    sb allowed.test /bin/sleep "$tag" >/dev/null 2>&1 &
    local bg=$!
    poll 600 run_procs "$tag" || { echo "  the sandbox did not start"; kill "$bg"; return 1; }
    kill -9 "${RP_KGATE%%:*}"
    poll 100 run_gone "$RP_PROG" "$RP_H" "$RP_SLIRP" "$RP_N" "$RP_DNS" "$RP_GUARD"
    local rc=$?
    wait "$bg" 2>/dev/null
    [ "$rc" -eq 0 ] || echo "  left: $(for x in "$RP_PROG" "$RP_H" "$RP_SLIRP" "$RP_N" "$RP_DNS" "$RP_GUARD"; do rp_alive "$x" && echo "$x"; done)"
    return "$rc"
}

# kgate and its guard killed together (a whole-tree SIGKILL, as an OOM
# kill or a harness that kills every process it started): nobody is left
# to kill the guard's group, so each piece must die with its parent
# (N with H, dnsmasq with N: without their parent-death signals this
# check fails).
tree_kill9_cleans_up() {
    local tag="32.$$$RANDOM"
    sb allowed.test /bin/sleep "$tag" >/dev/null 2>&1 &
    local bg=$!
    poll 600 run_procs "$tag" || { echo "  the sandbox did not start"; kill "$bg"; return 1; }
    kill -9 "${RP_KGATE%%:*}" "${RP_GUARD%%:*}"
    poll 100 run_gone "$RP_PROG" "$RP_H" "$RP_SLIRP" "$RP_N" "$RP_DNS"
    local rc=$? x
    wait "$bg" 2>/dev/null
    if [ "$rc" -ne 0 ]; then
        for x in "$RP_PROG" "$RP_H" "$RP_SLIRP" "$RP_N" "$RP_DNS"; do
            rp_alive "$x" && echo "  left: $x ($(cat "/proc/${x%%:*}/comm"))" &&
                kill -9 "${x%%:*}"
        done
    fi
    return "$rc"
}

# The same during the launch, at several moments while the stage's
# processes are being made: a child forked just before its parent died
# must notice (the check after its prctl).  Each run starts in a session
# of its own, so all of its processes, adopted by init or not, are found
# by that session alone (the sandbox's own session dies with bwrap).
session_left() { ps -e -o pid=,sid=,comm= | awk -v s="$1" '$2 == s {print $1 "(" $3 ")"}'; }
session_empty() { [ -z "$(session_left "$1")" ]; }
tree_kill9_during_launch() {
    local i sid bg guard left="" sidf=$KG_PROJ/run.sid
    write_config <<EOF
network: restricted
allow_hosts: ["allowed.test"]
EOF
    for i in 1 2 3 4 5 6 7 8; do
        rm -f "$sidf"
        # shellcheck disable=SC2016 # $$ and $0 are the inner sh's
        as_user setsid sh -c 'echo $$ >"$0"; exec "$@"' "$sidf" \
            "$KGATE_BIN" run -- /bin/sleep "34.$$.$i" >/dev/null 2>&1 &
        bg=$!
        poll 100 test -s "$sidf" || { echo "  run $i did not start"; return 1; }
        sid=$(cat "$sidf")
        sleep "0.$i"
        # kgate (it leads the session: its pid is the session's) and its
        # guard (its child that leads a process group of its own, under
        # the same name).
        guard=$(ps -e -o pid=,ppid=,pgid=,comm= |
            awk -v k="$sid" '$2 == k && $1 == $3 && $4 == "kgate" {print $1}')
        # shellcheck disable=SC2086
        kill -9 "$sid" $guard 2>/dev/null
        poll 100 session_empty "$sid" ||
            left="$left run $i (killed at 0.${i}s): $(session_left "$sid" | tr '\n' ' ')"
        # shellcheck disable=SC2046
        kill -9 $(session_left "$sid" | sed 's/(.*//') 2>/dev/null
        wait_bounded 20 "$bg" >/dev/null 2>&1
    done
    [ -z "$left" ] || { echo "  left:$left"; return 1; }
}

# The resolver runs outside the program's PID namespace: the program sees
# no dnsmasq and cannot signal it (a kill of every process it can see
# leaves DNS working: the lookup after it is still answered inside).
resolver_out_of_reach() {
    local out
    out=$(sb allowed.test /bin/sh -c \
        'for p in /proc/[0-9]*; do
             [ "$(cat $p/comm 2>/dev/null)" = dnsmasq ] && echo SEEN; done
         kill -KILL -1 2>/dev/null; echo killed
         /usr/bin/python3 dns_ask.py udp 127.0.0.1 gone.test' 2>"$KG_TMP/stderr")
    [ "$out" = "killed
answer:NXDOMAIN" ] || { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

doctor_ready() {
    write_config <<EOF
network: restricted
allow_hosts: [allowed.test]
EOF
    local out
    out=$(kg doctor 2>&1)
    [ "$(printf '%s\n' "$out" | tail -n 1 | cut -d' ' -f1-2)" = "READY bubblewrap+slirp-filter:" ] ||
        { echo "  got: $out"; return 1; }
}

dry_run_shows_the_pieces() {
    local out
    if [ -n "${KGATE_SF_DRIVER:-}" ]; then
        # shellcheck disable=SC2086
        out=$(as_user "$KGATE_SF_DRIVER" ${KGATE_SF_DRIVER_ARGS:-} --dry-run --host allowed.test -- /bin/true)
    else
        write_config <<EOF
network: restricted
allow_hosts: [allowed.test]
EOF
        out=$(kg run --dry-run -- /bin/true)
    fi
    printf '%s\n' "$out" | grep -q -- '--disable-host-loopback' &&
        printf '%s\n' "$out" | grep -q 'policy drop;' &&
        printf '%s\n' "$out" | grep -q '^nameserver 127.0.0.1$' &&
        printf '%s\n' "$out" | grep -q '^server=/allowed.test/10.0.2.3$' &&
        ! printf '%s\n' "$out" | head -n 1 | grep -q -- '--unshare-net' ||
        { echo "  got: $out"; return 1; }
}

# The outermost kgate (or driver) process above a slirp4netns: where a user's
# kill or Ctrl-C lands.
launcher_of() {
    local p=$1 up name
    name=$(ps -o comm= -p "$(ps -o ppid= -p "$p" | tr -d ' ')")
    while up=$(ps -o ppid= -p "$p" | tr -d ' ') && [ -n "$up" ] &&
        [ "$(ps -o comm= -p "$up")" = "$name" ]; do
        p=$up
    done
    echo "$p"
}

# SIGTERM to kgate reaches the program, which may handle it: its exit
# status comes back.
sigterm_reaches_program() {
    local out=$KG_TMP/sig.out slirp="" i rc
    sb allowed.test /bin/sh -c \
        'trap "echo got-TERM; exit 7" TERM; echo started; while :; do sleep 0.1; done' \
        >"$out" 2>/dev/null &
    local bg=$!
    for i in $(seq 100); do
        grep -q started "$out" 2>/dev/null && slirp=$(pgrep -n -x slirp4netns) && break
        sleep 0.1
    done
    [ -n "$slirp" ] || { echo "  the sandbox did not start"; kill "$bg"; return 1; }
    kill -TERM "$(launcher_of "$slirp")"
    wait "$bg"
    rc=$?
    [ "$rc" -eq 7 ] && grep -q got-TERM "$out" || { echo "  rc=$rc out: $(cat "$out")"; return 1; }
}

# --allow-net on a run whose config says off makes that run a host list.
allow_net_on_off() {
    write_config <<EOF
network: off
EOF
    local a b
    # stderr: the refused connection's kgate: summary line.
    a=$(kg run --allow-net allowed.test -- "$PY" probe.py tcp allowed.test 8080 2>"$KG_TMP/stderr")
    b=$(kg run --allow-net allowed.test -- "$PY" probe.py tcp 198.18.0.3 8080 2>"$KG_TMP/stderr")
    [ "$a" = connected ] && [ "$b" = refused ] || { echo "  got: $a / $b"; return 1; }
}

# The bubblewrap backend's seccomp filter is in force in a restricted run
# too: slirp-filter's helper hands bwrap the same filter (--seccomp FD).
# Seccomp: 2 is filter mode; no descriptor above 2 reaches the program
# (the filter's pipe, the bind sources), but ls's own /proc/self/fd.
seccomp_in_force() {
    local out
    out=$(sb allowed.test /bin/sh -c \
        'grep "^Seccomp:" /proc/self/status; ls -l /proc/self/fd/ | awk '"'"'$9 > 2 && $11 !~ "^/proc/"'"'"' | wc -l' \
        2>"$KG_TMP/stderr")
    [ "$out" = "Seccomp:	2
0" ] || { echo "  got: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) through ctypes:
# "ok" or the error's name.  The keyring is shared by all of the user's
# sessions; the filter refuses it with EPERM.
KEYCTL_PY='import ctypes, errno, platform
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 250, "aarch64": 219, "i686": 288}[platform.machine()]
r = libc.syscall(nr, 0, -3, 0)
print("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])'

keyctl_refused() {
    local out control
    # Positive control: the same call outside the sandbox works, so EPERM
    # inside is the filter's.
    control=$(as_user "$PY" -c "$KEYCTL_PY" 2>&1)
    out=$(sb allowed.test "$PY" -c "$KEYCTL_PY" 2>"$KG_TMP/stderr")
    [ "$control" = ok ] && [ "$out" = EPERM ] ||
        { echo "  outside: $control, inside: $out; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

# doctor for a host list shows the filesystem box as bubblewrap's doctor
# sees it, and none of bubblewrap's own network findings.
doctor_filesystem_box() {
    write_config <<EOF
network: restricted
allow_hosts: [allowed.test]
EOF
    local out want
    out=$(kg doctor 2>&1)
    for want in '^  READY     home hidden (tmpfs on ' \
        '^  READY     host Unix sockets: none reachable' \
        '^  READY     abstract Unix sockets: unreachable' \
        '^  READY     planted hooks: ' \
        '^  READY     terminal: ' \
        '^  READY     seccomp filter: [0-9]* rules'; do
        printf '%s\n' "$out" | grep -q "$want" || { echo "  no '$want' in: $out"; return 1; }
    done
    ! printf '%s\n' "$out" |
        grep -q 'network off\|network open\|needs the slirp-filter backend\|DEGRADED\|BLOCKED' ||
        { echo "  a network finding of bubblewrap's: $out"; return 1; }
}

dry_run_shows_seccomp() {
    local out
    write_config <<EOF
network: restricted
allow_hosts: [allowed.test]
EOF
    out=$(kg run --dry-run -- /bin/true)
    printf '%s\n' "$out" | grep -q '^keyctl always: EPERM' &&
        printf '%s\n' "$out" | grep -q '^ioctl when request is TIOCSTI: EPERM' ||
        { echo "  got: $out"; return 1; }
}

no_slirp_left() {
    local now
    now=$(pgrep -x slirp4netns | sort | tr '\n' ' ')
    [ "$now" = "$SLIRP_BEFORE" ] || { echo "  left: $now"; return 1; }
}

# A TCP service on every address of the host (localhost:PORT entries).
ANYPORT=18082
"$PY" "$HERE/netlab/tcp_serve.py" 0.0.0.0 "$ANYPORT" >/dev/null 2>&1 &
ANY_PID=$!
at_exit 'kill "$ANY_PID" 2>/dev/null'

for who in $(test_users); do
    use_user "$who"
    cp "$HERE/netlab/probe.py" "$HERE/netlab/dns_ask.py" "$KG_PROJ/"
    chown "$KG_UID:$KG_GID" "$KG_PROJ/probe.py" "$KG_PROJ/dns_ask.py"
    P=("$PY" probe.py)

    check "doctor: READY through slirp-filter" doctor_ready
    check "--dry-run shows bwrap, slirp4netns, the rules and resolv.conf" dry_run_shows_the_pieces
    check "allowed name connects" expect connected allowed.test "${P[@]}" tcp allowed.test 8080
    check "allowed raw IP connects" expect connected allowed.test "${P[@]}" tcp 198.18.0.2 8080
    check "a name not on the list is refused" expect refused allowed.test "${P[@]}" tcp other.test 8080
    check "a raw IP not on the list is refused" expect refused allowed.test "${P[@]}" tcp 198.18.0.3 8080
    check "UDP to a DNS server other than 10.0.2.3 is refused" \
        not_connected allowed.test "${P[@]}" udp 198.18.0.3 53 "leak-$who-$$"
    check "... and never arrives" dns_leak_absent "leak-$who-$$"
    check "the host's 127.0.0.1 is not the sandbox's" \
        not_connected allowed.test "${P[@]}" tcp 127.0.0.1 "$NETLAB_LOOPBACK_PORT"
    check "the host's loopback via 10.0.2.2 is refused" \
        not_connected allowed.test "${P[@]}" tcp 10.0.2.2 "$NETLAB_LOOPBACK_PORT"
    check "10.0.2.2 stays closed even when allowed (--disable-host-loopback)" \
        not_connected allowed.test,gateway.test "${P[@]}" tcp gateway.test "$NETLAB_LOOPBACK_PORT"
    # localhost:PORT (issue 30, 2): that TCP port of the host's loopback,
    # as 10.0.2.2, and nothing else of the host.  A listener on every host
    # address at ANYPORT shows that a refusal is the filter's.
    check "localhost:PORT reaches that port of the host's loopback" \
        expect connected "localhost:$NETLAB_LOOPBACK_PORT,allowed.test" "${P[@]}" tcp 10.0.2.2 "$NETLAB_LOOPBACK_PORT"
    check "... not another port of it" \
        not_connected "localhost:$NETLAB_LOOPBACK_PORT,allowed.test" "${P[@]}" tcp 10.0.2.2 "$ANYPORT"
    check "... nor UDP to the listed port" \
        not_connected "localhost:$NETLAB_LOOPBACK_PORT,allowed.test" "${P[@]}" udp 10.0.2.2 "$NETLAB_LOOPBACK_PORT" x
    check "... nor the listed port on the host's other addresses (control: 10.0.2.2 connects)" \
        expect connected "localhost:$ANYPORT" "${P[@]}" tcp 10.0.2.2 "$ANYPORT"
    check "    (the host's 198.18.0.1 with the same entry is refused)" \
        not_connected "localhost:$ANYPORT" "${P[@]}" tcp 198.18.0.1 "$ANYPORT"
    check "iptables -F, nft flush/delete/add element from inside fail; the filter holds" flush_fails
    check "... the same nft commands work in a namespace the user owns (control)" \
        flush_works_when_owned
    check "an allowed name is asked upstream, another name never leaves" names_follow_the_list
    check "hand-made queries for an unlisted name to every resolver address never arrive" \
        handmade_queries_stay
    check "the resolver's upstream source ports carry nothing of the program's" \
        upstream_ports_not_usable
    check "*.name allows names under it at any depth, not name; name not sub.name" \
        wildcards_match
    check "name:port allows only that TCP port" port_entries
    check "the program cannot see or signal the resolver" resolver_out_of_reach
    check "refused names and connections are event records, once each" events_recorded
    check "... read by the keeper itself: the resolver is its only child" keeper_watches
    [ -n "${KGATE_SF_DRIVER:-}" ] ||
        check "... and net audit lines, with one kgate: summary line" events_audited
    [ -n "${KGATE_SF_DRIVER:-}" ] ||
        check "... and blocked objects on the caller's events channel, once each" events_channel
    check "the program runs as the real uid, no capabilities (root too)" runs_as_real_uid
    check "the seccomp filter is in force (Seccomp: 2), its memfd not passed on" seccomp_in_force
    check "keyctl is refused with EPERM (and works outside)" keyctl_refused
    # The kernel surface (tests/helpers/kcalls.c): io_uring, whose
    # IORING_OP_SOCKET would make sockets past the socket rules, AF_ALG
    # and the twins of refused calls, in the slirp stage's box.
    kcalls_setup
    check "control: outside, no kernel-surface call gets the filter's errno" kcalls_control
    check "io_uring, AF_ALG and the twins are refused in the slirp stage" \
        kcalls_refused sb allowed.test ./kcalls inside
    # Core commands: only through kgate itself.
    if [ -z "${KGATE_SF_DRIVER:-}" ]; then
        check "doctor: the filesystem box's findings, no bubblewrap network line" \
            doctor_filesystem_box
        check "--dry-run shows the seccomp filter" dry_run_shows_seccomp
    fi
    check "an unresolvable allowed name fails at the program's lookup, not the launch" \
        unresolvable_runs
    check "a malformed entry aborts the launch (125, one line, not started)" bad_entry_aborts
    # A core flag: only through kgate itself.
    [ -n "${KGATE_SF_DRIVER:-}" ] ||
        check "--allow-net on a network-off config allows that host only" allow_net_on_off
    check "SIGTERM to kgate reaches the program's handler" sigterm_reaches_program
    check "kill -9 of kgate leaves no slirp4netns, resolver or program" kill9_cleans_up
    check "kill -9 of kgate and its guard together leaves none of them either" \
        tree_kill9_cleans_up
    [ -n "${KGATE_SF_DRIVER:-}" ] ||
        check "... also killed at moments during the launch (nothing of the run's session is left)" \
            tree_kill9_during_launch
    check "no slirp4netns is left afterwards" no_slirp_left
    check "no dnsmasq is left afterwards" no_dnsmasq_left
done

finish
