#!/usr/bin/python3
"""dns_ask.py udp|tcp SERVER NAME [TYPE]: one hand-made DNS query for NAME's
A record (or TYPE: AAAA), sent straight to SERVER port 53 (no system
resolver); one word out:

  answer:<RCODE>[:<addresses>]   a reply came (NOERROR, NXDOMAIN, REFUSED...);
                                 the A and AAAA records it holds, comma-separated
  timeout|refused|denied|unreachable|error:<errno name>   none came

SERVER "resolver" means the first nameserver of /etc/resolv.conf (the one a
program would use).  The 3 s bound ends a wait; no test asserts a duration.
Exit 0 only when a reply came.

dns_ask.py udp|tcp SERVER NAME ADDR:PORT sends from a socket bound to
ADDR:PORT instead (a source the resolver's own queries might use).

dns_ask.py steal NAME BASE looks up 1.BASE .. 10.BASE through the system
resolver (so the resolver's upstream queries to 10.0.2.3:53 have just left
from ports of this namespace, whose connection entries are still alive),
then sends the query for NAME to 10.0.2.3:53 from every source port
1024..65535 of the guest address (SO_REUSEADDR and SO_REUSEPORT set),
without waiting for answers.  Prints "swept:N sent:K": N ports tried, K
datagrams the kernel took.
"""
import errno
import socket
import struct
import sys

from dnslib import QTYPE, RCODE, DNSRecord


def first_nameserver():
    with open("/etc/resolv.conf") as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "nameserver":
                return w[1]
    return "127.0.0.1"


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise ConnectionResetError(errno.ECONNRESET, "closed")
        b += c
    return b


def steal(name, base):
    for i in range(1, 11):
        try:
            socket.getaddrinfo("%d.%s" % (i, base), 80, socket.AF_INET)
        except OSError:
            pass
    q = DNSRecord.question(name, "A").pack()
    swept = sent = 0
    for port in range(1024, 65536):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("10.0.2.100", port))
            swept += 1
            s.sendto(q, ("10.0.2.3", 53))
            sent += 1
        except OSError:
            pass
        finally:
            s.close()
    print("swept:%d sent:%d" % (swept, sent))
    return 0


def main():
    if sys.argv[1] == "steal":
        return steal(sys.argv[2], sys.argv[3])
    proto, server, name = sys.argv[1], sys.argv[2], sys.argv[3]
    if server == "resolver":
        server = first_nameserver()
    qtype, src = "A", None
    if len(sys.argv) > 4:
        if ":" in sys.argv[4]:
            a, p = sys.argv[4].rsplit(":", 1)
            src = (a, int(p))
        else:
            qtype = sys.argv[4]
    q = DNSRecord.question(name, qtype)
    q.header.rd = 1
    wire = q.pack()
    try:
        if proto == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            if src:
                s.bind(src)
            s.sendto(wire, (server, 53))
            data, _ = s.recvfrom(4096)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(3)
            if src:
                s.bind(src)
            s.connect((server, 53))
            s.sendall(struct.pack("!H", len(wire)) + wire)
            data = recv_exact(s, struct.unpack("!H", recv_exact(s, 2))[0])
    except socket.timeout:
        print("timeout")
        return 1
    except OSError as e:
        print({errno.ECONNREFUSED: "refused", errno.ECONNRESET: "refused",
               errno.EPERM: "denied", errno.EACCES: "denied",
               errno.EHOSTUNREACH: "unreachable", errno.ENETUNREACH: "unreachable",
               errno.ETIMEDOUT: "timeout"}.get(e.errno, "error:" + errno.errorcode.get(
                   e.errno or 0, str(e))))
        return 1
    r = DNSRecord.parse(data)
    addrs = [str(rr.rdata) for rr in r.rr if rr.rtype in (QTYPE.A, QTYPE.AAAA)]
    print("answer:%s%s" % (RCODE.get(r.header.rcode), ":" + ",".join(addrs) if addrs else ""))
    return 0


sys.exit(main())
