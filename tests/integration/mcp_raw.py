#!/usr/bin/env python3
"""mcp_raw.py: `kgate mcp` fed bytes no SDK would send.

Usage: mcp_raw.py KGATE [SERVER-ARG...]  (in the project).  Prints one
"ok - ..." or "not ok - ..." line per check.  After every hostile message a
ping must be answered: the server is still there and still in step.  Every
read is bounded (a hung server fails a check, never hangs the suite)."""
import json
import os
import select
import subprocess
import sys

failed = 0


def check(desc, cond, detail=None):
    global failed
    if cond:
        print(f"ok - {desc}")
    else:
        failed += 1
        print(f"not ok - {desc}")
        if detail is not None:
            print(f"# {str(detail)[:1500]}")
    sys.stdout.flush()


srv = subprocess.Popen([sys.argv[1], "mcp", *sys.argv[2:]], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
buf = b""


def send(raw):
    srv.stdin.write(raw)
    srv.stdin.flush()


def recv(secs=60):
    """The next message from the server, or None after secs without one."""
    global buf
    while b"\n" not in buf:
        r, _, _ = select.select([srv.stdout], [], [], secs)
        if not r:
            return None
        chunk = os.read(srv.stdout.fileno(), 1 << 20)
        if not chunk:
            return None
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return json.loads(line)


def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m).encode() + b"\n"


ping_n = 1000


def alive(after):
    global ping_n
    ping_n += 1
    send(req(ping_n, "ping"))
    r = recv()
    check(f"answers a ping after {after}", r == {"jsonrpc": "2.0", "id": ping_n, "result": {}}, r)


def error_of(raw, code, desc, want_id=None):
    send(raw)
    r = recv()
    ok = r is not None and r.get("error", {}).get("code") == code and r.get("id") == want_id
    check(f"{desc}: error {code}", ok, r)
    alive(desc)
    return r


send(req(1, "initialize", {"protocolVersion": "2099-01-01", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}))
r = recv()
check("initialize: an unknown version gets the newest supported",
      r and r["result"]["protocolVersion"] == "2025-11-25", r)
send(req(2, "initialize", {"protocolVersion": "2025-06-18"}))
r = recv()
check("initialize: a supported version is answered as asked",
      r and r["result"]["protocolVersion"] == "2025-06-18", r)
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
alive("a notification (no answer to it)")

