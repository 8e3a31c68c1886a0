"""The answer to ``initialize``, without pygls or lsprotocol (stdlib only).

``gradwarden serve`` answers ``initialize`` from ``front.py`` while pygls and lsprotocol are
still being imported (most of the server's start-up). The answer must be what pygls itself
would send for the handlers that ``server.py`` registers: ``CAPABILITIES`` is pygls' answer,
as JSON, for a client that has every capability the answer depends on, and
``answer_for(params)`` drops or sets what depends on the client, as pygls'
``ServerCapabilitiesBuilder`` and ``GradwardenProtocol.lsp_initialize`` do:

- ``positionEncoding``: the client's first of utf-8 / utf-16 / utf-32, else utf-16;
- ``notebookDocumentSync``: only when the client has ``notebookDocument`` capabilities;
- ``textDocumentSync.willSave`` / ``willSaveWaitUntil``: only when the client states them
  (pygls sends ``client's value and the handler is registered``);
- ``diagnosticProvider``: only for pull diagnostics (the client has ``textDocument.diagnostic``
  and the ``diagnosticMode`` setting is ``auto`` or ``pull``).

tests/lsp/test_initialize_answer.py compares ``answer_for`` with pygls' own answer, built
from the registered features, for the editor profiles and settings the tests use; when a
handler is added or its options change, that test fails and prints the new ``CAPABILITIES``.
At run time the server compares the two as well and logs a difference (server.py).
"""
from __future__ import annotations

import copy
from typing import Any, Dict, Optional

from gradwarden import __version__
from gradwarden.lsp.option_keys import diagnostic_mode_of

SERVER_NAME = "gradwarden"
ENCODINGS = ("utf-8", "utf-16", "utf-32")  # pygls.capabilities._SUPPORTED_ENCODINGS
DEFAULT_ENCODING = "utf-16"
SAVE_FLAGS = ("willSave", "willSaveWaitUntil")

# pygls' capabilities for FULL_CLIENT, key order kept.
FULL_CLIENT: Dict[str, Any] = {
    "notebookDocument": {"synchronization": {}},
    "textDocument": {"diagnostic": {}, "synchronization": {"willSave": True, "willSaveWaitUntil": True}},
}
CAPABILITIES: Dict[str, Any] = {
    "positionEncoding": "utf-16",
    "textDocumentSync": {"openClose": True, "change": 2, "willSave": False, "willSaveWaitUntil": False, "save": True},
    "notebookDocumentSync": {"notebookSelector": [{"cells": [{"language": "python"}], "notebook": "*"}],
                             "save": True},
    "hoverProvider": True,
    "codeActionProvider": {"codeActionKinds": ["quickfix", "source.fixAll", "source.fixAll.gradwarden"],
                           "resolveProvider": True},
    "codeLensProvider": {"resolveProvider": False},
    "executeCommandProvider": {"commands": ["gradwarden.checkWorkspace", "gradwarden.fixAll",
                                            "gradwarden.applyWorkspaceEdit", "gradwarden.applyFix",
                                            "gradwarden.debugRun", "gradwarden.showTimeline",
                                            "gradwarden.serverStatus"]},
    "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False,
                           "identifier": "gradwarden"},
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
}


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def answerable(params: Any) -> bool:
    """Whether ``answer_for`` can answer these params as pygls would: the shapes it reads are
    plain (anything else is left to pygls, which answers once it is imported)."""
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    encodings = _get(params, "capabilities", "general", "positionEncodings")
    general = _get(params, "capabilities", "general")
    if general is not None and not isinstance(general, dict):
        return False
    if not (encodings is None or (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings))):
        return False
    for path in (("textDocument",), ("textDocument", "synchronization")):
        if not isinstance(_get(params, "capabilities", *path), (dict, type(None))):
            return False
    return all(isinstance(_get(params, "capabilities", "textDocument", "synchronization", flag), (bool, type(None)))
               for flag in SAVE_FLAGS)


def position_encoding(params: Dict[str, Any]) -> str:
    for encoding in _get(params, "capabilities", "general", "positionEncodings") or ():
        if encoding in ENCODINGS:
            return encoding
    return DEFAULT_ENCODING


def pull_diagnostics(params: Dict[str, Any]) -> bool:
    """What ``server.initialize`` sets as ``ls.pull``."""
    client_pulls = _get(params, "capabilities", "textDocument", "diagnostic") is not None
    return client_pulls and diagnostic_mode_of(params.get("initializationOptions")) in ("auto", "pull")


def answer_for(params: Dict[str, Any], version: Optional[str] = None) -> Dict[str, Any]:
    """The ``result`` of the answer to ``initialize`` (``answerable(params)`` must hold)."""
    caps = copy.deepcopy(CAPABILITIES)
    caps["positionEncoding"] = position_encoding(params)
    sync = caps["textDocumentSync"]
    for flag in SAVE_FLAGS:
        stated = _get(params, "capabilities", "textDocument", "synchronization", flag)
        if stated is None:
            del sync[flag]
        elif not stated:
            sync[flag] = stated
    if _get(params, "capabilities", "notebookDocument") is None:
        del caps["notebookDocumentSync"]
    if not pull_diagnostics(params):
        del caps["diagnosticProvider"]
    return {"capabilities": caps, "serverInfo": {"name": SERVER_NAME, "version": version or __version__}}
