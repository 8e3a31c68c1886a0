"""The extension's own logic, without VS Code: node's test runner over vscode-client/test
(``npm test``), the TypeScript type check, and the bundled launcher (``vscode-client/tool/launch.py``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor_stack import REPO_ROOT, StackError, ensure_node_modules, npm_env, stack_dir

LAUNCHER = REPO_ROOT / "vscode-client" / "tool" / "launch.py"


@pytest.fixture(scope="module")
def node_modules() -> Path:
    root = stack_dir()
    try:
        ensure_node_modules(REPO_ROOT, root, root / "logs")
    except StackError as exc:
        pytest.fail(f"installing the extension's npm devDependencies failed:\n{exc}", pytrace=False)
    return REPO_ROOT / "node_modules"


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, env=npm_env(stack_dir()),
                          stdin=subprocess.DEVNULL, timeout=300, **kw)


def test_npm_unit_tests(node_modules):
    proc = _run(["npm", "test"])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"`npm test` failed (exit {proc.returncode}):\n{out[-6000:]}"
    assert "# fail 0" in out and "# pass " in out, out[-3000:]


def test_typescript_type_check(node_modules):
    proc = _run(["npm", "run", "--silent", "typecheck"])
    assert proc.returncode == 0, f"tsc reports errors:\n{(proc.stdout + proc.stderr)[-6000:]}"


# --------------------------------------------------------------------------- launch.py
def _fake_libs(tmp_path: Path, versions) -> Path:
    libs = tmp_path / "bundled" / "libs"
    (libs / "common").mkdir(parents=True)
    (libs / "BUNDLE.json").write_text(json.dumps({"target": "linux-x64", "pythons": list(versions)}))
    tool = tmp_path / "tool"
    tool.mkdir()
    (tool / "launch.py").write_text(LAUNCHER.read_text())
    return tool / "launch.py"


def _probe(launcher: Path, python: str = sys.executable, env=None) -> dict:
    proc = subprocess.run([python, str(launcher), "--probe"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_launcher_reports_a_missing_bundle_for_this_python(tmp_path):
    launcher = _fake_libs(tmp_path, ["3.0", "3.1"])  # every version but ours
    info = _probe(launcher)
    assert info["ok"] is False
    assert "has no libraries for Python %d.%d (it has: 3.0, 3.1)" % sys.version_info[:2] in info["error"]
    assert info["python"].startswith("%d.%d" % sys.version_info[:2]) and info["executable"] == sys.executable


def test_launcher_reports_missing_libs(tmp_path):
    tool = tmp_path / "tool"
    tool.mkdir()
    (tool / "launch.py").write_text(LAUNCHER.read_text())
    info = _probe(tool / "launch.py")
    assert info["ok"] is False and "bundled libraries are missing" in info["error"]
    proc = subprocess.run([sys.executable, str(tool / "launch.py"), "serve"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and "bundled libraries are missing" in proc.stderr


def test_launcher_from_environment_uses_the_installed_package(tmp_path):
    # This interpreter has gradwarden installed (editable): fromEnvironment needs no bundle.
    launcher = _fake_libs(tmp_path, [])
    info = _probe(launcher, env={"GRADWARDEN_IMPORT_STRATEGY": "fromEnvironment"})
    assert info["ok"] is True, info
    assert info["gradwardenFrom"] == "environment"


def test_launcher_reports_torch(tmp_path):
    launcher = _fake_libs(tmp_path, [])
    info = _probe(launcher, env={"GRADWARDEN_IMPORT_STRATEGY": "fromEnvironment"})
    try:
        import importlib.util

        has_torch = importlib.util.find_spec("torch") is not None
    except ImportError:  # pragma: no cover
        has_torch = False
    assert info["torch"] is has_torch


def test_launcher_refuses_old_pythons_with_a_message():
    # The launcher must stay parseable by old interpreters; emulate the version check directly.
    sys.path.insert(0, str(LAUNCHER.parent))
    try:
        import launch  # type: ignore
    finally:
        sys.path.pop(0)
    paths, error = launch.bundle_paths(version_info=(3, 8, 18))
    assert paths is None and "Python 3.8 is too old: gradwarden needs Python 3.9 or newer" in error
    compile(LAUNCHER.read_text(), str(LAUNCHER), "exec", flags=0, dont_inherit=True)
    assert "f\"" not in LAUNCHER.read_text() and "f'" not in LAUNCHER.read_text(), "no f-strings: Python 2.7/3.5 must parse it"
