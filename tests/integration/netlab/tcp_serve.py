#!/usr/bin/python3
"""tcp_serve.py ADDR PORT...: a lab host's TCP service.

On each PORT, every connection gets one line, "<ADDR>:<PORT>\\n", and is
closed: a client that reads it knows which host it reached.  A PORT
written as PORT=BYTES instead sends BYTES zero bytes and closes (the
download of the throughput benchmark).
"""
import socket
import socketserver
import sys
import threading

ADDR = sys.argv[1]
CHUNK = bytes(1 << 20)


def handler_for(port, size):
    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            try:
                if size is None:
                    self.request.sendall(("%s:%d\n" % (ADDR, port)).encode())
                    return
                left = size
                while left > 0:
                    n = min(left, len(CHUNK))
                    self.request.sendall(CHUNK[:n])
                    left -= n
                self.request.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    return Handler


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


for spec in sys.argv[2:]:
    port, _, size = spec.partition("=")
    srv = Server((ADDR, int(port)), handler_for(int(port), int(size) if size else None))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
threading.Event().wait()
