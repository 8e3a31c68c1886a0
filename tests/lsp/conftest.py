"""End-to-end tests of ``gradwarden serve`` with pytest-lsp, impersonating real clients.

Client profiles (the ``capabilities`` of ``initialize``, as recorded from the clients):

- ``vscode``: VS Code 1.100.3 with vscode-languageclient 9.0.1 (the extension's client library;
  ``profiles/visual_studio_code_v1.100.3.json``): pull diagnostics (with refresh), notebooks,
  markdown hover, ``documentChanges``.
- ``vscode-1.65``: pytest-lsp's recording of VS Code 1.65.2: push diagnostics.
- ``neovim``: Neovim 0.11.4 (``profiles/neovim_v0.11.4.json``): pull diagnostics, UTF-8
  positions preferred, ``changes`` edits (no documentChanges), resolve of edit and command.
- ``emacs``: pytest-lsp's Emacs 29.1 + eglot: push, no related information, UTF-32 positions.
- ``eglot-1.9``: Emacs 28.2 + eglot 1.9 (``profiles/emacs_eglot_v1.9.json``, what the editor
  tests run): plain-text hover only, no related information, no codeDescription.

Spec conformance: pytest-lsp's own checks raise ``LspSpecificationWarning``, which these tests
turn into errors; ``lsp_checks.py`` adds checks of what the server sends against the profile
(related information, codeDescription, data, markup kind, isPreferred, documentChanges, edit
versions, ranges inside the document, requests the client did not advertise), recorded on the
session and asserted at the end of every test (with no error logged or shown by the server).

Helpers: ``lsp_fixtures.py`` (profiles, server start), ``lsp_session.py`` (an editor-like
client: incremental didChange, applying workspace edits and sending them back, waiting for the
diagnostics of a version, notebooks), ``lsp_checks.py`` (the conformance checks).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from lsp_fixtures import ALL_PROFILES, MAIN_PROFILES, server_config, start_session
from lsp_session import Session


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/lsp/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.checks.LspSpecificationWarning"))


@pytest.fixture(scope="module")
def workspace_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ws")


@pytest_lsp.fixture(config=server_config(), scope="module", params=MAIN_PROFILES)
async def lsp_main(lsp_client: LanguageClient, request, workspace_dir: Path):
    session = await start_session(lsp_client, request.param, workspace_dir)
    yield
    await session.close_all()
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(), scope="module", params=ALL_PROFILES)
async def lsp_all(lsp_client: LanguageClient, request, workspace_dir: Path):
    session = await start_session(lsp_client, request.param, workspace_dir)
    yield
    await session.close_all()
    await lsp_client.shutdown_session()


@pytest.fixture
def session(lsp_main) -> Session:
    s: Session = lsp_main.session
    s.begin_test()
    yield s
    s.end_test()


@pytest.fixture
def any_session(lsp_all) -> Session:
    s: Session = lsp_all.session
    s.begin_test()
    yield s
    s.end_test()
