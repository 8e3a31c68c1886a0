"""Configuration: initializationOptions, workspace/didChangeConfiguration (pushed settings or a
workspace/configuration pull), [tool.gradwarden] in pyproject.toml (and its changes), the editor
layer on top of the project's, bad values reported, lint on save."""
from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_fixtures import server_config, start_session
from lsp_session import codes, end_started_session, eventually

pytestmark = pytest.mark.asyncio(loop_scope="function")

SIGMOID = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")
LEAF = textwrap.dedent("""\
    import torch

    w = torch.zeros(3, requires_grad=True)
    w += 1
""")


@pytest_lsp.fixture(config=server_config(), params=["vscode", "emacs"])
async def raw(lsp_client: LanguageClient, request):
    lsp_client.profile_name = request.param
    yield
    await end_started_session(lsp_client)


async def start(raw, root: Path, init=None, **kw):
    s = await start_session(raw, raw.profile_name, root, init_options=init, **kw)
    s.begin_test()
    return s


async def test_initialization_options_select_and_severity(raw, tmp_path):
    # The VS Code extension's shape: {"settings": {...}}
    s = await start(raw, tmp_path, {"settings": {"ignore": ["GW201"], "severity": {"GW101": "warning"},
                                                 "lintOn": "type"}})
    a = s.open("a.py", SIGMOID)
    b = s.open("b.py", LEAF)
    assert await s.diagnostics(a, lambda ds: True) == []
    [d] = await s.diagnostics(b, lambda ds: len(ds) == 1)
    assert d.code == "GW101" and d.severity == lsp.DiagnosticSeverity.Warning


async def test_did_change_configuration(raw, tmp_path):
    s = await start(raw, tmp_path)
    a = s.open("a.py", SIGMOID)
    await s.diagnostics(a, lambda ds: codes(ds) == [("GW201", 5)])
    s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"gradwarden": {"select": ["GW1"]}}))
    await s.diagnostics(a, lambda ds: ds == [] or not ds)
    if s.pull:
        await _eventually(lambda: s.refreshes >= 1)  # the client was told to pull again
    s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"settings": {"severity": {"GW2": "hint"}}}))
    [d] = await s.diagnostics(a, lambda ds: len(ds) == 1)
    assert d.severity == lsp.DiagnosticSeverity.Hint


async def test_workspace_configuration_pull(raw, tmp_path):
    raw.set_configuration({"ignore": ["GW201"]}, section="gradwarden")
    s = await start(raw, tmp_path)  # no initializationOptions: the server asks
    a = s.open("a.py", SIGMOID)
    await asyncio.sleep(0.3)
    assert await s.diagnostics(a, lambda ds: not ds) == []
    # A bare didChangeConfiguration: the server pulls the section again.
    raw.set_configuration({"ignore": []}, section="gradwarden")
    s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await s.diagnostics(a, lambda ds: codes(ds) == [("GW201", 5)])


async def test_pyproject_and_editor_layers(raw, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nignore = ["GW201"]\n')
    s = await start(raw, tmp_path)
    a = s.open("proj/a.py", SIGMOID)
    b = s.open("b.py", SIGMOID)  # outside the project: defaults
    assert await s.diagnostics(a, lambda ds: True) == []
    assert codes(await s.diagnostics(b, lambda ds: len(ds) == 1)) == [("GW201", 5)]
    # The project changes; the client reports it (watched files); the server re-reads it.
    (project / "pyproject.toml").write_text('[tool.gradwarden]\nseverity = { GW201 = "warning" }\n')
    s.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=(project / "pyproject.toml").as_uri(), type=lsp.FileChangeType.Changed)]))
    [d] = await s.diagnostics(a, lambda ds: len(ds) == 1)
    assert d.severity == lsp.DiagnosticSeverity.Warning
    # Editor settings sit on top of the project's.
    s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"gradwarden": {"severity": {"GW201": "information"}}}))
    [d] = await s.diagnostics(a, lambda ds: len(ds) == 1 and ds[0].severity == lsp.DiagnosticSeverity.Information)


