#!/bin/bash
# publish.sh: `kgate run --publish [127.0.0.1:]HOSTPORT:PORT` (issue 30, 3).
#
# A server inside the bubblewrap+slirp-filter box is reached from the host
# at 127.0.0.1:HOSTPORT, and from nowhere else: not at the host's lab
# address (198.18.0.1), not from a lab host in its own network namespace,
# not at a port the run did not publish; after the run nothing listens
# there.  Bad specs, and the modes and boxes that cannot publish, refuse
# with one line, exit 125 and nothing run (a marker the program would
# write stays absent), each beside a control run that does happen.  As
# root and as an unprivileged uid, with the lab hosts of netlab/.
#
# With network: off (issue 43, 5): under bubblewrap a forwarder of kgate's
# relays the host's 127.0.0.1:HOSTPORT into the box's own loopback; in the
# Landlock box (on the host, under `bwrap --disable-userns` and under a
# Docker-like seccomp profile) the program's loopback listen is already
# the host's, so HOSTPORT must be PORT.  Each is reached from the host,
# the box still reaches nothing outside (a host loopback server, a lab
# host), and after the run nothing listens and no forwarder is left.

# A private mount namespace: the lab's hosts file and resolver are for
# this test only (as restricted_net.sh).
if [ -z "${KG_NETLAB_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
    KG_NETLAB_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

. "$(dirname "$0")/lib.sh"

[ -n "${KG_NETLAB_INNER:-}" ] || skip_all "building test hosts needs root and unshare"
need_cmd ip ss nsenter slirp4netns nft dnsmasq bwrap setpriv
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is not installed"
need_bwrap
need_nouserns

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netlab/netlab.sh"
LAB=$KG_TMP/lab
mkdir -p "$LAB"
widen_tun
[ "$TUN_MODE" != missing ] || skip_all "/dev/net/tun does not exist"
at_exit netlab_down
netlab_up "$LAB" || { echo "FAIL: could not build the test hosts"; exit 1; }
mount --bind "$LAB/hosts" /etc/hosts
mount --bind "$LAB/resolv.conf" /etc/resolv.conf

PY=/usr/bin/python3
BOX_PORT=8000   # published
OTHER_PORT=8001 # listened on inside, never published

# The server inside: SERVER ADDR PROBES PORT...: first tries each of
# PROBES (ADDR:PORT,... or -), an attacker connecting out, and writes
# what each gave to the file outbound; then answers "box:PORT" on each of
# its ports at ADDR, writes ready.PORTS once it listens, ends when the
# file stop appears (or after 120 s, a bound, never a timing).
SERVER='
import os, select, socket, sys, time
out = []
for t in (sys.argv[2].split(",") if sys.argv[2] != "-" else []):
    a, p = t.rsplit(":", 1)
    try:
        socket.create_connection((a, int(p)), timeout=3).close(); out.append(t + " connected")
    except OSError as e:
        out.append("%s errno:%s" % (t, e.errno))
open("outbound", "w").write("\n".join(out) + "\n")
socks = []
for p in sys.argv[3:]:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], int(p))); s.listen(8); socks.append(s)
open("ready", "w").write(" ".join(sys.argv[3:]) + "\n")
end = time.monotonic() + 120
while not os.path.exists("stop") and time.monotonic() < end:
    r, _, _ = select.select(socks, [], [], 0.1)
    for s in r:
        c, _ = s.accept(); c.sendall(b"box:%d\n" % s.getsockname()[1]); c.close()
'

# An echo server inside on 127.0.0.1:PORT, one thread per client, until
# the file stop appears; and its client on the host: 100 clients at once
# (more than the forwarder relays at once: the rest wait in its
# backlog), one sending 4 MiB, each reading back what it sent, then EOF.
ECHO='
import os, socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(128); s.settimeout(0.2)
open("ready", "w").write("echo\n")
def serve(c):
    while True:
        d = c.recv(65536)
        if not d: break
        c.sendall(d)
    c.close()
