# netlab.sh: test hosts for the network tests, sourced by them (root only).
#
#   netlab_up DIR     builds the lab, writes DIR/hosts and DIR/resolv.conf
#   netlab_down       removes everything netlab_up made (safe to repeat)
#
# Layout (198.18.0.0/15 is the benchmarking range: nothing real lives there):
#
#   root netns: bridge kgt-br0 198.18.0.1/24, a TCP server on 127.0.0.1
#   netns kgt-hostA: 198.18.0.2  TCP 8080 (python3 http.server)
#   netns kgt-hostB: 198.18.0.3  TCP 8080, UDP 53 sink that logs and answers
#                                NXDOMAIN (DNS that leaves the lab stops here)
#
# slirp4netns makes its connections from the root namespace, so the bridge's
# connected route is all the sandbox's traffic needs.  The hosts file maps
# allowed.test -> .2, other.test -> .3, gateway.test -> 10.0.2.2 (slirp's
# view of the host).  The resolv.conf names hostB, for a private mount
# namespace of the test, so that no lookup leaves the lab.

NETLAB_DIR_SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETLAB_PY=/usr/bin/python3
NETLAB_PORT=8080
NETLAB_LOOPBACK_PORT=18080
NETLAB_PIDS=()
NETLAB_UP=0

netlab_up() {
    local dir=$1 n addr
    if ip link show kgt-br0 >/dev/null 2>&1; then
        echo "netlab: kgt-br0 exists: another network test is running (or one was killed; ip link del kgt-br0)" >&2
        return 1
    fi
    NETLAB_UP=1
    ip link add kgt-br0 type bridge || return 1
    ip addr add 198.18.0.1/24 dev kgt-br0
    ip link set kgt-br0 up
    for n in A B; do
        case $n in A) addr=198.18.0.2 ;; B) addr=198.18.0.3 ;; esac
        ip netns add "kgt-host$n" || return 1
        ip link add "kgt-$n-br" type veth peer name "kgt-$n-ns" || return 1
        ip link set "kgt-$n-br" master kgt-br0 up
        ip link set "kgt-$n-ns" netns "kgt-host$n"
        ip -n "kgt-host$n" addr add "$addr/24" dev "kgt-$n-ns"
        ip -n "kgt-host$n" link set "kgt-$n-ns" up
        ip -n "kgt-host$n" link set lo up
        ip -n "kgt-host$n" route add default via 198.18.0.1
        mkdir -p "$dir/www$n"
        echo "host $n" >"$dir/www$n/index.html"
        ip netns exec "kgt-host$n" "$NETLAB_PY" -m http.server "$NETLAB_PORT" \
            --bind "$addr" --directory "$dir/www$n" >"$dir/http$n.log" 2>&1 &
        NETLAB_PIDS+=($!)
    done
    : >"$dir/dns.log"
    ip netns exec kgt-hostB "$NETLAB_PY" "$NETLAB_DIR_SELF/dns_sink.py" \
        198.18.0.3 "$dir/dns.log" >"$dir/dns.err" 2>&1 &
    NETLAB_PIDS+=($!)
    mkdir -p "$dir/wwwL"
    echo "host loopback" >"$dir/wwwL/index.html"
    "$NETLAB_PY" -m http.server "$NETLAB_LOOPBACK_PORT" --bind 127.0.0.1 \
        --directory "$dir/wwwL" >"$dir/httpL.log" 2>&1 &
    NETLAB_PIDS+=($!)

    cat >"$dir/hosts" <<HOSTS
127.0.0.1 localhost
198.18.0.2 allowed.test
198.18.0.3 other.test
10.0.2.2 gateway.test
HOSTS
    echo "nameserver 198.18.0.3" >"$dir/resolv.conf"
    chmod 0644 "$dir/hosts" "$dir/resolv.conf"

    # Wait (bounded) until every server answers from the root namespace.
    local i
    for i in $(seq 100); do
        if netlab_reach 198.18.0.2 "$NETLAB_PORT" && netlab_reach 198.18.0.3 "$NETLAB_PORT" &&
            netlab_reach 127.0.0.1 "$NETLAB_LOOPBACK_PORT"; then
            "$NETLAB_PY" "$NETLAB_DIR_SELF/probe.py" udp 198.18.0.3 53 netlab-ready >/dev/null 2>&1
            grep -q netlab-ready "$dir/dns.log" && return 0
        fi
        sleep 0.1
    done
    echo "netlab: servers did not come up" >&2
    return 1
}

# netlab_reach ADDR PORT: a TCP connect from the root namespace.
netlab_reach() {
    "$NETLAB_PY" "$NETLAB_DIR_SELF/probe.py" tcp "$1" "$2" >/dev/null 2>&1
}

netlab_down() {
    [ "$NETLAB_UP" = 1 ] || return 0
    local p
    for p in "${NETLAB_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${NETLAB_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    NETLAB_PIDS=()
    ip netns del kgt-hostA 2>/dev/null
    ip netns del kgt-hostB 2>/dev/null
    ip link del kgt-A-br 2>/dev/null
    ip link del kgt-B-br 2>/dev/null
    ip link del kgt-br0 2>/dev/null
    NETLAB_UP=0
    return 0
}

# expect WANT HOSTS CMD...: the sandbox (the caller's sb function) printed
# exactly WANT.
expect() {
    local want=$1 out
    shift
    out=$(sb "$@" 2>"$KG_TMP/stderr")
    [ "$out" = "$want" ] || {
        echo "  want '$want', got '$out'; stderr: $(head -c 400 "$KG_TMP/stderr")"
        return 1
    }
}

# not_connected HOSTS CMD...: the probe inside printed a failure word
# (not "connected", and for UDP not "sent").
not_connected() {
    local out
    out=$(sb "$@" 2>"$KG_TMP/stderr")
    [ -n "$out" ] && [ "$out" != connected ] && [ "$out" != sent ] || {
        echo "  got '$out'; stderr: $(head -c 400 "$KG_TMP/stderr")"
        return 1
    }
}
