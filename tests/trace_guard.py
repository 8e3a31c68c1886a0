"""The suite leaves no trace: it writes only under temporary folders it removes, and changes
no file of the checkout.

The controlling pytest process (not an xdist worker) gives the whole run a private temporary
folder (``TMPDIR`` and ``tempfile.tempdir``, inherited by the workers and by every program the
tests start), and records ``git status`` at the start. When the run ends, anything left in that
folder and any change to ``git status`` is a trace: it is listed and the run fails. pytest's own
``pytest-of-<user>`` stays in the original temporary folder (``PYTEST_DEBUG_TEMPROOT``), where
pytest prunes it by its retention policy. The folder
is then removed (kept, with its path printed, when the run failed otherwise, for debugging).

torch's own compile cache (``torchinductor_<user>``, which an optimizer's first step creates in
``$TMPDIR``) is directed into ``torch-cache`` of that folder (``TORCHINDUCTOR_CACHE_DIR``,
``TRITON_CACHE_DIR``), ``gradwarden check``'s result cache into ``gradwarden-cache``
(``GRADWARDEN_CACHE_DIR``) and hypothesis' storage into ``hypothesis-home``: they go with it.
Ignored paths that appear in the checkout count as traces too, except build outputs
(``BUILD_OUTPUTS``: the editor stack's cache, the extension's build, bytecode).

``GRADWARDEN_TRACE_GUARD=off`` turns it off (a developer running single files against an
existing ``TMPDIR`` layout).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[1]
ENV = "GRADWARDEN_TRACE_GUARD"
TORCH_CACHE = "torch-cache"  # inside the run's folder: the guard's own, removed with it
HYPOTHESIS_HOME = "hypothesis-home"  # hypothesis' own storage (its constants cache), likewise
RESULT_CACHE = "gradwarden-cache"  # `gradwarden check`'s result cache ($GRADWARDEN_CACHE_DIR), likewise:
# a check of the checkout's own files (examples/, tests/data/) would put it beside pyproject.toml
_state: dict = {}


# Ignored paths the suite may create or fill in the checkout: build outputs and the caches the
# README names (the editor stack, the extension's build, the bytecode). Any other ignored path
# that appears (a tool's cache, screenshots, a result cache) is a trace like an untracked file.
BUILD_OUTPUTS = (".cache/", ".venv/", "build/", "node_modules/", "vscode-client/", "server/gradwarden.egg-info/")


def _is_build_output(path: str) -> bool:
    return path.startswith(BUILD_OUTPUTS) or "__pycache__/" in path or path.endswith(".pyc")


def _git_status() -> Optional[List[str]]:
    try:
        res = subprocess.run(["git", "status", "--porcelain", "--untracked-files=normal", "--ignored=traditional"],
                             cwd=str(REPO),
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    return sorted(line for line in res.stdout.splitlines() if not (line.startswith("!! ") and _is_build_output(line[3:])))


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def start(config) -> None:
    if _is_worker(config) or os.environ.get(ENV, "").strip().lower() == "off":
        return
    # pytest's own temporary folders stay where pytest puts them (its retention policy prunes
    # them): under the private folder their paths would grow past what a Unix socket takes
    # (Chromium's SingletonSocket in the VS Code test)
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    root = tempfile.mkdtemp(prefix="gw-suite-")
    _state.update(root=root, old_tmpdir=os.environ.get("TMPDIR"), old_tempdir=tempfile.tempdir,
                  git=_git_status())
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root
    cache = os.path.join(root, TORCH_CACHE)
    folders = {"TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": cache,
               "GRADWARDEN_CACHE_DIR": os.path.join(root, RESULT_CACHE)}
    for var, folder in folders.items():
        _state.setdefault("old_env", {})[var] = os.environ.get(var)
        os.environ[var] = folder


def direct_tools() -> None:
    """In every process of the run (workers too): tools that keep files next to the working
    directory by default keep them in the run's temporary folder instead (hypothesis writes
    `.hypothesis/` into the checkout)."""
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), HYPOTHESIS_HOME))


def traces() -> List[str]:
    root = _state.get("root")
    if root is None:
        return []
    found = [f"{os.path.join(root, name)} (left in the temporary folder)"
             for name in sorted(os.listdir(root)) if not name.startswith("pytest-of-") and name not in (TORCH_CACHE, HYPOTHESIS_HOME, RESULT_CACHE)]
    before, after = _state.get("git"), _git_status()
    if before is not None and after is not None:
        found += [f"git status: {line}" for line in sorted(set(after) - set(before))]
        found += [f"git status: no longer {line}" for line in sorted(set(before) - set(after))]
    return found


def finish(session, exitstatus: int) -> None:
    if "root" not in _state or _is_worker(session.config):
        return
    left = traces()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(text: str) -> None:
        if reporter is not None:
            reporter.write_line(text)
        else:  # pragma: no cover
            print(text)

    if left:
        say("error: the test run left traces (tests must write only under temporary folders they "
            "remove, and change no file of the checkout):")
        for item in left:
            say(f"  {item}")
        session.exitstatus = 1
    root = _state.pop("root")
    if _state.get("old_tmpdir") is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = _state["old_tmpdir"]
    tempfile.tempdir = _state.get("old_tempdir")
    for var, value in (_state.get("old_env") or {}).items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    if exitstatus == 0 or left:
        shutil.rmtree(root, ignore_errors=True)
    else:
        say(f"the run's temporary folder is kept for debugging: {root}")
