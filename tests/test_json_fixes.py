"""The JSON output carries, for every diagnostic that a fix run would fix, the edits of that
fix: another tool that applies the `safe` edits of `--output-format json` gets the file that
`--fix` writes, and applying every `fix` gets what `--fix --unsafe-fixes` writes. Checked on
every example of examples/, every VALID/INVALID snippet of the rules and every labelled case
(../shared/cases), through the CLI.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from gradwarden import cli
from gradwarden.rules import all_rules

from case_support import cases_dir_problem, load_cases, load_revealed

ROOT = Path(__file__).resolve().parents[1]
SOURCES: List[Tuple[str, str]] = [(p.stem, p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]
SOURCES += [(f"{r.code}-{kind}-{i}", textwrap.dedent(s).strip("\n") + "\n")
            for r in all_rules() for kind, snippets in (("invalid", r.INVALID), ("valid", r.VALID))
            for i, s in enumerate(snippets)]
SOURCES += [(f"case-{c.rel}", c.path.read_text(encoding="utf-8")) for c in load_cases()]
SOURCES += [(f"case-{c.rel}", c.path.read_text(encoding="utf-8")) for c in load_revealed() if c.is_hazard]


def apply_json_edits(text: str, edits: List[Dict]) -> str:
    """Apply edits given as 1-based (row, column) ranges, end exclusive — the way a foreign
    tool would, from the last to the first."""
    starts = [0]
    for line in text.splitlines(True):
        starts.append(starts[-1] + len(line))

    def offset(loc: Dict) -> int:
        return starts[loc["row"] - 1] + loc["column"] - 1

    spans = sorted(((offset(e["location"]), offset(e["end_location"]), e["content"]) for e in edits), reverse=True)
    for (a, b, _), (c, d, _) in zip(spans, spans[1:]):
        assert d <= a, f"overlapping edits {spans}"
    for a, b, content in spans:
        text = text[:a] + content + text[b:]
    return text


def run(capsys, *args: str) -> Tuple[int, str]:
    rc = cli.main(list(args))
    out, _ = capsys.readouterr()
    return rc, out


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_json_edits_reproduce_fix_and_unsafe_fixes(name, source, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\n")
    path = tmp_path / "m.py"
    path.write_text(source)
    _, out = run(capsys, "check", "--output-format", "json", "m.py")
    diags = json.loads(out)
    fixes = [d["fix"] for d in diags if d["fix"]]
    safe_edits = [e for f in fixes if f["applicability"] == "safe" for e in f["edits"]]
    all_edits = [e for f in fixes for e in f["edits"]]
    assert all(f["edits"] for f in fixes), "a fix reported without edits"

    run(capsys, "check", "--fix", "m.py")
    assert apply_json_edits(source, safe_edits) == path.read_text()
    path.write_text(source)
    run(capsys, "check", "--fix", "--unsafe-fixes", "m.py")
    assert apply_json_edits(source, all_edits) == path.read_text()
    # after the fix run, nothing it could fix is reported fixable
    _, after = run(capsys, "check", "--output-format", "json", "m.py")
    assert [d["code"] for d in json.loads(after) if d["fix"]] == []


def test_the_fixable_count_is_what_fix_applies(tmp_path, monkeypatch, capsys):
    """``[*] N fixable with --fix (M more with --unsafe-fixes)`` on examples/: ``--fix`` applies
    N fixes, then nothing is marked fixable with --fix; ``--fix --unsafe-fixes`` applies the M
    others, then nothing is marked at all."""
    import re
    import shutil

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\n")
    monkeypatch.chdir(tmp_path)

    def marks() -> Tuple[int, int, int]:
        _, text = run(capsys, "check", "--no-color", "examples/")
        m = re.search(r"^\[\*\] (\d+) fixable with --fix(?: \((\d+) more with --unsafe-fixes\))?$", text, re.M)
        only_unsafe = re.search(r"^\[\*\] (\d+) fixable with --fix --unsafe-fixes$", text, re.M)
        if only_unsafe:
            return 0, int(only_unsafe.group(1)), text.count(" [*] ")
        return (int(m.group(1)), int(m.group(2) or 0), text.count(" [*] ")) if m else (0, 0, text.count(" [*] "))

    def applied(*args: str) -> int:
        cli.main(["check", *args, "examples/"])
        m = re.search(r"Applied (\d+) fix", capsys.readouterr().err)
        return int(m.group(1)) if m else 0

    safe, more, marked = marks()
    assert safe > 0 and more > 0 and marked == safe
    assert applied("--fix") == safe
    assert marks() == (0, more, 0)
    assert applied("--fix", "--unsafe-fixes") == more
    assert marks() == (0, 0, 0)


def test_the_labelled_cases_are_there():
    assert cases_dir_problem() is None, cases_dir_problem()
    assert sum(1 for n, _ in SOURCES if n.startswith("case-")) >= 100


def test_every_fixable_example_has_its_edits(tmp_path, monkeypatch, capsys):
    """The issue's case: --fix or --unsafe-fixes changes 6 of the 7 example findings, so the
    JSON must carry at least 6 fixes with edits (it had 1)."""
    monkeypatch.chdir(ROOT)
    _, out = run(capsys, "check", "--output-format", "json", "examples/")
    with_edits = [d for d in json.loads(out) if d["fix"] and d["fix"]["edits"]]
    assert len(with_edits) >= 6
    for d in json.loads(out):
        for f in d["fixes"]:  # every suggestion is listed; those that can be realised carry edits
            assert set(f) == {"kind", "message", "applicability", "preferred", "edits"}


def test_text_marks_match_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    _, out = run(capsys, "check", "--output-format", "json", "examples/")
    diags = json.loads(out)
    safe = sum(1 for d in diags if d["fix"] and d["fix"]["applicability"] == "safe")
    unsafe = sum(1 for d in diags if d["fix"] and d["fix"]["applicability"] == "unsafe")
    _, text = run(capsys, "check", "--no-color", "examples/")
    assert text.count(" [*] ") == safe
    assert text.splitlines()[-1] == f"[*] {safe} fixable with --fix ({unsafe} more with --unsafe-fixes)"