end = time.monotonic() + 120
while not os.path.exists("stop") and time.monotonic() < end:
    try: c, _ = s.accept()
    except socket.timeout: continue
    c.settimeout(None); threading.Thread(target=serve, args=(c,), daemon=True).start()
'
echo_whole() {
    local out
    out=$("$PY" - "$1" <<'PYEOF'
import os, socket, sys, threading
port, ok, lock = int(sys.argv[1]), [0], threading.Lock()
def one(n):
    try:
        data = os.urandom(n)
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        w = threading.Thread(target=lambda: (s.sendall(data), s.shutdown(socket.SHUT_WR)))
        w.start()
        got = b""
        while True:
            d = s.recv(65536)
            if not d: break
            got += d
        w.join()
        with lock: ok[0] += got == data
    except OSError:
        pass
ts = [threading.Thread(target=one, args=(4 << 20 if i == 0 else 1000,)) for i in range(100)]
[t.start() for t in ts]; [t.join() for t in ts]
print("%d whole" % ok[0])
PYEOF
)
    [ "$out" = "100 whole" ] || { echo "  $out of 100"; return 1; }
}

# A free TCP port on the host (bound and released: nothing else in this
# test takes ports from that range).
free_port() {
    "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# hit ADDR PORT: what a TCP client on the host reads there ("box:8000"), or
# a word for why it could not connect.
hit() {
    "$PY" - "$1" "$2" <<'PYEOF'
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    s.settimeout(3)
    print(s.recv(64).decode().strip() or "empty")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("refused" if e.errno == 111 else "error:%s" % e.errno)
PYEOF
}
got() { local out; out=$(hit "$2" "$3"); [ "$out" = "$1" ] || { echo "  $2:$3 gave '$out', want '$1'"; return 1; }; }
not_box() { local out; out=$(hit "$1" "$2"); case $out in box:*) echo "  $1:$2 reached the box"; return 1 ;; esac; }
# From the lab host A, in its own network namespace (entered through its
# web server, netlab's first process): the host's bridge address at that
# port.
from_lab_not_box() {
    local out
    out=$(nsenter --net="/proc/${NETLAB_PIDS[0]}/ns/net" "$PY" "$HERE/netlab/probe.py" tcp 198.18.0.1 "$1" 2>&1)
    # A word of probe.py's, not an error of the tool: the path was tried.
    case $out in refused | unreachable | timeout) ;; *)
        echo "  kgt-hostA got '$out' from 198.18.0.1:$1"; return 1 ;; esac
}
# The control: the same path reaches a listener on every host address.
from_lab_reaches() {
    local out
    out=$(nsenter --net="/proc/${NETLAB_PIDS[0]}/ns/net" "$PY" "$HERE/netlab/probe.py" tcp 198.18.0.1 "$1" 2>&1)
    [ "$out" = connected ] || { echo "  kgt-hostA got '$out' from 198.18.0.1:$1"; return 1; }
}
listening_on() { ss -Hltn "sport = :$1" | awk '{print $4}' | sort | tr '\n' ' '; }
only_loopback_listens() {
    local l; l=$(listening_on "$1")
    [ "$l" = "127.0.0.1:$1 " ] || { echo "  listening at port $1: '$l'"; return 1; }
}
none_listens() {
    local l; l=$(listening_on "$1")
    [ -z "$l" ] || { echo "  still listening: $l"; return 1; }
}
api_dirs() { find /tmp -maxdepth 1 -name 'kgate-slirp-*' 2>/dev/null | sort | tr '\n' ' '; }

restricted() {
    write_config <<CFG
network: restricted
allow_hosts: ["allowed.test"]
CFG
}

