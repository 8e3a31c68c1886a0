"""gradwarden serve in real editors, headless and scripted: Neovim 0.11 (vim.lsp.config, pull
diagnostics, UTF-8 positions), Emacs 28 + Eglot 1.9 (push diagnostics, plain-text hover) and
Emacs 28 + lsp-mode 8.0 (an add-on client, push diagnostics), and Vim 9 + ALE 3.3.

Each driver (``nvim/init.lua``, ``emacs/eglot-test.el`` with ``emacs/eglot-common.el``) configures the server the way
docs/editors.md tells users to, opens a file with a saved-tensor hazard and checks, through the
editor's own UI functions: the diagnostic, the hover timeline, the quick fix (applied by the
editor), the diagnostic clearing, a new one after typing, the ``# noqa`` action, (Emacs) fix-all,
and a parse error that keeps the last good diagnostic. The drivers write a JSON report; a failed
check fails the test with the report. The editors are found or installed by editor_setup.py
(Emacs via apt-get, as root): an install that fails is a test failure, never a skip.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor_setup import EditorSetupError, ensure_emacs, ensure_vim_ale, find_nvim
from project_crossfile import HELPER, script

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "gradwarden", "serve"]
SAMPLE = (
    "import torch\n"
    "\n"
    "x = torch.randn(3, requires_grad=True)\n"
    "y = torch.sigmoid(x)\n"
    "y += 1\n"
    "y.sum().backward()\n"
)


@pytest.fixture(scope="session")
def nvim() -> str:
    try:
        return find_nvim()
    except EditorSetupError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def emacs() -> str:
    try:
        return ensure_emacs("eglot")
    except EditorSetupError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def vim_ale() -> str:
    try:
        return ensure_vim_ale()
    except EditorSetupError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def emacs_lsp_mode() -> str:
    try:
        return ensure_emacs("lsp-mode")
    except EditorSetupError as exc:
        pytest.fail(str(exc), pytrace=False)


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".git").mkdir()  # the root marker both editors look for
    (ws / "sample.py").write_text(SAMPLE)
    return ws


def report(result_file: Path, proc: subprocess.CompletedProcess, server_log: Path) -> str:
    parts = []
    if result_file.exists():
        data = json.loads(result_file.read_text())
        for c in data.get("checks", []):
            mark = "ok  " if c.get("ok") is True else "FAIL"
            detail = "" if c.get("ok") is True else f"\n        {str(c.get('detail'))[:1500]}"
            parts.append(f"  [{mark}] {c.get('name')}{detail}")
    else:
        parts.append("  (the driver wrote no report)")
    parts.append(f"exit status {proc.returncode}")
    parts.append("driver output:\n" + (proc.stdout + proc.stderr)[-3000:])
    if server_log.exists():
        parts.append("server log:\n" + server_log.read_text(errors="replace")[-3000:])
    return "\n".join(parts)


def run_driver(argv, ws: Path, env: dict, timeout: float = 1200) -> subprocess.CompletedProcess:
    # timeout: a hang guard above the drivers' own watchdogs (900 s), never a speed check
    return subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def editor_env(tmp_path: Path, server_cmd, result_file: Path) -> dict:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    tmp = tmp_path / "tmp"  # Neovim's nvim.<user> folder, Emacs' and Vim's scratch files
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update({
        "TMPDIR": str(tmp),
        "HOME": str(home),  # Emacs' eln-cache, Neovim's state: never the real ~
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GW_CMD": json.dumps(server_cmd),
        "GW_RESULT": str(result_file),
    })
    return env


def test_neovim(nvim, tmp_path):
    ws = workspace(tmp_path)
    result_file, server_log = tmp_path / "nvim.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    proc = run_driver([nvim, "--headless", "-u", str(HERE / "nvim" / "init.lua"), "sample.py"], ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Neovim end-to-end checks failed:\n" + report(result_file, proc, server_log)
    data = json.loads(result_file.read_text())
    assert data["pull"] is True  # Neovim 0.11 pulls diagnostics; the server agreed
    assert data["encoding"] == "utf-8"


def test_neovim_code_lens_runs_the_debug_run(nvim, tmp_path):
    """The code lens "Confirm with a debug run" in a real Neovim: displayed, run with
    vim.lsp.codelens.run(), the lens then says "1 confirmed" and the diagnostic reads
    "[confirmed] ..." in place; gradwarden.showTimeline writes the picture (nvim/codelens.lua)."""
    ws = workspace(tmp_path)
    result_file, server_log = tmp_path / "nvim-lens.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    env["GW_PYTHON"] = sys.executable  # has torch: the debug run needs it
    env["TMPDIR"] = str(tmp_path)  # where the timeline page is written
    proc = run_driver([nvim, "--headless", "-u", str(HERE / "nvim" / "codelens.lua"), "sample.py"], ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Neovim code lens checks failed:\n" + report(result_file, proc, server_log)
    data = json.loads(result_file.read_text())
    assert data["timeline_path"].startswith(str(tmp_path))


def test_neovim_code_lens_driver_fails_without_a_real_server(nvim, tmp_path):
    """Negative control of the code lens driver."""
    ws = workspace(tmp_path)
    result_file = tmp_path / "nvim-lens.json"
    recorder = [sys.executable, str(HERE / "record_capabilities.py"), str(tmp_path / "caps.json")]
    env = editor_env(tmp_path, recorder, result_file)
    env["GW_STOP_ON_FAIL"] = "1"
    env["GW_WAIT_MS"] = "3000"
    proc = run_driver([nvim, "--headless", "-u", str(HERE / "nvim" / "codelens.lua"), "sample.py"], ws, env)
    assert proc.returncode != 0
    assert json.loads(result_file.read_text())["ok"] is False


def test_neovim_driver_fails_without_a_real_server(nvim, tmp_path):
    """Negative control: against a server that answers initialize and nothing else, the driver
    must fail (so a passing run means something)."""
    ws = workspace(tmp_path)
    result_file = tmp_path / "nvim.json"
    recorder = [sys.executable, str(HERE / "record_capabilities.py"), str(tmp_path / "caps.json")]
    env = editor_env(tmp_path, recorder, result_file)
    env["GW_STOP_ON_FAIL"] = "1"
    env["GW_WAIT_MS"] = "3000"
    proc = run_driver([nvim, "--headless", "-u", str(HERE / "nvim" / "init.lua"), "sample.py"], ws, env)
    assert proc.returncode != 0
    assert json.loads(result_file.read_text())["ok"] is False


def test_emacs_eglot(emacs, tmp_path):
    ws = workspace(tmp_path)
    result_file, server_log = tmp_path / "emacs.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    proc = run_driver([emacs, "--batch", "-l", str(HERE / "emacs" / "eglot-test.el"), "sample.py"], ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Emacs + Eglot end-to-end checks failed:\n" + report(result_file, proc, server_log)


CROSS_TRAIN = script("utils")


def test_emacs_eglot_cross_file(emacs, tmp_path):
    """The helper that holds the write shows the hazard the analysis of the script importing it
    found, with the script's call in the related places, and the quick fix edits the helper."""
    ws = tmp_path / "project"
    (ws / "utils").mkdir(parents=True)
    # a repository: Eglot's project (project.el) is its root, else the helper's folder utils/
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    (ws / "train.py").write_text(CROSS_TRAIN)
    (ws / "utils" / "__init__.py").write_text("")
    (ws / "utils" / "sampling.py").write_text(HELPER)
    result_file, server_log = tmp_path / "emacs-cross.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    proc = run_driver([emacs, "--batch", "-l", str(HERE / "emacs" / "eglot-crossfile-test.el"),
                       "utils/sampling.py"], ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Emacs + Eglot cross-file checks failed:\n" + report(result_file, proc, server_log)
    assert (ws / "train.py").read_text() == CROSS_TRAIN  # the script is untouched


def test_emacs_lsp_mode(emacs_lsp_mode, tmp_path):
    ws = workspace(tmp_path)
    result_file, server_log = tmp_path / "lsp-mode.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    env["TMPDIR"] = str(tmp_path)
    proc = run_driver([emacs_lsp_mode, "--batch", "-l", str(HERE / "emacs" / "lsp-mode-test.el"), "sample.py"], ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Emacs + lsp-mode end-to-end checks failed:\n" + report(result_file, proc, server_log)


def test_vim_ale(vim_ale, tmp_path):
    ws = workspace(tmp_path)
    result_file, server_log = tmp_path / "vim.json", tmp_path / "server.log"
    env = editor_env(tmp_path, SERVER + ["--log-file", str(server_log)], result_file)
    argv = [vim_ale, "-N", "-u", str(HERE / "vim" / "vimrc"), "-i", "NONE", "-es",
            "-c", f"source {HERE / 'vim' / 'test.vim'}", "sample.py"]
    proc = run_driver(argv, ws, env)
    assert proc.returncode == 0 and json.loads(result_file.read_text())["ok"], \
        "Vim + ALE end-to-end checks failed:\n" + report(result_file, proc, server_log)
