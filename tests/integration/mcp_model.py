#!/usr/bin/env python3
"""mcp_model.py: a scripted stand-in for the Anthropic Messages API on
127.0.0.1, for driving Claude Code (`claude -p`) offline against kgate mcp.

Usage: mcp_model.py PORTFILE LOGFILE COMMAND...
Prints its port into PORTFILE.  A request that offers the tool
mcp__kgate__run is answered, turn by turn, with a tool_use of that tool
for each COMMAND in order, then with a text that quotes what the tools
returned.  Every tool_result the agent sends back is appended to LOGFILE
as one JSON line, which is what the test reads: what a model would have
seen.  Any other request (a title, a quota check) gets the text "ok"."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOGFILE, COMMANDS = sys.argv[1], sys.argv[2], sys.argv[3:]
TOOL = "mcp__kgate__run"


def tool_results(body):
    out = []
    for m in body.get("messages", []):
        if isinstance(m.get("content"), list):
            out += [c for c in m["content"] if c.get("type") == "tool_result"]
    return out


def text_of(result):
    c = result.get("content")
    if isinstance(c, str):
        return c
    return "".join(x.get("text", "") for x in (c or []) if isinstance(x, dict))


def answer(body):
    """The content blocks and stop reason of the next turn."""
    offered = any(t.get("name") == TOOL for t in body.get("tools", []) or [])
    done = tool_results(body)
    if not offered:
        return [{"type": "text", "text": "ok"}], "end_turn"
    if done:
        with open(LOGFILE, "a") as f:
            f.write(json.dumps({"is_error": done[-1].get("is_error", False),
                                "text": text_of(done[-1])}) + "\n")
    if len(done) < len(COMMANDS):
        return [{"type": "tool_use", "id": f"toolu_{len(done)}", "name": TOOL,
                 "input": {"command": COMMANDS[len(done)]}}], "tool_use"
    return [{"type": "text", "text": "all done"}], "end_turn"


def sse(blocks, stop):
    ev = [("message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": dict(b, input={})}))
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": json.dumps(b["input"])}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 1}}))
    ev.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {n}\ndata: {json.dumps(d)}\n\n" for n, d in ev).encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, ctype, data):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')

    def do_HEAD(self):
        self.reply(200, "text/plain", b"")

    def do_POST(self):
        n = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        if "count_tokens" in self.path:
            return self.reply(200, "application/json", b'{"input_tokens":10}')
        if not self.path.startswith("/v1/messages"):
            return self.do_GET()
        with open(LOGFILE + ".requests", "a") as f:
            f.write(json.dumps({"path": self.path, "tools": [t.get("name") for t in body.get("tools", []) or []],
                                "system": str(body.get("system"))[:300]}) + "\n")
        blocks, stop = answer(body)
        if body.get("stream"):
            return self.reply(200, "text/event-stream", sse(blocks, stop))
        msg = {"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
               "content": blocks, "stop_reason": stop, "stop_sequence": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}
        self.reply(200, "application/json", json.dumps(msg).encode())


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
