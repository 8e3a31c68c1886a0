"""The pre-commit hooks of .pre-commit-hooks.yaml, run by pre-commit itself on a scratch git
repository: pre-commit clones this repository (a snapshot of the working tree, committed in a
temporary repository), builds its environment from the package index, and runs the hooks on
staged files — a hazard fails the commit, `gradwarden-fix` repairs it.

pre-commit's environments are kept in PRE_COMMIT_HOME (default: a folder in the user's cache,
outside the clone), so only the first run pays the install.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]

HAZARD = """\
import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)
y += 1
y.sum().backward()
"""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory) -> Path:
    """This working tree (tracked and untracked-but-not-ignored files), committed."""
    repo = tmp_path_factory.mktemp("hooks-repo")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "snapshot")
    return repo


@pytest.fixture
def user_repo(tmp_path, hooks_repo) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    rev = git(hooks_repo, "rev-parse", "HEAD").strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks_repo}\n    rev: {rev}\n    hooks:\n      - id: gradwarden\n"
        f"      - id: gradwarden-fix\n        stages: [manual]\n")
    (repo / "train.py").write_text(HAZARD)
    (repo / "clean.py").write_text("import torch\nx = torch.ones(2, requires_grad=True)\nx.exp().sum().backward()\n")
    (repo / "README.md").write_text("not python\n")
    git(repo, "add", "-A")
    return repo


def pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault("PRE_COMMIT_HOME", str(Path.home() / ".cache" / "gradwarden-tests" / "pre-commit"))
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([*PRE_COMMIT, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=1800)


def test_hooks_file_declares_both_hooks():
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"gradwarden", "gradwarden-fix"}
    assert hooks["gradwarden"]["entry"] == "gradwarden check"
    assert hooks["gradwarden-fix"]["entry"] == "gradwarden check --fix"
    assert all("jupyter" in h["types_or"] and "python" in h["types_or"] for h in hooks.values())


def test_check_hook_fails_on_a_hazard_and_fix_hook_repairs_it(user_repo):
    proc = pre_commit(user_repo, "run", "gradwarden", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "train.py:5:1: GW201 [*] error: in-place `+=` modifies `y`" in proc.stdout
    assert "clean.py" not in proc.stdout.replace("Passed", "")  # only findings are printed

    proc = pre_commit(user_repo, "run", "gradwarden-fix", "--all-files", "--hook-stage", "manual")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # it changed a file: the commit must be redone
    assert "files were modified by this hook" in proc.stdout
    assert "y = y + 1" in (user_repo / "train.py").read_text()

    git(user_repo, "add", "-A")
    proc = pre_commit(user_repo, "run", "gradwarden", "--all-files")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = pre_commit(user_repo, "run", "gradwarden-fix", "--all-files", "--hook-stage", "manual")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_hook_sees_notebooks(user_repo):
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": HAZARD}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (user_repo / "train.py").write_text("x = 1\n")
    (user_repo / "explore.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    git(user_repo, "add", "-A")
    proc = pre_commit(user_repo, "run", "gradwarden", "--all-files")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "explore.ipynb:cell 1:5:1: GW201" in proc.stdout
