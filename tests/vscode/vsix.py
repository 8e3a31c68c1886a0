"""Build the extension's .vsix when its inputs changed (``npm run package``), else reuse it."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Iterable, List

from editor_stack import REPO_ROOT, StackError, locked, npm_env, stack_dir

TARGET = "linux-x64"
# Everything that ends up in the .vsix, or decides what does.
INPUT_GLOBS = (
    "package.json",
    "package-lock.json",
    "pyproject.toml",
    "docs/vscode.md",
    "vscode-client/tsconfig.json",
    "vscode-client/src/**/*.ts",
    "vscode-client/scripts/*",
    "vscode-client/tool/*.py",
    "server/gradwarden/**/*.py",
    "server/gradwarden/**/*.json",
)


def vsix_path(repo: Path = REPO_ROOT) -> Path:
    manifest = json.loads((repo / "package.json").read_text())
    return repo / "vscode-client" / "dist" / f"{manifest['name']}-{manifest['version']}-{TARGET}.vsix"


def _inputs(repo: Path) -> List[Path]:
    files = set()
    for pattern in INPUT_GLOBS:
        for p in repo.glob(pattern):
            if p.is_file() and "__pycache__" not in p.parts:
                files.add(p)
    return sorted(files)


def inputs_digest(repo: Path = REPO_ROOT, files: Iterable[Path] = ()) -> str:
    h = hashlib.sha256()
    for p in files or _inputs(repo):
        h.update(str(p.relative_to(repo)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def ensure_vsix(repo: Path = REPO_ROOT, log_dir: Path = None) -> Path:
    """The current .vsix; rebuilt (about 30 s) when any input changed since the last build."""
    with locked(stack_dir() / ".vsix.lock"):  # concurrent test sessions share vscode-client/dist
        return _ensure_vsix(repo, log_dir)


def _ensure_vsix(repo: Path, log_dir: Path = None) -> Path:
    out = vsix_path(repo)
    stamp = out.with_suffix(".inputs-sha256")
    digest = inputs_digest(repo)
    if out.is_file() and stamp.is_file() and stamp.read_text().strip() == digest:
        return out
    log_dir = log_dir or stack_dir() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "npm-run-package.log"
    t = time.monotonic()
    # The bundled third-party libraries are cached beside the editor stack (outside the clone),
    # so a fresh CI checkout reinstalls only gradwarden itself.
    env = npm_env(stack_dir(), GRADWARDEN_BUNDLE_CACHE=str(stack_dir() / "bundle-deps-cache"))
    with log.open("w") as fh:
        proc = subprocess.run(["npm", "run", "package", "--", "--target", TARGET], cwd=repo, stdout=fh,
                              stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL, timeout=900)
    if proc.returncode != 0 or not out.is_file():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        raise StackError(f"`npm run package` failed (exit {proc.returncode}); log: {log}\n{tail}")
    stamp.write_text(digest + "\n")
    os.utime(out)
    print(f"[vsix] built {out.name} in {time.monotonic() - t:.0f}s")
    return out
