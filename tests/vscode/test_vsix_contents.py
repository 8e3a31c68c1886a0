"""The linux-x64 .vsix is lean and complete: at most 12 MB and 2,000 files, only this platform's
compiled modules, jedi once, the pure-Python libraries in a zip — and the server inside it
works: unpacked, its launcher runs `gradwarden check` (a real finding, a fix through libcst)
and resolves a project import through the bundled jedi, with an interpreter that has none of
these packages installed.

Builds the package when its inputs changed (`npm run package`, a few minutes the first time;
the third-party part is cached).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from editor_stack import REPO_ROOT, StackError, ensure_node_modules, stack_dir
from vsix import ensure_vsix

MAX_BYTES = 12 * 1000 * 1000
MAX_FILES = 2000


@pytest.fixture(scope="module")
def vsix() -> Path:
    root = stack_dir()
    try:
        ensure_node_modules(REPO_ROOT, root, root / "logs")
        return ensure_vsix(REPO_ROOT)
    except StackError as exc:
        pytest.fail(f"building the .vsix failed:\n{exc}", pytrace=False)


@pytest.fixture(scope="module")
def unpacked(vsix, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(vsix) as zf:
        zf.extractall(out)
    return out / "extension"


def test_size_and_file_count(vsix):
    with zipfile.ZipFile(vsix) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
    size = vsix.stat().st_size
    print(f"\n{vsix.name}: {size / 1e6:.2f} MB, {len(names)} files")
    assert size <= MAX_BYTES, f"{size / 1e6:.1f} MB"
    assert len(names) <= MAX_FILES, len(names)


def test_the_bundled_server_is_the_source_tree(unpacked):
    """Every module of the bundled gradwarden is one of the source tree's, and every source
    module is bundled: a build folder left from an earlier layout must not ship stale modules
    (setuptools never empties ``build/``; the bundle builds from a clean copy)."""
    bundled_pkg = unpacked / "vscode-client" / "bundled" / "libs" / "common" / "gradwarden"
    source_pkg = REPO_ROOT / "server" / "gradwarden"
    def modules(root):
        return {p.relative_to(root).as_posix() for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    bundled, source = modules(bundled_pkg), modules(source_pkg)
    assert bundled, f"no gradwarden modules under {bundled_pkg}"
    assert not bundled - source, f"stale modules in the .vsix: {sorted(bundled - source)[:10]}"
    assert not source - bundled, f"modules missing from the .vsix: {sorted(source - bundled)[:10]}"


def test_one_platform_one_jedi_and_a_zip(unpacked):
    libs = unpacked / "vscode-client" / "bundled" / "libs"
    natives = [p for p in libs.rglob("*") if p.suffix in (".so", ".pyd", ".dylib")]
    assert natives and all(p.name.endswith("-x86_64-linux-gnu.so") for p in natives), natives
    parsers = sorted("-".join(p.name.split(".")[1].split("-")[:2]) for p in natives if p.parent.name == "libcst")
    manifest = json.loads((libs / "BUNDLE.json").read_text())
    assert parsers == sorted("cpython-%s" % v.replace(".", "") for v in manifest["pythons"])  # one per Python
    jedis = [p for p in libs.rglob("jedi/__init__.py")]
    assert len(jedis) == 1, jedis
    assert not (jedis[0].parent / "third_party" / "typeshed" / "stubs").exists()
    assert (jedis[0].parent / "third_party" / "typeshed" / "stdlib" / "3" / "builtins.pyi").is_file() or \
        any((jedis[0].parent / "third_party" / "typeshed" / "stdlib").rglob("builtins.pyi"))
    with zipfile.ZipFile(libs / "common.zip") as zf:
        tops = {n.split("/", 1)[0] for n in zf.namelist()}
    assert {"pygls", "lsprotocol", "cattrs", "attrs", "yaml"} <= tops
    assert (libs / "common" / "gradwarden" / "engine" / "domain" / "data" / "optable.json").is_file()


def test_every_bundled_libcst_module_imports(unpacked):
    """What the pruning left of libcst imports (nothing refers to a pruned module)."""
    python = _bare_python()
    launcher = unpacked / "vscode-client" / "tool" / "launch.py"
    code = ("import sys, pkgutil, importlib; sys.path.insert(0, %r); import launch; launch.activate()\n"
            "import libcst\n"
            "names = [m.name for m in pkgutil.walk_packages(libcst.__path__, 'libcst.')]\n"
            "[importlib.import_module(n) for n in names]\n"
            "import pygls.server, lsprotocol.types, jedi, parso, yaml\n"
            "print(len(names))\n" % str(launcher.parent))
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300,
                          env={"PATH": os.environ.get("PATH", "")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.strip()) > 50


def _bare_python() -> str:
    """An interpreter without gradwarden, libcst or pygls (the system one, else skip)."""
    for candidate in ("/usr/bin/python3", shutil.which("python3") or ""):
        if not candidate or not os.path.exists(candidate):
            continue
        probe = subprocess.run([candidate, "-c", "import importlib.util as u, sys; "
                                "sys.exit(any(u.find_spec(m) for m in ('gradwarden', 'libcst', 'pygls', 'jedi')))"],
                               env={"PATH": os.environ.get("PATH", "")})
        if probe.returncode == 0:
            return candidate
    pytest.skip("no interpreter without gradwarden's dependencies to run the bundle with")


def test_the_bundled_server_runs(unpacked, tmp_path):
    python = _bare_python()
    launcher = unpacked / "vscode-client" / "tool" / "launch.py"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    info = json.loads(subprocess.run([python, str(launcher), "--probe"], capture_output=True, text=True, env=env,
                                     timeout=120).stdout.strip().splitlines()[-1])
    assert info["ok"] is True and info["gradwardenFrom"] == "bundled", info

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "blocks.py").write_text(
        "import torch\n\n\ndef scale_(t):\n    t.mul_(2)\n    return t\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom pkg.blocks import scale_\n\nx = torch.randn(3, requires_grad=True)\n"
        "y = torch.sigmoid(x)\ny += 1\ny.sum().backward()\n")
    proc = subprocess.run([python, str(launcher), "check", "--output-format", "json", "train.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    (d,) = json.loads(proc.stdout)
    assert d["code"] == "GW201" and d["fix"]["edits"], d  # the fix realised by the bundled libcst
    proc = subprocess.run([python, str(launcher), "check", "--fix", "train.py"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "y = y + 1" in (tmp_path / "train.py").read_text(), proc.stderr

    # jedi (bundled once, stubs pruned) still resolves a project import for the engine
    code = ("import sys; sys.path.insert(0, %r); import launch; assert launch.activate()[0] == 'bundled'\n"
            "from gradwarden.engine.front.imports import ImportResolver\n"
            "print(ImportResolver(%r)._jedi('pkg.blocks', 0, 'scale_'))\n" % (str(launcher.parent), str(tmp_path / "train.py")))
    proc = subprocess.run([python, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str((tmp_path / "pkg" / "blocks.py").resolve()), proc.stdout + proc.stderr
