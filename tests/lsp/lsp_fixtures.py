"""Client profiles and server start-up for the LSP end-to-end tests (see conftest.py)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_session import Session, make_client

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROFILE_DIR = HERE / "profiles"

SERVER_COMMAND = [sys.executable, "-m", "gradwarden", "serve", "--log-level", "info"]
SERVER_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
def _load(name: str) -> lsp.ClientCapabilities:
    data = json.loads((PROFILE_DIR / name).read_text())
    return get_converter().structure(data["capabilities"], lsp.ClientCapabilities)


def profile(name: str) -> lsp.ClientCapabilities:
    if name == "vscode":
        return _load("visual_studio_code_v1.100.3.json")
    if name == "vscode-1.65":
        return client_capabilities("visual-studio-code@v1.65.2")
    if name == "neovim":
        return _load("neovim_v0.11.4.json")
    if name == "emacs":
        return client_capabilities("emacs@v29.1")
    if name == "eglot-1.9":
        return _load("emacs_eglot_v1.9.json")
    raise KeyError(name)


ALL_PROFILES = ["vscode", "vscode-1.65", "neovim", "emacs", "eglot-1.9"]
MAIN_PROFILES = ["vscode", "neovim", "emacs"]  # VS Code, Neovim and Emacs, the three the issue names


def server_config(extra_args=()) -> ClientServerConfig:
    return ClientServerConfig(server_command=SERVER_COMMAND + list(extra_args), client_factory=make_client,
                              server_env=SERVER_ENV)


async def start_session(client: LanguageClient, name: str, root: Path, init_options: Any = None,
                        workspace_folders: bool = True) -> Session:
    caps = profile(name)
    session = Session(client, name, caps, root)
    client.session = session  # type: ignore[attr-defined]
    params = lsp.InitializeParams(
        capabilities=caps,
        root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)] if workspace_folders else None,
        initialization_options=init_options,
        client_info=lsp.ClientInfo(name=f"pytest-lsp as {name}"),
    )
    session.init_result = await client.initialize_session(params)
    session.check_server_capabilities()
    return session