# One published run, checked from outside while it serves.
published_run() {
    HP=$(free_port)
    rm -f "$KG_PROJ/ready" "$KG_PROJ/stop"
    API_BEFORE=$(api_dirs)
    restricted
    kg run --publish "$HP:$BOX_PORT" -- "$PY" -c "$SERVER" 0.0.0.0 - "$BOX_PORT" "$OTHER_PORT" \
        >"$KG_TMP/pub.out" 2>"$KG_TMP/pub.err" &
    RUN_PID=$!
    poll 600 test -s "$KG_PROJ/ready" ||
        { echo "  the server did not start: $(head -c 400 "$KG_TMP/pub.err")"; return 1; }
}
published_end() {
    touch "$KG_PROJ/stop"
    wait_bounded 60 "$RUN_PID"
    RUN_RC=$?
}
run_exit_0() { [ "$RUN_RC" = 0 ] || { echo "  rc $RUN_RC: $(head -c 400 "$KG_TMP/pub.err")"; return 1; }; }
launch_says_published() {
    grep '"kind":"launch"' "$KG_HOME/.kgate/audit.log" | tail -1 |
        grep -qF "\"publish\":[\"127.0.0.1:$HP:$BOX_PORT\"]"
}
no_api_dir_left() { [ "$(api_dirs)" = "$API_BEFORE" ] || { echo "  left: $(api_dirs)"; return 1; }; }

# refused WANT KGATE...: KGATE... -- sh -c 'touch marker' exits 125 with
# WANT in its one line, and the marker is absent.  ran KGATE...: the
# control, the marker made.
MARK='touch ran.marker'
refused() {
    local want=$1
    shift
    rm -f "$KG_PROJ/ran.marker"
    "$@" -- sh -c "$MARK" >"$KG_TMP/r.out" 2>"$KG_TMP/r.err"
    local rc=$?
    [ "$rc" = 125 ] && [ ! -e "$KG_PROJ/ran.marker" ] && grep -qF -- "$want" "$KG_TMP/r.err" &&
        [ "$(grep -c '^kgate: ' "$KG_TMP/r.err")" = 1 ] || {
        echo "  rc $rc, marker $([ -e "$KG_PROJ/ran.marker" ] && echo made || echo absent): $(head -c 400 "$KG_TMP/r.err")"
        return 1
    }
}
ran() {
    rm -f "$KG_PROJ/ran.marker"
    "$@" -- sh -c "$MARK" >"$KG_TMP/r.out" 2>"$KG_TMP/r.err"
    local rc=$?
    [ "$rc" = 0 ] && [ -e "$KG_PROJ/ran.marker" ] || {
        echo "  rc $rc: $(head -c 400 "$KG_TMP/r.err")"
        return 1
    }
}
net() { write_config <<CFG
network: $1
allow_hosts: ["allowed.test"]
CFG
}
kgr() { kg run "$@"; }
nouserns_kgr() { in_disable_userns "$KGATE_BIN" run "$@"; }

