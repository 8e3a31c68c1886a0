"""``gradwarden check --add-noqa``: adopting gradwarden on a codebase that already has findings.
Every current finding gets a ``# noqa: CODE`` where the noqa reader honours it (existing
directives and comments kept), so the next check passes and a new hazard still fails it;
notebooks get it in their cells; nothing else of any file changes."""
from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from gradwarden import cli
from gradwarden.noqa import add_noqa_comments, build_noqa_map

ROOT = Path(__file__).resolve().parents[1]

# One hazard per function (each is analysed on its own), on the lines where a noqa is tricky to
# place: after another comment, beside an existing directive, on a backslash-continued statement,
# on a statement whose multi-line string starts on its first row.
TRICKY = textwrap.dedent('''\
    import torch


    def first():
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y += 1  # keep this comment
        y.sum().backward()


    def second():
        x = torch.randn(3, requires_grad=True)
        z = torch.exp(x)
        z.mul_(2)  # noqa:GW101 GW102
        z.sum().backward()


    def third():
        x = torch.randn(3, requires_grad=True)
        w = torch.tanh(x)
        w.add_(torch.ones(3), \\
               alpha=2)
        w.sum().backward()


    def fourth():
        x = torch.randn(3, requires_grad=True)
        v = torch.exp(x)
        v += 1 if """a
    b""" else 2
        v.sum().backward()
''')


def check(*args: str) -> int:
    return cli.main(["check", "--no-cache", *args])


def test_add_noqa_then_check_passes_and_a_new_hazard_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "proj")
    (tmp_path / "proj" / "tricky.py").write_text(TRICKY)
    before = {p.name: p.read_text() for p in (tmp_path / "proj").glob("*.py")}
    assert check("proj") == 1
    capsys.readouterr()
    assert check("--add-noqa", "proj") == 0
    err = capsys.readouterr().err
    assert "Added 11 noqa directives (11 code(s)) to 7 file(s)." in err, err
    assert check("proj") == 0, capsys.readouterr().out
    capsys.readouterr()
    for name, old in before.items():  # only comments were added, on the findings' lines
        new = (tmp_path / "proj" / name).read_text()
        old_lines, new_lines = old.splitlines(), new.splitlines()
        assert len(old_lines) == len(new_lines), name
        for a, b in zip(old_lines, new_lines):
            added = b[len(a.rstrip()):]
            assert a == b or (b.startswith(a.rstrip()) and (added.startswith("  # noqa: GW") or
                                                            (added.startswith(", GW") and "noqa" in a))), (name, a, b)
    tricky = (tmp_path / "proj" / "tricky.py").read_text()
    assert "y += 1  # keep this comment  # noqa: GW201" in tricky
    assert "z.mul_(2)  # noqa:GW101 GW102, GW201" in tricky  # existing codes and spelling kept
    assert "           alpha=2)  # noqa: GW201" in tricky  # a continued line: on its last row
    assert 'b""" else 2  # noqa: GW201' in tricky  # a multi-line string: after it closes
    assert check("--add-noqa", "proj") == 0  # nothing left to add: nothing changes
    assert all((tmp_path / "proj" / n).read_text() == (tmp_path / "proj" / n).read_text() for n in before)
    capsys.readouterr()
    # a new hazard still fails the check, alone
    path = tmp_path / "proj" / "tricky.py"
    path.write_text(path.read_text() + "\n\ndef fifth():\n    x2 = torch.randn(2, requires_grad=True)\n    x2 += 1\n")
    assert check("--output-format", "json", "proj") == 1
    found = json.loads(capsys.readouterr().out)
    assert [(d["filename"], d["code"], d["location"]["row"]) for d in found] == [("proj/tricky.py", "GW101", 36)]


