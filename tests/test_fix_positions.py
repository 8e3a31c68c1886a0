"""The fixer's positions, made one top-level statement at a time (``fixes/_positions.py``), are
libcst's own: every node's range equals ``PositionProvider``'s, on awkward layouts and on the
repository's own sources. A fix that asks about one function makes only that function's."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gradwarden.fixes._doc import Doc
from gradwarden.engine.diagnostic import Span

REPO = Path(__file__).resolve().parents[1]

LAYOUTS = {
    "plain": "import torch\n\nx = 1\ny = x + 1\n",
    "no final newline": "import torch\nx = torch.ones(2)\nx.add_(1)",
    "no final newline, footer comment": "x = 1\n# end",
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    return x.relu_()\r\n",
    "lone cr": "import torch\rdef f(x):\r    y = x * 2\r    return y\r",
    "header comments": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\n\n'''doc'''\nimport torch\n",
    "decorators with comments between": (
        "import torch\n\n# about f\n\n@torch.no_grad()\n# between\n\n@staticmethod\n"
        "def f(x):\n    return x\n\n\n@dec\nclass C:\n    # inside\n    def g(self):  # trailing\n"
        "        pass\n        # indented footer\n\n# module footer\n"),
    "small statements on one line": "import torch; x = torch.ones(2); x.add_(1)\nif x: y = 1; z = 2\n",
    "async and nested": "async def f():\n    async with a as b:\n        async for c in b:\n            await c\n",
    "continuations": "x = [1,\n     2]\ny = 1 + \\\n    2\nz = '''a\nb'''\nw = (\n  3)\n",
    "tabs and form feed": "def f(x):\n\ty = x\n\treturn y\n\x0c\ndef g():\n\tpass\n",
    "only comments": "# nothing\n\n# here\n",
    "empty": "",
    "class footer lines": "class A:\n    x = 1\n\n    # deeper\n# shallow\n\ny = 2\n",
    "match": "match x:\n    case 1:\n        y = 1\n    case _:\n        pass\n",
    "semicolon trailing": "x = 1;\ny = 2 ;  # c\n",
}


def _nodes(root: cst.CSTNode):
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _same_as_libcst(text: str) -> None:
    reference_tree = cst.parse_module(text)
    reference = MetadataWrapper(reference_tree, unsafe_skip_copy=True).resolve(PositionProvider)
    doc = Doc(text)
    assert doc.ok
    ours = doc._pos
    # statements first (as a fix asks), then every node, the header and footer lines included
    pairs = list(zip(_nodes(reference_tree), _nodes(doc.module)))
    assert len(pairs) == len(_nodes(reference_tree))
    for want_node, node in pairs:
        if isinstance(node, cst.Module):
            continue
        assert (want_node in reference) == (node in ours), type(node).__name__
        if want_node in reference:
            assert ours[node] == reference[want_node], (type(node).__name__, ours[node], reference[want_node])


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_positions_equal_libcst_on_awkward_layouts(name):
    _same_as_libcst(LAYOUTS[name])


def test_positions_equal_libcst_on_the_fixers_own_sources():
    fixes = REPO / "server" / "gradwarden" / "fixes"
    files = [fixes / "_doc.py", fixes / "detach.py", fixes / "clone.py"]
    for path in files:
        _same_as_libcst(path.read_text(encoding="utf-8"))


def test_every_statement_is_made_on_its_own_without_the_whole_module():
    text = (REPO / "server" / "gradwarden" / "fixes" / "_doc.py").read_text(encoding="utf-8")
    doc = Doc(text)
    positions = doc._pos
    assert positions.first_lines is not None
    for i in range(len(doc.module.body)):
        assert positions._make_statement(i), i  # its generated code matched the text at its line
    assert positions.whole_made == 0


def test_a_question_about_one_function_makes_only_that_function():
    text = "import torch\n\n" + "".join(
        f"def f{i}(x):\n    y = x * {i}\n    return y.relu_()\n\n\n" for i in range(20))
    doc = Doc(text)
    row = text.splitlines().index("def f7(x):") + 3  # the return line of f7
    line = doc.row_text(row)
    col = line.index("y.relu_()") + 1
    node = doc.find(Span(row, col, row, col + len("y.relu_()")), cst.Call)
    assert node is not None and doc.code(node) == "y.relu_()"
    assert doc._pos.statements_made == 1  # f7 alone: the other 20 statements were skipped
    assert doc._pos.whole_made == 0
    assert doc.scope_of(node).name.value == "f7"


def test_a_layout_ast_reads_differently_falls_back_to_the_whole_module():
    # a decorator's @ on its own continued line: ast's line is the expression's, not the @'s
    text = "import torch\n@\\\ntorch.no_grad()\ndef f(x):\n    return x\n"
    _same_as_libcst(text)
    doc = Doc(text)
    func = doc.module.body[1]
    doc.rng(func)
    assert doc._pos.whole_made == 1
