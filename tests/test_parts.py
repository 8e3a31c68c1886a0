"""A very large module is analysed in parts (engine/incremental/parts.py), never as one whole tree.

The real threshold is 1 M characters; here it is lowered (a parameter and a monkeypatched
constant) so that a generated file of ~30 kB splits into many parts and each test stays fast.
Every check compares with the analysis of the whole text (the same engine, one tree) and
asserts facts (diagnostics, rows, counts, which trees are alive), never a duration.
"""
from __future__ import annotations

import ast
import gc
import weakref
from typing import List

import pytest

from gradwarden.engine.incremental import parts
from gradwarden.engine.front import source
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Diagnostic, Severity

PART = 2_500  # characters of own code per part in these tests (about five blocks)

HEAD = '''"""A generated module (the shape of a large generated file)."""
import torch
import torch.nn as nn


'''

BLOCK = '''
class Net{k}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


def hazard{k}(x):
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


def uses_global{k}():
    out = (W{g} * 2).exp()
    out += 1
    out.sum().backward()


W{k} = torch.randn(3, requires_grad=True)


def clean{k}(model, opt, data):
    for x in data:
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''

MAIN = '''

if __name__ == "__main__":
    hazard0(torch.randn(3, requires_grad=True))
    model = Net0()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    clean0(model, opt, [torch.randn(4)])
