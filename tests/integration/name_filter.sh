#!/bin/bash
# name_filter.sh: the host allow list by name (issue 14), at the packet
# level, against a real DNS server.
#
# The lab (netlab/netlab.sh + netlab/namelab.sh) is test hosts in network
# namespaces on 198.18.0.0/24 and dns_zone.py, a DNS server that answers a
# zone of .test names and logs every query it receives.  A private mount
# namespace gives this test an /etc/resolv.conf naming that server, so it
# is the resolver slirp4netns forwards 10.0.2.3 to: its log is the record
# of every name that left the sandbox.  Traffic goes only to the lab's
# hosts and to loopback; no query goes to a public address.
#
# Every check runs as root and as an unprivileged uid.  A refusal is only
# believed with a proof that the refused action ran (the probe's own word,
# or a marker printed before it) and, for "never leaves", a control that
# the same path does reach the log for an allowed name.

# NF_BOX=landlock (meson test name_filter_landlock) runs the same checks
# against the Landlock box, forced with --backend landlock: no network
# namespace there, the seccomp supervisor checks every connect and send
# and relays DNS to its own dnsmasq (docs/landlock.md).  The checks of
# slirp-filter's own machinery (nftables, its stand-in failures) are
# skipped there; the ones below NF_BOX's own section are the Landlock
# box's own.
#
# NF_PLACE=disable or seccomp (with NF_BOX=landlock) runs them in the two
# places where user namespaces cannot be made, as landlock.sh does: inside
# another agent's `bwrap --disable-userns`, and under a Docker-like seccomp
# filter.  There kgate is not forced: it must pick the Landlock box by
# itself, and a check says that it did.
NF_BOX=${NF_BOX:-bubblewrap}
NF_PLACE=${NF_PLACE:-host}
if [ -z "${KG_NETLAB_INNER:-}" ] && [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
    KG_NETLAB_INNER=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

. "$(dirname "$0")/lib.sh"

[ -n "${KG_NETLAB_INNER:-}" ] || skip_all "building test hosts needs root and unshare"
if [ "$NF_BOX" = landlock ] && [ "$NF_PLACE" != host ]; then
    need_cmd ip setpriv pgrep dnsmasq
    need_nouserns
    BOX_ARGS=()
    # Every kgate of the suite runs in the place; the lab's controls and
    # the probes outside kgate do not.
    kg() {
        case $NF_PLACE in
        disable) in_disable_userns "$KGATE_BIN" "$@" ;;
        seccomp) in_seccomp_nouserns "$KGATE_BIN" "$@" ;;
        *) echo "NF_PLACE=$NF_PLACE: host, disable or seccomp" >&2; return 1 ;;
        esac
    }
elif [ "$NF_BOX" = landlock ]; then
    need_cmd ip setpriv pgrep dnsmasq
    BOX_ARGS=(--backend landlock)
else
    need_cmd ip slirp4netns bwrap setpriv pgrep
    need_bwrap
    BOX_ARGS=()
fi
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is not installed"
/usr/bin/python3 -c 'import dnslib' 2>/dev/null || skip_all "python3-dnslib is not installed"

# NF_ONLY=REGEX runs only the checks whose description matches it (for
# debugging one check; the suite itself runs them all).
if [ -n "${NF_ONLY:-}" ]; then
    eval "$(declare -f check | sed '1s/^check/nf_check_all/')"
    check() { [[ $1 =~ $NF_ONLY ]] || return 0; nf_check_all "$@"; }
fi

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/netlab/netlab.sh"
. "$HERE/netlab/namelab.sh"
LAB=$KG_TMP/lab
ZLOG=$LAB/zone.log
mkdir -p "$LAB"

widen_tun
[ "$TUN_MODE" != missing ] || [ "$NF_BOX" = landlock ] || skip_all "/dev/net/tun does not exist"
at_exit 'namelab_down; netlab_down'

# What of the resolver and of slirp4netns runs before the test: the test
# leaves exactly that.
procs_of_ours() { { pgrep -x dnsmasq; pgrep -x slirp4netns; } | sort | tr '\n' ' '; }
PROCS_BEFORE=$(procs_of_ours)
netlab_up "$LAB" && namelab_up "$LAB" || { echo "FAIL: could not build the test hosts"; exit 1; }
mount --bind "$LAB/zone-hosts" /etc/hosts
mount --bind "$LAB/zone-resolv.conf" /etc/resolv.conf

PY=/usr/bin/python3
TAG=$$$RANDOM
# fresh WORD: a name of .evil.test (not on any list, not in the zone) seen
# nowhere before in this run (WORD differs between calls).
fresh() { echo "$1-$RANDOM-$KG_WHO-$TAG.evil.test"; }

# in_log NAME: the zone server received a query for NAME (any type, any
# protocol, on any of its addresses).  Waits up to 1 s: the server logs
# before it answers, but a query that was not answered may still be on
# its way.
in_log() { poll 10 awk -v n="$1" '$4 == n {f = 1} END {exit !f}' "$ZLOG"; }
never_in_log() {
    sleep 0.3
    ! awk -v n="$1" '$4 == n {f = 1} END {exit !f}' "$ZLOG" || {
        echo "  $1 reached the DNS server: $(grep -F " $1 " "$ZLOG" | head -n 3 | tr '\n' ';')"
        return 1
    }
}

# sb HOSTS CMD...: one sandboxed run as the current test user with
# allow_hosts = HOSTS (comma-separated, each entry quoted in the YAML);
# KGATE_ARGS (an array) goes before `--`.
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
    kg run "${BOX_ARGS[@]}" "${KGATE_ARGS[@]}" -- "$@"
}

# --- controls: the lab works, and the log does see what reaches it -------

# In a place without user namespaces, doctor names the Landlock box for
# network: restricted with hosts (nothing forces it).
picks_landlock() {
    config_for allowed.test
    kg doctor --json >"$KG_TMP/doctor.json" 2>&1
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["backend"]=="landlock" and d["verdict"] in ("READY","DEGRADED") else 1)' \
        "$KG_TMP/doctor.json" || { echo "  $(head -c 300 "$KG_TMP/doctor.json")"; return 1; }
}