async def test_bad_settings_are_reported_and_the_rest_applies(raw, tmp_path):
    s = await start(raw, tmp_path, {"ignore": ["GW999"], "severity": {"GW201": "loud"}, "lintOn": "type",
                                    "colour": "blue", "select": ["GW2"]})
    a = s.open("a.py", SIGMOID)
    assert codes(await s.diagnostics(a, lambda ds: len(ds) == 1)) == [("GW201", 5)]
    messages = " ".join(m.message for m in s.client.messages)
    assert "GW999" in messages and "loud" in messages and "colour" in messages
    b = s.open("b.py", LEAF)
    assert await s.diagnostics(b, lambda ds: True) == []  # select = GW2 applied


async def test_broken_pyproject_is_reported_once(raw, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\nselect = [\n")
    s = await start(raw, tmp_path)
    a = s.open("a.py", SIGMOID)
    assert codes(await s.diagnostics(a, lambda ds: len(ds) == 1)) == [("GW201", 5)]
    await _eventually(lambda: any("pyproject.toml" in m.message for m in s.client.messages))


async def test_lint_on_save(raw, tmp_path):
    s = await start(raw, tmp_path, {"lintOn": "save"})
    a = s.open("a.py", LEAF)
    assert codes(await s.diagnostics(a, lambda ds: len(ds) == 1)) == [("GW101", 4)]
    # Typing moves the old diagnostic along, but does not analyse.
    s.change(a, "# header\n" + SIGMOID)
    await asyncio.sleep(0.6)
    status = await s.status()
    got = await s.diagnostics(a, lambda ds: True)
    assert ("GW201", 6) not in codes(got)
    s.save(a)
    await s.diagnostics(a, lambda ds: codes(ds) == [("GW201", 6)])
    assert (await s.status())["analyses"] > status["analyses"]


async def _eventually(pred) -> None:
    await eventually(pred)


async def test_hover_and_code_actions_never_start_an_analysis(raw, tmp_path):
    """Hover and code actions answer from the latest result: with lintOn = "save" a change is
    not analysed, and neither hover nor a code action analyses it either (the old hover waited
    for an analysis it started itself). They answer from the last diagnostics carried to the
    new text; the hover's timelines and the fix edits are prepared in the background, from
    where the following requests answer. Counts of analyses and worker jobs, not time."""
    s = await start(raw, tmp_path, {"lintOn": "save"})
    doc = s.open("a.py", SIGMOID)
    [d] = await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 5)])
    status = await s.until_status(lambda st: not st["pending"], "the first analysis stored")
    s.change(doc, "# header\n" + SIGMOID)  # not analysed (lint on save)
    [moved] = await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 6)])
    h = await s.hover(doc, 5, 0)  # `y` of `y += 1`, now on line 6
    assert h is not None and "GW201" in h.contents.value
    actions = await s.code_actions(doc, moved.range)
    assert [a.title for a in actions if "Disable GW201" in a.title]  # carried: noqa only
    after = await s.status()
    assert after["analyses"] == status["analyses"], after
    started = after["workers"]["jobs_started"]
    assert {n for n in started if n.startswith("diagnose")} == {"diagnose_incremental"}
    assert started["diagnose_incremental"] == status["workers"]["jobs_started"]["diagnose_incremental"]
    assert after["hovers"] == status["hovers"] + 1
    # Saved and analysed: the hover's first answer comes from the diagnostics (it asks for the
    # timelines in the background); once prepared, the tensor's full timeline.
    s.save(doc)
    before = await s.until_status(lambda st: st["analyses"] > status["analyses"] and not st["pending"],
                                  "the save analysed")
    await s.hover(doc, 3, 0)  # `y` where it is created (None until its timeline is prepared)
    await s.hover_ready(doc)
    full = await s.hover(doc, 3, 0)
    assert full is not None and "version counter" in full.contents.value
    done = await s.status()
    assert done["analyses"] == before["analyses"], done
    asked = {n: c - before["workers"]["jobs_started"].get(n, 0) for n, c in done["workers"]["jobs_started"].items()}
    assert {n for n, c in asked.items() if c} <= {"hover_table", "fix_edits_many", "fix_all"}, asked
