"""The answer the start-up front sends to ``initialize`` (``initialize_answer.answer_for``, no
pygls) is pygls' own answer, built from the handlers server.py registers, byte for byte: for
every client profile the tests use, and the settings and capabilities the answer depends on
(position encodings, notebooks, pull diagnostics and ``diagnosticMode``)."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import pytest
from lsprotocol.converters import get_converter

from gradwarden.lsp import initialize_answer
from gradwarden.lsp.initialize_answer import CAPABILITIES, answer_for, answerable
from gradwarden.lsp.server import create_server
from lsp_fixtures import ALL_PROFILES, profile


class _Capture:
    def __init__(self) -> None:
        self.frames: List[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)

    def close(self) -> None:
        pass


def pygls_answer(params: Dict[str, Any]) -> Dict[str, Any]:
    """The ``initialize`` answer of the real server (pygls builds it; in threads, no workers)."""
    ls = create_server()
    ls.workers_override = 0
    capture = _Capture()
    ls.protocol.set_writer(capture)

    async def handle() -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        ls.protocol.handle_message(json.loads(body, object_hook=ls.protocol.structure_message))
        for _ in range(10):
            await asyncio.sleep(0)

    try:
        asyncio.run(handle())
    finally:
        if ls.pool is not None:
            ls.pool.close_now()
    answers = [json.loads(f.split(b"\r\n\r\n", 1)[1]) for f in capture.frames]
    answers = [a for a in answers if a.get("id") == 1]
    assert len(answers) == 1, capture.frames
    return answers[0]["result"]


def profile_capabilities(name: str) -> Dict[str, Any]:
    return get_converter().unstructure(profile(name))


OPTIONS = [None, {"diagnosticMode": "push"}, {"diagnosticMode": "pull"}, {"gradwarden": {"diagnostic_mode": "push"}},
           {"settings": {"gradwarden": {"diagnostic-mode": "push"}}}, {"diagnosticMode": "sometimes"},
           {"diagnosticMode": "push", "diagnosticmode": "auto"}, {"diagnosticMode": ["push"]}]


@pytest.mark.parametrize("name", ALL_PROFILES)
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: json.dumps(o))
def test_the_front_answers_initialize_as_pygls_does_for_every_profile(name, options):
    params = {"processId": 1, "rootUri": None, "capabilities": profile_capabilities(name),
              "initializationOptions": options}
    assert answerable(params)
    # json.dumps keeps key order: the same bytes on the wire, not only equal objects.
    assert json.dumps(answer_for(params)) == json.dumps(pygls_answer(params)), (
        "initialize_answer.CAPABILITIES is out of date; pygls answers, for a client with notebooks and "
        "pull diagnostics:\n" + json.dumps(pygls_answer(FULL_CLIENT)["capabilities"]))


FULL_CLIENT = {"processId": None, "rootUri": None, "capabilities": initialize_answer.FULL_CLIENT}


@pytest.mark.parametrize("capabilities", [
    {},
    {"general": {"positionEncodings": ["utf-32", "utf-8"]}},
    {"general": {"positionEncodings": ["utf-7", "utf-8"]}},
    {"general": {"positionEncodings": ["utf-7"]}},
    {"general": {"positionEncodings": []}},
    {"general": {}},
    {"notebookDocument": {"synchronization": {}}},
    {"textDocument": {"diagnostic": {}}},
    {"textDocument": {"diagnostic": None}},
    {"textDocument": {}},
    {"textDocument": {"synchronization": {"willSave": False}}},
    {"textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": False}}},
    {"textDocument": {"synchronization": {"didSave": True}}},
    FULL_CLIENT["capabilities"],
], ids=lambda c: json.dumps(c))
def test_the_front_follows_what_the_answer_depends_on(capabilities):
    params = {"processId": None, "rootUri": None, "capabilities": capabilities}
    assert json.dumps(answer_for(params)) == json.dumps(pygls_answer(params))


def test_the_stored_capabilities_are_pygls_answer_for_a_full_client():
    assert pygls_answer(FULL_CLIENT)["capabilities"] == CAPABILITIES


@pytest.mark.parametrize("params", [None, [], {"processId": None}, {"capabilities": None},
                                    {"capabilities": {"general": {"positionEncodings": [8]}}},
                                    {"capabilities": {"general": {"positionEncodings": "utf-8"}}},
                                    {"capabilities": {"general": 3}},
                                    {"capabilities": {"textDocument": {"synchronization": {"willSave": "yes"}}}},
                                    {"capabilities": {"textDocument": []}}])
def test_params_the_front_leaves_to_pygls(params):
    assert not answerable(params)


def test_the_server_drops_its_own_answer_and_says_when_it_differs(caplog):
    """After the front answered, pygls' answer is not sent again; a difference between the two
    (initialize_answer.py out of date) is logged as an error."""
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    for sent, differs in ((answer_for(params), False), ({"capabilities": {"hoverProvider": False}}, True)):
        ls = create_server()
        ls.workers_override = 0
        capture = _Capture()
        ls.protocol.set_writer(capture)
        ls.protocol.preanswered = (1, sent)

        async def handle() -> None:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            ls.protocol.handle_message(json.loads(body, object_hook=ls.protocol.structure_message))
            for _ in range(10):
                await asyncio.sleep(0)

        caplog.clear()
        try:
            with caplog.at_level("ERROR", logger="gradwarden.lsp"):
                asyncio.run(handle())
        finally:
            if ls.pool is not None:
                ls.pool.close_now()
        sent_again = [m for m in (json.loads(f.split(b"\r\n\r\n", 1)[1]) for f in capture.frames) if m.get("id") == 1]
        assert sent_again == []  # not answered twice
        assert ls.protocol.preanswered is None
        logged = [r.getMessage() for r in caplog.records if "differs from pygls" in r.getMessage()]
        assert bool(logged) == differs, logged
