#!/usr/bin/env python3
"""agent_model.py: a scripted model server on 127.0.0.1 for the agents'
end-to-end tests (agents.sh).  It speaks just enough of each agent's model
API to make the agent call its shell tool with the commands of a script,
one per turn, and then answer with text.

    agent_model.py API PORTFILE SCRIPT LOG

API is claude (the Messages API, streamed as server-sent events), gemini
(generateContent / streamGenerateContent) or codex (the Responses API,
streamed).  SCRIPT is a JSON list of shell commands.  The port it listens
on is written to PORTFILE.  Every tool result the agent sends back is
appended to LOG as one JSON line {"n": N, "result": TEXT}: what the model
saw of each command.  Nothing here times anything: the server answers
each request as it comes.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API, PORTFILE, SCRIPT, LOG = sys.argv[1:5]
COMMANDS = json.load(open(SCRIPT))


def log_results(results):
    """Appends the tool results not logged yet (a request repeats the
    whole conversation, so only those past what the log holds)."""
    try:
        seen = sum(1 for _ in open(LOG))
    except FileNotFoundError:
        seen = 0
    with open(LOG, "a") as f:
        for n, text in enumerate(results):
            if n >= seen:
                f.write(json.dumps({"n": n, "result": text}) + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c.get("text", c.get("content", ""))) if isinstance(c, dict)
                         else str(c) for c in content)
    return json.dumps(content)


# ---- Claude: the Messages API ----

def claude_results(body):
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            for c in m["content"]:
                if c.get("type") == "tool_result":
                    out.append(text_of(c.get("content", "")))
    return out


def claude_events(body):
    tools = [t.get("name") for t in body.get("tools", [])]
    results = claude_results(body)
    if "Bash" in tools:
        log_results(results)
    if "Bash" in tools and len(results) < len(COMMANDS):
        n = len(results)
        block = {"type": "tool_use", "id": "toolu_%02d" % n, "name": "Bash", "input": {}}
        delta = {"type": "input_json_delta",
                 "partial_json": json.dumps({"command": COMMANDS[n], "description": "step %d" % n})}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": "done"}
        stop = "end_turn"
    msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"),
           "content": [], "stop_reason": None, "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
    return [("message_start", {"type": "message_start", "message": msg}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"})], block, delta, stop, msg


def claude(handler, body):
    events, block, delta, stop, msg = claude_events(body)
    if body.get("stream"):
        handler.sse([(e, d) for e, d in events])
        return
    if block["type"] == "tool_use":
        block = dict(block, input=json.loads(delta["partial_json"]))
    else:
        block = dict(block, text=delta["text"])
    handler.json(dict(msg, content=[block], stop_reason=stop))


# ---- Gemini: generateContent ----

def gemini(handler, body, stream):
    results = []
    for c in body.get("contents", []):
        for p in c.get("parts", []):
            if "functionResponse" in p:
                results.append(text_of(p["functionResponse"].get("response", {}).get("output", p["functionResponse"].get("response"))))
    decls = [d.get("name") for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
    if "run_shell_command" in decls:
        log_results(results)
    json_wanted = body.get("generationConfig", {}).get("responseMimeType") == "application/json"
    if "run_shell_command" in decls and len(results) < len(COMMANDS):
        part = {"functionCall": {"name": "run_shell_command",
                                 "args": {"command": COMMANDS[len(results)], "description": "step"}}}
    else:
        # A side request (routing, a summary) that wants JSON gets some.
        part = {"text": "{}" if json_wanted else "done"}
    resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
    if stream:
        handler.sse([(None, resp)])
    else:
        handler.json(resp)


# ---- Codex: the Responses API, streamed ----

def codex(handler, body):
    results = []
    for item in body.get("input", []):
        if item.get("type") == "function_call_output":
            out = item.get("output")
            results.append(out if isinstance(out, str) else text_of(out))
    names = [t.get("name") for t in body.get("tools", [])]
    if "exec_command" in names:
        log_results(results)
    resp = {"id": "resp_%d" % len(results), "object": "response", "status": "completed", "output": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}
    if "exec_command" in names and len(results) < len(COMMANDS):
        item = {"type": "function_call", "id": "fc_%d" % len(results), "call_id": "call_%d" % len(results),
                "name": "exec_command", "arguments": json.dumps({"cmd": COMMANDS[len(results)]}),
                "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_%d" % len(results), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "done", "annotations": []}]}
    handler.sse([("response.created", {"type": "response.created", "response": dict(resp, status="in_progress")}),
                 ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
                 ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                 ("response.completed", {"type": "response.completed", "response": dict(resp, output=[item])})])


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def sse(self, events):
        out = b""
        for e, d in events:
            if e:
                out += b"event: " + e.encode() + b"\n"
            out += b"data: " + json.dumps(d).encode() + b"\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def json(self, obj, code=200):
        out = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self.json({"data": [], "models": []})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        # What was asked, on stderr: the suites keep it for a failure's log.
        sys.stderr.write("%s %s\n" % (path, json.dumps(body)[:300]))
        sys.stderr.flush()
        if API == "claude" and path.endswith("/v1/messages"):
            claude(self, body)
        elif API == "claude" and path.endswith("/count_tokens"):
            self.json({"input_tokens": 1})
        elif API == "gemini" and ":streamGenerateContent" in path:
            gemini(self, body, True)
        elif API == "gemini" and ":generateContent" in path:
            gemini(self, body, False)
        elif API == "codex" and path.endswith("/responses"):
            codex(self, body)
        elif API == "gemini" and ":countTokens" in path:
            self.json({"totalTokens": 1})
        else:
            self.json({})


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
