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


def main():
    proto, server, name = sys.argv[1], sys.argv[2], sys.argv[3]
    if server == "resolver":
        server = first_nameserver()
    q = DNSRecord.question(name, sys.argv[4] if len(sys.argv) > 4 else "A")
    q.header.rd = 1
    wire = q.pack()
    try:
        if proto == "udp":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.sendto(wire, (server, 53))
            data, _ = s.recvfrom(4096)
        else:
            s = socket.create_connection((server, 53), timeout=3)
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
