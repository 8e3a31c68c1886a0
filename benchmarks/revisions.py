"""The engine of another git revision, for a benchmark's "before" column: ``git archive REV
server`` unpacked, run by the same interpreter through ``PYTHONPATH``.

- ``server_of(rev, into)``: unpacked under ``into`` (a run's temporary folder);
- ``cached_server_of(rev)``: unpacked once under ``benchmarks/.cache/rev-<sha>`` and reused by
  later runs (a revision's sources never change).

Both return the folder that holds the ``gradwarden`` package.
"""
from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = HERE / ".cache"


def server_of(rev: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    archive = into / "server.tar"
    with open(archive, "wb") as fh:
        subprocess.run(["git", "archive", rev, "server"], cwd=REPO, stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into)
    archive.unlink()
    return into / "server"


def cached_server_of(rev: str) -> Path:
    sha = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout.strip()
    into = CACHE / f"rev-{sha[:12]}"
    if not (into / ".ready").exists():
        server_of(sha, into)
        (into / ".ready").write_text(sha)
    return into / "server"
