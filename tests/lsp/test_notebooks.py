"""Notebooks (``notebookDocument/*`` sync, VS Code's profile): the code cells analysed as one
program in cell order, diagnostics in the right cell with related locations in other cells,
IPython magics harmless, structure changes, hover and quick fixes inside cells."""
from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from lsp_fixtures import server_config, start_session
from lsp_session import codes

pytestmark = pytest.mark.asyncio(loop_scope="module")

CELLS = [
    ("code", "%matplotlib inline\nimport torch\n!pip list > /dev/null\n"),
    ("code", "x = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\n"),
    ("markdown", "# Then we modify `y` in place\n"),
    ("code", "y += 1\ny.sum().backward()"),
]


@pytest_lsp.fixture(config=server_config(), scope="module", params=["vscode"])
async def nb_client(lsp_client: LanguageClient, request, workspace_dir):
    session = await start_session(lsp_client, request.param, workspace_dir)
    assert session.init_result.capabilities.notebook_document_sync is not None
    yield
    await session.close_all()
    await lsp_client.shutdown_session()


@pytest.fixture
def nb(nb_client):
    s = nb_client.session
    s.begin_test()
    yield s
    s.end_test()


async def test_diagnostics_land_in_the_right_cell(nb):
    s = nb
    nb_uri, cells = s.open_notebook(s.unique("analysis", ".ipynb"), CELLS)
    # The write is in the last cell (cell 4, its line 1); the magics do not parse as Python but
    # must not produce a parse error.
    d = (await s.diagnostics(cells[3], lambda ds: len(ds) == 1))[0]
    assert (d.code, d.range.start.line) == ("GW201", 0)
    for cell in cells[:2]:
        assert await s.diagnostics(cell) == []
    related = sorted((r.location.uri, r.location.range.start.line) for r in d.related_information)
    assert (cells[1].uri, 1) in related  # sigmoid saves y: cell 2, line 2
    assert (cells[3].uri, 1) in related  # the backward: cell 4, line 2
    # The message speaks of cells, not of the rows of the joined program (sigmoid is on its
    # row 5, the backward on its row 7): another cell by number, its own cell by line.
    assert "`sigmoid` (cell 2, line 2)" in d.message and "backward at line 2" in d.message, d.message
    assert "line 5" not in d.message and "line 7" not in d.message
    s.close_notebook(nb_uri)


async def test_editing_a_cell_reanalyses_the_notebook(nb):
    s = nb
    nb_uri, cells = s.open_notebook(s.unique("edit", ".ipynb"), CELLS)
    await s.diagnostics(cells[3], lambda ds: len(ds) == 1)
    # Fixing cell 2 (clone before the write happens in cell 4) clears cell 4.
    s.change(cells[1], cells[1].text.replace("torch.sigmoid(x)", "torch.sigmoid(x).clone()"))
    assert await s.diagnostics(cells[3], lambda ds: not ds) == []
    s.change(cells[1], cells[1].text.replace("torch.sigmoid(x).clone()", "torch.sigmoid(x)"))
    await s.diagnostics(cells[3], lambda ds: len(ds) == 1)
    # A cell inserted before the write shifts nothing inside cell 4.
    new = s.insert_cell(nb_uri, 2, "code", "z = x * 2\nprint(z)\n")
    d = (await s.diagnostics(cells[3], lambda ds: len(ds) == 1 and ds[0].range.start.line == 0))[0]
    assert d.code == "GW201"
    assert await s.diagnostics(new) == []
    s.close_notebook(nb_uri)


async def test_hover_in_a_cell_labels_other_cells(nb):
    s = nb
    nb_uri, cells = s.open_notebook(s.unique("hover", ".ipynb"), CELLS)
    await s.diagnostics(cells[3], lambda ds: len(ds) == 1)
    await s.hover_ready(cells[3], nb_uri)
    h = await s.hover(cells[3], 0, 0)
    text = h.contents.value
    assert "cell 2, line 2" in text  # created and saved by sigmoid, in another cell
    assert "line 1" in text and "version to 1" in text
    # the summary quotes the message in cell terms too (program rows 5 and 7 appear nowhere)
    assert "line 5" not in text and "line 7" not in text, text
    assert h.range.start.line == 0
    s.close_notebook(nb_uri)


async def test_quick_fix_in_a_cell(nb):
    s = nb
    nb_uri, cells = s.open_notebook(s.unique("fix", ".ipynb"), CELLS)
    [d] = await s.diagnostics(cells[3], lambda ds: len(ds) == 1)
    actions = await s.code_actions(cells[3], d.range, diagnostics=[d])
    fix = next(a for a in actions if "out of place" in a.title)
    await s.apply_action(fix)
    assert cells[3].text.splitlines()[0] == "y = y + 1"
    assert await s.diagnostics(cells[3], lambda ds: not ds) == []
    noqa_nb, cells2 = s.open_notebook(s.unique("noqa", ".ipynb"), CELLS)
    [d] = await s.diagnostics(cells2[3], lambda ds: len(ds) == 1)
    noqa = next(a for a in await s.code_actions(cells2[3], d.range) if "Disable" in a.title)
    await s.apply_action(noqa)
    assert cells2[3].text.splitlines()[0] == "y += 1  # noqa: GW201"
    assert await s.diagnostics(cells2[3], lambda ds: not ds) == []
    s.close_notebook(nb_uri)
    s.close_notebook(noqa_nb)


async def test_a_cell_that_does_not_parse(nb):
    s = nb
    nb_uri, cells = s.open_notebook(s.unique("broken", ".ipynb"), CELLS)
    await s.diagnostics(cells[3], lambda ds: len(ds) == 1)
    s.change(cells[1], cells[1].text + "w = (\n")
    # The parse error is reported in the cell that has it, the last good diagnostic stays.
    err = await s.diagnostics(cells[1], lambda ds: any(d.code == "GW001" for d in ds))
    assert any(d.code == "GW001" for d in err)
    assert codes(await s.diagnostics(cells[3], lambda ds: len(ds) == 1)) == [("GW201", 1)]
    s.close_notebook(nb_uri)
