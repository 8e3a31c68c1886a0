"""Small multi-file projects written by a test and checked from inside their folder, as a user runs
``gradwarden check .`` there: the project's files from a ``{relative path: text}`` dict, and the
errors and warnings found, as sorted ``(file relative to the project, row, code)``."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List


def project(root: Path, files: Dict[str, str]) -> Path:
    """Write each file (dedented) under ``root``; returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def loud(root: Path) -> List[tuple]:
    """The errors and warnings of ``gradwarden check --output-format json .`` from inside ``root``."""
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(((root / d["filename"]).resolve().relative_to(root.resolve()).as_posix(), d["location"]["row"],
                   d["code"]) for d in json.loads(proc.stdout) if d["severity"] in ("error", "warning"))