'''


def generated(blocks: int = 60, main: bool = True) -> str:
    # uses_global{k} reads a W defined in another block, several parts away for most k
    body = "".join(BLOCK.format(k=k, g=(k * 7 + 3) % blocks) for k in range(blocks))
    return HEAD + body + (MAIN if main else "")


def whole(text: str) -> List[Diagnostic]:
    return analyze_source(text, "big.py")  # far under the real threshold: one tree


def in_parts(text: str, **kw) -> List[Diagnostic]:
    found = parts.analyze_in_parts(text, "big.py", part_chars=PART, **kw)
    assert found is not None, "the text should split"
    return found


def without_note(diags: List[Diagnostic]) -> List[Diagnostic]:
    return [d for d in diags if not d.message.startswith("analysed in parts")]


@pytest.fixture(scope="module")
def big() -> str:
    text = generated()
    assert len(text) > 10 * PART
    return text


def test_parts_find_what_the_whole_file_analysis_finds(big: str) -> None:
    report = parts.PartsReport()
    got = in_parts(big, report=report)
    want = whole(big)
    assert report.parts >= 10
    # hazards inside one part (GW201 in hazard{k}), across parts through a global (W{g}), and
    # the __main__ block's call of hazard0 (first part), which makes it an error
    assert len([d for d in want if d.code == "GW201"]) == 2 * 60
    assert without_note(got) == want


def test_main_block_sees_definitions_of_the_first_part(big: str) -> None:
    got = {(d.row, d.code): d for d in in_parts(big)}
    row, row1 = [i for i, line in enumerate(big.splitlines(), 1) if line.strip() == "y.mul_(2)"][:2]
    called = got[(row, "GW201")]
    # called from the __main__ block with a tensor that requires grad: an error, as in the
    # whole file, not the information-level finding of hazard0 analysed on its own
    assert called.severity == Severity.ERROR
    assert "we cannot tell" not in called.message
    other = got[(row1, "GW201")]
    assert other.severity == Severity.INFORMATION  # hazard1: never called, analysed on its own


def test_one_information_note_says_the_file_was_split(big: str) -> None:
    notes = [d for d in in_parts(big) if d.message.startswith("analysed in parts")]
    assert len(notes) == 1
    assert notes[0].severity == Severity.INFORMATION and notes[0].code == "GW002"
    assert (notes[0].row, notes[0].column) == (1, 1)


def test_analyze_source_splits_only_above_the_threshold(big: str, monkeypatch) -> None:
    monkeypatch.setattr(parts, "PART_CHARS", PART)
    want = analyze_source(big, "big.py")
    assert not any(d.message.startswith("analysed in parts") for d in want)
    monkeypatch.setattr(source, "PARTS_ABOVE_CHARS", len(big) - 1)
    split = analyze_source(big, "big.py")
    assert without_note(split) == want and len(split) == len(want) + 1


def test_one_part_tree_alive_at_a_time(big: str) -> None:
    trees: List[weakref.ref] = []
    alive_when_parsed: List[int] = []

    def on_tree(k: int, tree: ast.Module) -> None:
        gc.collect()
        alive_when_parsed.append(sum(ref() is not None for ref in trees))
        trees.append(weakref.ref(tree))

    report = parts.PartsReport()
    in_parts(big, on_tree=on_tree, report=report)
    assert len(trees) == report.parts >= 10
    assert alive_when_parsed == [0] * report.parts  # the previous part's tree is gone
    gc.collect()
    assert all(ref() is None for ref in trees)


def test_each_part_holds_its_code_and_only_what_it_uses(big: str) -> None:
    report = parts.PartsReport()
    in_parts(big, report=report)
    rows = big.count("\n")
    own = [o for o, _ in report.part_rows]
    assert sum(own) <= rows and max(own) < rows // 5
    # dependencies: the imports, a W from another block, Net0/hazard0/clean0 for __main__
    assert all(dep < 60 for _, dep in report.part_rows), report.part_rows


def test_module_code_changing_an_object_goes_with_its_uses() -> None:
    # X is made in one part, made to require grad by module code there, and used by a function
    # many parts later: without that statement the function would be analysed on an X that
    # does not require grad (a GW701 the whole file does not have, and its GW201 missed)
    late = generated(20, main=False).replace("Net", "B").replace("hazard", "hb").replace("uses_global", "ug")
    late = late.replace("clean", "cb").replace("W", "V")
    text = (generated(20, main=False) + "\n\nX = torch.randn(3)\nX.requires_grad_(True)\n" + late
            + "\n\ndef use_x():\n    y = X.exp()\n    y += 1\n    y.sum().backward()\n")
    report = parts.PartsReport()
    got = without_note(in_parts(text, report=report))
    assert report.parts >= 8
    tail = text.count("\n") - 4
    assert [(d.row, d.code) for d in got if d.row > tail] == [(tail + 3, "GW201")]
    assert got == whole(text)


def test_grad_turned_off_by_module_code_reaches_every_part() -> None:
    late = generated(20, main=False).replace("Net", "B").replace("hazard", "hb").replace("uses_global", "ug")
    text = generated(20, main=False) + "\n\ntorch.set_grad_enabled(False)\n" + late.replace("clean", "cb").replace("W", "V")
    want = whole(text)
    assert len(want) < 5  # no graph is built anywhere: almost nothing to report
    assert without_note(in_parts(text)) == want


# --------------------------------------------------------------------------- splitting
def test_triple_quoted_string_with_column_0_defs_is_not_split() -> None:
    doc = 'TEMPLATE = """\n' + "".join(f"def fake{i}(x):\n    x.add_(1)\nclass Fake{i}:\n    pass\n" for i in range(400)) + '"""\n'
    text = generated(20, main=False) + doc + generated(20, main=False).replace('"""A generated', '"""Again a generated')
    lines = parts._LINES.findall(text)
    split = parts.split_chunks(text, lines, "big.py")
    assert split is not None and split.error is None
    start = text[:text.index("TEMPLATE")].count("\n") + 1
    end = start + doc.count("\n") - 1
    holding = [c for c in split.chunks if c.start <= start <= c.end]
    assert len(holding) == 1 and holding[0].end >= end  # the string is one chunk's, whole
    assert not [c for c in split.chunks if start < c.start <= end]
    assert "TEMPLATE" in holding[0].binds
    assert without_note(in_parts(text)) == whole(text)


def test_decorated_definitions_and_bracketed_continuations_stay_whole() -> None:
    extra = '''
@torch.no_grad()
def copy_in(dst, src):
    dst.copy_(src)


TABLE = [
1,
2,
]
'''
    text = generated(30, main=False) + extra + generated(30, main=False).replace("Net", "Other")
    lines = parts._LINES.findall(text)
    split = parts.split_chunks(text, lines, "big.py")
    assert split is not None and split.error is None
    deco = text[:text.index("@torch.no_grad()")].count("\n") + 1
    assert [c.start for c in split.chunks if c.start in (deco, deco + 1)] == [deco]
    table = text[:text.index("TABLE = [")].count("\n") + 1
    assert not [c for c in split.chunks if table < c.start <= table + 3]
    assert without_note(in_parts(text)) == whole(text)


@pytest.mark.parametrize("broken", [
    "def broken(x:\n    return x\n",  # a bad statement
    "x = (1,\n",  # a bracket never closed, deep in the file
    "s = '''never ends\n",  # an unterminated triple-quoted string
    "if True:\nx = 1\n",  # a block without its indented body
    "def f():\n    pass\n  oops = 1\n",  # an unindent that matches no level
    "@decorator\n",  # a decorator with nothing to decorate
    "x = = 1\n",  # a one-row statement
])
def test_syntax_error_deep_in_a_big_file_is_the_whole_file_s(broken: str) -> None:
    text = generated(40, main=False) + "\n" + broken + generated(20, main=False).replace("Net", "Late")
    want = whole(text)
    assert len(want) == 1 and want[0].code == "GW001"
    got = parts.analyze_in_parts(text, "big.py", part_chars=PART)
    assert got == want, (got, want)


