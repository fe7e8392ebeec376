#!/usr/bin/env bash
# restricted_net.sh: what the host allow list costs on the network, against
# the lab's test hosts (tests/integration/netlab: namespaces on 198.18.0.0/24
# and a DNS server of the test's own; nothing leaves the machine).  Root
# only: it builds network namespaces.  Figures, not pass/fail.
#
#   throughput   a BLOB-byte download (default 256 MiB) from blob.test:9000
#                through `network: restricted` (allow_hosts: [blob.test]),
#                ROUNDS times; the same client outside any sandbox, as a
#                reference for the machine
#   scale        launch wall time of `kgate run -- true` with SCALE_NAMES
#                allowed names (s0.scale.test ...; each resolves to its own
#                address), and whether the audit `launch` line was written
#                when the launch failed
#
# Usage: sudo bench/restricted_net.sh [ROUNDS] [SCALE_NAMES...]
# (defaults: 5 rounds; 10000 names).  KGATE_BUILD_ROOT as for run-all.sh.
# KGATE_COMPARE=OTHER_BUILD_ROOT adds that build's download to every round
# (the same lab, alternating): the ratio of two builds, drift included in
# both (issue 14's target: the name filter at >= 0.8x of the old filter).
# Other network tests use the same bridge: run it under
# `flock /tmp/kgate-integ.lock` on a shared machine.
set -uo pipefail
if [ -z "${KG_NETLAB_INNER:-}" ]; then
    [ "$(id -u)" -eq 0 ] || { echo "restricted_net: needs root (network namespaces)" >&2; exit 1; }
    KG_NETLAB_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
HERE=$(cd "$(dirname "$0")" && pwd)
B=$(realpath "${KGATE_BUILD_ROOT:-$HERE/../build}")
KGATE=${KGATE:-$B/core/kgate}
plugins_of() {
    local d p=
    for d in "$1"/plugins/*/; do p=${p:+$p:}${d%/}; done
    echo "$p"
}
PLUGINS=$(plugins_of "$B")
export KGATE_PLUGIN_PATH=$PLUGINS
CMP=${KGATE_COMPARE:+$(realpath "$KGATE_COMPARE")}
ROUNDS=${1:-5}
shift || true
SCALES=("$@")
[ "${#SCALES[@]}" -gt 0 ] || SCALES=(10000)
PY=/usr/bin/python3

. "$HERE/../tests/integration/netlab/netlab.sh"
. "$HERE/../tests/integration/netlab/namelab.sh"
TMP=$(mktemp -d /tmp/kgate-bench-net.XXXXXX)
chmod 0755 "$TMP"
TUN_MODE=$(stat -c %a /dev/net/tun)
trap 'namelab_down; netlab_down; [ "$TUN_MODE" = 666 ] || chmod "$TUN_MODE" /dev/net/tun; rm -rf "$TMP"' EXIT
[ "$TUN_MODE" = 666 ] || chmod 0666 /dev/net/tun
mkdir -p "$TMP/lab"
netlab_up "$TMP/lab" && namelab_up "$TMP/lab" || { echo "restricted_net: the lab did not come up" >&2; exit 1; }
mount --bind "$TMP/lab/zone-hosts" /etc/hosts
mount --bind "$TMP/lab/zone-resolv.conf" /etc/resolv.conf

export HOME=$TMP/home
mkdir -p "$HOME/.kgate" "$HOME/proj"
chmod 0700 "$HOME/.kgate"
cd "$HOME/proj" || exit 1
config() { cat >"$HOME/.kgate/config.yaml"; }

# The client: prints "<bytes> <seconds>" of one download.
cat >"$HOME/proj/get.py" <<'PYEOF'
import socket, sys, time
t = time.perf_counter()
s = socket.create_connection((sys.argv[1], 9000), timeout=30)
buf = bytearray(1 << 20)
n = 0
while True:
    k = s.recv_into(buf)
    if not k:
        break
    n += k
print(n, time.perf_counter() - t)
PYEOF
chmod 0644 "$HOME/proj/get.py"

uname -srm; nproc | sed 's/^/cpus: /'; uptime
git -C "$HERE" log --oneline -1 2>/dev/null | sed 's/^/commit: /'

# mbps "<bytes> <seconds>" -> MB/s (10^6 bytes), or "failed: <what>"
mbps() {
    local b s
    read -r b s <<<"$1"
    if [ "${b:-0}" = "$NAMELAB_BLOB" ]; then
        "$PY" -c "print('%.1f' % ($b / $s / 1e6))"
    else
        echo "failed:$(printf '%s' "$1" | tr '\n ' '__' | head -c 200)"
    fi
}
median() { printf '%s\n' "$@" | grep -v failed | sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print "n/a"}'; }

config <<'YAML'
network: restricted
allow_hosts: [blob.test]
YAML
inside=() outside=() other=()
for _ in $(seq "$ROUNDS"); do  # alternating, so drift hits both alike
    outside+=("$(mbps "$("$PY" get.py 198.18.0.12 2>&1)")")
    inside+=("$(mbps "$("$KGATE" run --no-pty -- "$PY" get.py blob.test 2>&1)")")
    [ -z "$CMP" ] || other+=("$(mbps "$(KGATE_PLUGIN_PATH=$(plugins_of "$CMP") \
        "$CMP/core/kgate" run --no-pty -- "$PY" get.py blob.test 2>&1)")")
done
MIB=$((NAMELAB_BLOB >> 20))
echo "throughput  $MIB MiB, no sandbox:        ${outside[*]} MB/s; median $(median "${outside[@]}")"
echo "throughput  $MIB MiB, network restricted: ${inside[*]} MB/s; median $(median "${inside[@]}")"
if [ -n "$CMP" ]; then
    echo "throughput  $MIB MiB, restricted, $CMP: ${other[*]} MB/s; median $(median "${other[@]}")"
    "$PY" -c "import sys; a, b = sys.argv[1:]; print('throughput  this build / compared: %.2f' % (float(a) / float(b)))" \
        "$(median "${inside[@]}")" "$(median "${other[@]}")" 2>/dev/null
fi

for n in "${SCALES[@]}"; do
    {
        echo "network: restricted"
        echo "allow_hosts:"
        seq 0 $((n - 1)) | sed 's/^/  - s/; s/$/.scale.test/'
    } | config
    : >"$HOME/.kgate/audit.log"
    t0=$(date +%s%N)
    "$KGATE" run --no-pty -- /bin/true >"$TMP/scale.out" 2>&1
    rc=$?
    t1=$(date +%s%N)
    launched=no
    grep -q '"kind":"launch"' "$HOME/.kgate/audit.log" && launched=yes
    printf 'scale       %d names: exit %d in %.1f ms, audit launch line: %s%s\n' "$n" "$rc" \
        "$(( (t1 - t0) / 1000 ))e-3" "$launched" \
        "$([ "$rc" -eq 0 ] || printf '; %s' "$(head -c 200 "$TMP/scale.out" | tr '\n' ' ')")"
done