def _notebook(cells):
    return {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def test_notebooks_get_the_comment_in_their_cells(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = {"output_type": "stream", "name": "stdout", "text": ["hi\n"]}
    nb = _notebook([
        {"cell_type": "markdown", "metadata": {}, "source": ["# a title\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["x"]}, "outputs": [out],
         "source": ["%matplotlib inline\n", "import torch\n", "x = torch.randn(3, requires_grad=True)\n",
                    "y = torch.sigmoid(x)\n"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": "y += 1\ny.sum().backward()"},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
         "source": "def init():\n    a = torch.randn(3, requires_grad=True)\n    a += 1"},
    ])
    text = json.dumps(nb, indent=2) + "\n"
    (tmp_path / "nb.ipynb").write_text(text)
    assert check("nb.ipynb") == 1
    assert check("--add-noqa", "nb.ipynb") == 0
    capsys.readouterr()
    assert check("nb.ipynb") == 0
    new = json.loads((tmp_path / "nb.ipynb").read_text())
    assert new["cells"][2]["source"] == "y += 1  # noqa: GW201\ny.sum().backward()"
    assert new["cells"][3]["source"].endswith("\n    a += 1  # noqa: GW101")
    assert new["cells"][:2] == nb["cells"][:2]  # outputs, metadata, magics, other cells untouched
    assert (tmp_path / "nb.ipynb").read_text() == text.replace("y += 1\\n", "y += 1  # noqa: GW201\\n").replace(
        'a += 1"', 'a += 1  # noqa: GW101"')  # the JSON layout kept


def test_file_encoding_and_newlines_are_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = ("# -*- coding: latin-1 -*-\r\nimport torch\r\ns = 'caf\xe9'\r\nx = torch.randn(3, requires_grad=True)\r\n"
           "x += 1\r\n")
    (tmp_path / "a.py").write_bytes(src.encode("latin-1"))
    (tmp_path / "b.py").write_bytes(b"\xef\xbb\xbfimport torch\nx = torch.randn(3, requires_grad=True)\nx += 1\n")
    assert check("--add-noqa", ".") == 0
    assert (tmp_path / "a.py").read_bytes() == src.replace("x += 1\r\n", "x += 1  # noqa: GW101\r\n").encode("latin-1")
    assert (tmp_path / "b.py").read_bytes().startswith(b"\xef\xbb\xbfimport torch\n")
    assert check(".") == 0


def test_add_noqa_refuses_what_it_cannot_do(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\nx = torch.randn(3, requires_grad=True)\nx += 1\n")
    (tmp_path / "broken.py").write_text("x = (\n")
    assert check("--add-noqa", "--fix", "a.py") == 2
    assert "cannot be combined with --fix" in capsys.readouterr().err
    assert (tmp_path / "a.py").read_text().endswith("x += 1\n")
    monkeypatch.setattr("sys.stdin", type("S", (), {"buffer": __import__("io").BytesIO(b"x = 1\n")})())
    assert check("--add-noqa", "-") == 2
    assert "not standard input" in capsys.readouterr().err
    # a syntax error cannot be silenced by a comment: said, the rest still done
    assert check("--add-noqa", ".") == 0
    err = capsys.readouterr().err
    assert "broken.py" in err and "syntax error" in err and "Added 1 noqa directive" in err
    assert (tmp_path / "broken.py").read_text() == "x = (\n"


@pytest.mark.parametrize("source, rows, expected", [
    ("x += 1\n", {1: ["GW101"]}, "x += 1  # noqa: GW101\n"),
    ("x += 1  # noqa\n", {1: ["GW101"]}, "x += 1  # noqa\n"),  # a bare noqa already covers it
    ("x += 1  # noqa: GW1\n", {1: ["GW101"]}, "x += 1  # noqa: GW1\n"),  # a prefix too
    ("x += 1  # noqa: GW201\n", {1: ["GW101", "GW201"]}, "x += 1  # noqa: GW201, GW101\n"),
    ("x += 1  # gradwarden: noqa: GW2\n", {1: ["GW101"]}, "x += 1  # gradwarden: noqa: GW2, GW101\n"),
    ("x += 1 # note\r\ny = 2\r\n", {1: ["GW101"]}, "x += 1 # note  # noqa: GW101\r\ny = 2\r\n"),
    ("s = '#'; x += 1\n", {1: ["GW101"]}, "s = '#'; x += 1  # noqa: GW101\n"),  # a # in a string is not a comment
    ("x.add_(1,\n       2)\n", {1: ["GW101"]}, "x.add_(1,  # noqa: GW101\n       2)\n"),  # brackets: on its row
    ("x.add_(1) + \\\n  2\n", {1: ["GW101"]}, "x.add_(1) + \\\n  2  # noqa: GW101\n"),
    ('x.add_(f"""\n{1}\n""")\n', {1: ["GW101"]}, 'x.add_(f"""\n{1}\n""")  # noqa: GW101\n'),
])
def test_add_noqa_comments(source, rows, expected):
    result = add_noqa_comments(source, rows)
    assert result.text == expected
    noqa = build_noqa_map(result.text)
    assert all(noqa.suppresses(code, row) for row, codes in rows.items() for code in codes)
    assert add_noqa_comments(result.text, rows).text == expected  # a second pass adds nothing