def test_a_text_that_cannot_split_is_left_to_the_whole_analysis() -> None:
    one_statement = "def f(x):\n" + "    x.add_(1)\n" * 5000
    assert parts.analyze_in_parts(one_statement, "big.py", part_chars=PART) is None
    assert parts.analyze_in_parts(generated(40) + "x = 1\0\n", "big.py", part_chars=PART) is None


# --------------------------------------------------------------------------- the language server
def test_the_editor_paths_analyse_a_large_text_in_parts_and_keep_no_tree(big: str, monkeypatch) -> None:
    from gradwarden.engine.incremental.incremental import IncrementalAnalyzer
    from gradwarden.lsp.hover_table import EMPTY, build

    small = generated(3)
    inc = IncrementalAnalyzer()
    assert inc.analyze(small, "big.py") == analyze_source(small, "big.py")
    assert inc._reparser._body  # a text under the threshold: its tree is kept for the next edit
    monkeypatch.setattr(parts, "PART_CHARS", PART)
    monkeypatch.setattr(source, "PARTS_ABOVE_CHARS", len(big) - 1)
    trees: List[int] = []
    real = parts.analyze_in_parts
    monkeypatch.setattr(parts, "analyze_in_parts", lambda *a, **kw: real(*a, on_tree=lambda k, t: trees.append(k), **kw))
    got = inc.analyze(big, "big.py")
    assert without_note(got) == whole_of(big, monkeypatch) and len(trees) >= 10
    assert inc.last_stats.full and not inc._reparser._body  # the earlier tree is let go too
    assert build(big, "big.py") is EMPTY


def whole_of(text: str, monkeypatch) -> List[Diagnostic]:
    with monkeypatch.context() as m:
        m.setattr(source, "PARTS_ABOVE_CHARS", 10 ** 9)
        return analyze_source(text, "big.py")


def test_a_large_text_with_nothing_to_analyse_is_only_checked_for_syntax() -> None:
    table = "TABLE = {\n" + "".join(f"    'k{i}': {i},\n" for i in range(800)) + "}\n"
    text = "".join(table.replace("TABLE", f"TABLE{k}") for k in range(8))
    trees: List[int] = []
    assert parts.analyze_in_parts(text, "big.py", part_chars=PART, on_tree=lambda k, t: trees.append(k)) == []
    assert trees == []
    broken = text + "TABLE = {\n"
    assert parts.analyze_in_parts(broken, "big.py", part_chars=PART) == whole(broken) != []


def test_code_only_the_compiler_rejects_is_analysed_as_in_the_whole_file() -> None:
    # ast.parse accepts these (the whole-file analysis gives no GW001); the symbol table,
    # which checks each chunk, rejects them: the chunk's names then come from its tree
    odd = "def odd(a):\n    global a\n    a.add_(1)\n\n\nnonlocal q\n"
    text = generated(30, main=False) + "\n\n" + odd + generated(30, main=False).replace("Net", "Late")
    split = parts.split_chunks(text, parts._LINES.findall(text), "big.py")
    assert split is not None and split.error is None
    row = text[:text.index("def odd")].count("\n") + 1
    assert [c.binds for c in split.chunks if c.start == row] == [{"odd"}]
    assert without_note(in_parts(text)) == whole(text)


@pytest.mark.parametrize("absurd", ["x = " + "-" * 200_000 + "1\n", "y = " + "+".join(["a"] * 100_000) + "\n"])
def test_code_the_parser_cannot_hold_gets_the_whole_file_s_note(absurd: str, monkeypatch) -> None:
    text = generated(30, main=False) + absurd + generated(30, main=False).replace("Net", "Late")
    want = whole(text)
    assert [d.code for d in want] == ["GW001"] and "cannot parse file" in want[0].message
    assert parts.analyze_in_parts(text, "big.py", part_chars=PART) is None  # left to the whole-text path
    monkeypatch.setattr(source, "PARTS_ABOVE_CHARS", 1000)
    assert analyze_source(text, "big.py") == want
