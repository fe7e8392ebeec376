# namelab.sh: the name filter's test hosts and DNS server, sourced after
# netlab.sh and built on its bridge (root only).
#
#   namelab_up DIR    after netlab_up DIR: builds the hosts below, writes
#                     DIR/zone-resolv.conf (names the zone's server) and
#                     DIR/zone-hosts (localhost only, so that every name
#                     goes through DNS); the server logs to DIR/zone.log
#   namelab_down      removes everything namelab_up made (safe to repeat)
#
# One network namespace per host, on kgt-br0:
#
#   kgt-n4 .. kgt-n9  198.18.0.4 .. .9   TCP 8080 (and 8081 on .9); each
#                     connection gets "<addr>:<port>" and is closed
#   kgt-n12           198.18.0.12        TCP 9000: NAMELAB_BLOB zero bytes
#   kgt-ndns          198.18.0.10 (the upstream DNS server) and .11 (the
#                     same server seen as a lab host that is on no list):
#                     dns_zone.py, UDP and TCP 53, logs every query
#
# The zone (dns_zone.py) maps the .test names onto these addresses.

NAMELAB_HOSTS=(4 5 6 7 8 9 12)
NAMELAB_BLOB=${NAMELAB_BLOB:-268435456}
NAMELAB_PIDS=()
NAMELAB_UP=0

# namelab_ns NAME VETH ADDR...: a namespace on kgt-br0 with these addresses.
namelab_ns() {
    local ns=$1 veth=$2 a
    shift 2
    ip netns add "$ns" || return 1
    ip link add "$veth-br" type veth peer name "$veth-ns" || return 1
    ip link set "$veth-br" master kgt-br0 up
    ip link set "$veth-ns" netns "$ns"
    for a in "$@"; do ip -n "$ns" addr add "$a/24" dev "$veth-ns"; done
    ip -n "$ns" link set "$veth-ns" up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via 198.18.0.1
}

namelab_up() {
    local dir=$1 n ports
    NAMELAB_UP=1
    for n in "${NAMELAB_HOSTS[@]}"; do
        namelab_ns "kgt-n$n" "kgt-n$n" "198.18.0.$n" || return 1
        case $n in
        9) ports="8080 8081" ;;
        12) ports="9000=$NAMELAB_BLOB" ;;
        *) ports=8080 ;;
        esac
        # shellcheck disable=SC2086 # ports: one word each
        ip netns exec "kgt-n$n" "$NETLAB_PY" "$NETLAB_DIR_SELF/tcp_serve.py" \
            "198.18.0.$n" $ports >"$dir/tcp$n.log" 2>&1 &
        NAMELAB_PIDS+=($!)
    done
    namelab_ns kgt-ndns kgt-ndns 198.18.0.10 198.18.0.11 || return 1
    : >"$dir/zone.log"
    chmod 0644 "$dir/zone.log"
    ip netns exec kgt-ndns "$NETLAB_PY" "$NETLAB_DIR_SELF/dns_zone.py" "$dir/zone.log" \
        198.18.0.10 198.18.0.11 >"$dir/zone.err" 2>&1 &
    NAMELAB_PIDS+=($!)
    echo "nameserver 198.18.0.10" >"$dir/zone-resolv.conf"
    echo "127.0.0.1 localhost" >"$dir/zone-hosts"
    chmod 0644 "$dir/zone-resolv.conf" "$dir/zone-hosts"

    for _ in $(seq 100); do
        if netlab_reach 198.18.0.4 8080 && netlab_reach 198.18.0.9 8081 &&
            netlab_reach 198.18.0.12 9000 && netlab_reach 198.18.0.10 53 &&
            netlab_reach 198.18.0.11 53; then
            return 0
        fi
        sleep 0.1
    done
    echo "namelab: servers did not come up: $(cat "$dir/zone.err" 2>/dev/null)" >&2
    return 1
}

namelab_down() {
    [ "$NAMELAB_UP" = 1 ] || return 0
    local p n
    for p in "${NAMELAB_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${NAMELAB_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    NAMELAB_PIDS=()
    for n in "${NAMELAB_HOSTS[@]}" dns; do
        ip netns del "kgt-n$n" 2>/dev/null
        ip link del "kgt-n$n-br" 2>/dev/null
    done
    NAMELAB_UP=0
    return 0
}
