#!/usr/bin/python3
"""dnsq.py: hand-made DNS queries from inside the sandbox, one word each.

  dnsq.py udp|tcp SERVER NAME [SRCADDR:SRCPORT]
        one A query for NAME straight to SERVER port 53 (optionally from a
        socket bound to SRCADDR:SRCPORT); prints answered:<RCODE> or the
        failure word (refused|unreachable|denied|timeout|error:<errno>)
  dnsq.py steal NAME BASE
        looks up 1.BASE .. 10.BASE through the system resolver (so the
        resolver's upstream queries to 10.0.2.3:53 have just left from
        ports of this namespace, whose connection entries are still alive),
        then sends the query for NAME to 10.0.2.3:53 from every source port
        1024..65535 of the guest address (SO_REUSEADDR and SO_REUSEPORT
        set), without waiting for answers.  Prints "swept:N sent:K": N
        ports tried, K datagrams the kernel took

The bound of 2 s ends a hang; no test asserts a duration.
"""
import errno
import socket
import struct
import sys

RCODES = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"]


def query(name):
    pkt = struct.pack(">HHHHHH", 0x4b47, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        pkt += bytes([len(label)]) + label.encode()
    return pkt + b"\0" + struct.pack(">HH", 1, 1)


def word(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    return {
        errno.ECONNREFUSED: "refused",
        errno.ECONNRESET: "refused",
        errno.EHOSTUNREACH: "unreachable",
        errno.ENETUNREACH: "unreachable",
        errno.EPERM: "denied",
        errno.EACCES: "denied",
        errno.ETIMEDOUT: "timeout",
    }.get(e.errno, "error:" + errno.errorcode.get(e.errno or 0, str(e)))


def answer(data):
    if len(data) < 4:
        return "answered:short"
    rcode = data[3] & 15
    return "answered:" + (RCODES[rcode] if rcode < len(RCODES) else str(rcode))


def udp(server, name, src=None, reuse=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    try:
        if reuse:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if src:
            s.bind(src)
        s.sendto(query(name), (server, 53))
        return answer(s.recv(4096))
    except OSError as e:
        return word(e)
    finally:
        s.close()


def tcp(server, name, src=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        if src:
            s.bind(src)
        s.connect((server, 53))
        q = query(name)
        s.sendall(struct.pack(">H", len(q)) + q)
        return answer(s.recv(4096)[2:])
    except OSError as e:
        return word(e)
    finally:
        s.close()


def main():
    kind = sys.argv[1]
    if kind == "steal":
        for i in range(1, 11):
            try:
                socket.getaddrinfo("%d.%s" % (i, sys.argv[3]), 80, socket.AF_INET)
            except OSError:
                pass
        q = query(sys.argv[2])
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
        return
    server, name = sys.argv[2], sys.argv[3]
    src = None
    if len(sys.argv) > 4:
        a, p = sys.argv[4].rsplit(":", 1)
        src = (a, int(p))
    print(udp(server, name, src) if kind == "udp" else tcp(server, name, src))


main()
