"""``fixes/_syntax.compiles_after`` answers what ``compile`` answers for the whole new text,
while compiling only the top-level statements a fix touches: checked on seeded random edits
(valid and broken fragments, at statement boundaries, inside statements, in header and footer
lines) over several layouts."""
from __future__ import annotations

import random

import pytest

from gradwarden.fixes._doc import Doc, TextEdit, apply_text_edits
from gradwarden.fixes._syntax import compiles, compiles_after, touched_part

TEXTS = {
    "module": (
        "# header comment\n\nimport torch\nimport torch.nn as nn\n\n\n"
        "def f(x):\n    y = x * 2\n    if y.sum() > 0:\n        y = y.relu()\n    return y\n\n\n"
        "@torch.no_grad()\ndef g(x):\n    # inside\n    return (x +\n            1)\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        s = '''a\nb'''\n        return x\n\n"
        "x = torch.ones(2)\nz = f(x); w = g(x)\n# footer\n"),
    "no final newline": "import torch\nx = torch.ones(2)\nfor i in range(3):\n    x = x + i\nprint(x)",
    "script with loop": (
        "import torch\nopt = None\nfor step in range(10):\n    loss = torch.ones(1)\n"
        "    loss.backward()\n    if step % 2:\n        continue\n    print(step)\n"),
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    return x\r\n\r\ny = f(1)\r\n",
}

FRAGMENTS = [
    "x = 1\n", "    y = 2\n", "pass\n", "(", ")", "'''", '"', "def h():\n    return 1\n", "return 3\n",
    "global q\n", "nonlocal q\n", "from __future__ import annotations\n", "break\n", "\\\n", "  ",
    "await z\n", "yield 1\n", "x.clone()", ".clone()", "z = (\n", "1)\n", "if True:\n", "else:\n",
    "\n", "import torch\n", "lambda: (yield)\n", "del ()\n", "*a = b\n", "",
]


def _offsets(text: str, rng: random.Random) -> int:
    if rng.random() < 0.5:  # a line start (where fixes insert statements)
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        return rng.choice(starts)
    return rng.randrange(len(text) + 1)


def _random_edits(text: str, rng: random.Random):
    edits = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        a = _offsets(text, rng)
        b = a if rng.random() < 0.6 else min(len(text), a + rng.randrange(0, 12))
        edits.append(TextEdit(a, b, rng.choice(FRAGMENTS)))
    edits.sort(key=lambda e: (e.start, e.end))
    kept, pos = [], -1
    for e in edits:  # non-overlapping, as a fix's edits are
        if e.start >= pos:
            kept.append(e)
            pos = max(e.end, e.start + 1)
    return kept


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_answer_equals_compiling_the_whole_text(name):
    text = TEXTS[name]
    assert compiles(text)
    rng = random.Random(f"syntax-{name}")
    used_part = 0
    for _ in range(300):
        doc = Doc(text)
        edits = _random_edits(text, rng)
        new = apply_text_edits(text, edits)
        want = compiles(new)
        assert compiles_after(doc, edits, new) == want, (edits, new)
        assert compiles_after(Doc(text), edits) == want
        if touched_part(doc, edits) is not None:
            used_part += 1
    assert used_part > 100  # the part is what gets compiled, most of the time


def test_a_part_is_only_the_touched_statements():
    text = TEXTS["module"]
    doc = Doc(text)
    at = text.index("    y = x * 2\n")
    part = touched_part(doc, [TextEdit(at, at, "    x = x.clone()\n")])
    assert part is not None and part.startswith("\n\ndef f(x):\n    x = x.clone()\n") and "class M" not in part


def test_cross_statement_rules_compile_the_whole_text():
    future = "from __future__ import annotations\nimport torch\nx = 1\n"
    doc = Doc(future)
    assert touched_part(doc, [TextEdit(len(future), len(future), "y = 2\n")]) is None
    # a name assigned before a module-level global declaration of it: only the whole text says no
    text = "x = 1\n\ndef f():\n    pass\n\nglobal y\n"
    doc = Doc(text)
    at = text.index("    pass")
    new_edits = [TextEdit(0, 0, "y = 0\n")]
    assert compiles_after(doc, new_edits) is compiles(apply_text_edits(text, new_edits)) is False
    assert touched_part(doc, [TextEdit(at, at, "    z = 1\n")]) is None
