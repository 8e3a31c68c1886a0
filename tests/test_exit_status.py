"""``gradwarden check`` exits by severity: 1 when an error or warning is reported, 0 when only
information notes (or hints) are; ``--fail-on`` / ``fail-on`` moves the bar for a stricter (or
laxer) CI; usage errors stay 2. The real engine, on programs whose findings' severities are
fixed by the rules (an information-only GW705, a warning GW201 in a custom backward)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

INFO_ONLY = textwrap.dedent("""\
    import torch
    x = torch.randn(3, requires_grad=True).to("cpu")
    x.sum().backward()
    print(x.grad)
    """)
WARNING = (Path(__file__).resolve().parents[1] / "examples" / "data_write_silent.py").read_text()


def check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--no-progress", *args],
                          capture_output=True, text=True, cwd=str(folder), timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "info.py").write_text(INFO_ONLY)
    (tmp_path / "warn.py").write_text(WARNING)
    return tmp_path


def test_information_only_exits_0_and_says_what_it_found(project: Path) -> None:
    res = check(project, "--isolated", "info.py")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "GW705" in res.stdout and "Found 1 problem (1 information)." in res.stdout


def test_a_warning_exits_1(project: Path) -> None:
    res = check(project, "--isolated", "warn.py", "info.py")
    assert res.returncode == 1 and "warning" in res.stdout


@pytest.mark.parametrize("level, info_rc, warn_rc", [
    ("information", 1, 1), ("info", 1, 1), ("hint", 1, 1), ("warning", 0, 1), ("error", 0, 0)])
def test_fail_on_flag(project: Path, level: str, info_rc: int, warn_rc: int) -> None:
    assert check(project, "--isolated", "--fail-on", level, "info.py").returncode == info_rc
    assert check(project, "--isolated", "--fail-on", level, "warn.py").returncode == warn_rc


def test_fail_on_setting_and_its_override(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nfail-on = "information"\n')
    assert check(project, "info.py").returncode == 1
    assert check(project, "--fail-on", "warning", "info.py").returncode == 0  # the command line wins
    assert check(project, "--config", 'fail-on = "error"', "warn.py").returncode == 0


def test_a_raised_severity_fails_the_run(project: Path) -> None:
    assert check(project, "--isolated", "--severity-override", "GW705=warning", "info.py").returncode == 1


def test_exit_zero_and_bad_levels(project: Path) -> None:
    assert check(project, "--isolated", "--exit-zero", "--fail-on", "information", "warn.py").returncode == 0
    bad = check(project, "--isolated", "--fail-on", "loud", "info.py")
    assert bad.returncode == 2 and "fail-on" in bad.stderr and "invalid severity 'loud'" in bad.stderr
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nfail-on = 3\n')
    bad = check(project, "info.py")
    assert bad.returncode == 2 and "`fail-on`" in bad.stderr


def test_github_and_sarif_follow_the_same_bar(project: Path) -> None:
    gh = check(project, "--isolated", "--output-format", "github", "info.py")
    assert gh.returncode == 0 and gh.stdout.startswith("::notice ")
    sarif = check(project, "--isolated", "--output-format", "sarif", "info.py")
    assert sarif.returncode == 0 and '"level": "note"' in sarif.stdout
