"""``--fix`` writes only what the invoking user may write, and keeps what a file is.

- a ``0444`` file owned by root, in a folder the user may write, checked by an unprivileged
  user (``setpriv`` to uid/gid 65534 with no groups when the suite runs as root; the user's
  own read-only file otherwise): byte-identical afterwards, owned and moded as before, one
  error line, the finding still reported, no "Applied", exit 2;
- an immutable file (``chattr +i``; skipped, with the reason, where the file system or the
  user cannot set the attribute): the same;
- a file the user may write keeps its owner, group and mode; a symbolic link stays a link to
  the rewritten file; a hard link keeps sharing the file.
"""
from __future__ import annotations

import os
import shutil
import site
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, List, Optional

import pytest

from gradwarden.atomicio import NotWritable, replace_user_file, writable_reason

REPO = Path(__file__).resolve().parents[1]
NOBODY = 65534
HAZARD = (REPO / "examples" / "resnet_block_inplace.py").read_text()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder other users can reach (pytest's own temporary folders are private to their
    owner), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="gw-writes-", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        yield path
    finally:
        chattr = shutil.which("chattr")
        for p in path.rglob("*") if chattr else ():
            subprocess.run([chattr, "-i", str(p)], capture_output=True)
        shutil.rmtree(path, ignore_errors=True)


def _unprivileged_python(folder: Path) -> Optional[List[str]]:
    """A command that runs this checkout's gradwarden as uid/gid 65534 with no groups, or None.
    The interpreter must be one that user may execute (a pyenv under /root is not): this one, or
    the system's of the same version, with this environment's packages on its path."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    paths = os.pathsep.join([str(REPO / "server")] + site.getsitepackages())
    for python in (os.path.realpath(sys.executable), f"/usr/bin/{version}", shutil.which(version) or ""):
        if not python:
            continue
        cmd = [setpriv, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "env",
               f"PYTHONPATH={paths}", f"HOME={folder}", "GRADWARDEN_NO_CACHE=1", python, "-s"]
        probe = subprocess.run(cmd + ["-c", "import gradwarden.cli, libcst"], capture_output=True, text=True,
                               cwd=str(folder))
        if probe.returncode == 0:
            return cmd + ["-m", "gradwarden"]
    return None


def _fix(cmd: List[str], folder: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd + ["check", "--isolated", "--no-cache", "--fix", name], capture_output=True,
                          text=True, cwd=str(folder), timeout=120)


def _assert_refused(res: subprocess.CompletedProcess, name: str) -> None:
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and f"{name}: cannot fix" in errors[0], res.stderr
    assert "Applied" not in res.stderr and "could not be checked" not in res.stderr, res.stderr
    assert f"{name}:28:9: GW201" in res.stdout, res.stdout  # the finding is still reported
    assert res.returncode == 2, (res.returncode, res.stderr)


def test_a_read_only_file_of_another_user_is_left_as_it_was(shared_dir: Path) -> None:
    target = shared_dir / "model.py"
    target.write_text(HAZARD)
    if os.geteuid() == 0:
        cmd = _unprivileged_python(shared_dir)
        if cmd is None:
            pytest.skip("running as root, and no Python interpreter that uid 65534 may run (with setpriv) "
                        "imports this checkout")
        os.chmod(shared_dir, 0o777)  # the folder is writable: a rename would succeed
    else:
        cmd = [sys.executable, "-m", "gradwarden"]
        os.chmod(shared_dir, 0o755)
    os.chmod(target, 0o444)
    before = target.read_bytes(), target.stat()
    res = _fix(cmd, shared_dir, "model.py")
    _assert_refused(res, "model.py")
    after = target.stat()
    assert target.read_bytes() == before[0]
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode), after.st_ino) == \
        (before[1].st_uid, before[1].st_gid, 0o444, before[1].st_ino)
    assert sorted(p.name for p in shared_dir.iterdir()) == ["model.py"]  # no temporary file left


def test_an_immutable_file_is_left_as_it_was(shared_dir: Path) -> None:
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("chattr is not installed: immutable files cannot be made here")
    target = shared_dir / "model.py"
    target.write_text(HAZARD)
    made = subprocess.run([chattr, "+i", str(target)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this file system or user cannot set the immutable attribute: {made.stderr.strip()}")
    try:
        before = target.read_bytes()
        res = _fix([sys.executable, "-m", "gradwarden"], shared_dir, "model.py")
        _assert_refused(res, "model.py")
        assert "immutable" in res.stderr
        assert target.read_bytes() == before
        assert sorted(p.name for p in shared_dir.iterdir()) == ["model.py"]
    finally:
        subprocess.run([chattr, "-i", str(target)], capture_output=True)


def test_diff_needs_no_write_access(shared_dir: Path) -> None:
    target = shared_dir / "model.py"
    target.write_text(HAZARD)
    os.chmod(target, 0o444)
    res = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--isolated", "--no-cache", "--diff",
                          "model.py"], capture_output=True, text=True, cwd=str(shared_dir), timeout=120)
    assert res.returncode == 1 and "+        out = out + identity" in res.stdout, res.stdout + res.stderr
    assert "error" not in res.stderr


def test_a_writable_file_keeps_owner_group_and_mode(shared_dir: Path) -> None:
    target = shared_dir / "model.py"
    target.write_text(HAZARD)
    os.chmod(target, 0o640)
    if os.geteuid() == 0:
        os.chown(target, NOBODY, NOBODY)  # root fixes another user's file: it stays theirs
    before = target.stat()
    res = _fix([sys.executable, "-m", "gradwarden"], shared_dir, "model.py")
    assert res.returncode == 0 and "Applied 1 fix" in res.stderr, res.stdout + res.stderr
    after = target.stat()
    assert "out = out + identity" in target.read_text()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (before.st_uid, before.st_gid, 0o640)


def test_links_are_kept(shared_dir: Path) -> None:
    real = shared_dir / "real.py"
    real.write_text(HAZARD)
    (shared_dir / "link.py").symlink_to("real.py")
    twin = shared_dir / "twin.py"
    os.link(real, twin)
    replace_user_file(shared_dir / "link.py", b"x = 1\n")
    assert (shared_dir / "link.py").is_symlink() and real.read_bytes() == b"x = 1\n"
    assert twin.read_bytes() == b"x = 1\n" and os.path.samefile(real, twin)


def test_writable_reason_names_the_cause(shared_dir: Path) -> None:
    f = shared_dir / "f.py"
    f.write_text("x = 1\n")
    assert writable_reason(f) is None
    assert "regular file" in (writable_reason(shared_dir) or "")
    assert writable_reason(shared_dir / "missing.py")
    if os.geteuid() != 0:  # root may write a 0444 file
        os.chmod(f, 0o444)
        with pytest.raises(NotWritable):
            replace_user_file(f, b"y = 2\n")
        assert f.read_text() == "x = 1\n"
