"""The call finders of the trigger pre-pass (engine/front/triggers.py) scan the text backwards for
speed; each must find exactly what its forward regular expression (the readable spec, here)
finds, on random texts over an alphabet made of the characters that matter, and on real code."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gradwarden.engine.front.triggers import applied_names, called_names, qualified_calls

CALL = re.compile(r"(?<![\w.])(?<!def )(?<!class )([A-Za-z_]\w*+)\s*+\(")
QUAL = re.compile(r"(?<![\w.])([A-Z]\w*+)\.([A-Za-z_]\w*+)\s*+\(")
APPLY = re.compile(r"\b([A-Za-z_]\w*)\.apply\s*\(")

PIECES = ["(", ")", ".", " ", "\n", "\t", "def ", "class ", "def  ", "async def ", "apply", ".apply",
          "a", "B", "_", "1", "é", "Ω", "x1", "Net", "self", "super()", "forward", "=", ",", "[", "#", "'"]


def _texts(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))


def _check(text: str) -> None:
    assert sorted(called_names(text)) == sorted(CALL.findall(text)), text
    assert sorted(qualified_calls(text)) == sorted(QUAL.findall(text)), text
    assert sorted(applied_names(text)) == sorted(APPLY.findall(text)), text


@pytest.mark.parametrize("seed", range(4))
def test_backward_scans_match_the_forward_patterns_on_random_text(seed: int) -> None:
    for text in _texts(3000, seed):
        _check(text)


@pytest.mark.parametrize("text, calls, quals, applied", [
    ("def f(x):\n    return g(x) + self.h(x)\n", ["g"], [], []),
    ("class Net(nn.Module):\n    pass\nNet ()\n", ["Net"], [], []),
    ("Base.__init__(self, 1)\nx.Base.f()\n", [], [("Base", "__init__")], []),
    ("y = MyFn.apply(x)\nz = mod.Fn.apply (x)\n", [], [("MyFn", "apply")], ["MyFn", "Fn"]),
    ("é(1)\n_x1(2)\n1a(3)\n", ["_x1"], [], []),
])
def test_examples(text, calls, quals, applied) -> None:
    assert called_names(text)[::-1] == calls  # last first
    assert qualified_calls(text)[::-1] == quals
    assert applied_names(text)[::-1] == applied


def test_same_matches_on_this_repository_code() -> None:
    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "server" / "gradwarden" / "engine").rglob("*.py")) + sorted((root / "examples").rglob("*.py"))
    assert files
    for path in files:
        _check(path.read_text(encoding="utf-8"))
