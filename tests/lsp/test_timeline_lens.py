"""The code lens "Confirm with a debug run" and what running it does (the diagnostics marked
``[confirmed]`` / ``[not reached]`` in place, the lens saying what the run found, the marks gone
once the hazard is fixed), and ``gradwarden.showTimeline`` (the timeline picture written as one
HTML file, for the finding under the cursor or the whole document, notebooks included)."""
from __future__ import annotations

import asyncio
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_fixtures import server_config, start_session
from lsp_session import HANG_GUARD, end_started_session

pytestmark = pytest.mark.asyncio(loop_scope="function")

# GW101 in a function the script never calls (not reached), GW201 on the path that runs.
SCRIPT = textwrap.dedent("""\
    import torch


    def never_called():
        a = torch.randn(3, requires_grad=True)
        a += 1


    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")
SVG = "{http://www.w3.org/2000/svg}"


@pytest_lsp.fixture(config=server_config(), params=["vscode", "emacs"])
async def client(lsp_client: LanguageClient, request):
    lsp_client.profile_name = request.param
    yield
    await end_started_session(lsp_client)


@pytest_lsp.fixture(config=server_config(), params=["vscode"])  # the profile that synchronises notebooks
async def notebook_client(lsp_client: LanguageClient, request):
    lsp_client.profile_name = request.param
    yield
    await end_started_session(lsp_client)


async def lenses(s, doc):
    return await s.client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=doc.uri))) or []


async def test_code_lens_runs_the_debug_run_and_marks_diagnostics(client, tmp_path):
    s = await start_session(client, client.profile_name, tmp_path, init_options={"interpreter": [sys.executable]})
    s.begin_test()
    doc = s.open("script.py", SCRIPT)
    before = await s.diagnostics(doc, lambda ds: sorted(str(d.code) for d in ds) == ["GW101", "GW201"])
    [lens] = await lenses(s, doc)
    assert lens.command.title == "Confirm with a debug run (2 findings)"
    assert lens.range.start.line == min(d.range.start.line for d in before) == 5
    # run it as a client does: the lens' own command and arguments
    result = await asyncio.wait_for(s.command(lens.command.command, *lens.command.arguments), HANG_GUARD)
    assert result["confirmed"] == 1, result

    def marked(ds):
        by_code = {str(d.code): d for d in ds}
        return (len(ds) == 2 and by_code.get("GW201") is not None and by_code.get("GW101") is not None
                and by_code["GW201"].message.startswith("[confirmed] ")
                and by_code["GW101"].message.startswith("[not reached] "))

    after = await s.diagnostics(doc, marked)
    confirmed = next(d for d in after if str(d.code) == "GW201")
    assert confirmed.source == "gradwarden (runtime)"
    if s.related_support:
        assert any(r.message.startswith("debug run:") for r in confirmed.related_information or [])
    # the marked diagnostics stay where their static twins are
    assert {(str(d.code), d.range.start.line) for d in after} == {(str(d.code), d.range.start.line) for d in before}
    [lens] = await lenses(s, doc)
    assert lens.command.title == "Debug run: 1 confirmed, 0 not reproduced, 1 not reached — run again"
    if s.caps.workspace and s.caps.workspace.code_lens and s.caps.workspace.code_lens.refresh_support:
        assert s.lens_refreshes >= 2  # when it started, when it ended
    # fixed since: the verdict does not outlive the diagnostic it was about
    s.change(doc, SCRIPT.replace("y += 1", "y = y + 1"))
    fixed = await s.diagnostics(doc, lambda ds: [str(d.code) for d in ds] == ["GW101"])
    assert fixed[0].message.startswith("[not reached] ")
    s.end_test()


async def test_no_lens_without_findings_or_for_unsaved_buffers(client, tmp_path):
    s = await start_session(client, client.profile_name, tmp_path)
    s.begin_test()
    clean = s.open("clean.py", "import torch\nx = torch.ones(2)\n")
    await s.diagnostics(clean, lambda ds: ds == [])
    assert await lenses(s, clean) == []
    s.end_test()


def _svg_kinds(html: str):
    """The kinds of the events of the page's (first) timeline picture, in drawing order."""
    pos = 0
    while True:
        start = html.index("<svg", pos)
        end = html.index("</svg>", start) + len("</svg>")
        root = ET.fromstring(html[start:end])
        if root.get("data-code"):
            return [a.get("data-kind") for a in root.iter(f"{SVG}a") if a.get("data-kind")]
        pos = end


async def test_show_timeline_writes_the_picture(client, tmp_path):
    s = await start_session(client, client.profile_name, tmp_path)
    s.begin_test()
    doc = s.open("script.py", SCRIPT)
    await s.diagnostics(doc, lambda ds: len(ds) == 2)
    out = tmp_path / "out" / "timeline.html"
    here = {"line": 10, "character": 0}  # `y += 1`
    result = await s.command("gradwarden.showTimeline", {"uri": doc.uri, "position": here, "path": str(out)})
    assert result["findings"] == 1 and result["path"] == str(out) and "html" not in result
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "GW201" in html and "GW101" not in html
    assert _svg_kinds(html) == ["created", "save", "write", "backward"]
    whole = await s.command("gradwarden.showTimeline", {"uri": doc.uri, "html": True})
    assert whole["findings"] == 2 and Path(whole["path"]).is_file()
    assert whole["html"] == Path(whole["path"]).read_text()
    assert "GW101" in whole["html"] and "GW201" in whole["html"]
    with pytest.raises(Exception):
        await s.command("gradwarden.showTimeline", (tmp_path / "not-open.py").as_uri())
    s.end_test(allow_errors=True)


async def test_show_timeline_in_a_notebook_cell(notebook_client, tmp_path):
    s = await start_session(notebook_client, notebook_client.profile_name, tmp_path)
    s.begin_test()
    _, cells = s.open_notebook("nb.ipynb", [
        ("code", "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\n"),
        ("code", "y += 1\ny.sum().backward()\n"),
    ])
    await s.diagnostics(cells[1], lambda ds: len(ds) == 1)
    result = await s.command("gradwarden.showTimeline", {"uri": cells[1].uri, "position": {"line": 0, "character": 0},
                                                         "html": True})
    assert result["findings"] == 1
    html = result["html"]
    assert "cell 2, line 1" in html and "cell 1, line 3" in html  # the save is in the first cell
    assert _svg_kinds(html) == ["created", "save", "write", "backward"]
    s.end_test()
