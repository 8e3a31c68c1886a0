"""Jupyter notebooks in `gradwarden check`: the code cells in order as one program (magics
neutralised), `nb.ipynb:cell N:line:col` positions, folders include notebooks, and `--fix`
rewrites only the fixed cells' source (outputs, metadata, key order, layout kept).

The real engine runs throughout (no fake): the notebooks hold real hazards.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple, Union

import pytest

from gradwarden import cli
from gradwarden.fixes.pipeline import fix_text
from gradwarden.notebook import fix_notebook, mask_magics, read_notebook
from gradwarden.runner import diagnose

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def notebook(cells: List[Tuple[str, Union[str, List[str]]]], *, language: str = "python", outputs=None) -> dict:
    """An nbformat-4 notebook as Jupyter writes it (ids, execution counts, outputs)."""
    out = []
    for i, (kind, source) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {"tags": [f"t{i}"]}, "source": source}
        if kind == "code":
            cell["execution_count"] = i
            cell["outputs"] = (outputs or {}).get(i, [])
        out.append(cell)
    return {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.4"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def nbformat_bytes(nb: dict) -> bytes:
    """What nbformat.write produces: indent 1, sorted keys, raw UTF-8, final newline."""
    return (json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


HAZARD_CELLS = [
    ("markdown", "# Training\nThe cells below build the graph."),
    ("code", ["import torch\n", "%matplotlib inline\n", "x = torch.randn(3, requires_grad=True)"]),
    ("code", ["y = torch.sigmoid(x)\n", "y += 1"]),
    ("code", "!nvidia-smi\ny.sum().backward()"),
]
OUTPUTS = {3: [{"name": "stdout", "output_type": "stream", "text": ["Tue Nov 24 — GPU 0\n"]},
               {"data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]}, "metadata": {},
                "output_type": "display_data"}]}


def run_cli(capsys, *args: str) -> Tuple[int, str, str]:
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\n")
    return tmp_path


def write_nb(path: Path, nb: dict) -> bytes:
    data = nbformat_bytes(nb)
    path.write_bytes(data)
    return data


# --------------------------------------------------------------------------- checking
def test_hazard_in_notebook_file_with_cell_positions(capsys, project):
    write_nb(project / "model.ipynb", notebook(HAZARD_CELLS, outputs=OUTPUTS))
    rc, out, err = run_cli(capsys, "check", "--no-color", "model.ipynb")
    assert rc == 1, err
    lines = out.splitlines()
    # cell 3 is the third cell of the notebook (the markdown one counts, as in ruff)
    assert lines[0].startswith("model.ipynb:cell 3:2:1: GW201 [*] error: in-place `+=` modifies `y`")
    assert "(cell 3, line 1)" in lines[0] and "cell 4, line 2" in lines[0]  # the message's rows too
    assert "  model.ipynb:cell 3:1:5: note: `sigmoid` saves `y`" in out
    assert "  model.ipynb:cell 4:2:1: note: backward fails here" in out
    assert "All checks passed!" not in out


def test_folders_include_notebooks_and_config_can_exclude_them(capsys, project):
    (project / "nbs").mkdir()
    write_nb(project / "nbs" / "train.ipynb", notebook(HAZARD_CELLS))
    rc, out, _ = run_cli(capsys, "check", ".")
    assert rc == 1 and "nbs/train.ipynb:cell 3:2:1: GW201" in out
    rc, out, err = run_cli(capsys, "check", ".", "--extend-exclude", "*.ipynb")
    assert rc == 0 and "train.ipynb" not in out
    assert "No Python files found" in err
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nextend-exclude = ["*.ipynb"]\n')
    rc, out, _ = run_cli(capsys, "check", ".")
    assert rc == 0 and "train.ipynb" not in out
    rc, out, _ = run_cli(capsys, "check", "nbs/train.ipynb")  # a named file is always checked
    assert rc == 1 and "GW201" in out


def test_json_and_sarif_locations_name_the_cell(capsys, project):
    write_nb(project / "model.ipynb", notebook(HAZARD_CELLS))
    rc, out, _ = run_cli(capsys, "check", "--output-format", "json", "model.ipynb")
    (d,) = json.loads(out)
    assert (d["code"], d["cell"], d["location"], d["end_location"]) == (
        "GW201", 3, {"row": 2, "column": 1}, {"row": 2, "column": 7})
    assert [(r["cell"], r["location"]["row"]) for r in d["related"]] == [(3, 1), (4, 2)]
    (edit,) = d["fix"]["edits"]
    assert edit["cell"] == 3 and edit["location"]["row"] == 2
    rc, out, _ = run_cli(capsys, "check", "--output-format", "sarif", "model.ipynb")
    (result,) = json.loads(out)["runs"][0]["results"]
    loc = result["locations"][0]
    assert loc["physicalLocation"]["properties"] == {"cell": 3}
    assert loc["physicalLocation"]["region"]["startLine"] == 2
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == "model.ipynb:cell 3"
    rc, out, _ = run_cli(capsys, "check", "--output-format", "github", "model.ipynb")
    assert out.startswith("::error file=model.ipynb,title=gradwarden (GW201)::model.ipynb:cell 3:2:1: in-place")


def test_magics_and_shell_escapes_are_neutralised(capsys, project):
    cells = [
        ("code", "%%time\nthis is not python at all"),
        ("code", "%load_ext autoreload\n!pip install torch\nfiles = !ls\nimport torch\ntorch.nn?\n"),
        ("code", "x = torch.ones(2, requires_grad=True)\ny = x.exp()\nloss = y.sum()"),
        ("code", "loss.backward()"),
    ]
    write_nb(project / "ok.ipynb", notebook(cells))
    rc, out, _ = run_cli(capsys, "check", "ok.ipynb")
    assert (rc, out.strip()) == (0, "All checks passed!")


def test_syntax_error_is_reported_in_its_cell(capsys, project):
    write_nb(project / "bad.ipynb", notebook([("code", "import torch"), ("markdown", "x"), ("code", "def f(:\n")]))
    rc, out, _ = run_cli(capsys, "check", "bad.ipynb")
    assert rc == 1 and out.startswith("bad.ipynb:cell 3:1:7: GW001")


def test_broken_notebook_is_gw001_and_the_run_goes_on(capsys, project):
    (project / "broken.ipynb").write_text('{"cells": [')
    (project / "list.ipynb").write_text('[1, 2]')
    write_nb(project / "model.ipynb", notebook(HAZARD_CELLS))
    rc, out, _ = run_cli(capsys, "check", ".")
    assert rc == 1
    assert "broken.ipynb:1:1: GW001 error: cannot read notebook: not valid notebook JSON" in out
    assert "list.ipynb:1:1: GW001 error: cannot read notebook: not a Jupyter notebook" in out
    assert "model.ipynb:cell 3:2:1: GW201" in out


def test_non_python_notebook_is_not_analysed(capsys, project):
    write_nb(project / "r.ipynb", notebook([("code", "x <- c(1, 2)\ny += 1")], language="R"))
    rc, out, _ = run_cli(capsys, "check", "r.ipynb")
    assert (rc, out.strip()) == (0, "All checks passed!")


def test_notebook_on_stdin(capsys, project, monkeypatch):
    import io

    data = nbformat_bytes(notebook(HAZARD_CELLS))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, out, _ = run_cli(capsys, "check", "--stdin-filename", "nb.ipynb", "-")
    assert rc == 1 and out.startswith("nb.ipynb:cell 3:2:1: GW201")


# --------------------------------------------------------------------------- fixing
def test_fix_rewrites_only_the_fixed_cell(capsys, project):
    nb = notebook(HAZARD_CELLS, outputs=OUTPUTS)
    before = write_nb(project / "model.ipynb", nb)
    rc, out, err = run_cli(capsys, "check", "--fix", "model.ipynb")
    assert rc == 0, out + err
    assert "Applied 1 fix in 1 file(s)." in err
    after = (project / "model.ipynb").read_bytes()
    fixed = json.loads(after)
    want = json.loads(before)
    want["cells"][2]["source"] = ["y = torch.sigmoid(x)\n", "y = y + 1"]  # a list stays a list
    assert fixed == want  # outputs, metadata, ids, magics: all as they were
    # ... and so is the layout: the bytes differ only on the fixed line
    diff = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert diff == [(b'    "y += 1"', b'    "y = y + 1"')]
    assert len(before.splitlines()) == len(after.splitlines())
    # a second run changes nothing
    rc, out, _ = run_cli(capsys, "check", "--fix", "model.ipynb")
    assert rc == 0 and (project / "model.ipynb").read_bytes() == after


def test_fix_keeps_magics_in_the_fixed_cell_and_string_sources(project):
    nb = notebook([("code", "import torch\nx = torch.randn(3, requires_grad=True)"),
                   ("code", "%timeit x.sum()\ny = torch.sigmoid(x)\n!echo hi\ny += 1\n%env A=1\n"),
                   ("code", "y.sum().backward()")])
    data = json.dumps(nb, indent=2, ensure_ascii=True).encode()  # another writer: indent 2, no final newline
    res = fix_notebook(data, "m.ipynb", unsafe=False, analyze=lambda t: diagnose(t, "m.ipynb"))
    assert res.count == 1 and res.error is None
    got = json.loads(res.data)
    assert got["cells"][1]["source"] == "%timeit x.sum()\ny = torch.sigmoid(x)\n!echo hi\ny = y + 1\n%env A=1\n"
    nb["cells"][1]["source"] = got["cells"][1]["source"]
    assert res.data == json.dumps(nb, indent=2, ensure_ascii=True).encode()
    assert res.remaining == []


def test_diff_shows_cells_and_writes_nothing(capsys, project):
    before = write_nb(project / "model.ipynb", notebook(HAZARD_CELLS))
    rc, out, _ = run_cli(capsys, "check", "--diff", "model.ipynb")
    assert rc == 1
    assert out.splitlines()[:2] == ["--- a/model.ipynb:cell 3", "+++ b/model.ipynb:cell 3"]
    assert "-y += 1" in out and "+y = y + 1" in out
    assert (project / "model.ipynb").read_bytes() == before


def test_clean_notebook_round_trips_byte_for_byte(capsys, project):
    cells = [("code", "import torch\nx = torch.ones(2, requires_grad=True)"), ("code", "x.exp().sum().backward()")]
    data = write_nb(project / "ok.ipynb", notebook(cells, outputs={1: [{"output_type": "stream", "name": "stdout",
                                                                         "text": "é ✓\n"}]}))
    nb = read_notebook(data)
    from gradwarden.notebook import dump_notebook

    assert dump_notebook(nb) == data  # the writer reproduces nbformat's layout exactly
    rc, _, _ = run_cli(capsys, "check", "--fix", "ok.ipynb")
    assert rc == 0 and (project / "ok.ipynb").read_bytes() == data


def _split_into_cells(src: str) -> List[str]:
    """One cell per top-level statement (decorators stay with their definition)."""
    tree = ast.parse(src)
    lines = src.splitlines(True)
    starts = [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1 for n in tree.body]
    starts[0] = 0
    bounds = starts + [len(lines)]
    return ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("unsafe", [False, True], ids=["fix", "unsafe-fixes"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_as_notebooks_fix_like_the_scripts(path, unsafe):
    """Every example, one cell per statement: the fixed cells, joined, are the fixed script
    (fixes that move a statement to another cell included)."""
    src = path.read_text()
    want = fix_text(src, path.name, unsafe=unsafe)
    cells = _split_into_cells(src)
    data = nbformat_bytes(notebook([("code", c.splitlines(True)) for c in cells]))
    res = fix_notebook(data, "x.ipynb", unsafe=unsafe, analyze=lambda t: diagnose(t, "x.ipynb"))
    assert res.error is None and res.count == want.count
    got = read_notebook(res.data)
    assert "".join(got.sources[i] for i in got.code_cells) == want.source
    assert len(got.code_cells) == len(cells)


def test_mask_magics_keeps_rows():
    src = "%matplotlib inline\nx = 1\n!ls\n"
    assert mask_magics(src).count("\n") == src.count("\n")


def test_console_script_on_a_notebook(tmp_path):
    write_nb(tmp_path / "model.ipynb", notebook(HAZARD_CELLS))
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "model.ipynb"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("model.ipynb:cell 3:2:1: GW201")
