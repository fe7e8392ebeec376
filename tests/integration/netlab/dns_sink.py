#!/usr/bin/python3
"""dns_sink.py ADDR LOG: a UDP port-53 test host.

Appends every datagram it receives to LOG (source address and the payload
as text, one line each) and answers anything shaped like a DNS query with
NXDOMAIN, so that names the lab does not define fail at once instead of
leaving the lab.
"""
import socket
import sys

addr, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((addr, 53))
while True:
    data, peer = s.recvfrom(4096)
    with open(log, "a") as f:
        f.write("%s %r\n" % (peer[0], data))
    if len(data) >= 12:
        # Same id, QR=1, opcode and RD copied, RA=1, RCODE=3, no answers.
        flags = 0x8000 | (data[2] << 8 & 0x7900) | 0x0080 | 3
        reply = data[:2] + flags.to_bytes(2, "big") + data[4:6] + b"\0\0\0\0\0\0"
        s.sendto(reply + data[12:], peer)