error_of(b"this is not json\n", -32700, "malformed JSON")
error_of(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"\n', -32700, "a cut-short object")
error_of(req(4, "no/such/method"), -32601, "unknown method", 4)
error_of(b'{"jsonrpc":"2.0","id":"s5","method":"bogus"}\n', -32601, "string id kept", "s5")
error_of(b'[{"jsonrpc":"2.0","id":6,"method":"ping"}]\n', -32600, "a batch")
error_of(b'{"jsonrpc":"1.0","id":7,"method":"ping"}\n', -32600, "wrong jsonrpc", 7)
error_of(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600, "an object as id")
error_of(b'{"jsonrpc":"2.0","id":8,"method":5}\n', -32600, "a number as method", 8)
error_of(b'{"jsonrpc":"2.0","id":9,"id":10,"method":"ping"}\n', -32700, "a key given twice")
error_of(b"[" * 100000 + b"]" * 100000 + b"\n", -32700, "nesting 100000 deep")
error_of(b'{"jsonrpc":"2.0","id":11,"method":"ping\xff\xfe"}\n', -32700, "invalid UTF-8")
error_of(b'{"jsonrpc":"2.0","id":12,"method":"pi\x00ng"}\n', -32700, "a raw NUL byte")
error_of(b'{"jsonrpc":"2.0","id":13,"method":"ping","params":"x"}\n', -32600, "params a string", 13)
error_of(req(14, "initialize", {}), -32602, "initialize without a version", 14)


def call(i, args, name="run"):
    return req(i, "tools/call", {"name": name, "arguments": args})


for i, (args, what) in enumerate([
        ({"command": 5}, "command a number"),
        ({}, "no command"),
        ({"command": "echo x", "timeout_ms": "10"}, "timeout_ms a string"),
        ({"command": "echo x", "timeout_ms": 1.5}, "timeout_ms not whole"),
        ({"command": "echo x", "timeout_ms": 0}, "timeout_ms zero"),
        ({"command": "echo x", "timeout_ms": 1e300}, "timeout_ms huge"),
        ({"command": "echo x", "cwd": ["sub"]}, "cwd an array"),
        ({"command": "echo x", "env": {"A": "1"}}, "an argument not in the schema"),
        ({"command": "echo NUL-RAN\u0000; touch nul-ran"}, "a NUL escape in the command"),
        ({"command": "echo x", "cwd": "sub\u0000/.."}, "a NUL escape in cwd")]):
    error_of(call(20 + i, args), -32602, f"run: {what}", 20 + i)
check("a command with a NUL escape did not run", not os.path.exists("nul-ran"))
error_of(req(40, "tools/call", {"name": 7}), -32602, "tools/call: a number as name", 40)
error_of(req(41, "tools/call", {"name": "run", "arguments": "echo x"}), -32602,
         "tools/call: arguments a string", 41)
error_of(req(42, "tools/call", {"name": "rm -rf"}), -32602, "tools/call: unknown tool", 42)

# A 1 MiB command: longer than one argument can be; a tool error, nothing runs.
send(call(50, {"command": "touch big-ran; : " + "a" * (1 << 20)}))
r = recv()
res = (r or {}).get("result", {})
check("run: a 1 MiB command is a tool error", res.get("isError") is True and
      "at most 131071" in res["content"][0]["text"], r)
check("run: the 1 MiB command did not run", not os.path.exists("big-ran"))
alive("a 1 MiB command")
# The longest command that fits runs (the control of the one above).
send(call(51, {"command": "touch fit-ran; : " + "a" * (131071 - 17)}))
r = recv()
check("run: a 131071-byte command runs", (r or {}).get("result", {}).get(
    "structuredContent", {}).get("exit_status") == 0 and os.path.exists("fit-ran"), r)
# A message past the 4 MiB line bound: refused unread, id null.
error_of(b'{"jsonrpc":"2.0","id":52,"method":"ping","params":{"x":"' + b"b" * (5 << 20)
         + b'"}}\n', -32600, "a 5 MiB message")
# Invalid UTF-8 from the program: the answer is still JSON.
send(call(53, {"command": "printf 'a\\377b\\000c'"}))
r = recv()
out = (r or {}).get("result", {}).get("structuredContent", {}).get("stdout")
check("run: bytes that are not UTF-8 come back escaped", out == "a\udcffb\x00c", repr(out))
alive("output that is not UTF-8")
# Several messages in one write, answered in order.
send(req(60, "ping") + req(61, "tools/list") + req(62, "ping"))
ids = [(recv() or {}).get("id") for _ in range(3)]
check("three messages in one write, answered in order", ids == [60, 61, 62], ids)
# Messages that arrive while a run goes on wait for it, then are answered
# in order (the server reads them during the run into its buffer).
send(call(63, {"command": "sleep 1; echo slow"}) + req(64, "ping"))
send(req(65, "ping") + b'{"jsonrpc":"2.0","id":66,"method":"ping"')
send(b"}\n")
ids = [(recv() or {}).get("id") for _ in range(4)]
check("messages sent during a run are answered after it, in order", ids == [63, 64, 65, 66], ids)
# A response from the client (nothing to answer) and an unknown notification.
send(b'{"jsonrpc":"2.0","id":99,"result":{}}\n{"jsonrpc":"2.0","method":"x/y"}\n')
alive("a client's response and an unknown notification")

srv.stdin.close()
try:
    rc = srv.wait(timeout=60)
except subprocess.TimeoutExpired:
    srv.kill()
    rc = "hung"
check("end of input: the server exits 0", rc == 0, rc)
print(f"# raw done, {failed} failed")
