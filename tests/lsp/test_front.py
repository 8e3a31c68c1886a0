"""``gradwarden serve``'s start-up front (server/gradwarden/lsp/front.py): it answers
``initialize`` while pygls is imported, then hands the stream over. The server runs as a
subprocess whose import of lsprotocol is held until the test creates a file (the gate), so
that "before the hand-over" is a fact of the test, not a race; and then fails, for "fail".
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest

from gradwarden.lsp.front import PipeInput, read_frame

HELD_SERVER = textwrap.dedent("""
    import os, sys, time

    class Hold:
        def find_spec(self, name, path=None, target=None):
            if name == "lsprotocol":
                while not os.path.exists(sys.argv[2]):
                    time.sleep(0.01)
                if sys.argv[1] == "fail":
                    raise ImportError("no module named lsprotocol (blocked by the test)")
            return None

    sys.meta_path.insert(0, Hold())
    from gradwarden.cli import main
    sys.exit(main(["serve", "--workers", "0"]))
""")

HAZARD = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.sigmoid()\ny.mul_(2)\ny.sum().backward()\n"


def _frame(message: Dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, tmp_path: Path, mode: str) -> None:
        self.gate = tmp_path / "gate"
        self.proc = subprocess.Popen([sys.executable, "-c", HELD_SERVER, mode, str(self.gate)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        self.received: List[Dict[str, Any]] = []

    def send(self, message: Dict[str, Any]) -> None:
        self.proc.stdin.write(_frame(message))
        self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, **({} if params is None else {"params": params})})

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})})

    def read(self) -> Dict[str, Any]:
        got = read_frame(self.proc.stdout)
        assert got is not None, "the server closed its output: " + self.proc.stderr.read().decode()[-2000:]
        self.received.append(got[1])
        return got[1]

    def answer(self, msg_id: int) -> Dict[str, Any]:
        while True:
            message = self.read()
            if message.get("id") == msg_id and "method" not in message:
                return message

    def initialize(self, capabilities: Any = None) -> Dict[str, Any]:
        self.request(1, "initialize", {"processId": None, "rootUri": None,
                                       "capabilities": {} if capabilities is None else capabilities})
        return self.answer(1)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass


@pytest.fixture
def held(tmp_path):
    server = Server(tmp_path, "gate")
    yield server
    server.close()


@pytest.fixture
def failing(tmp_path):
    server = Server(tmp_path, "fail")
    yield server
    server.close()


def _open(server: Server, path: Path) -> str:
    path.write_text(HAZARD)
    uri = path.as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": HAZARD}})
    return uri


def test_messages_sent_before_the_hand_over_wait_and_are_all_handled_in_order(held, tmp_path):
    result = held.initialize()["result"]
    assert result["serverInfo"]["name"] == "gradwarden" and "diagnosticProvider" not in result["capabilities"]
    held.notify("initialized", {})
    uri = _open(held, tmp_path / "hazard.py")
    held.request(2, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}})
    held.request(3, "workspace/executeCommand", {"command": "gradwarden.serverStatus", "arguments": []})
    held.gate.touch()  # pygls may be imported now
    status = held.answer(3)["result"]
    assert status["torch_imported"] is False and status["diagnostics"] == "push"
    answered = [m["id"] for m in held.received if "id" in m and "method" not in m]
    assert answered == [1, 2, 3]  # initialize answered once (pygls' own answer is not sent again)
    while True:  # the document opened before the hand-over is analysed
        message = held.read()
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["diagnostics"]:
            break
    assert message["params"]["uri"] == uri
    assert "GW201" in {d["code"] for d in message["params"]["diagnostics"]}
    held.request(4, "shutdown")
    assert held.answer(4)["result"] is None
    held.notify("exit")
    assert held.proc.wait(60) == 0


def test_the_front_answers_as_the_client_asks(held):
    caps = {"general": {"positionEncodings": ["utf-8"]}, "textDocument": {"diagnostic": {}},
            "notebookDocument": {"synchronization": {}}}
    result = held.initialize(caps)["result"]
    assert result["capabilities"]["positionEncoding"] == "utf-8"
    assert result["capabilities"]["diagnosticProvider"]["identifier"] == "gradwarden"
    assert "notebookDocumentSync" in result["capabilities"]
    held.gate.touch()
    held.request(2, "workspace/executeCommand", {"command": "gradwarden.serverStatus", "arguments": []})
    status = held.answer(2)["result"]
    assert status["diagnostics"] == "pull" and status["encoding"] == "utf-8"  # pygls agrees


def test_shutdown_and_exit_before_the_hand_over(held, tmp_path):
    held.initialize()
    uri = _open(held, tmp_path / "hazard.py")
    held.request(2, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}})
    held.request(3, "shutdown")
    hover = held.answer(2)
    assert hover["error"]["code"] == -32800  # cancelled: the server is shutting down
    assert held.answer(3)["result"] is None
    held.request(4, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert held.answer(4)["error"]["code"] == -32600  # after shutdown
    held.notify("exit")
    assert held.proc.wait(60) == 0  # while the import is still held: the front ends the process
    assert not held.gate.exists()


def test_exit_without_shutdown_before_the_hand_over(held):
    held.initialize()
    held.notify("exit")
    assert held.proc.wait(60) == 1


def test_the_end_of_input_before_the_hand_over_ends_the_server(held):
    held.initialize()
    held.proc.stdin.close()
    assert held.proc.wait(60) == 0


def test_params_the_front_cannot_read_are_answered_by_pygls_once(held):
    held.request(1, "initialize", {"processId": None, "capabilities": {"general": 3}})
    held.gate.touch()
    first = held.answer(1)
    assert first["error"]["code"] == -32602  # pygls: invalid params
    held.request(2, "shutdown")
    held.answer(2)
    assert [m.get("id") for m in held.received if "method" not in m] == [1, 2]


def test_an_import_failure_is_said_and_the_server_still_answers(failing):
    assert "capabilities" in failing.initialize()["result"]
    failing.gate.touch()
    shown = failing.read()
    while shown.get("method") != "window/showMessage":
        shown = failing.read()
    assert shown["params"]["type"] == 1
    assert "could not start" in shown["params"]["message"] and "lsprotocol" in shown["params"]["message"]
    failing.request(2, "textDocument/hover", {"textDocument": {"uri": "file:///x.py"},
                                              "position": {"line": 0, "character": 0}})
    error = failing.answer(2)["error"]
    assert error["code"] == -32603 and "could not start" in error["message"]
    failing.request(3, "shutdown")
    assert failing.answer(3)["result"] is None
    failing.notify("exit")
    assert failing.proc.wait(60) == 0
    stderr = failing.proc.stderr.read().decode()
    assert "gradwarden serve: the language server could not start: ImportError" in stderr


# --------------------------------------------------------------------------- the pieces
def test_pipe_input_reads_like_a_pipe():
    pipe = PipeInput()
    got: List[bytes] = []
    reader = threading.Thread(target=lambda: got.extend([pipe.readline(), pipe.read(5), pipe.read(4), pipe.readline()]))
    reader.start()
    pipe.feed(b"Content-Le")
    pipe.feed(b"ngth: 5\r\n\r\nab")
    pipe.feed(b"cde12")
    pipe.close()
    reader.join(60)
    assert got == [b"Content-Length: 5\r\n", b"\r\nabc", b"de12", b""]


def test_read_frame_reads_what_pygls_reads(tmp_path):
    raw = (b"Content-Type: x\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}"
           b"Content-Length: 3\r\n\r\n{x}")
    path = tmp_path / "in"
    path.write_bytes(raw)
    with open(path, "rb") as stream:
        first = read_frame(stream)
        second = read_frame(stream)
        assert read_frame(stream) is None
    assert first == (raw[:raw.index(b"{}") + 2], {})  # the first Content-Length counts, as in pygls
    assert second is not None and second[1] is None  # unreadable JSON: passed on as it came


def test_params_pygls_cannot_read_after_the_front_answered_are_said(held):
    """The front reads only what its answer depends on; when pygls then rejects the request,
    its error is not sent as a second answer: the user is told instead."""
    held.request(1, "initialize", {"processId": None, "capabilities": {}, "workspaceFolders": "not a list"})
    assert "capabilities" in held.answer(1)["result"]
    held.gate.touch()
    shown = held.read()
    while shown.get("method") != "window/showMessage":
        shown = held.read()
    assert shown["params"]["type"] == 1 and "initialize request could not be read" in shown["params"]["message"]
    held.request(2, "shutdown")
    held.answer(2)
    assert [m.get("id") for m in held.received if "method" not in m] == [1, 2]
