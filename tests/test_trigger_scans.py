"""Two scans of the trigger pre-pass are done faster than by their regular expression
(engine/front/triggers.py ``_OutKeyword``, engine/front/plainwrites.py ``unfollowed_matches``);
each must yield exactly the matches that expression's ``finditer`` yields (the readable spec,
here): on random texts over an alphabet of the characters that matter (every kind of whitespace
``\\s`` matches among them) and on the engine's own source."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gradwarden.engine.front import plainwrites, triggers

OUT = re.compile(r"[(,]\s*out\s*=(?!=)")
UNFOLLOWED = re.compile(r":=|global|nonlocal|match")

PIECES = ["(", ")", ",", "out", "o", "ut", "=", "==", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85",
          "\xa0", "\u2028", "\u3000", "x", "_", ":", ":=", "global", "glob", "nonlocal", "local", "match",
          "mat", "ch", "g", "n", "é", "#"]
SOURCE = Path(triggers.__file__).resolve().parents[2]


def _texts(n: int, seed: int):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))


def _spans(matches):
    return [(m.start(), m.end(), m.group()) for m in matches]


def _check(text: str) -> None:
    out = next(p for p in triggers._TRIGGERS if getattr(p, "pattern", "") == OUT.pattern)
    assert _spans(out.finditer(text)) == _spans(OUT.finditer(text)), repr(text)
    assert sorted(_spans(plainwrites.unfollowed_matches(text))) == _spans(UNFOLLOWED.finditer(text)), repr(text)


@pytest.mark.parametrize("seed", range(4))
def test_fast_scans_match_their_patterns_on_random_text(seed: int) -> None:
    for text in _texts(3000, seed):
        _check(text)


@pytest.mark.parametrize("text", [
    "torch.add(a, b, out=c)", "f(x,\n    out = y)", "f(out==1)", "f( out\t=1)", "(without=1)", "(\xa0out=1)",
    "x := 1", "global n; nonlocal m", "re.match(p, s)", "globalmatch", "nonlocal:=", "", "out=", "(out",
])
def test_fast_scans_on_chosen_text(text: str) -> None:
    _check(text)


def test_fast_scans_on_real_code() -> None:
    files = sorted(SOURCE.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        _check(path.read_text(encoding="utf-8"))
