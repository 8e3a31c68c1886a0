"""`gradwarden check --output-format sarif` is valid SARIF 2.1.0: validated against the official
OASIS schema (shipped as test data, tests/data/sarif/) for findings with fixes and related
locations, a notebook, an internal error, and a clean run."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gradwarden import cli, runner

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def sarif(capsys, *args: str) -> dict:
    cli.main(["check", "--output-format", "sarif", *args])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)  # raises with the failing path
    return doc


def test_schema_is_the_official_one():
    assert SCHEMA["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    jsonschema.Draft4Validator.check_schema(SCHEMA)


def test_the_schema_rejects_what_it_should():
    """The validation is not vacuous: a result without a message is refused."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "GW201"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(bad)


def test_examples_with_fixes_and_related_locations(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = sarif(capsys, "examples/")
    results = doc["runs"][0]["results"]
    assert len(results) >= 7
    assert any("relatedLocations" in r for r in results)
    fixed = [r for r in results if "fixes" in r]
    assert len(fixed) >= 6  # every fix a fix run applies, with its replacements
    assert all(r["fixes"][0]["artifactChanges"][0]["replacements"] for r in fixed)


def test_notebook_and_clean_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\ny += 1\n"
                               "y.sum().backward()"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    doc = sarif(capsys, "nb.ipynb")
    (result,) = doc["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["properties"] == {"cell": 1}
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert sarif(capsys, "ok.py")["runs"][0]["results"] == []


def test_internal_error_is_a_valid_notification(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")

    def boom(source, filename="<stdin>"):
        raise RuntimeError("boom")

    monkeypatch.setattr(runner, "analyze_source", boom)
    doc = sarif(capsys, "a.py")
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "boom" in invocation["toolExecutionNotifications"][0]["message"]["text"]
