#!/bin/bash
# unix_sockets.sh: issue 43, item 1.  Host Unix sockets by path in the
# Landlock box: below ABI 9 Landlock does not control connecting to one, so
# the supervisor decides (sdk/linux/kgl-unotify-unix.c).  A host server
# (the test user's own, in a directory outside the project the box cannot
# write) is attacked from inside, in network off, open and restricted, in
# the three places the Landlock box runs (forced on the host, inside bwrap
# --disable-userns, under a Docker-like seccomp filter), as root and as an
# unprivileged uid:
#   - connect by absolute and by relative path: EACCES;
#   - a symbolic link made in the project to it, an O_PATH descriptor of it
#     through /proc/self/fd/N, and a hard link attempt;
#   - a racer thread flipping the sun_path the connect names between an
#     allowed and the forbidden socket, for ROUNDS connects;
#   - a symbolic link in the project swapped between the two by a second
#     thread while the supervisor looks, for ROUNDS connects;
#   - a datagram sent to a forbidden host datagram socket.
# The host servers log every connection and datagram they get: the
# forbidden ones must log none.  Controls: the socket allow_sockets names
# connects (directly, through a link, and in the races), and the run's own
# servers (bound in a project directory and in its TMPDIR) answer.
# docs/landlock.md (the table's host Unix sockets row, "The supervisor").
. "$(dirname "$0")/lib.sh"
need_nouserns
need_cmd python3 dnsmasq
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3 (the box's program)"
[ "$(landlock_abi)" -ge 1 ] || skip_all "Landlock is not enabled in this kernel"
ROUNDS=${KGATE_UNIX_ROUNDS:-200}
# Restricted needs a resolver upstream; no name is looked up here.
export KGATE_LANDLOCK_DNS_UPSTREAM=198.18.0.53

# The host's servers: path, tag, log; a stream server answers "HELLO-TAG"
# and logs "conn", a datagram one ("dgram" in the tag) logs what it got.
SERVER='import os, socket, sys
path, tag, log = sys.argv[1:4]
dg = "dgram" in tag
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM if dg else socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
if not dg:
    s.listen(64)
open(path + ".ready", "w").close()
while True:
    if dg:
        m = s.recv(100)
        open(log, "a").write("dgram %s\n" % m.decode(errors="replace"))
        continue
    c, _ = s.accept()
    open(log, "a").write("conn\n")
    try:
        c.sendall(b"HELLO-" + tag.encode() + b"\n")
    except OSError:
        pass
    c.close()
'

# What runs inside (python3 attack.py HOSTDIR ROUNDS): a marker before each
# attempt, one line after.  The allowed and forbidden names have the same
# length, so the racer flips only their bytes.
ATTACK='import ctypes, os, socket, sys, threading
H, ROUNDS = sys.argv[1], int(sys.argv[2])
A, F, FD = H + "/alw.sock", H + "/frb.sock", H + "/frb.dgram"
libc = ctypes.CDLL(None, use_errno=True)
def conn(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(path)
        return "OK " + s.recv(100).decode().strip()
    except OSError as e:
        return "ERR %d" % e.errno
    finally:
        s.close()
print("M-start", flush=True)
print("M-abs"); print("ABS", conn(F), flush=True)
print("M-rel"); print("REL", conn(os.path.relpath(F)), flush=True)
print("M-allowed"); print("ALLOWED", conn(A), flush=True)
os.makedirs("sub", exist_ok=True)
print("M-symlink")
os.symlink(F, "sub/f-link.sock"); print("SYMLINK", conn("sub/f-link.sock"), flush=True)
os.symlink(A, "sub/a-link.sock"); print("SYMLINK-ALLOWED", conn("sub/a-link.sock"), flush=True)
# An O_PATH descriptor of each, connected to through /proc/self/fd/N.
print("M-opath")
for tag, p in (("OPATH", F), ("OPATH-ALLOWED", A)):
    fd = os.open(p, os.O_PATH)
    print(tag, conn("/proc/self/fd/%d" % fd), flush=True)
    os.close(fd)
print("M-hardlink")
try:
    os.link(F, "sub/f-hard.sock"); print("HARDLINK", conn("sub/f-hard.sock"), flush=True)
except OSError as e:
    print("HARDLINK nolink %d" % e.errno, flush=True)
# The racer: one buffer, the connect reads it while another thread flips it.
print("M-race", flush=True)
class SUN(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("path", ctypes.c_char * 108)]
sun = SUN(socket.AF_UNIX, A.encode())
stop = False
def flip():
    a, f = A.encode(), F.encode()
    while not stop:
        ctypes.memmove(ctypes.addressof(sun) + 2, f, len(f))
        ctypes.memmove(ctypes.addressof(sun) + 2, a, len(a))
t = threading.Thread(target=flip); t.start()
# At least ROUNDS connects, more (up to ten times) until both names won
# once: a loaded machine may schedule the racer late.
def more(n, seen, a, f):
    both = any(k.startswith(a) for k in seen) and any(k.startswith(f) for k in seen)
    return n < ROUNDS or (not both and n < 10 * ROUNDS)
seen, n = {}, 0
while more(n, seen, "OK-HELLO-A", "ERR-13"):
    n += 1
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    r = libc.connect(s.fileno(), ctypes.byref(sun), ctypes.sizeof(sun))
    if r == 0:
        try:
            k = "OK-" + s.recv(100).decode().strip()
        except OSError:
            k = "OK-norecv"
    else:
        k = "ERR-%d" % ctypes.get_errno()
    seen[k] = seen.get(k, 0) + 1
    s.close()
stop = True; t.join()
print("RACE", " ".join("%s=%d" % kv for kv in sorted(seen.items())), flush=True)
# The swap: sub/sw.sock is renamed over between a link to each.
print("M-swap", flush=True)
stop = False
def swap():
    i = 0
    while not stop:
        n = "sub/sw.tmp%d" % (i % 2)
        try:
            os.symlink(F if i % 2 else A, n)
            os.rename(n, "sub/sw.sock")
        except OSError:
            pass
        i += 1
os.symlink(A, "sub/sw.sock")
t = threading.Thread(target=swap); t.start()
seen, n = {}, 0
while more(n, seen, "OK-HELLO-A", "ERR-13"):
    n += 1
    r = conn("sub/sw.sock").replace(" ", "-")
    seen[r] = seen.get(r, 0) + 1
stop = True; t.join()
print("SWAP", " ".join("%s=%d" % kv for kv in sorted(seen.items())), flush=True)
print("M-dgram")
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    d.sendto(b"LEAK-DGRAM", FD); print("DGRAM sent", flush=True)
except OSError as e:
    print("DGRAM ERR %d" % e.errno, flush=True)
# The run own servers: bound in the project and in its TMPDIR.
print("M-own", flush=True)
for tag, where in (("proj", "sub/own.sock"), ("tmp", os.environ["TMPDIR"] + "/own.sock")):
    srv = socket.socket(socket.AF_UNIX)
    try:
        srv.bind(where); srv.listen(1)
    except OSError as e:
        print("OWN %s bind-ERR %d" % (tag, e.errno), flush=True)
        continue
    def serve(srv=srv):
        c, _ = srv.accept(); c.sendall(b"HELLO-OWN\n"); c.close()
    threading.Thread(target=serve).start()
    print("OWN", tag, conn(where), flush=True)
    od = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    od.bind(where + ".dg")
    d.sendto(b"own", where + ".dg")
    print("OWN-DGRAM", tag, od.recv(10).decode(), flush=True)
print("M-end", flush=True)
'

HOST_PIDS=()
stop_servers() {
    local p
    for p in "${HOST_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    HOST_PIDS=()
}
at_exit stop_servers

# The servers of one run, as the test user, in $HOSTDIR (its own, outside
# the project; the box may not write there).
start_servers() {
    HOSTDIR=$KG_HOME/host
    mkdir -p "$HOSTDIR"
    printf '%s' "$SERVER" >"$KG_HOME/server.py"
    chown -R "$KG_UID:$KG_GID" "$HOSTDIR" "$KG_HOME/server.py"
    local s
    for s in alw.sock:A frb.sock:F frb.dgram:Fdgram; do
        as_user /usr/bin/python3 "$KG_HOME/server.py" "$HOSTDIR/${s%%:*}" "${s#*:}" \
            "$HOSTDIR/${s%%:*}.log" >/dev/null 2>&1 &
        HOST_PIDS+=($!)
        poll 100 test -e "$HOSTDIR/${s%%:*}.ready"
    done
}

# count KEY LINE-PREFIX OUT: the count of KEY on the RACE or SWAP line.
count() {
    sed -n "s/^$2 //p" "$3" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1 | grep . || echo 0
}

test_mode() {
    local where=$1 who=$2 net=$3 force=() out w="$1/$2/$3"
    [ "$where" = host ] && force=(--backend landlock)
    use_user "$who"
    start_servers
    case $net in
    restricted) printf 'network: restricted\nallow_hosts: [198.18.0.9]\n' ;;
    *) printf 'network: %s\n' "$net" ;;
    esac | { cat; printf 'allow_sockets: [%s]\n' "$HOSTDIR/alw.sock"; } | write_config
    # A split project root (.git's protected paths), as in real use.
    (cd "$KG_PROJ" && git init -q . && mkdir sub)
    printf '%s' "$ATTACK" >"$KG_PROJ/attack.py"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ"
    out=$KG_TMP/unix.$where.$who.$net.out
    in_where "$where" "$KGATE_BIN" run "${force[@]}" -- \
        /usr/bin/python3 attack.py "$HOSTDIR" "$ROUNDS" >"$out" 2>&1
    check "$w: the run happened (first and last marker)" \
        sh -c "grep -qx M-start '$out' && grep -qx M-end '$out' || { cat '$out'; false; }"
    check "$w: the forbidden socket by absolute path: EACCES" grep -qx "ABS ERR 13" "$out"
    check "$w: the forbidden socket by relative path: EACCES" grep -qx "REL ERR 13" "$out"
    check "$w: control: the allow_sockets socket connects" grep -qx "ALLOWED OK HELLO-A" "$out"
    check "$w: a symlink in the project to the forbidden socket: EACCES" \
        grep -qx "SYMLINK ERR 13" "$out"
    check "$w: control: a symlink in the project to the allowed socket connects" \
        grep -qx "SYMLINK-ALLOWED OK HELLO-A" "$out"
    check "$w: an O_PATH descriptor of the forbidden socket, by /proc/self/fd: EACCES" \
        grep -qx "OPATH ERR 13" "$out"
    check "$w: control: an O_PATH descriptor of the allowed socket, by /proc/self/fd" \
        grep -qx "OPATH-ALLOWED OK HELLO-A" "$out"
    check "$w: a hard link to the forbidden socket reaches nothing" \
        sh -c "grep -qE '^HARDLINK (nolink|ERR)' '$out'"
    check "$w: race: the flipped sun_path never reached the forbidden socket" \
        sh -c "grep -q '^RACE ' '$out' && ! grep '^RACE ' '$out' | grep -q OK-HELLO-F"
    check "$w: race: both names were connected to ($ROUNDS rounds: allowed ones and EACCES)" \
        sh -c "[ $(count OK-HELLO-A RACE "$out") -gt 0 ] && [ $(count ERR-13 RACE "$out") -gt 0 ]"
    check "$w: swap: the swapped symlink never reached the forbidden socket" \
        sh -c "grep -q '^SWAP ' '$out' && ! grep '^SWAP ' '$out' | grep -q HELLO-F"
    check "$w: swap: both targets were met (allowed ones and EACCES)" \
        sh -c "[ $(count OK-HELLO-A SWAP "$out") -gt 0 ] && [ $(count ERR-13 SWAP "$out") -gt 0 ]"
    check "$w: a datagram to a forbidden host socket: EACCES" grep -qx "DGRAM ERR 13" "$out"
    check "$w: the forbidden servers logged nothing (no connection, no datagram)" \
        sh -c "[ ! -s '$HOSTDIR/frb.sock.log' ] && [ ! -s '$HOSTDIR/frb.dgram.log' ]"
    check "$w: control: the allowed server logged connections" [ -s "$HOSTDIR/alw.sock.log" ]
    check "$w: the run's own server in the project answers" grep -qx "OWN proj OK HELLO-OWN" "$out"
    check "$w: the run's own server in its TMPDIR answers" grep -qx "OWN tmp OK HELLO-OWN" "$out"
    check "$w: the run's own datagram socket in the project" grep -qx "OWN-DGRAM proj own" "$out"
    check "$w: the run's own datagram socket in its TMPDIR" grep -qx "OWN-DGRAM tmp own" "$out"
    stop_servers
}

# doctor says which: READY where the supervisor runs, DEGRADED with the
# reason where it is turned off (as where the kernel lacks it).
test_doctor() {
    local where=$1 force=() out=$KG_TMP/doctor.$1.$2
    [ "$where" = host ] && force=(--backend landlock)
    use_user "$2"
    in_where "$where" "$KGATE_BIN" doctor "${force[@]}" >"$out" 2>&1
    in_where "$where" env KGATE_LANDLOCK_NO_SUPERVISOR=1 "$KGATE_BIN" doctor "${force[@]}" \
        >"$out.off" 2>&1
    check "$where/$2: doctor: host Unix sockets READY (the supervisor decides them)" \
        grep -qE '^ *READY +host Unix sockets by path: refused unless allow_sockets' "$out"
    check "$where/$2: doctor: DEGRADED, with the reason, without the supervisor" \
        grep -qE '^ *DEGRADED +host Unix sockets .*seccomp user notification' "$out.off"
}

for who in $(test_users); do
    for where in host disable seccomp; do
        test_doctor "$where" "$who"
        for net in off open restricted; do
            test_mode "$where" "$who" "$net"
        done
    done
done
finish
