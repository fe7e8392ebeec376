#!/usr/bin/python3
"""dns_zone.py LOG ADDR...: the lab's DNS server, UDP and TCP port 53 on
every ADDR, answering the zone below and logging every query it receives.

It is the resolver slirp4netns forwards 10.0.2.3 to in the name filter's
tests (the test's private /etc/resolv.conf names it), so its log is the
record of every name that left the sandbox.  One line per query, written
before the answer is sent:

    <udp|tcp> <source address> <server address> <name> <type>

(the name lower-cased, without the final dot).  A datagram that is not a
DNS query is logged as `<proto> <source> <server> junk <repr>`.

The zone (everything under .test; nothing here is real):

  allowed.test        A 198.18.0.2   (netlab's hostA)
  other.test          A 198.18.0.3   (netlab's hostB)
  wild.test, *.wild.test (any depth)   A 198.18.0.4
  alias.test          CNAME edge.cdn.test.   edge.cdn.test  A 198.18.0.5
  move.test           A 198.18.0.6, .7, .8 in turn, one per query, TTL 1
  port.test           A 198.18.0.9   (TCP 8080 and 8081)
  blob.test           A 198.18.0.12  (TCP 9000: the benchmark's download)
  s<N>.scale.test     A 198.19.<N/256>.<N%256>  (N < 65536; no host there)
  <x>.priv.test       A an address no name may reach (private_answers.sh):
                      lo 127.0.0.1, meta 169.254.169.254, ali 100.100.100.200,
                      azure 168.63.129.16, gw 10.0.2.2, self 198.18.0.1 (the
                      test's own address on the lab's bridge)
  calias.priv.test    CNAME ali.priv.test.
  cmeta.priv.test     CNAME meta.priv.test. (name_filter.sh: a listed alias
                      whose target's answer the rebind guard empties)
  v6.priv.test        AAAA fd00:ec2::254 only
  anything else       NXDOMAIN

One AAAA record, allowed.test AAAA 2001:db8::2 (the documentation range:
nothing ever connects to it), so that a resolver that passes AAAA answers
on can be told from one that drops them; the lab itself is IPv4 only.
"""
import sys
import threading

from dnslib import AAAA, CNAME, QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSLogger, DNSServer

LOG = sys.argv[1]
ADDRS = sys.argv[2:]
TTL = 60
MOVE = ["198.18.0.6", "198.18.0.7", "198.18.0.8"]
_lock = threading.Lock()
_move_next = [0]

STATIC = {
    "allowed.test": "198.18.0.2",
    "other.test": "198.18.0.3",
    "wild.test": "198.18.0.4",
    "edge.cdn.test": "198.18.0.5",
    "port.test": "198.18.0.9",
    "blob.test": "198.18.0.12",
    "lo.priv.test": "127.0.0.1",
    "meta.priv.test": "169.254.169.254",
    "ali.priv.test": "100.100.100.200",
    "azure.priv.test": "168.63.129.16",
    "gw.priv.test": "10.0.2.2",
    "self.priv.test": "198.18.0.1",
}
# Names with a CNAME: alias -> target (the target's A record follows).
ALIASES = {
    "alias.test": "edge.cdn.test",
    "calias.priv.test": "ali.priv.test",
    "cmeta.priv.test": "meta.priv.test",
}


def address_of(name):
    """(address, ttl) for a name of the zone, or None."""
    if name in STATIC:
        return STATIC[name], TTL
    if name.endswith(".wild.test"):
        return "198.18.0.4", TTL
    if name == "move.test":
        with _lock:
            i = _move_next[0]
            _move_next[0] = (i + 1) % len(MOVE)
        return MOVE[i], 1
    if name.endswith(".scale.test") and name.startswith("s"):
        n = name[1:-len(".scale.test")]
        if n.isdigit() and int(n) < 65536:
            n = int(n)
            return "198.19.%d.%d" % (n >> 8, n & 255), TTL
    return None


class Zone(BaseResolver):
    def resolve(self, request, handler):
        reply = request.reply()
        q = request.q
        name = str(q.qname).rstrip(".").lower()
        if name in ALIASES:
            target = ALIASES[name]
            reply.add_answer(RR(q.qname, QTYPE.CNAME, ttl=TTL, rdata=CNAME(target + ".")))
            if q.qtype in (QTYPE.A, QTYPE.ANY):
                reply.add_answer(RR(target + ".", QTYPE.A, ttl=TTL, rdata=A(STATIC[target])))
            return reply
        if name == "v6.priv.test":
            if q.qtype == QTYPE.AAAA:
                reply.add_answer(RR(q.qname, QTYPE.AAAA, ttl=TTL, rdata=AAAA("fd00:ec2::254")))
            return reply
        found = address_of(name)
        if found is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif q.qtype in (QTYPE.A, QTYPE.ANY):
            reply.add_answer(RR(q.qname, QTYPE.A, ttl=found[1], rdata=A(found[0])))
        elif q.qtype == QTYPE.AAAA and name == "allowed.test":
            reply.add_answer(RR(q.qname, QTYPE.AAAA, ttl=TTL, rdata=AAAA("2001:db8::2")))
        # Any other type of a name that exists: NOERROR, no answer.
        return reply


class Log(DNSLogger):
    """Writes the query line before the answer goes out, so that a client
    that got an answer knows its query is in the log."""

    def __init__(self):
        # Only recv is ours: the others print to stdout, and DNSLogger
        # replaces every hook it is not told to keep with a no-op.
        super().__init__(log="recv")

    def _line(self, handler, text):
        with _lock, open(LOG, "a") as f:
            f.write("%s %s %s %s\n" % (handler.protocol, handler.client_address[0],
                                       handler.server.server_address[0], text))

    def log_recv(self, handler, data):
        try:
            q = DNSRecord.parse(data).q
            self._line(handler, "%s %s" % (str(q.qname).rstrip(".").lower(),
                                           QTYPE.get(q.qtype)))
        except Exception:  # noqa: BLE001 - anything unparsable is logged as it is
            self._line(handler, "junk %r" % bytes(data))


def main():
    servers = []
    for addr in ADDRS:
        for tcp in (False, True):
            s = DNSServer(Zone(), address=addr, port=53, tcp=tcp, logger=Log())
            s.start_thread()
            servers.append(s)
    threading.Event().wait()


main()