control_lab_reachable() {
    local a b
    a=$(as_user "$PY" probe.py tcp 198.18.0.4 8080)
    b=$(as_user "$PY" probe.py tcp allowed.test 8080)
    [ "$a" = connected ] && [ "$b" = connected ] || { echo "  got: $a / $b"; return 1; }
}

control_log_outside() {
    local n
    for p in udp tcp; do
        n=$(fresh ctl-out-$p)
        as_user "$PY" dns_ask.py "$p" 198.18.0.10 "$n" >/dev/null
        in_log "$n" || { echo "  $p query for $n not logged"; return 1; }
    done
}

# The sandbox's own resolver does forward an allowed name: so a name's
# absence from the log below is the filter's doing.  Both the system
# resolver (getaddrinfo) and a hand-made query, through the wildcard entry.
control_log_inside() {
    local a b out
    a=$(fresh ctl-gai | sed 's/\.evil\.test$/.wild.test/')
    b=$(fresh ctl-udp | sed 's/\.evil\.test$/.wild.test/')
    out=$(sb '*.wild.test' /bin/sh -c \
        "$PY probe.py tcp $a 8080; $PY dns_ask.py udp resolver $b" 2>"$KG_TMP/stderr")
    [ "$out" = "connected
answer:NOERROR:198.18.0.4" ] && in_log "$a" && in_log "$b" || {
        echo "  got '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"
        return 1
    }
}

# --- leaks: a name not on the list never reaches the server ---------------

leak_getaddrinfo() {
    local n out
    n=$(fresh gai)
    out=$(sb allowed.test /bin/sh -c "echo started; $PY probe.py tcp $n 8080" 2>"$KG_TMP/stderr")
    case $out in "started"$'\n'connected | started | "") echo "  got '$out'"; return 1 ;; esac
    never_in_log "$n"
}

# One sandbox sends hand-made queries, UDP and TCP, to every address a
# program might try; LEAKS holds "proto server name word" lines.
hand_made_queries() {
    local p s n script=
    LEAKS=$KG_TMP/leaks.$KG_WHO
    : >"$LEAKS.want"
    for p in udp tcp; do
        for s in resolver 10.0.2.3 198.18.0.10 198.18.0.11; do
            n=$(fresh "hm-$p-${s//./-}")
            echo "$p $s $n" >>"$LEAKS.want"
            script+="echo \"$p $s $n \$($PY dns_ask.py $p $s $n)\"; "
        done
    done
    sb allowed.test /bin/sh -c "$script" >"$LEAKS" 2>"$KG_TMP/stderr"
}

