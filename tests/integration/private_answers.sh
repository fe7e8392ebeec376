#!/bin/bash
# private_answers.sh: an allowed name whose answer is the host's own
# address, a loopback address, slirp's 10.0.2.2 or a cloud metadata address
# reaches nothing (issue 26, class 3; docs/network.md, "Answers that name
# the host or a metadata service").
#
# slirp4netns connects from the network namespace kgate runs in, so this
# test runs kgate in a network namespace of its own (unshare --net): the
# lab (netlab.sh + namelab.sh), the metadata addresses and the "host's own
# address" (198.18.0.1 on the lab's bridge) all live there, and no route
# or address of the real host is touched.  Listeners (netlab/tcp_log.py)
# log every connection that reaches them: on the namespace's loopback, on
# 198.18.0.1, and in a lab namespace that holds 169.254.169.254,
# 100.100.100.200 and 168.63.129.16.  The zone (dns_zone.py) answers
# <x>.priv.test with each of them.
#
# Every check runs as root and as an unprivileged uid.  A refusal is only
# believed when the same run reached an allowed lab host first (its
# "connected"), the attempt's own word is printed, and the listener's log
# did not grow; the controls show the listeners do answer a connection
# from outside and through a literal allow_hosts entry.

if [ -z "${KG_NETLAB_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
    KG_NETLAB_INNER=1 exec unshare --mount --net --propagation private bash "$0" "$@"
fi

. "$(dirname "$0")/lib.sh"

[ -n "${KG_NETLAB_INNER:-}" ] || skip_all "building test hosts needs root and unshare"
need_cmd ip slirp4netns bwrap setpriv nft dnsmasq
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is not installed"
/usr/bin/python3 -c 'import dnslib' 2>/dev/null || skip_all "python3-dnslib is not installed"
need_bwrap

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netlab/netlab.sh"
. "$HERE/netlab/namelab.sh"
LAB=$KG_TMP/lab
CONNS=$LAB/conns.log
mkdir -p "$LAB"
PY=/usr/bin/python3

widen_tun
[ "$TUN_MODE" != missing ] || skip_all "/dev/net/tun does not exist"
LOG_PIDS=()
cleanup() {
    local p
    for p in "${LOG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    ip netns del kgt-nmeta 2>/dev/null
    namelab_down
    netlab_down
}
at_exit cleanup

# This namespace's own names for namespaces: a lab of another test running
# at the same time on the host keeps its own.
mkdir -p /run/netns
mount -t tmpfs -o mode=0755 kgt-netns /run/netns || skip_all "cannot mount a tmpfs on /run/netns"
ip link set lo up

# The metadata addresses, on a lab host reached through the bridge.
meta_up() {
    local a
    ip netns add kgt-nmeta || return 1
    ip link add kgt-nmeta-br type veth peer name kgt-nmeta-ns || return 1
    ip link set kgt-nmeta-br master kgt-br0 up
    ip link set kgt-nmeta-ns netns kgt-nmeta
    ip -n kgt-nmeta addr add 198.18.0.13/24 dev kgt-nmeta-ns
    for a in 169.254.169.254 100.100.100.200 168.63.129.16; do
        ip -n kgt-nmeta addr add "$a/32" dev kgt-nmeta-ns
        ip route add "$a/32" via 198.18.0.13 || return 1
    done
    ip -n kgt-nmeta link set kgt-nmeta-ns up
    ip -n kgt-nmeta link set lo up
    : >"$CONNS"
    chmod 0644 "$CONNS"
    ip netns exec kgt-nmeta "$PY" "$HERE/netlab/tcp_log.py" "$CONNS" \
        169.254.169.254:80 100.100.100.200:80 168.63.129.16:80 >"$LAB/meta.err" 2>&1 &
    LOG_PIDS+=($!)
    # The host's own: its loopback and its address on the bridge.
    "$PY" "$HERE/netlab/tcp_log.py" "$CONNS" 127.0.0.1:18090 198.18.0.1:18090 \
        >"$LAB/self.err" 2>&1 &
    LOG_PIDS+=($!)
    for _ in $(seq 100); do
        netlab_reach 169.254.169.254 80 && netlab_reach 168.63.129.16 80 &&
            netlab_reach 100.100.100.200 80 && netlab_reach 127.0.0.1 18090 &&
            netlab_reach 198.18.0.1 18090 && { : >"$CONNS"; return 0; }
        sleep 0.1
    done
    echo "listeners did not come up: $(cat "$LAB/meta.err" "$LAB/self.err")" >&2
    return 1
}

netlab_up "$LAB" && namelab_up "$LAB" && meta_up ||
    { echo "FAIL: could not build the test hosts"; exit 1; }
mount --bind "$LAB/zone-hosts" /etc/hosts
mount --bind "$LAB/zone-resolv.conf" /etc/resolv.conf

KGATE_ARGS=()
config_for() {
    local h
    {
        echo "network: restricted"
        echo "allow_hosts:"
        for h in ${1//,/ }; do echo "  - \"$h\""; done
    } | write_config
}
sb() {
    config_for "$1"
    shift
    kg run "${KGATE_ARGS[@]}" -- "$@"
}

# reached WHERE: a line for WHERE (ADDR:PORT) in the listeners' log after
# line $1 (waits up to 1 s: the listener logs as it accepts).
conns_now() { wc -l <"$CONNS"; }
reached_since() {
    poll 10 awk -v from="$1" -v w="$2" 'NR > from && $1 == w {f = 1} END {exit !f}' "$CONNS"
}
not_reached_since() {
    sleep 0.5
    ! awk -v from="$1" -v w="$2" 'NR > from && $1 == w {f = 1} END {exit !f}' "$CONNS" || {
        echo "  $2 was reached: $(tail -n +"$(($1 + 1))" "$CONNS" | tr '\n' ';')"
        return 1
    }
}

# audit_has NAME ADDR [WHY]: a "net" "refused" audit line of the last run
# with that name (and that address, unless ADDR is empty; and a reason that
# begins with WHY, when given); prints the count.
AUDIT_PY='import json, sys
name, addr = sys.argv[2], sys.argv[3]
why = sys.argv[4] if len(sys.argv) > 4 else ""
hits = 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    o = json.loads(line)
    if o.get("kind") != "net" or o.get("verdict") != "refused":
        continue
    if name and o.get("name") != name:
        continue
    if addr and o.get("addr") != addr:
        continue
    if why and not o.get("reason", "").startswith(why):
        continue
    hits += 1
print(hits)'
audit_has() {
    local hits
    poll 10 test -s "$KG_HOME/.kgate/audit.log"
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "$@" 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || {
        echo "  no net refused line for name '$1' addr '$2' reason '${3:-}': $(grep '"net"' "$KG_HOME/.kgate/audit.log" | head -c 600)"
        return 1
    }
}

# --- controls ---------------------------------------------------------------

# Every listener answers a connection from outside (so "not reached" below
# is the filter's doing), and the zone answers every name with its address.
control_listeners() {
    local w from out
    for w in 127.0.0.1:18090 198.18.0.1:18090 169.254.169.254:80 100.100.100.200:80 \
        168.63.129.16:80; do
        from=$(conns_now)
        out=$(as_user "$PY" probe.py tcp "${w%:*}" "${w##*:}")
        [ "$out" = connected ] && reached_since "$from" "$w" ||
            { echo "  $w from outside: '$out'"; return 1; }
    done
}

control_zone() {
    local n a out
    for n in lo:127.0.0.1 meta:169.254.169.254 ali:100.100.100.200 azure:168.63.129.16 \
        gw:10.0.2.2 self:198.18.0.1 calias:100.100.100.200; do
        a=${n#*:} n=${n%%:*}.priv.test
        out=$(as_user "$PY" dns_ask.py udp 198.18.0.10 "$n")
        [ "$out" = "answer:NOERROR:$a" ] || { echo "  $n: '$out'"; return 1; }
    done
    out=$(as_user "$PY" dns_ask.py udp 198.18.0.10 v6.priv.test AAAA)
    [ "$out" = "answer:NOERROR:fd00:ec2::254" ] || { echo "  v6.priv.test AAAA: '$out'"; return 1; }
}

# --- the attacks --------------------------------------------------------------

# private_name NAME ADDR PORT WHERE HOW: one run allows allowed.test and NAME;
# the program connects to allowed.test (must work: the run happened and the
# network works), then to NAME:PORT, which must not work, and the listener
# at WHERE must not see it.  HOW: "resolver" (dnsmasq's rebind guard refuses
# the answer: the audit names NAME), "filter" (the answer passes, the nft
# never set refuses: the audit names NAME and ADDR).
private_name() {
    local name=$1 addr=$2 port=$3 where=$4 how=$5 from out
    from=$(conns_now)
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb "allowed.test,$name" /bin/sh -c \
        "echo started; $PY probe.py tcp allowed.test 8080; $PY probe.py tcp $name $port" \
        2>"$KG_TMP/stderr")
    local third=${out##*$'\n'}
    [ "$(printf '%s\n' "$out" | head -n 2 | tr '\n' ' ')" = "started connected " ] &&
        [ "$(printf '%s\n' "$out" | wc -l)" -eq 3 ] && [ "$third" != connected ] || {
        echo "  got '$(printf '%s' "$out" | tr '\n' ' ')'; stderr: $(head -c 400 "$KG_TMP/stderr")"
        return 1
    }
    echo "  # $name:$port from inside: $third"
    not_reached_since "$from" "$where" || return 1
    case $how in
    resolver)
        [ "$third" = noname ] || { echo "  the resolver gave an address: '$third'"; return 1; }
        # The reason is the true one: the name is listed, its answer was
        # private (not "the name is not in allow_hosts").
        audit_has "$name" "" "the name is in allow_hosts, but its answer was a private"
        ;;
    filter) audit_has "$name" "$addr" "the address is this host's" ;;
    esac || return 1
    # The summary on stderr names it too.
    grep -q "^kgate: refused .*$name" "$KG_TMP/stderr" ||
        { echo "  stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
}

# Whatever the resolver does: /etc/hosts gives allowed names the forbidden
# addresses (the program's own lookup, dnsmasq never sees it), and the
# filter's never set still refuses them, naming the address.
hosts_file_path() {
    local from out
    printf '127.0.0.1 localhost\n198.18.0.2 allowed.test\n169.254.169.254 md.hosts.test\n198.18.0.1 me.hosts.test\n' \
        >"$LAB/evil-hosts"
    chmod 0644 "$LAB/evil-hosts"
    mount --bind "$LAB/evil-hosts" /etc/hosts || { echo "  cannot bind the hosts file"; return 1; }
    from=$(conns_now)
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb "allowed.test,md.hosts.test,me.hosts.test" /bin/sh -c \
        "echo started; $PY probe.py tcp allowed.test 8080; $PY probe.py tcp md.hosts.test 80; $PY probe.py tcp me.hosts.test 18090" \
        2>"$KG_TMP/stderr")
    umount /etc/hosts
    [ "$(printf '%s' "$out" | head -n 2 | tr '\n' ' ')" = "started connected " ] &&
        [ "$(printf '%s\n' "$out" | wc -l)" -eq 4 ] &&
        ! printf '%s\n' "$out" | tail -n 2 | grep -qx connected || {
        echo "  got '$(printf '%s' "$out" | tr '\n' ' ')'; stderr: $(head -c 400 "$KG_TMP/stderr")"
        return 1
    }
    not_reached_since "$from" 169.254.169.254:80 && not_reached_since "$from" 198.18.0.1:18090 &&
        audit_has "" 169.254.169.254 && audit_has "" 198.18.0.1
}

# A literal allow_hosts entry is the user naming the address: it still
# reaches it (and so the listeners above could have been reached).
explicit_entry() {
    local from out
    from=$(conns_now)
    out=$(sb "169.254.169.254:80,198.18.0.1:18090" /bin/sh -c \
        "$PY probe.py tcp 169.254.169.254 80; $PY probe.py tcp 198.18.0.1 18090" 2>"$KG_TMP/stderr")
    [ "$out" = "connected
connected" ] && reached_since "$from" 169.254.169.254:80 && reached_since "$from" 198.18.0.1:18090 || {
        echo "  got '$(printf '%s' "$out" | tr '\n' ' ')'; stderr: $(head -c 400 "$KG_TMP/stderr")"
        return 1
    }
}

# IPv6: the rebind guard refuses fd00:ec2::254 (AWS's IPv6 metadata
# address) in the resolver; the audit names the name.
ipv6_metadata() {
    local out
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb "allowed.test,v6.priv.test" /bin/sh -c \
        "echo started; $PY probe.py tcp allowed.test 8080; $PY dns_ask.py udp resolver v6.priv.test AAAA" \
        2>"$KG_TMP/stderr")
    [ "$out" = "started
connected
answer:NOERROR" ] || { echo "  got '$(printf '%s' "$out" | tr '\n' ' ')'; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    audit_has v6.priv.test ""
}

# --dry-run prints the never set with the namespace's own address in it
# (read by plan() as by the launch), and the resolver's rebind guard.
dry_run_shows_never() {
    local out
    config_for allowed.test
    out=$(kg run --dry-run -- /bin/true 2>&1)
    printf '%s\n' "$out" | grep -A3 'set never4 {' | grep -q 'elements = {.* 198\.18\.0\.1[ ,}]' &&
        printf '%s\n' "$out" | grep -qx 'stop-dns-rebind' || {
        echo "  dry-run: $(printf '%s\n' "$out" | grep -A3 'never4' | tr '\n' ' ')"
        return 1
    }
}

for who in $(test_users); do
    use_user "$who"
    for f in probe.py dns_ask.py; do
        cp "$HERE/netlab/$f" "$KG_PROJ/$f"
        chown "$KG_UID:$KG_GID" "$KG_PROJ/$f"
    done

    check "control: every listener answers a connection from outside" control_listeners
    check "control: the zone answers every .priv.test name with its address" control_zone
    check "--dry-run shows 198.18.0.1 in the never set and the rebind guard" dry_run_shows_never
    check "lo.priv.test (127.0.0.1): refused by the resolver, the host's loopback not reached" \
        private_name lo.priv.test 127.0.0.1 18090 127.0.0.1:18090 resolver
    check "meta.priv.test (169.254.169.254): refused by the resolver, metadata not reached" \
        private_name meta.priv.test 169.254.169.254 80 169.254.169.254:80 resolver
    check "gw.priv.test (10.0.2.2, slirp's host): refused by the resolver, loopback not reached" \
        private_name gw.priv.test 10.0.2.2 18090 127.0.0.1:18090 resolver
    check "ali.priv.test (100.100.100.200): refused by the filter, named with its address" \
        private_name ali.priv.test 100.100.100.200 80 100.100.100.200:80 filter
    check "azure.priv.test (168.63.129.16): refused by the filter, named with its address" \
        private_name azure.priv.test 168.63.129.16 80 168.63.129.16:80 filter
    check "self.priv.test (198.18.0.1, the host's own address): refused, named with its address" \
        private_name self.priv.test 198.18.0.1 18090 198.18.0.1:18090 filter
    check "calias.priv.test (CNAME to 100.100.100.200): refused, the alias named" \
        private_name calias.priv.test 100.100.100.200 80 100.100.100.200:80 filter
    check "fd00:ec2::254 for an allowed name: refused by the resolver" ipv6_metadata
    check "/etc/hosts giving allowed names 169.254.169.254 and 198.18.0.1: the filter refuses" \
        hosts_file_path
    check "a literal allow_hosts entry still reaches 169.254.169.254 and 198.18.0.1" explicit_entry
done

finish
