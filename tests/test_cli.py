"""The `gradwarden` command line: flags, formats, exit codes, config, stdin, -j.

Most tests replace the engine with ``fake_analyze`` (a line ``... # FAKE GW201`` yields a GW201
there), so that they test the CLI alone. The ``test_real_engine_*`` tests run the real engine
on a tiny real hazard.
"""
from __future__ import annotations

import ast
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Optional, Tuple, Union

import pytest

import gradwarden
from gradwarden import cli, runner
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Diagnostic, Related, Severity, Span
from gradwarden.engine.front.source import decode_source
from gradwarden.rules import all_rules, get_rule

# --------------------------------------------------------------------------- the fake engine
_MARK = re.compile(r"#\s*FAKE\s+(GW\d{3})")


def fake_analyze(source: Union[str, bytes], filename: str = "<stdin>") -> List[Diagnostic]:
    """Module level (so that worker processes can receive it). Files that do not decode or
    parse go to the real analyze_source, which answers GW001 without the interpreter."""
    data = source if isinstance(source, bytes) else source.encode("utf-8")
    text, _ = decode_source(data)
    if text is None:
        return analyze_source(source, filename)
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return analyze_source(source, filename)
    if "RAISE_INTERNAL" in text:
        raise RuntimeError("boom")
    out = []
    for row, line in enumerate(text.splitlines(), 1):
        for m in _MARK.finditer(line):
            code = m.group(1)
            rule = get_rule(code)
            col = len(line) - len(line.lstrip()) + 1
            end = len(line.split("#")[0].rstrip()) + 1
            out.append(Diagnostic(
                code, f"fake {code} finding", rule.severity if rule else Severity.ERROR, filename,
                Span(row, col, row, max(end, col + 1)),
                related=(Related(Span(row, 1, row, 2), "related note", kind="save"),),
                rule=rule.name if rule else "",
            ))
    return out


