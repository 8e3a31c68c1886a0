"""``triggers.nothing_to_analyse``: the shortcut that skips the interpreter (and its import) for
a module whose text holds no trigger of any rule. It must be exact: on every file where it says
"nothing", the full interpreter finds nothing either.

Trigger-free programs are rare among labelled cases (a hazard needs a trigger), so the test
also derives them: each labelled program with every line that holds a trigger replaced by
``pass`` (models, forwards, loaders and loops stay), kept when it still parses.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from case_support import cases_dir_path, default_cases_dir
from gradwarden.engine.assembly import analyze_module
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.front.triggers import _TRIGGERS, _check_trigger, nothing_to_analyse

REPO = Path(__file__).resolve().parents[1]


def _corpus() -> List[Path]:
    roots = [cases_dir_path(), default_cases_dir().parent / "revealed", REPO / "tests" / "data" / "variants",
             REPO / "tests" / "runtime_examples"]
    files = [p for r in roots if r.is_dir() for p in sorted(r.rglob("*.py"))]
    assert len(files) > 300, f"labelled programs missing under {roots}"
    return files


def _trigger_rows(text: str) -> set:
    rows = set()
    for pattern in _TRIGGERS:
        for m in pattern.finditer(text):
            if _check_trigger(text, m):
                rows.add(text.count("\n", 0, m.start()))
    return rows


def _without_triggers(text: str) -> str:
    rows = _trigger_rows(text)
    lines = text.split("\n")
    for i in rows:
        line = lines[i]
        lines[i] = line[:len(line) - len(line.lstrip())] + "pass"
    out = "\n".join(lines)
    return re.sub(r"\b(Function|apply)\b", "Fn", out)


def _programs() -> Iterator[Tuple[str, str]]:
    for path in _corpus():
        text = path.read_text(encoding="utf-8")
        yield path.name, text
        yield path.name + " (triggers removed)", _without_triggers(text)


def _analysed(text: str, name: str):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    return analyze_module(tree, SourceText(text), name)


def test_the_shortcut_is_exact_on_labelled_and_derived_programs():
    skipped = 0
    for name, text in _programs():
        if not nothing_to_analyse(text):
            continue
        diags = _analysed(text, name)
        if diags is None:
            continue
        skipped += 1
        assert diags == [], f"{name}: the interpreter finds {[d.code for d in diags]} where the shortcut skips"
    assert skipped >= 100, f"only {skipped} trigger-free programs: the test proves little"


def test_no_labelled_hazard_is_skipped():
    from case_support import load_cases, load_revealed

    hazards = [c for c in load_cases() + load_revealed() if c.is_hazard]
    assert len(hazards) > 50
    for case in hazards:
        assert not nothing_to_analyse(case.path.read_text(encoding="utf-8")), case.rel


@pytest.mark.parametrize("text, expected", [
    ("import torch\nx = torch.ones(2)\n", True),
    ("x = 1\nprint('a += 1')\n", False),  # a trigger in a string costs an analysis, nothing more
    ("import torch\nx = torch.ones(2)\nx.add_(1)\n", False),
    ("y = x.data\n", False),
    ("class F(Function):\n    pass\n", False),  # an autograd.Function imported under its own name
    ("y = F.apply(x)\n", False),
    ("if a <= b == c != d >= e:\n    pass\n", True),  # comparisons are not augmented assignments
])
def test_what_counts_as_something_to_analyse(text, expected):
    assert nothing_to_analyse(text) is expected
