"""``gradwarden serve`` on stdio: a light front that answers ``initialize`` at once, while the
main thread imports the pygls server (lsprotocol alone takes about half a second of CPU), then
hands the stream over to pygls. Stdlib only.

How the hand-over stays clean:

- one thread (the front's) reads stdin, from the first byte to the last; pygls reads what the
  front passes on through ``PipeInput`` (``readline`` / ``read``, what pygls' stdio loop
  calls), so no byte is read twice or lost;
- ``initialize`` is answered from ``initialize_answer.answer_for`` (the same answer pygls
  builds: tests/lsp/test_initialize_answer.py), and the request is still passed on: pygls
  reads the client's capabilities, runs the server's ``initialize`` handler, and drops its own
  answer (``GradwardenProtocol.preanswered``), comparing it with the front's;
- every message that arrives before the hand-over waits in ``PipeInput`` in its order, and
  pygls handles it as usual afterwards; only ``shutdown`` and ``exit`` are handled by the front
  before the hand-over (a client that closes at once does not wait for the import: the
  requests still waiting are answered as cancelled);
- an import failure is said on stderr and to the client (``window/showMessage``), every request
  is answered with that error, and ``shutdown`` / ``exit`` still work.

All writes to stdout before the hand-over happen under the front's lock, and pygls writes only
after it: the two never interleave.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Tuple

from gradwarden.lsp.initialize_answer import answer_for, answerable

# pygls' own header rule (pygls.io_.run_async): the first matching line sets the length.
CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")
CONTENT_TYPE = "application/vscode-jsonrpc; charset=utf-8"  # what pygls sends

REQUEST_CANCELLED = -32800
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
MESSAGE_TYPE_ERROR = 1

FRONT, HANDED_OVER, SHUT_DOWN, FAILED = "front", "handed over", "shut down", "failed"


def read_frame(stream: BinaryIO) -> Optional[Tuple[bytes, Any]]:
    """(the frame's bytes as read, its JSON or None when unreadable); None at end of input.
    Header lines are read as pygls reads them, so that both see the same frames."""
    raw: List[bytes] = []
    length = 0
    while True:
        line = stream.readline()
        if not line:
            return None
        raw.append(line)
        if not length:
            match = CONTENT_LENGTH.fullmatch(line)
            if match:
                length = int(match.group(1))
        if length and not line.strip():
            break
    body = stream.read(length)
    raw.append(body)
    if len(body) < length:
        return None
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    return b"".join(raw), message


def frame(message: Dict[str, Any]) -> bytes:
    body = json.dumps(message)  # ASCII (ensure_ascii), so characters == bytes, as pygls counts
    return f"Content-Length: {len(body)}\r\nContent-Type: {CONTENT_TYPE}\r\n\r\n{body}".encode("utf-8")


class PipeInput:
    """What pygls reads after the hand-over: the bytes the front passed on, in order, then the
    end of input once the front saw it. ``readline`` and ``read`` block like a pipe's."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._closed = False
        self._ready = threading.Condition()

    def feed(self, data: bytes) -> None:
        with self._ready:
            self._data += data
            self._ready.notify_all()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def readline(self) -> bytes:
        with self._ready:
            while True:
                end = self._data.find(b"\n")
                if end >= 0:
                    return self._take(end + 1)
                if self._closed:
                    return self._take(len(self._data))
                self._ready.wait()

    def read(self, n: int = -1) -> bytes:
        with self._ready:
            while not self._closed and (n < 0 or len(self._data) < n):
                self._ready.wait()
            return self._take(len(self._data) if n < 0 else min(n, len(self._data)))

    def _take(self, n: int) -> bytes:
        out = bytes(self._data[:n])
        del self._data[:n]
        return out


class Front:
    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, stderr=None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.input = PipeInput()
        self.state = FRONT
        self.lock = threading.Lock()
        self.first = True
        self.preanswered: Optional[Tuple[Any, Dict[str, Any]]] = None  # (id, result) sent for initialize
        self.waiting: List[Any] = []  # ids of the requests passed on before the hand-over
        self.shutdown_answered = False
        self.failure = ""
        self.thread = threading.Thread(target=self._run, name="gradwarden-front", daemon=True)

    # ------------------------------------------------------------------ the main thread's side
    def start(self) -> None:
        self.thread.start()

    def hand_over(self) -> bool:
        """Called once pygls is ready: from now on every message goes to ``self.input``.
        False when the front has already shut down (nothing to hand over)."""
        with self.lock:
            if self.state != FRONT:
                return False
            self.state = HANDED_OVER
            self.waiting.clear()
            return True

    def fail(self, reason: str) -> None:
        """The server could not be imported: say so, and answer every request with it."""
        print(f"gradwarden serve: {reason}", file=self.stderr, flush=True)
        with self.lock:
            self.failure = reason
            if self.state == FRONT:
                self.state = FAILED
                self._send({"jsonrpc": "2.0", "method": "window/showMessage",
                            "params": {"type": MESSAGE_TYPE_ERROR, "message": f"gradwarden: {reason}"}})
                for msg_id in self.waiting:
                    self._answer_error(msg_id, INTERNAL_ERROR, reason)
            self.waiting.clear()

    def wait(self) -> None:
        """Until the front leaves (``exit``, or the end of input): it ends the process."""
        self.thread.join()

    # ------------------------------------------------------------------ the front's thread
    def _run(self) -> None:
        try:
            while True:
                got = read_frame(self.stdin)
                with self.lock:
                    if got is None:
                        if self.state != HANDED_OVER:
                            self._leave(0 if self.shutdown_answered or self.state == FRONT else 1)
                        break
                    raw, message = got
                    if self.state == HANDED_OVER:
                        self.input.feed(raw)
                        break
                    self._before_hand_over(raw, message)
            if got is not None:
                self._forward()
        except Exception:  # noqa: BLE001 - a bug of ours: said on stderr; pygls then sees the end of input
            import traceback

            traceback.print_exc(file=self.stderr)
        finally:
            self.input.close()

    def _forward(self) -> None:
        """After the hand-over: pass bytes on as they come (pygls frames them)."""
        read = getattr(self.stdin, "read1", None) or self.stdin.read
        while True:
            data = read(65536)
            if not data:
                return
            self.input.feed(data)

    def _before_hand_over(self, raw: bytes, message: Any) -> None:
        first, self.first = self.first, False
        method = message.get("method") if isinstance(message, dict) else None
        is_request = isinstance(message, dict) and "id" in message and method is not None
        if method == "exit":
            self._leave(0 if self.shutdown_answered else 1)
        if self.state == FAILED or self.state == SHUT_DOWN:
            if is_request and method == "shutdown":
                self.shutdown_answered = True
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif is_request and self.state == FAILED:
                self._answer_error(message["id"], INTERNAL_ERROR, self.failure)
            elif is_request:
                self._answer_error(message["id"], INVALID_REQUEST, "the server is shutting down")
            return
        if is_request and method == "shutdown":
            for msg_id in self.waiting:
                self._answer_error(msg_id, REQUEST_CANCELLED, "the server is shutting down")
            self.waiting.clear()
            self.state = SHUT_DOWN
            self.shutdown_answered = True
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            return
        self.input.feed(raw)
        if first and is_request and method == "initialize" and answerable(message.get("params")):
            result = answer_for(message["params"])
            self.preanswered = (message["id"], result)
            self._send({"id": message["id"], "jsonrpc": "2.0", "result": result})
        elif is_request:
            self.waiting.append(message["id"])

    def _answer_error(self, msg_id: Any, code: int, text: str) -> None:
        self._send({"id": msg_id, "jsonrpc": "2.0", "error": {"code": code, "message": text}})

    def _send(self, message: Dict[str, Any]) -> None:
        try:
            self.stdout.write(frame(message))
            self.stdout.flush()
        except (BrokenPipeError, ValueError, OSError):
            self._leave(1)  # the client is gone

    def _leave(self, code: int) -> None:
        try:
            self.stdout.flush()
            self.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)


def serve_stdio(load_server: Callable[[], Callable[..., int]]) -> int:
    """``gradwarden serve`` on stdin/stdout (see the module's docstring). ``load_server``
    imports pygls and builds the server (lsp/cli.py: only the command line imports server.py);
    what it returns serves, given ``stdin=`` (what pygls reads) and ``preanswered=``."""
    front = Front(sys.stdin.buffer, sys.stdout.buffer)
    # The front needs the GIL for a moment while the import holds it: switch threads sooner.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0005))
    front.start()
    try:
        run = load_server()
    except Exception as exc:  # noqa: BLE001 - said to the user and the client; the front keeps answering
        import traceback

        traceback.print_exc(file=sys.stderr)
        front.fail(f"the language server could not start: {type(exc).__name__}: {exc} "
                   f"(is gradwarden installed with its server dependencies, pygls and lsprotocol?)")
        front.wait()
        return 1
    finally:
        sys.setswitchinterval(interval)
    if not front.hand_over():
        front.wait()  # shut down before pygls was ready: the front ends the process on exit
        return 0
    return run(stdin=front.input, preanswered=front.preanswered)