@pytest.fixture
def fake_engine(monkeypatch):
    monkeypatch.setattr(runner, "analyze_source", fake_analyze)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty folder as the working directory (no config above it: tmp dirs have none)."""
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "GRADWARDEN_OUTPUT_FORMAT"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def write(path: Union[Path, str], text: str = "", *, data: Optional[bytes] = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_bytes(data)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def run_cli(capsys, *args: str, stdin: Optional[bytes] = None, monkeypatch=None) -> Tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


CLEAN = "import torch\nx = torch.ones(2)\n"
HAZARD = "import torch\nx = torch.ones(2)\ny = x  # FAKE GW201\n"
TWO = "import torch\na = 1  # FAKE GW201\nb = 2  # FAKE GW404\n"


# --------------------------------------------------------------------------- basics and exit codes
def test_version(capsys):
    rc, out, _ = run_cli(capsys, "--version")
    assert rc == 0
    assert out.strip() == f"gradwarden {gradwarden.__version__}"


def test_no_subcommand_prints_help(capsys):
    rc, out, err = run_cli(capsys)
    assert rc == 2
    assert "check" in err and "usage:" in err


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--nope"),
        ("check", "--output-format", "xml"),
        ("check", "-j", "-3"),
        ("check", "-j", "many"),
        ("check", "-q", "-v"),
        ("frobnicate",),
    ],
)
def test_usage_errors_exit_2(capsys, project, args):
    rc, _, err = run_cli(capsys, *args)
    assert rc == 2
    assert "error" in err


def test_help_exits_0(capsys):
    rc, out, _ = run_cli(capsys, "check", "--help")
    assert rc == 0
    assert "--output-format" in out and "--select" in out


def test_clean_file(capsys, project, fake_engine):
    write("ok.py", CLEAN)
    rc, out, err = run_cli(capsys, "check", "ok.py")
    assert (rc, out, err) == (0, "All checks passed!\n", "")


def test_findings_text(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, err = run_cli(capsys, "check", "a.py")
    assert rc == 1
    assert err == ""
    assert out.splitlines() == [
        "a.py:3:1: GW201 error: fake GW201 finding",
        "  a.py:3:1: note: related note",
        "Found 1 error.",
    ]


def test_exit_zero(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--exit-zero", "a.py")
    assert rc == 0
    assert "GW201" in out


def test_default_path_is_cwd(capsys, project, fake_engine):
    write("pkg/a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check")
    assert rc == 1
    assert out.startswith(os.path.join("pkg", "a.py") + ":3:1: GW201")


def test_missing_path_is_exit_2_but_others_are_checked(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, err = run_cli(capsys, "check", "a.py", "nope.py")
    assert rc == 2
    assert "error: nope.py: no such file or directory" in err
    assert "a.py:3:1: GW201" in out


def test_folder_without_python_files_warns(capsys, project, fake_engine):
    write("docs/readme.txt", "not python")
    rc, out, err = run_cli(capsys, "check", "docs")
    assert (rc, out) == (0, "All checks passed!\n")
    assert err == "warning: No Python files found under the given path(s)\n"
    rc, _, err = run_cli(capsys, "check", "-s", "docs")  # --silent prints nothing at all
    assert (rc, err) == (0, "")


def test_severity_is_readable_without_colour(capsys, project, fake_engine):
    write("a.py", "import torch\nx = 1  # FAKE GW404\ny = 2  # FAKE GW201\n")
    rc, out, _ = run_cli(capsys, "check", "--no-color", "a.py")
    assert "a.py:2:1: GW404 info: fake GW404 finding" in out
    assert "a.py:3:1: GW201 error: fake GW201 finding" in out


def test_parse_error_among_good_files(capsys, project, fake_engine):
    write("a.py", HAZARD)
    write("b_broken.py", "def f(:\n    pass\n")
    write("c.py", CLEAN)
    rc, out, err = run_cli(capsys, "check", ".")
    assert rc == 1
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "a.py:3:1: GW201 error: fake GW201 finding"
    assert lines[2].startswith("b_broken.py:1:7: GW001 error: syntax error")
    assert lines[-1] == "Found 2 errors."


def test_undecodable_file_is_gw001(capsys, project, fake_engine):
    write("latin.py", data=b"x = '\xff\xfe'\n")
    rc, out, _ = run_cli(capsys, "check", "latin.py")
    assert rc == 1
    assert out.startswith("latin.py:1:1: GW001 error: cannot decode file")


def test_internal_error_is_reported_and_run_goes_on(capsys, project, fake_engine):
    write("a.py", HAZARD)
    write("boom.py", "RAISE_INTERNAL = 1\n")
    write("c.py", "z = 1  # FAKE GW401\n")
    rc, out, err = run_cli(capsys, "check", ".")
    assert rc == 2
    assert "error: internal error while checking boom.py: RuntimeError: boom" in err
    assert "error: 1 file could not be checked" in err
    assert "a.py:3:1: GW201" in out and "c.py:1:1: GW401" in out


def test_internal_error_exit_2_even_with_exit_zero(capsys, project, fake_engine):
    write("boom.py", "RAISE_INTERNAL = 1\n")
    rc, _, _ = run_cli(capsys, "check", "--exit-zero", "boom.py")
    assert rc == 2


def test_unreadable_file(capsys, project, fake_engine, monkeypatch):
    write("a.py", CLEAN)
    real_open = open

    def fake_open(path, *a, **k):
        if str(path).endswith("a.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", fake_open)
    rc, _, err = run_cli(capsys, "check", "a.py")
    assert rc == 2
    assert "error: cannot read a.py: Permission denied" in err


def test_encodings_and_bom(capsys, project, fake_engine):
    write("latin1.py", data="# -*- coding: latin-1 -*-\nx = 'é'  # FAKE GW201\n".encode("latin-1"))
    write("bom.py", data=b"\xef\xbb\xbfx = 1  # FAKE GW401\n")
    rc, out, _ = run_cli(capsys, "check", ".")
    assert rc == 1
    assert "bom.py:1:1: GW401" in out
    assert "latin1.py:2:1: GW201" in out


def test_large_file_is_analysed(capsys, project, fake_engine):
    body = "# padding\n" * 10_000 + 'blob = "' + "a" * (6 * 1024 * 1024) + '"\n'
    write("big.py", body + "y = 2  # FAKE GW201\n")
    assert Path("big.py").stat().st_size > 5 * 1024 * 1024
    rc, out, _ = run_cli(capsys, "check", "big.py")
    assert rc == 1
    assert "big.py:10002:1: GW201" in out


# --------------------------------------------------------------------------- rule selection
def test_select_ignore_extend_select(capsys, project, fake_engine):
    write("a.py", "a = 1  # FAKE GW201\nb = 2  # FAKE GW401\nc = 3  # FAKE GW501\n")

    def codes(*flags):
        rc, out, _ = run_cli(capsys, "check", "--output-format", "json", *flags, "a.py")
        return rc, [d["code"] for d in json.loads(out)]

    assert codes() == (1, ["GW201", "GW401", "GW501"])
    assert codes("--select", "GW2") == (1, ["GW201"])
    assert codes("--select", "GW2,GW4") == (1, ["GW201", "GW401"])
    assert codes("--select", "GW2", "--select", "GW5") == (1, ["GW201", "GW501"])
    assert codes("--ignore", "GW4") == (1, ["GW201", "GW501"])
    assert codes("--select", "ALL", "--ignore", "GW201,GW401") == (1, ["GW501"])
    assert codes("--select", "GW201", "--ignore", "GW2") == (1, ["GW201"])  # more specific wins
    assert codes("--select", "gw5") == (1, ["GW501"])
    assert codes("--ignore", "ALL") == (0, [])


def test_extend_select_adds_to_config(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nselect = ["GW2"]\n')
    write("a.py", "a = 1  # FAKE GW201\nb = 2  # FAKE GW401\nc = 3  # FAKE GW501\n")
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "--extend-select", "GW4", "a.py")
    assert [d["code"] for d in json.loads(out)] == ["GW201", "GW401"]
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "--select", "GW5", "a.py")
    assert [d["code"] for d in json.loads(out)] == ["GW501"]


def test_unknown_selector_is_usage_error(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, err = run_cli(capsys, "check", "--select", "GW9", "a.py")
    assert rc == 2
    assert out == ""
    assert "error: command line: `select`: unknown rule selector `GW9`" in err


def test_parse_errors_survive_select(capsys, project, fake_engine):
    write("bad.py", "def f(:\n")
    rc, out, _ = run_cli(capsys, "check", "--select", "GW2", "bad.py")
    assert rc == 1 and "GW001" in out
    rc, out, _ = run_cli(capsys, "check", "--ignore", "GW001", "bad.py")
    assert rc == 0


def test_severity_override(capsys, project, fake_engine):
    write("a.py", TWO)
    rc, out, _ = run_cli(capsys, "check", "--severity-override", "GW201=warning", "--severity-override",
                         "GW404=hint", "--output-format", "json", "a.py")
    assert [(d["code"], d["severity"]) for d in json.loads(out)] == [("GW201", "warning"), ("GW404", "hint")]
    rc, out, _ = run_cli(capsys, "check", "--severity-override", "GW2=info,GW4=error", "a.py")
    assert out.splitlines()[-1] == "Found 2 problems (1 error, 1 information)."


@pytest.mark.parametrize("value, fragment", [
    ("GW201", "expected CODE=LEVEL"),
    ("GW201=loud", "invalid severity 'loud'"),
    ("XX1=error", "unknown rule selector `XX1`"),
])
def test_bad_severity_override(capsys, project, fake_engine, value, fragment):
    write("a.py", TWO)
    rc, _, err = run_cli(capsys, "check", "--severity-override", value, "a.py")
    assert rc == 2
    assert fragment in err


def test_severity_from_config(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nseverity = { GW404 = "warning" }\n')
    write("a.py", TWO)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "a.py")
    assert [(d["code"], d["severity"]) for d in json.loads(out)] == [("GW201", "error"), ("GW404", "warning")]


# --------------------------------------------------------------------------- noqa
def test_noqa_variants(capsys, project, fake_engine):
    write("a.py", """\
        import torch
        a = 1  # FAKE GW201  # noqa
        b = 2  # FAKE GW201  # noqa: GW201
        c = 3  # FAKE GW201  # noqa: GW303
        d = 4  # FAKE GW201  # NOQA:gw201,GW303
        e = 5  # FAKE GW201  # gradwarden: noqa
        f = 6  # FAKE GW201
        g = 7  # FAKE GW201  # FAKE GW401  # noqa: GW4
    """)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "a.py")
    assert rc == 1
    assert [(d["code"], d["location"]["row"]) for d in json.loads(out)] == [
        ("GW201", 4), ("GW201", 7), ("GW201", 8),
    ]
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "--ignore-noqa", "a.py")
    assert len(json.loads(out)) == 8


def test_file_level_noqa(capsys, project, fake_engine):
    write("a.py", "# gradwarden: noqa\nimport torch\na = 1  # FAKE GW201\n")
    write("b.py", "# gradwarden: noqa: GW2\na = 1  # FAKE GW201\nb = 1  # FAKE GW401\n")
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert [(d["filename"], d["code"]) for d in json.loads(out)] == [("b.py", "GW401")]
    rc, out, _ = run_cli(capsys, "check", "--ignore-noqa", "--output-format", "json", ".")
    assert len(json.loads(out)) == 3


# --------------------------------------------------------------------------- configuration
def test_config_discovered_from_first_path(capsys, project, fake_engine):
    write("proj/pyproject.toml", '[tool.gradwarden]\nignore = ["GW201"]\n')
    write("proj/src/a.py", TWO)
    rc, out, err = run_cli(capsys, "check", "--output-format", "json", "proj/src/a.py")
    assert [d["code"] for d in json.loads(out)] == ["GW404"]
    rc, out, err = run_cli(capsys, "check", "-v", "proj/src")
    assert f"config file: {project / 'proj' / 'pyproject.toml'}" in err


def test_config_from_cwd_when_first_path_is_stdin(capsys, project, fake_engine, monkeypatch):
    write("pyproject.toml", '[tool.gradwarden]\nignore = ["GW201"]\n')
    rc, out, _ = run_cli(capsys, "check", "-", stdin=TWO.encode(), monkeypatch=monkeypatch)
    assert "GW201" not in out and "GW404" in out


def test_explicit_config_and_isolated(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nignore = ["GW201"]\n')
    write("other.toml", 'ignore = ["GW404"]\n')
    write("a.py", TWO)

    def codes(*flags):
        rc, out, err = run_cli(capsys, "check", "--output-format", "json", *flags, "a.py")
        assert rc in (0, 1), err
        return [d["code"] for d in json.loads(out)]

    assert codes() == ["GW404"]
    assert codes("--config", "other.toml") == ["GW201"]
    assert codes("--isolated") == ["GW201", "GW404"]
    assert codes("--config", 'ignore = ["GW4"]') == []  # layered over the pyproject, which ignores GW201
    assert codes("--config", 'select = ["ALL"]') == ["GW201", "GW404"]  # a later select replaces
    assert codes("--isolated", "--config", 'select = ["GW4"]') == ["GW404"]


def test_bad_config_is_exit_2_naming_the_key(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nselect = ["GW2"]\nsevertiy = {}\n')
    write("a.py", HAZARD)
    rc, out, err = run_cli(capsys, "check", "a.py")
    assert rc == 2
    assert out == ""
    assert "unknown option `severtiy` (did you mean `severity`?)" in err
    assert str(project / "pyproject.toml") in err


@pytest.mark.parametrize("args, fragment", [
    (("--config", "missing.toml"), "config file missing.toml does not exist"),
    (("--config", "select = ["), "neither a file nor a valid TOML"),
    (("--config", "jobs = -1"), "`jobs`"),
    (("--isolated", "--config", "pyproject.toml"), "cannot be used together"),
])
def test_bad_config_flags(capsys, project, fake_engine, args, fragment):
    write("pyproject.toml", "[tool.gradwarden]\n")
    write("a.py", CLEAN)
    rc, _, err = run_cli(capsys, "check", *args, "a.py")
    assert rc == 2
    assert fragment in err


def test_invalid_toml(capsys, project, fake_engine):
    write("pyproject.toml", "[tool.gradwarden\n")
    write("a.py", CLEAN)
    rc, _, err = run_cli(capsys, "check", "a.py")
    assert rc == 2 and "is not valid TOML" in err


def test_per_file_ignores_via_cli(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nper-file-ignores = { "tests/*" = ["GW2"] }\n')
    write("tests/t.py", HAZARD)
    write("src/s.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert [d["filename"] for d in json.loads(out)] == [os.path.join("src", "s.py")]


# --------------------------------------------------------------------------- files
def test_exclusions(capsys, project, fake_engine):
    for f in ["a.py", "gen/b.py", "c_pb2.py", "build/d.py", ".venv/e.py", "node_modules/f.py", "sub/__pycache__/g.py",
              "notes.txt"]:
        write(f, HAZARD)

    def files(*flags):
        rc, out, _ = run_cli(capsys, "check", "--output-format", "json", *flags)
        return sorted({d["filename"] for d in json.loads(out)})

    assert files(".") == ["a.py", "c_pb2.py", os.path.join("gen", "b.py")]
    assert files("--extend-exclude", "gen,*_pb2.py", ".") == ["a.py"]
    assert files("--exclude", "gen", ".") == sorted([
        "a.py", "c_pb2.py", os.path.join("build", "d.py"), os.path.join(".venv", "e.py"),
        os.path.join("node_modules", "f.py"), os.path.join("sub", "__pycache__", "g.py")])
    # named files are checked whatever the exclusions say, named folders are walked
    assert files("--extend-exclude", "gen", "gen/b.py", "build") == [
        os.path.join("build", "d.py"), os.path.join("gen", "b.py")]
    assert files("notes.txt") == ["notes.txt"]


def test_exclusions_from_config(capsys, project, fake_engine):
    write("pyproject.toml", '[tool.gradwarden]\nextend-exclude = ["legacy/**"]\n')
    write("legacy/old/a.py", HAZARD)
    write("new.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert [d["filename"] for d in json.loads(out)] == ["new.py"]


def test_gitignore(capsys, project, fake_engine):
    (project / ".git").mkdir()
    write(".gitignore", "generated/\n*.tmp.py\n")
    write("generated/a.py", HAZARD)
    write("x.tmp.py", HAZARD)
    write("ok.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert [d["filename"] for d in json.loads(out)] == ["ok.py"]
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "--no-respect-gitignore", ".")
    assert len(json.loads(out)) == 3
    write("pyproject.toml", "[tool.gradwarden]\nrespect-gitignore = false\n")
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert len(json.loads(out)) == 3
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "--respect-gitignore", ".")
    assert len(json.loads(out)) == 1


# --------------------------------------------------------------------------- stdin
def test_stdin(capsys, project, fake_engine, monkeypatch):
    rc, out, _ = run_cli(capsys, "check", "-", stdin=HAZARD.encode(), monkeypatch=monkeypatch)
    assert rc == 1
    assert out.splitlines()[0] == "-:3:1: GW201 error: fake GW201 finding"


def test_stdin_filename(capsys, project, fake_engine, monkeypatch):
    rc, out, _ = run_cli(capsys, "check", "--stdin-filename", "pkg/mod.py", stdin=HAZARD.encode(),
                         monkeypatch=monkeypatch)
    assert rc == 1
    assert out.splitlines()[0] == "pkg/mod.py:3:1: GW201 error: fake GW201 finding"


def test_stdin_with_files_and_noqa(capsys, project, fake_engine, monkeypatch):
    write("a.py", HAZARD)
    src = HAZARD.replace("# FAKE GW201", "# FAKE GW201  # noqa") + "z = 1  # FAKE GW401\n"
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "-", "a.py", stdin=src.encode(),
                         monkeypatch=monkeypatch)
    assert [(d["filename"], d["code"]) for d in json.loads(out)] == [("-", "GW401"), ("a.py", "GW201")]


def test_stdin_bytes_with_coding_cookie(capsys, project, fake_engine, monkeypatch):
    data = "# coding: latin-1\nx = 'é'  # FAKE GW201\n".encode("latin-1")
    rc, out, _ = run_cli(capsys, "check", "-", stdin=data, monkeypatch=monkeypatch)
    assert "-:2:1: GW201" in out


def test_stdin_filename_finds_config_and_per_file_ignores(capsys, project, fake_engine, monkeypatch):
    write("sub/pyproject.toml", '[tool.gradwarden]\nper-file-ignores = { "tests/*" = ["GW201"] }\n')
    rc, out, _ = run_cli(capsys, "check", "--stdin-filename", "sub/tests/t.py", stdin=TWO.encode(),
                         monkeypatch=monkeypatch)
    assert "GW201" not in out and "GW404" in out


def test_stdin_twice_is_an_error(capsys, project, fake_engine, monkeypatch):
    rc, _, err = run_cli(capsys, "check", "-", "-", stdin=b"", monkeypatch=monkeypatch)
    assert rc == 2 and "only once" in err


# --------------------------------------------------------------------------- output formats
def test_json_format(capsys, project, fake_engine):
    write("b.py", HAZARD)
    write("a.py", TWO)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", ".")
    assert rc == 1
    data = json.loads(out)
    assert [(d["filename"], d["location"]["row"]) for d in data] == [("a.py", 2), ("a.py", 3), ("b.py", 3)]
    for d in data:
        assert {"code", "message", "severity", "filename", "location", "end_location", "related", "fix"} <= set(d)
    assert data[0]["related"][0]["message"] == "related note"


def test_json_format_empty(capsys, project, fake_engine):
    write("a.py", CLEAN)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "a.py")
    assert rc == 0 and json.loads(out) == []


def test_json_lines_format(capsys, project, fake_engine):
    write("a.py", TWO)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json-lines", "a.py")
    assert [json.loads(x)["code"] for x in out.splitlines()] == ["GW201", "GW404"]


def test_output_format_from_env(capsys, project, fake_engine, monkeypatch):
    write("a.py", TWO)
    monkeypatch.setenv("GRADWARDEN_OUTPUT_FORMAT", "json")
    rc, out, _ = run_cli(capsys, "check", "a.py")
    assert len(json.loads(out)) == 2
    monkeypatch.setenv("GRADWARDEN_OUTPUT_FORMAT", "xml")
    rc, out, err = run_cli(capsys, "check", "a.py")
    assert rc == 2 and "unknown output format 'xml'" in err


def test_sarif_format(capsys, project, fake_engine):
    write("a.py", TWO)
    write("boom.py", "RAISE_INTERNAL = 1\n")
    rc, out, err = run_cli(capsys, "check", "--output-format", "sarif", ".")
    assert rc == 2
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [r.code for r in all_rules()]
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("GW201", "error"), ("GW404", "note")]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "a.py", "uriBaseId": "%SRCROOT%"}
    assert run["results"][0]["relatedLocations"][0]["message"]["text"] == "related note"
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "internal error while checking boom.py" in err


def test_github_format(capsys, project, fake_engine):
    write("a.py", TWO)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "github", "a.py")
    assert rc == 1
    assert out.splitlines() == [
        "::error file=a.py,line=2,col=1,endLine=2,endColumn=6,title=gradwarden (GW201)::fake GW201 finding"
        "%0Aa.py:2:1: note: related note",
        "::notice file=a.py,line=3,col=1,endLine=3,endColumn=6,title=gradwarden (GW404)::fake GW404 finding"
        "%0Aa.py:3:1: note: related note",
    ]


def test_machine_formats_have_no_summary(capsys, project, fake_engine):
    write("a.py", CLEAN)
    for fmt in ("json", "json-lines", "sarif", "github"):
        rc, out, _ = run_cli(capsys, "check", "--output-format", fmt, "a.py")
        assert "All checks passed" not in out


def test_statistics(capsys, project, fake_engine):
    write("a.py", TWO)
    write("b.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--statistics", ".")
    assert rc == 1
    lines = out.splitlines()
    assert [line.split("\t")[0].strip() for line in lines[:2]] == ["2", "1"]
    assert lines[0].split("\t")[1].strip() == "GW201"
    assert lines[-1] == "Found 3 problems (2 errors, 1 information)."
    rc, out, _ = run_cli(capsys, "check", "--statistics", "--output-format", "json", ".")
    assert json.loads(out) == [
        {"code": "GW201", "name": "saved-tensor-modified", "count": 2, "severity": "error"},
        {"code": "GW404", "name": "running-loss-keeps-graph", "count": 1, "severity": "information"},
    ]


def test_show_source(capsys, project, fake_engine, monkeypatch):
    write("a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--show-source", "a.py")
    assert "  3 | y = x  # FAKE GW201" in out.splitlines()
    assert "    | ^^^^^" in out.splitlines()
    rc, out, _ = run_cli(capsys, "check", "--show-source", "-", stdin=HAZARD.encode(), monkeypatch=monkeypatch)
    assert "  3 | y = x  # FAKE GW201" in out.splitlines()


def test_quiet_silent_verbose(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "-q", "a.py")
    assert rc == 1 and "Found" not in out and "GW201" in out
    rc, out, err = run_cli(capsys, "check", "-s", "a.py")
    assert (rc, out, err) == (1, "", "")
    write("b.py", CLEAN)
    rc, out, _ = run_cli(capsys, "check", "-q", "b.py")
    assert (rc, out) == (0, "")
    rc, out, err = run_cli(capsys, "check", "-v", "a.py")
    assert "config file: none" in err and "checking 1 file(s) with 1 job(s)" in err and "checked 1 file(s)" in err


def test_output_file(capsys, project, fake_engine):
    write("a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "-o", "reports/out.json", "a.py")
    assert rc == 1 and out == ""
    assert json.loads(Path("reports/out.json").read_text())[0]["code"] == "GW201"
    rc, out, _ = run_cli(capsys, "check", "--output-file", "out.txt", "--color", "always", "a.py")
    text = Path("out.txt").read_text()
    assert "\x1b[" not in text and text.endswith("Found 1 error.\n")


def test_color(capsys, project, fake_engine, monkeypatch):
    write("a.py", HAZARD)
    rc, out, _ = run_cli(capsys, "check", "a.py")
    assert "\x1b[" not in out  # not a TTY
    rc, out, _ = run_cli(capsys, "check", "--color", "a.py")
    assert "\x1b[" in out
    rc, out, _ = run_cli(capsys, "check", "--color=always", "a.py")
    assert "\x1b[" in out
    monkeypatch.setenv("FORCE_COLOR", "1")
    rc, out, _ = run_cli(capsys, "check", "a.py")
    assert "\x1b[" in out
    rc, out, _ = run_cli(capsys, "check", "--color", "never", "a.py")
    assert "\x1b[" not in out
    rc, out, _ = run_cli(capsys, "check", "--no-color", "a.py")
    assert "\x1b[" not in out
    rc, out, _ = run_cli(capsys, "check", "a.py", "--color")
    assert "\x1b[" in out
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert cli._use_color("auto", _Tty()) is False
    monkeypatch.delenv("NO_COLOR")
    assert cli._use_color("auto", _Tty()) is True


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


# --------------------------------------------------------------------------- jobs and progress
def _many(n: int) -> None:
    for i in range(n):
        marks = "  # FAKE GW201" if i % 3 else "  # FAKE GW401"
        write(f"pkg{i % 4}/m{i:03d}.py", f"import torch\nx = {i}{marks}\ny = {i}  # FAKE GW501\n")
    write("pkg1/broken.py", "def f(:\n")
    write("pkg2/boom.py", "RAISE_INTERNAL = 1\n")


def test_jobs_are_deterministic(capsys, project, fake_engine):
    _many(60)
    results = {}
    for jobs in ("1", "2", "3"):
        rc, out, err = run_cli(capsys, "check", "-j", jobs, "--output-format", "json", ".")
        assert rc == 2  # boom.py
        assert "internal error while checking " + os.path.join("pkg2", "boom.py") in err
        results[jobs] = out
    assert results["1"] == results["2"] == results["3"]
    data = json.loads(results["1"])
    assert len(data) == 121  # 60 * 2 + the parse error
    keys = [(d["filename"], d["location"]["row"], d["location"]["column"]) for d in data]
    assert keys == sorted(keys)


def test_jobs_from_config_and_auto(capsys, project, fake_engine, monkeypatch):
    _many(25)
    write("pyproject.toml", "[tool.gradwarden]\njobs = 2\n")
    rc, out, err = run_cli(capsys, "check", "-v", ".")
    assert "with 2 job(s)" in err
    rc, out2, err = run_cli(capsys, "check", "-v", "-j", "0", "--isolated", ".")
    assert f"with {runner.default_jobs(27)} job(s)" in err
    assert out == out2
    assert runner.default_jobs(19) == 1
    assert 1 <= runner.default_jobs(20) <= 4


def test_runner_with_unpicklable_analyzer_runs_serially(project):
    files = []
    for i in range(25):
        files.append((write(f"m{i}.py", "x = 1\n"), f"m{i}.py"))
    seen = []
    outcomes = runner.run(files, jobs=3, analyzer=lambda data, name: seen.append(name) or [])
    assert [o.filename for o in outcomes] == [f"m{i}.py" for i in range(25)]
    assert len(seen) == 25


def test_runner_progress_callback(project, fake_engine):
    files = [(write(f"m{i}.py", "x = 1\n"), f"m{i}.py") for i in range(30)]
    calls = []
    runner.run(files, jobs=2, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (30, 30)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_no_progress_bar_in_pipes(capsys, project, fake_engine):
    _many(60)
    rc, out, err = run_cli(capsys, "check", "-j", "1", ".")
    assert "\r" not in err and "files" not in err.replace("could not be checked", "")


def test_progress_bar_only_on_tty(project):
    args = cli.build_parser().parse_args(["check"])
    assert cli._want_progress(args, _Tty(), 51) is True
    assert cli._want_progress(args, _Tty(), 50) is False
    assert cli._want_progress(args, io.StringIO(), 500) is False
    args = cli.build_parser().parse_args(["check", "--no-progress"])
    assert cli._want_progress(args, _Tty(), 500) is False
    args = cli.build_parser().parse_args(["check", "-q"])
    assert cli._want_progress(args, _Tty(), 500) is False
    stream = _Tty()
    bar = cli._ProgressBar(stream, 100)
    bar(100, 100)
    bar.close()
    assert "100/100 files" in stream.getvalue() and stream.getvalue().endswith("\r")


# --------------------------------------------------------------------------- rule / rules
def test_rule_command(capsys):
    rc, out, _ = run_cli(capsys, "rule", "GW201")
    assert rc == 0
    assert out == get_rule("GW201").render()
    rc, out2, _ = run_cli(capsys, "rule", "gw201")
    assert out2 == out
    rc, out3, _ = run_cli(capsys, "rule", "saved-tensor-modified")
    assert out3 == out


def test_rule_all_and_json(capsys):
    rc, out, _ = run_cli(capsys, "rule", "--all")
    assert rc == 0
    for r in all_rules():
        assert r.render() in out
    rc, out, _ = run_cli(capsys, "rule", "GW404", "--output-format", "json")
    data = json.loads(out)
    assert data[0]["code"] == "GW404" and data[0]["severity"] == "information"


@pytest.mark.parametrize("args", [("rule", "GW999"), ("rule",), ("rule", "GW201", "--all")])
def test_rule_errors(capsys, args):
    rc, _, err = run_cli(capsys, *args)
    assert rc == 2 and err.startswith("error: ")


def test_rules_command(capsys):
    rc, out, _ = run_cli(capsys, "rules")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "SUMMARY"]
    assert [line.split()[0] for line in lines[1:]] == [r.code for r in all_rules()]
    rc, out, _ = run_cli(capsys, "rules", "--json")
    assert [r["code"] for r in json.loads(out)] == [r.code for r in all_rules()]
    rc, out, _ = run_cli(capsys, "rules", "--markdown")
    assert out.startswith("# gradwarden rules")


# --------------------------------------------------------------------------- extension points
def test_subcommands_and_check_options_can_be_registered(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_REGISTRARS", [])
    monkeypatch.setattr(cli, "_CHECK_OPTION_HOOKS", [])
    monkeypatch.setattr(cli, "SUBCOMMAND_MODULES", ["gradwarden.not_written_yet:register"])

    @cli.register_subcommand
    def add_serve(sub):
        p = sub.add_parser("serve")
        p.add_argument("--stdio", action="store_true")
        p.set_defaults(handler=lambda args: 7 if args.stdio else 0)

    @cli.register_check_options
    def add_fix(p):
        p.add_argument("--fix", action="store_true")

    assert cli.main(["serve", "--stdio"]) == 7
    assert cli.build_parser().parse_args(["check", "--fix"]).fix is True


# --------------------------------------------------------------------------- entry points
def test_python_dash_m_and_console_script(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "--version"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"gradwarden {gradwarden.__version__}"
    script = Path(sys.executable).parent / ("gradwarden.exe" if os.name == "nt" else "gradwarden")
    if not script.exists():
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run([str(script), "rules"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0 and "GW201" in proc.stdout


def test_subprocess_parse_error_exit_code(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "bad.py"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("bad.py:1:7: GW001 error: syntax error")


# --------------------------------------------------------------------------- the real engine
REAL_HAZARD = """\
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.sigmoid(x)
y += 1
y.sum().backward()
"""


def test_real_engine_text(capsys, project):
    write("hazard.py", REAL_HAZARD)
    rc, out, err = run_cli(capsys, "check", "hazard.py")
    assert err == ""
    assert rc == 1
    assert re.search(r"^hazard\.py:4:\d+: GW201 ", out, re.M), out


def test_real_engine_json_and_noqa(capsys, project):
    write("hazard.py", REAL_HAZARD)
    rc, out, err = run_cli(capsys, "check", "--output-format", "json", "hazard.py")
    assert err == ""
    data = json.loads(out)
    assert any(d["code"] == "GW201" and d["location"]["row"] == 4 for d in data), data
    write("quiet.py", REAL_HAZARD.replace("y += 1", "y += 1  # noqa: GW201"))
    rc, out, err = run_cli(capsys, "check", "--output-format", "json", "quiet.py")
    assert not any(d["code"] == "GW201" for d in json.loads(out))


def test_real_engine_jobs(capsys, project):
    for i in range(24):
        write(f"m{i:02d}.py", REAL_HAZARD)
    rc, out1, err = run_cli(capsys, "check", "-j", "1", "--output-format", "json", ".")
    assert err == ""
    rc, out2, err = run_cli(capsys, "check", "-j", "2", "--output-format", "json", ".")
    assert err == ""
    assert out1 == out2
    assert sum(d["code"] == "GW201" for d in json.loads(out1)) >= 24


def test_real_engine_stdin(capsys, project, monkeypatch):
    rc, out, err = run_cli(capsys, "check", "--stdin-filename", "s.py", stdin=REAL_HAZARD.encode(),
                           monkeypatch=monkeypatch)
    assert err == ""
    assert re.search(r"^s\.py:4:\d+: GW201 ", out, re.M), out


def test_unexpected_exception_in_the_cli_is_exit_2(capsys, project, monkeypatch):
    def broken(*a, **k):
        raise ValueError("bug")

    monkeypatch.setattr("gradwarden.discovery.discover", broken)  # cli imports it when check runs
    rc, _, err = run_cli(capsys, "check", ".")
    assert rc == 2
    assert "error: internal error: ValueError: bug" in err


def test_diagnose_pipeline_for_the_language_server(project, fake_engine):
    from gradwarden.config import default_settings

    src = "a = 1  # FAKE GW201\nb = 2  # FAKE GW401  # noqa\nc = 3  # FAKE GW404\n"
    settings = default_settings().override(ignore=["GW404"], severity={"GW201": "hint"})
    diags = runner.diagnose(src, "doc.py", settings)
    assert [(d.code, d.row, d.severity) for d in diags] == [("GW201", 1, Severity.HINT)]
    assert len(runner.diagnose(src.encode(), "doc.py", None, ignore_noqa=True)) == 3


def test_a_deleted_working_directory_is_a_clear_usage_error(tmp_path):
    """Started from a folder that was removed (a deleted checkout): one clear line, exit 2,
    never a traceback."""
    import subprocess
    import sys

    gone = tmp_path / "gone"
    gone.mkdir()
    target = tmp_path / "t.py"
    target.write_text("x = 1\n")
    code = ("import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "from gradwarden.cli import main; sys.exit(main(['check', '--no-cache', sys.argv[2]]))")
    proc = subprocess.run([sys.executable, "-c", code, str(gone), str(target)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "working directory no longer exists" in proc.stderr and "Traceback" not in proc.stderr