# The processes listening on a port (ss names them): the forwarder while
# a run lasts, looked for again after it.
listener_pids() { ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '; }
has_listener() { [ -n "$1" ] || { echo "  no process listens there"; return 1; }; }
pids_gone() {
    local p
    for p in $1; do
        [ ! -e "/proc/$p" ] || { echo "  pid $p still runs: $(tr '\0' ' ' <"/proc/$p/cmdline")"; return 1; }
    done
}
# What the server's probes out of the box gave: none connected.
nothing_went_out() {
    [ -s "$KG_PROJ/outbound" ] || { echo "  no outbound file"; return 1; }
    ! grep -q connected "$KG_PROJ/outbound" || { echo "  $(tr '\n' ' ' <"$KG_PROJ/outbound")"; return 1; }
}
# The forwarder's view: it holds no pipe (a copy of kgate's output pipe
# would hold the run open), and the namespace it relays into is not the
# host's and has a loopback and no route.
no_pipe_held() {
    local l; l=$(ls -l "/proc/${1%% *}/fd" 2>&1 | grep -c 'pipe:')
    [ "$l" = 0 ] || { echo "  $l pipes: $(ls -l "/proc/${1%% *}/fd" 2>&1 | tr '\n' ' ')"; return 1; }
}
box_net_has_no_route() {
    local p=${1%% *} links routes
    [ "$(readlink "/proc/$p/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
        { echo "  the forwarder is in the host's network namespace"; return 1; }
    links=$(nsenter --net="/proc/$p/ns/net" ip -o link show | awk -F': ' '{print $2}' | tr '\n' ' ')
    routes=$(nsenter --net="/proc/$p/ns/net" ip -4 route show table all | grep -v '^local\|^broadcast' | tr '\n' ' ')
    [ "$links" = "lo " ] && [ -z "$routes" ] || { echo "  links '$links', routes '$routes'"; return 1; }
}

dry_names_forwarder() {
    kg run --dry-run --publish 8080:80 -- true 2>&1 | grep -qF "forwarder listens on the host"
}

# off_run WHERE SPEC ADDR PORT...: a network: off run in WHERE (in_where,
# with FORCE's options) publishing SPEC, its server on ADDR at each PORT,
# after it tried PROBES.
off_run() {
    local where=$1 spec=$2 addr=$3
    shift 3
    rm -f "$KG_PROJ/ready" "$KG_PROJ/stop" "$KG_PROJ/outbound"
    net off
    in_where "$where" "$KGATE_BIN" run "${FORCE[@]}" --publish "$spec" -- \
        "$PY" -c "$SERVER" "$addr" "$PROBES" "$@" >"$KG_TMP/pub.out" 2>"$KG_TMP/pub.err" &
    RUN_PID=$!
    poll 600 test -s "$KG_PROJ/ready" ||
        { echo "  the server did not start: $(head -c 400 "$KG_TMP/pub.err")"; return 1; }
}

# A listener on every address of the host: the lab host's path to the
# host works, so a refusal below is the published port's address.
ANYPORT=$(free_port)
"$PY" "$HERE/netlab/tcp_serve.py" 0.0.0.0 "$ANYPORT" >/dev/null 2>&1 &
ANY_PID=$!
at_exit 'kill "$ANY_PID" 2>/dev/null'
poll 50 netlab_reach 127.0.0.1 "$ANYPORT"

for who in $(test_users); do
    use_user "$who"

    if published_run; then
        check "the published port answers on the host's 127.0.0.1" got "box:$BOX_PORT" 127.0.0.1 "$HP"
        check "... and listens there only (ss: not 0.0.0.0, not another address)" \
            only_loopback_listens "$HP"
        check "... not at the host's lab address 198.18.0.1" not_box 198.18.0.1 "$HP"
        check "... not from a lab host in its own network namespace" from_lab_not_box "$HP"
        check "    (control: that lab host reaches a listener on every host address)" \
            from_lab_reaches "$ANYPORT"
        check "a port the program listens on but that was not published is not on the host" \
            none_listens "$OTHER_PORT"
        check "... 127.0.0.1:$OTHER_PORT does not reach the box" not_box 127.0.0.1 "$OTHER_PORT"
        check "the launch record says what was published" launch_says_published
        check "slirp4netns's API socket and its directory are gone while the run goes on" \
            no_api_dir_left
        published_end
        check "the run ends normally" run_exit_0
        check "after the run nothing listens on the published port" none_listens "$HP"
        check "... and it does not answer" not_box 127.0.0.1 "$HP"
    else
        check "the published run started" false
        kill "$RUN_PID" 2>/dev/null
    fi

    # Two ports, one of them on another loopback address.
    HP1=$(free_port) HP2=$(free_port)
    rm -f "$KG_PROJ/ready" "$KG_PROJ/stop"
    restricted
    kg run --publish "$HP1:$BOX_PORT" --publish "127.0.0.1:$HP2:$OTHER_PORT" -- \
        "$PY" -c "$SERVER" 0.0.0.0 - "$BOX_PORT" "$OTHER_PORT" >/dev/null 2>"$KG_TMP/pub2.err" &
    RUN_PID=$!
    poll 600 test -s "$KG_PROJ/ready"
    check "--publish twice: the first port" got "box:$BOX_PORT" 127.0.0.1 "$HP1"
    check "--publish twice: the second port" got "box:$OTHER_PORT" 127.0.0.1 "$HP2"
    touch "$KG_PROJ/stop"
    wait_bounded 60 "$RUN_PID"
    check "... and neither listens after the run" none_listens "$HP1"
    check "    (nor the second)" none_listens "$HP2"

    # network: off under bubblewrap: the forwarder.  The attacker inside
    # tries a host loopback server and a lab host first.
    FORCE=()
    HP=$(free_port)
    # ... and the published port's number on its own loopback.
    PROBES="127.0.0.1:$ANYPORT,198.18.0.2:8080,127.0.0.1:$HP"
    if off_run host "$HP:$BOX_PORT" 0.0.0.0 "$BOX_PORT" "$OTHER_PORT"; then
        FWD=$(listener_pids "$HP")
        check "off, bubblewrap: the published port answers on the host's 127.0.0.1" \
            got "box:$BOX_PORT" 127.0.0.1 "$HP"
        check "... and listens there only" only_loopback_listens "$HP"
        check "... a process of kgate's listens there (the forwarder)" has_listener "$FWD"
        check "... it holds no pipe of kgate's" no_pipe_held "$FWD"
        check "... and relays into the box's namespace: only lo, no route" \
            box_net_has_no_route "$FWD"
        check "... not from a lab host in its own network namespace" from_lab_not_box "$HP"
        check "... the port not published is not on the host" none_listens "$OTHER_PORT"
        check "    (and does not answer)" not_box 127.0.0.1 "$OTHER_PORT"
        check "... the box reached neither a host loopback server nor a lab host" nothing_went_out
        published_end
        check "... the run ends normally" run_exit_0
        check "... after it nothing listens on the published port" none_listens "$HP"
        check "... and the forwarder is gone" pids_gone "$FWD"
    else
        check "off, bubblewrap: the published run started" false
        kill "$RUN_PID" 2>/dev/null
    fi
    # The relay itself: every byte both ways, many clients at once.
    HP=$(free_port)
    rm -f "$KG_PROJ/ready" "$KG_PROJ/stop"
    net off
    kg run --publish "$HP:$BOX_PORT" -- "$PY" -c "$ECHO" "$BOX_PORT" >/dev/null 2>"$KG_TMP/echo.err" &
    RUN_PID=$!
    if poll 600 test -s "$KG_PROJ/ready"; then
        check "off, bubblewrap: 100 clients at once, one of 4 MiB, each gets its bytes back" \
            echo_whole "$HP"
    else
        check "off, bubblewrap: the echo run started ($(head -c 300 "$KG_TMP/echo.err"))" false
    fi
    touch "$KG_PROJ/stop"
    wait_bounded 60 "$RUN_PID"

    # kgate killed: the forwarder dies with it (its parent-death signal).
    HP=$(free_port)
    if off_run host "$HP:$BOX_PORT" 0.0.0.0 "$BOX_PORT"; then
        FWD=$(listener_pids "$HP")
        KGPID=$(awk '{print $4}' "/proc/${FWD%% *}/stat" 2>/dev/null)
        check "off, bubblewrap, kgate killed: it served first" got "box:$BOX_PORT" 127.0.0.1 "$HP"
        kill -KILL "$KGPID" 2>/dev/null
        wait_bounded 60 "$RUN_PID"
        touch "$KG_PROJ/stop"
        check "... the forwarder is gone" poll 100 pids_gone "$FWD"
        check "... and nothing listens on the published port" none_listens "$HP"
    else
        check "off, bubblewrap, kgate killed: the published run started" false
        kill "$RUN_PID" 2>/dev/null
    fi

    # network: off in the Landlock box, in its three places: the
    # program's loopback listen is the host's port itself.
    PROBES="127.0.0.1:$ANYPORT,198.18.0.2:8080"
    for where in host disable seccomp; do
        if [ "$where" = host ]; then FORCE=(--backend landlock); else FORCE=(); fi
        LP=$(free_port)
        if off_run "$where" "$LP:$LP" 127.0.0.1 "$LP"; then
            check "off, landlock ($where): the published port answers on the host's 127.0.0.1" \
                got "box:$LP" 127.0.0.1 "$LP"
            check "... and listens there only" only_loopback_listens "$LP"
            check "... not from a lab host in its own network namespace" from_lab_not_box "$LP"
            check "... the box reached neither a host loopback server nor a lab host" \
                nothing_went_out
            published_end
            check "... the run ends normally" run_exit_0
            check "... after it nothing listens on the published port" none_listens "$LP"
        else
            check "off, landlock ($where): the published run started" false
            kill "$RUN_PID" 2>/dev/null
        fi
        net off
        check "control: landlock ($where) runs" ran in_where "$where" "$KGATE_BIN" run "${FORCE[@]}"
        check "... and refuses to map one port to another" refused "publish it as 80:80" \
            in_where "$where" "$KGATE_BIN" run "${FORCE[@]}" --publish 8080:80
    done
    check "    (control: the host reaches the loopback server the boxes did not)" \
        netlab_reach 127.0.0.1 "$ANYPORT"
    check "    (control: ... and the lab host)" netlab_reach 198.18.0.2 8080

    # Bad specs: exit 125, one line, nothing run; the control runs.
    restricted
    check "control: the same run without --publish happens" ran kgr
    check "port 0 is refused" refused "host port must be a number" kgr --publish 0:80
    check "a port above 65535 is refused" refused "host port must be" kgr --publish 65536:80
    check "a box port of 0 is refused" refused "inside the box must be" kgr --publish 8080:0
    check "garbage is refused" refused "expected [ADDR:]HOSTPORT:PORT" kgr --publish garbage
    check "a name instead of an address is refused" refused "not a name" \
        kgr --publish localhost:8080:80
    check "a non-loopback address is refused" refused "only on the host's loopback" \
        kgr --publish 198.18.0.1:8080:80
    check "0.0.0.0 is refused" refused "only on the host's loopback" kgr --publish 0.0.0.0:8080:80
    check "IPv6 is refused" refused "expected [ADDR:]HOSTPORT:PORT" kgr --publish ::1:8080:80
    check "the same host port twice is refused" refused "is given twice" \
        kgr --publish 8080:80 --publish 127.0.0.1:8080:81
    # A port the host already uses (the lab's loopback server): slirp4netns
    # cannot listen there, and nothing starts.
    check "a host port already in use refuses the launch" refused "slirp4netns refused it" \
        kgr --publish "$NETLAB_LOOPBACK_PORT:80"
    check "... with a refusal, not a launch, in the audit log" \
        eval 'tail -1 "$KG_HOME/.kgate/audit.log" | grep -q "\"kind\":\"refuse\""'

    # The modes and boxes that cannot publish.
    net off
    check "control: network: off runs" ran kgr
    check "network: off, the dry run names the forwarder" dry_names_forwarder
    check "network: off, a host port already in use refuses the launch" \
        refused "cannot listen on the host's 127.0.0.1:$NETLAB_LOOPBACK_PORT" \
        kgr --publish "$NETLAB_LOOPBACK_PORT:80"
    net open
    check "control: network: open runs" ran kgr
    check "network: open refuses --publish" refused "--publish cannot be used with network: open" \
        kgr --publish 8080:80
    net off
    # (Without the supervisor the project's split directories, its root
    # among them here, are read-only: the control prints its marker.)
    check "control: the Landlock box without its supervisor runs" eval \
        'as_user env KGATE_LANDLOCK_NO_SUPERVISOR=1 "$KGATE_BIN" run --backend landlock -- \
            echo ran.marker 2>&1 | grep -qx ran.marker'
    check "... and refuses --publish (no Internet socket there)" \
        refused "lets the program make no Internet socket" \
        as_user env KGATE_LANDLOCK_NO_SUPERVISOR=1 "$KGATE_BIN" run --backend landlock --publish 8080:8080
    net restricted
    check "the Landlock box with a host list refuses a mapped port too" \
        refused "publish it as 80:80" kgr --backend landlock --publish 8080:80
    check "bubblewrap alone (no network stage) refuses a host list with --publish" \
        refused "bubblewrap" kgr --backend bubblewrap --publish 8080:80
    # Seatbelt cannot run on Linux; a dry run shows what it would say.
    net off
    check "the Seatbelt box cannot publish (dry run)" \
        eval 'kg run --backend seatbelt --dry-run --publish 8080:80 -- true 2>&1 >/dev/null |
              grep -qF -- "--publish: seatbelt cannot forward a port"'
done
finish
