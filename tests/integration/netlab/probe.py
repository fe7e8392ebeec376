#!/usr/bin/python3
"""probe.py: one network attempt from inside the sandbox, one word out.

  probe.py tcp HOST PORT        connect; prints connected|refused|unreachable|
                                denied|timeout|noname|error:<errno name>
  probe.py udp HOST PORT TEXT   sendto TEXT; prints sent|refused|denied|...
                                (sent only means the kernel took it)

Exit 0 only for "connected" / "sent".  The 3 s bound ends a hang; no test
asserts a duration.
"""
import errno
import socket
import sys


def word(e):
    if isinstance(e, socket.timeout):
        return "timeout"
    if isinstance(e, socket.gaierror):
        return "noname"
    return {
        errno.ECONNREFUSED: "refused",
        errno.ECONNRESET: "refused",
        errno.EHOSTUNREACH: "unreachable",
        errno.ENETUNREACH: "unreachable",
        errno.EPERM: "denied",
        errno.EACCES: "denied",
        errno.ETIMEDOUT: "timeout",
    }.get(e.errno, "error:" + errno.errorcode.get(e.errno or 0, str(e)))


def main():
    kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    try:
        addr = socket.getaddrinfo(host, port, socket.AF_INET)[0][4]
        if kind == "tcp":
            s = socket.create_connection(addr, timeout=3)
            s.close()
            print("connected")
            return 0
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(3)
        s.sendto(sys.argv[4].encode(), addr)
        print("sent")
        return 0
    except OSError as e:
        print(word(e))
        return 1


sys.exit(main())
