#!/usr/bin/env python3
"""A stand-in language server that records what a client sends in ``initialize``.

    python tests/editors/record_capabilities.py OUT.json

Point an editor at it (as the server command for Python files); it writes
``{"clientInfo": ..., "capabilities": ...}`` (the shape of pytest-lsp's client profiles) to
OUT.json, answers ``initialize`` with empty capabilities and ``shutdown``, and exits on
``exit`` or when its input ends. This is how ``tests/lsp/profiles/*.json`` were recorded.
Standard library only.
"""
import json
import sys


def read_message(stream):
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    if length is None:
        return None
    return json.loads(stream.read(length))


def send(stream, obj):
    body = json.dumps(obj).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def main(out_path):
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        msg = read_message(inp)
        if msg is None:
            return 0
        method = msg.get("method")
        if method == "initialize":
            params = msg.get("params") or {}
            with open(out_path, "w", encoding="utf-8") as fh:
                json.dump({"clientInfo": params.get("clientInfo"), "capabilities": params.get("capabilities")},
                          fh, indent=2, sort_keys=True)
                fh.write("\n")
            send(out, {"jsonrpc": "2.0", "id": msg["id"],
                       "result": {"capabilities": {}, "serverInfo": {"name": "capability-recorder"}}})
        elif method == "shutdown":
            send(out, {"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "exit":
            return 0
        elif "id" in msg and method is not None:
            send(out, {"jsonrpc": "2.0", "id": msg["id"], "result": None})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
