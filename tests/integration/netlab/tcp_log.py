#!/usr/bin/python3
"""tcp_log.py LOG ADDR:PORT...: listeners that log every connection.

Each connection to ADDR:PORT appends "<ADDR>:<PORT> <peer address>" to LOG
(before anything is sent), then gets the same line and is closed.  The
listeners stand where no name may lead (the host's loopback, its own
address, the metadata addresses): a line in LOG is a connection that got
there.
"""
import socket
import socketserver
import sys
import threading

LOG = sys.argv[1]
_lock = threading.Lock()


def handler_for(where):
    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            line = "%s %s\n" % (where, self.client_address[0])
            with _lock, open(LOG, "a") as f:
                f.write(line)
            try:
                self.request.sendall(line.encode())
            except OSError:
                pass
    return Handler


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


for spec in sys.argv[2:]:
    addr, _, port = spec.rpartition(":")
    srv = Server((addr, int(port)), handler_for(spec))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
threading.Event().wait()
