"""Where the browser tests keep their screenshots and logs.

By default under pytest's own temporary folder (``pytest-of-<user>``, pruned by pytest's
retention policy), so that the suite writes nothing into the checkout; the path is printed in
every failure message. ``GRADWARDEN_TEST_ARTIFACTS=DIR`` keeps them in ``DIR/<name>`` instead
(a developer looking at the screenshots of a passing run).
"""
from __future__ import annotations

import os
from pathlib import Path

ENV = "GRADWARDEN_TEST_ARTIFACTS"


def artifacts_dir(tmp_path_factory, name: str) -> Path:
    """The (existing, empty) folder for ``name``'s artifacts in this run."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        folder = Path(chosen).expanduser().resolve() / name
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return folder
    return tmp_path_factory.mktemp(f"artifacts-{name}", numbered=True)
