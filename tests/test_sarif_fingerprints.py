"""SARIF for code scanning keeps its memory: each result's ``partialFingerprints`` hash the rule,
the file and the normalised code around the finding, never its line number, so inserting lines
above a finding (or re-indenting it, or adding a comment) keeps the alert's identity, while a
change of the flagged code makes a new one. GitHub's limits on one upload are kept, with a clear
message. The SARIF still validates against the official schema."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema

from gradwarden import cli, formats

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
KEY = formats.FINGERPRINT_KEY

SCRIPT = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()


    def twice():
        a = torch.randn(3, requires_grad=True)
        a += 1
        return a


    def again():
        a = torch.randn(3, requires_grad=True)
        a += 1
        return a
""")


def sarif(capsys, *args: str) -> dict:
    cli.main(["check", "--no-cache", "--output-format", "sarif", *args])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    return doc


def prints(doc: dict):
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"], r["partialFingerprints"][KEY])
            for r in doc["runs"][0]["results"]]


def test_fingerprints_survive_lines_inserted_above(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(SCRIPT)
    before = prints(sarif(capsys, "train.py"))
    assert [(rule, line) for rule, line, _ in before] == [("GW201", 5), ("GW101", 11), ("GW101", 17)]
    # the same code twice in a file: told apart by occurrence, as GitHub's own line hash does
    assert before[1][2].split(":")[0] == before[2][2].split(":")[0] and before[1][2] != before[2][2]
    assert len({fp for _, _, fp in before}) == 3
    moved = "#!/usr/bin/env python\n# Copyright\n\nimport os  # new import\nprint(os.sep)\n\n" + SCRIPT
    (tmp_path / "train.py").write_text(moved)
    after = prints(sarif(capsys, "train.py"))
    assert [line for _, line, _ in after] == [11, 17, 23]  # the lines moved...
    assert [fp for _, _, fp in after] == [fp for _, _, fp in before]  # ...the identities did not
    # re-indenting or commenting the flagged line keeps it too; changing its code does not
    (tmp_path / "train.py").write_text(moved.replace("y += 1\n", "y  +=  1   # a comment\n"))
    assert [fp for _, _, fp in prints(sarif(capsys, "train.py"))] == [fp for _, _, fp in before]
    (tmp_path / "train.py").write_text(moved.replace("y += 1\n", "y += 2\n"))
    changed = prints(sarif(capsys, "train.py"))
    assert changed[0][2] != before[0][2] and [fp for _, _, fp in changed[1:]] == [fp for _, _, fp in before[1:]]


def test_fingerprints_in_notebooks_survive_a_cell_inserted_above(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def nb(cells):
        return {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                          for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}

    cells = ["import torch\nx = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\n", "y += 1\ny.sum().backward()\n"]
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb(cells)))
    [(_, _, before)] = prints(sarif(capsys, "nb.ipynb"))
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb(["import math\nprint(math.pi)\n"] + cells)))
    doc = sarif(capsys, "nb.ipynb")
    [(_, _, after)] = prints(doc)
    assert after == before
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["properties"] == {"cell": 3}


def test_githubs_limits_are_kept_with_a_message(capsys, tmp_path, monkeypatch):
    """Above the results a run may have, the most severe are kept (an upload above the limit
    is rejected whole), and the tool notification and stderr say what was left out."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(formats, "SARIF_MAX_RESULTS", 5)
    monkeypatch.setattr(formats, "SARIF_SHOWN_RESULTS", 4)
    code = cli.main(["check", "--no-cache", "--output-format", "sarif", "examples/"])
    out, err = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    results = doc["runs"][0]["results"]
    assert len(results) == 5
    levels = [r["level"] for r in results]
    assert levels.count("error") == 4 and levels.count("warning") == 1  # the 4 errors, then warnings (of 3)
    notes = [n["message"]["text"] for n in doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert any("7 results exceed" in n and "2 left out" in n for n in notes), notes
    assert any("shows only the 4" in n for n in notes), notes
    assert "warning: 7 results exceed GitHub code scanning's limit" in err
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_real_limits_are_githubs():
    # docs.github.com, "SARIF results exceed limit" / "SARIF file is too large"
    assert (formats.SARIF_MAX_RESULTS, formats.SARIF_SHOWN_RESULTS, formats.SARIF_MAX_LOCATIONS) == (25_000, 5_000, 1_000)
    assert formats.SARIF_MAX_GZIP_BYTES == 10 * 1024 * 1024