# leak_hand_made PROTO SERVER: that query ran (a line with its word) and
# its name is not in the log.
leak_hand_made() {
    local line
    line=$(awk -v p="$1" -v s="$2" '$1 == p && $2 == s' "$LEAKS")
    set -- $line
    [ $# -eq 4 ] || { echo "  the query did not run: '$line' (stderr: $(head -c 300 "$KG_TMP/stderr"))"; return 1; }
    never_in_log "$3"
}

# --- names that move, wildcards, ports, CNAMEs -----------------------------

# move.test answers another of three hosts on every query, TTL 1.  For
# about 6 s the program looks it up and connects; every connection must
# work and at least two hosts must have been seen (else nothing moved).
MOVE_PY='import socket, sys, time
seen, bad, n = set(), [], 0
end = time.monotonic() + 6
while time.monotonic() < end:
    n += 1
    try:
        a = socket.getaddrinfo("move.test", 8080, socket.AF_INET, socket.SOCK_STREAM)[0][4]
        s = socket.create_connection(a, timeout=3)
        seen.add(s.recv(64).decode().strip())
        s.close()
    except OSError as e:
        bad.append("%s:%s" % (n, e))
    time.sleep(0.3)
print("lookups=%d failed=%d hosts=%d %s" % (n, len(bad), len(seen), " ".join(bad[:3])))'

moving_name() {
    local out n f h
    out=$(sb move.test "$PY" -c "$MOVE_PY" 2>"$KG_TMP/stderr")
    read -r n f h _ <<<"$out"
    [ "${n#lookups=}" -ge 10 ] 2>/dev/null && [ "$f" = failed=0 ] && [ "${h#hosts=}" -ge 2 ] || {
        echo "  got '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"
        return 1
    }
}

# The allowed alias is a CNAME to a name on no list: the alias connects.
cname_alias() { expect connected alias.test "$PY" probe.py tcp alias.test 8080; }

# The CNAME's target, looked up by itself, is just another name.
cname_target_alone() {
    local out
    out=$(sb alias.test /bin/sh -c "echo started; $PY probe.py tcp edge.cdn.test 8080" 2>"$KG_TMP/stderr")
    [ "$out" != "started
connected" ] && [ "${out%%$'\n'*}" = started ] && [ -n "${out#started}" ] ||
        { echo "  got '$out'"; return 1; }
}

wild_under() {
    local n
    n=$(fresh deep | sed 's/\.evil\.test$/.x.wild.test/')
    expect "connected
connected" '*.wild.test' /bin/sh -c "$PY probe.py tcp a.wild.test 8080; $PY probe.py tcp $n 8080"
}
wild_not_itself() { not_connected '*.wild.test' "$PY" probe.py tcp wild.test 8080; }
wild_not_other() { not_connected '*.wild.test' "$PY" probe.py tcp other.test 8080; }
# Names that merely end in the same letters, or hold it in the middle,
# are not under it: their lookups never leave.
wild_not_suffix() {
    local a b out
    a=$(fresh x | sed 's/\.evil\.test$/wild.test/')
    b=$(fresh y | sed 's/\.evil\.test$/.wild.test.evil.test/')
    out=$(sb '*.wild.test' /bin/sh -c "echo started; $PY dns_ask.py udp resolver $a; $PY dns_ask.py udp resolver $b" 2>"$KG_TMP/stderr")
    [ "${out%%$'\n'*}" = started ] || { echo "  got '$out'"; return 1; }
    never_in_log "$a" && never_in_log "$b"
}

# port.test:8081 allows that port and no other, on the same host.
name_port() {
    expect "connected
refused-or-other" port.test:8081 /bin/sh -c \
        "$PY probe.py tcp port.test 8081; w=\$($PY probe.py tcp port.test 8080); [ \"\$w\" = connected ] && echo connected || echo refused-or-other"
}

# No IPv6 route, so no AAAA answers (clients use IPv4 at once).  Control:
# the upstream has one for allowed.test.
no_aaaa() {
    local ctl out
    ctl=$(as_user "$PY" dns_ask.py udp 198.18.0.10 allowed.test AAAA)
    out=$(sb allowed.test "$PY" dns_ask.py udp resolver allowed.test AAAA 2>"$KG_TMP/stderr")
    [ "$ctl" = "answer:NOERROR:2001:db8::2" ] && [ "$out" = answer:NOERROR ] ||
        { echo "  outside: '$ctl', inside: '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"; return 1; }
}

raw_address() { not_connected allowed.test "$PY" probe.py tcp 198.18.0.4 8080; }
other_name() { not_connected allowed.test "$PY" probe.py tcp other.test 8080; }

# --- what the user is told -------------------------------------------------

# audit_net NAME: a parseable net line refuses NAME; every line parses.
AUDIT_PY='import json, sys
name, addr, port = sys.argv[2], sys.argv[3], sys.argv[4]
hits = 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    o = json.loads(line)
    if o.get("kind") != "net" or o.get("verdict") != "refused":
        continue
    if name and o.get("name") == name:
        hits += 1
    if addr and o.get("addr") == addr and str(o.get("port")) == port:
        hits += 1
print(hits)'

refusal_reported() {
    local n out
    n=$(fresh told)
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb allowed.test /bin/sh -c "echo started; $PY probe.py tcp $n 8080" 2>"$KG_TMP/stderr")
    [ "${out%%$'\n'*}" = started ] || { echo "  did not run: '$out'"; return 1; }
    local hits
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "$n" "" "" 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || { echo "  audit: $hits: $(tail -n 3 "$KG_HOME/.kgate/audit.log")"; return 1; }
    grep -Eq "^kgate: refused [0-9]+ names?: (.*, )?$n(,|\$)" "$KG_TMP/stderr" ||
        { echo "  stderr: $(cat "$KG_TMP/stderr")"; return 1; }
}

refused_connection_reported() {
    local out hits
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb allowed.test /bin/sh -c "echo started; $PY probe.py tcp 198.18.0.4 8080" 2>"$KG_TMP/stderr")
    [ "${out%%$'\n'*}" = started ] && [ "$out" != "started
connected" ] || { echo "  got: '$out'"; return 1; }
    # Written as it happens; give it a moment after the program ended.
    poll 10 test -s "$KG_HOME/.kgate/audit.log"
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "" 198.18.0.4 8080 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || { echo "  audit: $hits: $(tail -n 3 "$KG_HOME/.kgate/audit.log")"; return 1; }
}

quiet_silences_summary() {
    local n out
    n=$(fresh quiet)
    rm -f "$KG_HOME/.kgate/audit.log"
    KGATE_ARGS=(--quiet)
    out=$(sb allowed.test /bin/sh -c "echo started; $PY probe.py tcp $n 8080" 2>"$KG_TMP/stderr")
    KGATE_ARGS=()
    [ "${out%%$'\n'*}" = started ] && [ "$out" != "started
connected" ] || { echo "  got: '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"; return 1; }
    ! grep -q '^kgate: refused' "$KG_TMP/stderr" || { echo "  stderr: $(cat "$KG_TMP/stderr")"; return 1; }
    # Still in the audit log: --quiet is about the terminal only.
    [ "$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "$n" "" "" 2>&1)" -ge 1 ] 2>/dev/null ||
        { echo "  no audit line for $n"; return 1; }
}

# --- the filter cannot be changed from inside -------------------------------

# The sets the plan names (`set NAME` in a `table FAMILY NAME` of the
# nftables text --dry-run prints), as "family table set" lines.
SETS_PY='import re, sys
fam = tab = None
for line in sys.stdin:
    m = re.match(r"\s*(?:add\s+)?table\s+(\w+)\s+(\w+)", line)
    if m:
        fam, tab = m.group(1), m.group(2)
        continue
    m = re.match(r"\s*add\s+set\s+(\w+)\s+(\w+)\s+(\w+)", line)
    if m:
        print(*m.groups())
        continue
    m = re.match(r"\s*set\s+(\w+)\s*\{", line)
    if m and fam:
        print(fam, tab, m.group(1))'

filter_sets() {
    config_for allowed.test
    kg run --dry-run -- /bin/true 2>/dev/null | "$PY" -c "$SETS_PY" | sort -u
}

filter_holds() {
    local sets script out want
    sets=$(filter_sets)
    [ -n "$sets" ] || echo "  # no nftables set in the plan: only the flushes are tried"
    script="$PY probe.py tcp 198.18.0.3 8080
        /usr/sbin/iptables -F 2>/dev/null && echo IPT-FLUSHED
        /usr/sbin/iptables -P OUTPUT ACCEPT 2>/dev/null && echo IPT-OPENED
        /usr/sbin/nft flush ruleset 2>/dev/null && echo NFT-FLUSHED
        /usr/sbin/nft add table inet kgt_evil 2>/dev/null && echo NFT-TABLE"
    while read -r f t s; do
        [ -n "$s" ] || continue
        script+="
        /usr/sbin/nft add element $f $t $s '{ 198.18.0.3 }' 2>/dev/null && echo NFT-ADDED-$s
        /usr/sbin/nft add element $f $t $s '{ 198.18.0.3 . 8080 }' 2>/dev/null && echo NFT-ADDED-$s"
    done <<<"$sets"
    script+="
        $PY probe.py tcp 198.18.0.3 8080"
    out=$(sb allowed.test /bin/sh -c "$script" 2>"$KG_TMP/stderr")
    # Refused before, the same word after, and no write said it worked.
    local first=${out%%$'\n'*} last=${out##*$'\n'}
    [ -n "$first" ] && [ "$first" != connected ] && [ "$last" = "$first" ] &&
        [ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] || {
        echo "  got: $(printf '%s' "$out" | tr '\n' ' '); stderr: $(head -c 300 "$KG_TMP/stderr")"
        return 1
    }
}

# The resolver can add to the allow set: the program must not be able to
# drive it.  No resolver, slirp4netns or kgate process the program can see
# may have its memory opened for writing (the check ptrace makes).  One
# it may signal is shown (killing the resolver only ends name lookups).
RESOLVER_PY='import os, sys
me = {os.getpid(), os.getppid()}
res = []
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) in me:
        continue
    try:
        comm = open("/proc/%s/comm" % p).read().strip()
    except OSError:
        continue
    if comm not in ("dnsmasq", "slirp4netns", "kgate"):
        continue
    try:
        os.kill(int(p), 0)
        sys.stderr.write("signalable: %s %s\n" % (p, comm))
    except OSError:
        pass
    try:
        os.close(os.open("/proc/%s/mem" % p, os.O_RDWR))
        res.append("MEM-" + comm)
    except OSError:
        pass
print("checked", *res)'

resolver_untouchable() {
    expect checked allowed.test "$PY" -c "$RESOLVER_PY" || return 1
    grep signalable "$KG_TMP/stderr" | sed 's/^/  # /'
    return 0
}

# --- nothing is left behind ------------------------------------------------

nothing_left() {
    local now
    now=$(procs_of_ours)
    [ "$now" = "$PROCS_BEFORE" ] || { echo "  before: '$PROCS_BEFORE', now: '$now'"; return 1; }
}

# pid:starttime of PID and of everything below it.
tree_of() {
    local p
    for p in $(ps -e -o pid=,ppid= | awk -v r="$1" '
        { kids[$2] = kids[$2] " " $1 }
        END { q[1] = r; n = 1; for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], k, " "); for (j = 1; j <= m; j++) q[++n] = k[j] } }'); do
        echo "$p:$(awk '{print $22}' "/proc/$p/stat" 2>/dev/null)"
    done
}
alive() {
    local e
    for e in "$@"; do
        [ "$(awk '{print $22}' "/proc/${e%%:*}/stat" 2>/dev/null)" = "${e#*:}" ] && echo "${e%%:*}"
    done
}

# The resolver's shim in the Landlock box (kgl-unotify-dns.c: dnsmasq's
# parent, which outlives the program) holds nothing of kgate's but the
# configuration: a copy of kgate's stdout or of the program's output pipe
# kept a reader of the run waiting a second past the end (the core's
# drain timeout).  kgate's stdout is a pipe here, and the run is shown to
# have happened.
shim_holds_nothing_of_kgate() {
    local tag="43.$TAG$RANDOM" spid="" d shim fds=""
    mkfifo "$KG_TMP/out.$tag"
    sb allowed.test /bin/sh -c "echo ran; exec /bin/sleep $tag" >"$KG_TMP/out.$tag" 2>/dev/null &
    local bg=$!
    exec 7<"$KG_TMP/out.$tag"
    for _ in $(seq 100); do
        spid=$(pgrep -xf "(/usr)?/bin/sleep $tag") && break
        sleep 0.1
    done
    # This run's kgate, and the dnsmasq below it.
    local p=$spid kpid=
    while [ -n "$p" ] && p=$(ps -o ppid= -p "$p" | tr -d ' ') && [ -n "$p" ] && [ "$p" -gt 1 ]; do
        [ "$(ps -o comm= -p "$p")" = kgate ] && kpid=$p
    done
    for d in $(pgrep -x dnsmasq); do
        shim=$(ps -o ppid= -p "$d" | tr -d ' ')
        [ -n "$kpid" ] && [ "$(ps -o ppid= -p "$shim" | tr -d ' ')" = "$kpid" ] && break
        shim=
    done
    [ -n "$shim" ] && fds=$(for f in /proc/"$shim"/fd/*; do readlink "$f"; done | sort -u | tr '\n' '|')
    [ -n "$spid" ] && kill "$spid"
    wait "$bg"
    local out
    out=$(cat <&7)
    exec 7<&-
    [ "$out" = ran ] && [ -n "$shim" ] &&
        [ -z "$(printf '%s' "$fds" | tr '|' '\n' | grep -v -e '^/dev/null$' -e '^/memfd:kgate-dnsmasq.conf')" ] || {
        echo "  out='$out' kgate=$kpid shim=$shim its descriptors: $fds"
        return 1
    }
}

# SIGKILL of kgate while the program sleeps (its argument is this run's
# marker): the program, the resolver and slirp4netns all go.
kill9_cleans_up() {
    local tag="41.$TAG$RANDOM" spid="" kpid p tree
    sb allowed.test /bin/sleep "$tag" >/dev/null 2>&1 &
    local bg=$!
    for _ in $(seq 100); do
        spid=$(pgrep -xf "(/usr)?/bin/sleep $tag") && break
        sleep 0.1
    done
    [ -n "$spid" ] || { echo "  the sandbox did not start"; kill "$bg"; return 1; }
    # The outermost kgate above the program.
    p=$spid kpid=
    while p=$(ps -o ppid= -p "$p" | tr -d ' ') && [ -n "$p" ] && [ "$p" -gt 1 ]; do
        [ "$(ps -o comm= -p "$p")" = kgate ] && kpid=$p
    done
    [ -n "$kpid" ] || { echo "  no kgate above the program"; kill "$bg"; return 1; }
    tree=$(tree_of "$kpid")
    # shellcheck disable=SC2086 # one word per process
    kill -9 "$kpid"
    for _ in $(seq 100); do
        [ -z "$(alive $tree)" ] && [ "$(procs_of_ours)" = "$PROCS_BEFORE" ] && break
        sleep 0.1
    done
    wait "$bg" 2>/dev/null
    local left
    # shellcheck disable=SC2086
    left=$(alive $tree)
    [ -z "$left" ] && [ "$(procs_of_ours)" = "$PROCS_BEFORE" ] &&
        ! pgrep -f "$tag" >/dev/null || {
        echo "  left: $(for p in $left $(pgrep -f "$tag"); do ps -o pid=,comm=,args= -p "$p"; done | head -c 400)" \
            "dnsmasq/slirp now: '$(procs_of_ours)', before: '$PROCS_BEFORE'"
        return 1
    }
}

# --- scale -----------------------------------------------------------------

# scale_config N: N allowed names, s0.scale.test ... (each resolves to an
# address of its own).
scale_config() {
    {
        echo "network: restricted"
        echo "allow_hosts:"
        seq 0 $(($1 - 1)) | sed 's/^/  - s/; s/$/.scale.test/'
    } | write_config
}

scale_launches() {
    local rc
    scale_config 10000
    rm -f "$KG_PROJ/scale-ran"
    kg run "${BOX_ARGS[@]}" -- /usr/bin/touch scale-ran >/dev/null 2>"$KG_TMP/stderr" &
    wait_bounded 120 $!
    rc=$?
    [ "$rc" -eq 0 ] && [ -e "$KG_PROJ/scale-ran" ] ||
        { echo "  rc=$rc stderr: $(head -c 300 "$KG_TMP/stderr")"; return 1; }
}

# A list of 45,000 names (the issue's case): either the program runs, or
# kgate refuses with one kgate: line BEFORE the audit launch line (none is
# written), the program never started.  Bounded at 120 s.
scale_fails_closed() {
    local rc
    scale_config 45000
    rm -f "$KG_PROJ/scale-ran" "$KG_HOME/.kgate/audit.log"
    kg run "${BOX_ARGS[@]}" -- /usr/bin/touch scale-ran >/dev/null 2>"$KG_TMP/stderr" &
    wait_bounded 120 $!
    rc=$?
    if [ "$rc" -eq 0 ] && [ -e "$KG_PROJ/scale-ran" ]; then
        echo "  # 45,000 names launched"
        return 0
    fi
    [ "$rc" -eq 125 ] && [ ! -e "$KG_PROJ/scale-ran" ] &&
        [ "$(grep -c . "$KG_TMP/stderr")" -eq 1 ] && grep -q '^kgate: ' "$KG_TMP/stderr" &&
        ! grep -q '"kind":"launch"' "$KG_HOME/.kgate/audit.log" 2>/dev/null &&
        grep -q '"kind":"refuse".*"reason":"slirp-filter: ' "$KG_HOME/.kgate/audit.log" || {
        echo "  rc=$rc stderr: $(head -c 300 "$KG_TMP/stderr");" \
            "launch line: $(grep -c '"kind":"launch"' "$KG_HOME/.kgate/audit.log" 2>/dev/null)"
        return 1
    }
}

# A filter that cannot be loaded (TOOL's stand-in fails the way a list too
# large for it would): exit 125, one kgate: line, the program never ran,
# and no audit launch line (the refusal comes before it).  The stand-in
# is bound over the real tool in this test's mount namespace only.
# $1: the tool whose stand-in refuses (bound over it); $2: a directory
# kgate gets first in LD_LIBRARY_PATH (the keeper opens libnftables by its
# soname), or none; $3: what the refusal must quote, so the way that
# refused is the one meant.
load_failure_refuses() {
    local tool=$1 libdir=${2:-} expect=$3 rc stand=$KG_TMP/fail-$1
    if [ "$tool" != none ]; then
        printf '#!/bin/sh\ncat >/dev/null 2>&1\necho "%s: stand-in: cannot load: Message too long" >&2\nexit 1\n' \
            "$tool" >"$stand"
        chmod 0755 "$stand"
        mount --bind "$stand" "/usr/sbin/$tool" || { echo "  cannot bind the stand-in"; return 1; }
    fi
    config_for allowed.test
    rm -f "$KG_PROJ/load-ran" "$KG_HOME/.kgate/audit.log"
    # The Landlock box makes its private TMPDIR before it starts the
    # resolver: a launch refused there must not leave it behind.
    local before new
    before=$(ls -d /tmp/kgate-landlock.* 2>/dev/null | sort)
    LD_LIBRARY_PATH=$libdir kg run "${BOX_ARGS[@]}" -- /usr/bin/touch load-ran >/dev/null \
        2>"$KG_TMP/stderr" &
    wait_bounded 60 $!
    rc=$?
    [ "$tool" = none ] || umount "/usr/sbin/$tool"
    new=$(comm -13 <(echo "$before") <(ls -d /tmp/kgate-landlock.* 2>/dev/null | sort))
    [ -z "$new" ] || { echo "  the refused launch left $new behind"; return 1; }
    [ "$rc" -eq 125 ] && [ ! -e "$KG_PROJ/load-ran" ] &&
        [ "$(grep -c . "$KG_TMP/stderr")" -eq 1 ] && grep -q '^kgate: ' "$KG_TMP/stderr" &&
        grep -qF "$expect" "$KG_TMP/stderr" &&
        ! grep -q '"kind":"launch"' "$KG_HOME/.kgate/audit.log" 2>/dev/null &&
        grep -q "\"kind\":\"refuse\".*\"reason\":\"$STAGE: " "$KG_HOME/.kgate/audit.log" || {
        echo "  rc=$rc stderr: $(head -c 300 "$KG_TMP/stderr");" \
            "launch lines: $(grep -c '"kind":"launch"' "$KG_HOME/.kgate/audit.log" 2>/dev/null)"
        return 1
    }
}

# The directories for the two ways the keeper loads the filter: one with a
# libnftables that refuses every ruleset, one with a file of that name
# that is no library (so the keeper runs the nft tool).
nftlib_dirs() {
    [ -n "${KGATE_TEST_NFT_STANDIN:-}" ] && [ -f "$KGATE_TEST_NFT_STANDIN" ] || {
        echo "  tests/helpers/nft-standin.c was not built"
        return 1
    }
    mkdir -p "$KG_TMP/nftlib-refuses" "$KG_TMP/nftlib-absent"
    cp "$KGATE_TEST_NFT_STANDIN" "$KG_TMP/nftlib-refuses/libnftables.so.1"
    echo 'not a library' >"$KG_TMP/nftlib-absent/libnftables.so.1"
    chmod a+rX "$KG_TMP/nftlib-refuses" "$KG_TMP/nftlib-absent" \
        "$KG_TMP/nftlib-refuses/libnftables.so.1" "$KG_TMP/nftlib-absent/libnftables.so.1"
}

# --- the Landlock box's own: its supervisor checks a copy ------------------

# Thread B flips the address buffer between allowed.test's address and
# an unlisted lab host while thread A connects with it (blocking: the
# supervisor's worker makes the call).  A connect whose peer is the
# unlisted host is a race the program won.
RACE_PY='import ctypes, socket, struct, threading, time
libc = ctypes.CDLL(None, use_errno=True)
def sa(ip):
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", 8080) + socket.inet_aton(ip) + bytes(8)
good, bad = socket.gethostbyname("allowed.test"), "198.18.0.3"
A, B = sa(good), sa(bad)
buf = ctypes.create_string_buffer(A, 16)
stop = []
def flip():
    while not stop:
        ctypes.memmove(buf, B, 16)
        ctypes.memmove(buf, A, 16)
t = threading.Thread(target=flip)
t.start()
won = ok = refused = 0
end = time.monotonic() + 4
while time.monotonic() < end:
    s = socket.socket()
    if libc.connect(s.fileno(), buf, 16) == 0:
        if s.getpeername()[0] == bad:
            won += 1
        else:
            ok += 1
    else:
        refused += 1
    s.close()
stop.append(1)
t.join()
print("won=%d ok=%d refused=%d" % (won, ok, refused))'

connect_race() {
    local out w o r
    out=$(sb allowed.test "$PY" -c "$RACE_PY" 2>"$KG_TMP/stderr")
    read -r w o r <<<"$out"
    [ "$w" = won=0 ] && [ "${o#ok=}" -ge 1 ] 2>/dev/null && [ "${r#refused=}" -ge 1 ] || {
        echo "  got '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"
        return 1
    }
}

UDP_PY='import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("198.18.0.4", 5353))
    print("sent")
except OSError as e:
    print("refused", e.errno)'

udp_other_port() {
    local out hits
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb allowed.test "$PY" -c "$UDP_PY" 2>"$KG_TMP/stderr")
    [ "$out" = "refused 13" ] || { echo "  got '$out'"; return 1; }
    poll 10 test -s "$KG_HOME/.kgate/audit.log"
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "" 198.18.0.4 5353 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || { echo "  audit: $hits"; return 1; }
}

# dns_record PROTO: a hand-made lookup of a name on no list, over PROTO to
# the resolver the program would use, is answered NXDOMAIN and is an audit
# net record and a name in the stderr summary (issue 40, defect 7: over
# TCP it was answered with no record).
dns_record() {
    local n out hits
    n=$(fresh "rec-$1")
    rm -f "$KG_HOME/.kgate/audit.log"
    out=$(sb allowed.test /bin/sh -c "echo started; $PY dns_ask.py $1 resolver $n" 2>"$KG_TMP/stderr")
    [ "$out" = "started
answer:NXDOMAIN" ] || { echo "  got '$out'; stderr: $(head -c 300 "$KG_TMP/stderr")"; return 1; }
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "$n" "" "" 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || { echo "  audit: $hits: $(tail -n 3 "$KG_HOME/.kgate/audit.log")"; return 1; }
    grep -Eq "^kgate: refused [0-9]+ names?: (.*, )?$n(,|\$)" "$KG_TMP/stderr" ||
        { echo "  stderr: $(cat "$KG_TMP/stderr")"; return 1; }
}

# A listed name whose answer the resolver's rebind guard empties (issue
# 43.6): the program gets no address (it asked, the run happened: its
# "connected" to allowed.test first), and the refusal is said as it
# happened: exactly one audit record and one caller's event, with the
# true reason (the answer was private), "blocked": 1 in the summary, and
# the stderr line.  NAME is a .priv.test name the guard refuses
# (meta: 169.254.169.254, link-local; lo: 127.0.0.1).
PRIVATE_PY='import json, sys
audit, events, name = sys.argv[1:4]
net = [o for o in map(json.loads, open(audit, encoding="utf-8")) if o.get("kind") == "net"]
ev = [json.loads(l) for l in open(events, encoding="utf-8")]
blocked = [o for o in ev if o["type"] == "blocked"]
summary = [o for o in ev if o["type"] == "summary"]
ok = (len(net) == 1 and net[0].get("name") == name and net[0].get("verdict") == "refused" and
      net[0].get("reason", "").startswith("the name is in allow_hosts, but its answer was a private") and
      len(blocked) == 1 and blocked[0]["code"] == "net_answer_private" and
      blocked[0]["resource"] == {"type": "network", "host": name} and
      "is not in allow_hosts" not in json.dumps(blocked[0]) and
      len(summary) == 1 and summary[0]["blocked"] == 1)
if not ok:
    print("  audit:", *net, "  events:", *ev, sep="\n    ")
sys.exit(0 if ok else 1)'
private_answer_recorded() {
    local name=$1 out ev=$KG_TMP/events.json
    rm -f "$KG_HOME/.kgate/audit.log" "$ev"
    KGATE_ARGS=(--events-fd 3)
    out=$(sb "allowed.test,$name" /bin/sh -c \
        "echo started; $PY probe.py tcp allowed.test 8080; $PY probe.py tcp $name 80" \
        3>"$ev" 2>"$KG_TMP/stderr")
    KGATE_ARGS=()
    [ "$out" = "started
connected
noname" ] || { echo "  got '$out'; stderr: $(head -c 400 "$KG_TMP/stderr")"; return 1; }
    poll 10 test -s "$KG_HOME/.kgate/audit.log"
    "$PY" -c "$PRIVATE_PY" "$KG_HOME/.kgate/audit.log" "$ev" "$name" || return 1
    [ "$(grep -c "^kgate: refused 1 name: $name\$" "$KG_TMP/stderr")" -eq 1 ] ||
        { echo "  stderr: $(cat "$KG_TMP/stderr")"; return 1; }
}

# --- the Landlock box's own servers and inbound connections (issue 40,
# defect 6; issue 41) ---------------------------------------------------------
# The box shares the host's network namespace: a server the program binds
# on every address is reachable from the lab.  bind to an address that is
# not loopback (with a port) and listen on one are refused; a socket that
# listens unbound is put on 127.0.0.1.  The program's own loopback servers
# stay reachable by the program; the host's (not listed) do not.
INBOUND_PY='import socket, sys
P = int(sys.argv[1])
print("started", flush=True)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("0.0.0.0", P))
    s.listen(4)
except OSError as e:
    print("refused", e.errno, flush=True)
    sys.exit(0)
print("listening", flush=True)
open("inbound.ready", "w").close()
s.settimeout(10)
try:
    c, a = s.accept()
    c.sendall(b"secret\n")
    print("accepted", a[0], flush=True)
except OSError:
    print("no-one", flush=True)'
INBOUND_PORT=18091

# inbound RUNNER: RUNNER runs INBOUND_PY; once it listens, a lab host
# (198.18.0.2, in its own namespace) connects to the host's lab address.
# Prints what the program printed.
inbound() {
    rm -f "$KG_PROJ/inbound.ready"
    "$@" "$PY" -c "$INBOUND_PY" "$INBOUND_PORT" >"$KG_TMP/inbound.out" 2>"$KG_TMP/stderr" &
    local job=$!
    poll 50 sh -c "[ -e '$KG_PROJ/inbound.ready' ] || ! kill -0 $job 2>/dev/null"
    if [ -e "$KG_PROJ/inbound.ready" ]; then
        ip netns exec kgt-hostA "$PY" "$HERE/netlab/probe.py" tcp 198.18.0.1 "$INBOUND_PORT" \
            >/dev/null 2>&1
    fi
    wait_bounded 20 "$job"
    tr '\n' ' ' <"$KG_TMP/inbound.out"
}
inbound_control() {
    local out
    out=$(inbound as_user)
    [ "$out" = "started listening accepted 198.18.0.2 " ] || { echo "  got '$out'"; return 1; }
}
inbound_refused() {
    local out hits
    rm -f "$KG_HOME/.kgate/audit.log"
    config_for allowed.test
    out=$(inbound kg run "${BOX_ARGS[@]}" --)
    [ "$out" = "started refused 13 " ] || { echo "  got '$out'; $(head -c 300 "$KG_TMP/stderr")"; return 1; }
    poll 10 test -s "$KG_HOME/.kgate/audit.log"
    hits=$("$PY" -c "$AUDIT_PY" "$KG_HOME/.kgate/audit.log" "" 0.0.0.0 "$INBOUND_PORT" 2>&1)
    [ "$hits" -ge 1 ] 2>/dev/null || { echo "  audit: $hits"; return 1; }
}

# A socket that listens without a bind: the kernel would put it on every
# address; the supervisor puts it on 127.0.0.1.
LISTEN_PY='import socket
s = socket.socket()
s.listen(1)
print("listens on", s.getsockname()[0])'

# The program's own web server on 127.0.0.1 (another process of the run),
# and its own client: reachable.
OWN_PY='import subprocess, sys, time, urllib.request
P = sys.argv[1]
print("started", flush=True)
srv = subprocess.Popen([sys.executable, "-m", "http.server", P, "--bind", "127.0.0.1",
                        "--directory", "www"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
got = "none"
for _ in range(100):
    try:
        got = urllib.request.urlopen("http://127.0.0.1:%s/index.html" % P, timeout=3).read().decode().strip()
        break
    except OSError as e:
        got = "error %s" % e
        time.sleep(0.1)
srv.kill()
print(got)'
OWN_PORT=18092
own_server() {
    mkdir -p "$KG_PROJ/www"
    echo "own server" >"$KG_PROJ/www/index.html"
    chown -R "$KG_UID:$KG_GID" "$KG_PROJ/www"
    expect "started
own server" "$1" "$PY" -c "$OWN_PY" "$OWN_PORT"
}

# A second box beside the first: the first serves on 127.0.0.1 until the
# second has tried; the second must not reach it.
BESIDE_PY='import os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
open("beside.ready", "w").close()
for _ in range(200):
    if os.path.exists("beside.done"):
        break
    time.sleep(0.05)
print("served")'
box_beside() {
    local job out
    rm -f "$KG_PROJ/beside.ready" "$KG_PROJ/beside.done"
    config_for allowed.test
    kg run "${BOX_ARGS[@]}" -- "$PY" -c "$BESIDE_PY" "$OWN_PORT" >"$KG_TMP/beside.out" 2>&1 &
    job=$!
    poll 50 test -e "$KG_PROJ/beside.ready"
    out=$(sb allowed.test /bin/sh -c "$PY probe.py tcp 127.0.0.1 $OWN_PORT; touch beside.done" \
        2>/dev/null)
    touch "$KG_PROJ/beside.done"
    wait_bounded 20 "$job"
    grep -qx served "$KG_TMP/beside.out" && [ "$out" = refused ] || {
        echo "  first box: $(cat "$KG_TMP/beside.out"); second box: '$out'"
        return 1
    }
}

if [ "$NF_BOX" = landlock ]; then
    ANYPORT=18082
    "$PY" "$HERE/netlab/tcp_serve.py" 0.0.0.0 "$ANYPORT" >/dev/null 2>&1 &
    ANY_PID=$!
    at_exit 'kill "$ANY_PID" 2>/dev/null'
    poll 50 netlab_reach 127.0.0.1 "$ANYPORT"
fi

for who in $(test_users); do
    use_user "$who"
    for f in probe.py dns_ask.py; do
        cp "$HERE/netlab/$f" "$KG_PROJ/$f"
        chown "$KG_UID:$KG_GID" "$KG_PROJ/$f"
    done

    check "control: the lab's hosts and its DNS answer without kgate" control_lab_reachable
    check "control: the DNS server logs queries sent to it (UDP, TCP)" control_log_outside
    if [ "$NF_PLACE" != host ]; then
        check "$NF_PLACE: kgate picks the Landlock box by itself for a host list" picks_landlock
    fi
    check "control: an allowed name looked up inside reaches the DNS server" control_log_inside
    check "the allowed name connects" expect connected allowed.test "$PY" probe.py tcp allowed.test 8080
    check "another name does not connect" other_name
    check "a raw address does not connect" raw_address
    check "a name not on the list (getaddrinfo) never reaches the DNS server" leak_getaddrinfo
    hand_made_queries
    for p in udp tcp; do
        for s in resolver 10.0.2.3 198.18.0.10 198.18.0.11; do
            case $s in
            resolver) d="the resolver inside" ;; 10.0.2.3) d="slirp's 10.0.2.3" ;;
            198.18.0.10) d="the upstream server (198.18.0.10)" ;; *) d="a lab host not on the list ($s)" ;;
            esac
            check "a hand-made $p query to $d never reaches the DNS server" leak_hand_made "$p" "$s"
        done
    done
    check "no AAAA answer for an allowed name that has one upstream" no_aaaa
    check "a TTL-1 name that moves connects on every lookup for 6 s" moving_name
    check "*.wild.test allows names under it, at any depth" wild_under
    check "*.wild.test does not allow wild.test itself" wild_not_itself
    check "*.wild.test does not allow another name" wild_not_other
    check "*.wild.test: names that only end alike never leave" wild_not_suffix
    check "port.test:8081 allows 8081 and not 8080" name_port
    check "an allowed alias whose CNAME target is on no list connects" cname_alias
    check "the CNAME's target alone is not allowed" cname_target_alone
    check "a refused name: audit net line and the stderr summary" refusal_reported
    check "a refused connection to a raw address: audit net line (addr, port)" \
        refused_connection_reported
    check "--quiet: no summary on stderr, the audit line stays" quiet_silences_summary
    if [ "$NF_BOX" = landlock ]; then
        check "the resolver cannot be traced from inside" resolver_untouchable
        check "the resolver's shim holds nothing of kgate's but its configuration" \
            shim_holds_nothing_of_kgate
        check "10,000 allowed names launch" scale_launches
        STAGE=landlock
        check "dnsmasq failing to start refuses before the audit launch line" \
            load_failure_refuses dnsmasq "" "dnsmasq did not"
        check "two threads: the address changed while connect waits never reaches an unlisted host" \
            connect_race
        check "UDP to any port but 53 is refused and reported" udp_other_port
        # localhost:PORT (issue 30, 2): in this box the host's loopback is
        # the program's own 127.0.0.1 (no network namespace); that TCP port
        # only.  A listener on every address at ANYPORT shows that a
        # refusal is the supervisor's.
        LH="localhost:$NETLAB_LOOPBACK_PORT,allowed.test"
        check "localhost:PORT reaches that port of the host's loopback" \
            expect connected "$LH" "$PY" probe.py tcp 127.0.0.1 "$NETLAB_LOOPBACK_PORT"
        check "localhost:PORT: another loopback port with a listener is refused" \
            not_connected "$LH" "$PY" probe.py tcp 127.0.0.1 "$ANYPORT"
        check "localhost:PORT: the host's other address, same listener, is refused" \
            not_connected "localhost:$ANYPORT" "$PY" probe.py tcp 198.18.0.1 "$ANYPORT"
        check "localhost:PORT: UDP to that port is refused" \
            not_connected "$LH" "$PY" probe.py udp 127.0.0.1 "$NETLAB_LOOPBACK_PORT" x
        check "control: localhost:ANYPORT reaches the listener on every address" \
            expect connected "localhost:$ANYPORT" "$PY" probe.py tcp 127.0.0.1 "$ANYPORT"
        check "control: a lab host connects in to a listener on every address, without kgate" \
            inbound_control
        check "bind 0.0.0.0:PORT is refused (EACCES) and reported; no lab host connects in" \
            inbound_refused
        check "a socket that listens unbound listens on 127.0.0.1" \
            expect "listens on 127.0.0.1" allowed.test "$PY" -c "$LISTEN_PY"
        check "the program's own server on 127.0.0.1 is reachable by its own client" \
            own_server allowed.test
        check "the host's loopback server (not listed) stays unreachable" \
            not_connected allowed.test "$PY" probe.py tcp 127.0.0.1 "$NETLAB_LOOPBACK_PORT"
        check "a second box cannot reach the first box's loopback server" box_beside
        check "control: a lookup over UDP of a name on no list is a record" dns_record udp
        check "a lookup over TCP of a name on no list is the same record" dns_record tcp
        check "a listed name answered with a link-local address: one record, reason private" \
            private_answer_recorded meta.priv.test
        check "a listed name answered with a loopback address: one record, reason private" \
            private_answer_recorded lo.priv.test
        check "a listed alias whose target answers link-local: one record for the alias" \
            private_answer_recorded cmeta.priv.test
    else
        check "iptables -F, nft flush, nft add element from inside fail and change nothing" \
            filter_holds
        check "the resolver and slirp4netns cannot be traced from inside" \
            resolver_untouchable
        check "10,000 allowed names launch" scale_launches
        check "45,000 allowed names run, or refuse before the audit launch line" scale_fails_closed
        # nft or dnsmasq refusing what plan() built: the stage commits the
        # launch line only once both are in place (kgate_launch.commit).
        STAGE=slirp-filter
        nftlib_dirs
        check "libnftables refusing the filter refuses before the audit launch line" \
            load_failure_refuses none "$KG_TMP/nftlib-refuses" \
            "nft failed: Error: library stand-in: cannot load: Message too long"
        check "without libnftables, the nft tool refusing it refuses the same way" \
            load_failure_refuses nft "$KG_TMP/nftlib-absent" \
            "nft failed: nft: stand-in: cannot load: Message too long"
        check "dnsmasq failing to start refuses before the audit launch line" \
            load_failure_refuses dnsmasq "" "dnsmasq did not"
    fi
    check "kill -9 of kgate leaves no resolver, slirp4netns or program" kill9_cleans_up
    check "nothing of the resolver or slirp4netns is left after the runs" nothing_left
done

finish
