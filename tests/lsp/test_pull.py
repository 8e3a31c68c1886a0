"""Pull clients while an analysis is pending: answered with the last result carried to the new
text (never an empty report while a result exists), then told to pull again
(``workspace/diagnostic/refresh``) when the new result is there. Events, not time: the slow
analysis is a 100 kB file (about a second of analysis) and ``pullWaitMs = 0`` answers a pull
at once."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pytest_lsp import LanguageClient

from lsp_fixtures import server_config, start_session
from lsp_session import codes, end_started_session, eventually
from test_robustness import SIGMOID, big_text

pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest_lsp.fixture(config=server_config(), params=["vscode", "neovim"])
async def puller(lsp_client: LanguageClient, request):
    lsp_client.profile_name = request.param
    yield
    await end_started_session(lsp_client)


async def pull(s, doc, previous=None):
    return await s.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=doc.uri), previous_result_id=previous))


async def test_pending_analysis_answers_with_the_last_result_then_refreshes(puller, tmp_path):
    s = await start_session(puller, puller.profile_name, tmp_path, init_options={"pullWaitMs": 0})
    s.begin_test()
    assert s.pull
    s.features_refresh = bool(get_capability(s.caps, "workspace.diagnostics.refresh_support", False))
    assert s.features_refresh == (puller.profile_name == "vscode")
    text = big_text(100_000) + SIGMOID.replace("import torch\n", "")
    hazard_line = text.splitlines().index("y += 1") + 1
    doc = s.open("slow.py", text)
    first = await pull(s, doc)  # no result yet: the first one is waited for
    assert codes(first.items) == [("GW201", hazard_line)]
    refreshes = s.refreshes
    status = await s.status()
    s.change(doc, "# one more line on top\n" + doc.text)  # about a second of analysis
    pending = await pull(s, doc, first.result_id)
    assert codes(pending.items) == [("GW201", hazard_line + 1)]  # never empty; carried if provisional
    assert pending.result_id != first.result_id
    if s.features_refresh:
        await eventually(lambda: s.refreshes > refreshes, "a refresh after the new result")
        fresh = await pull(s, doc, pending.result_id)
        assert codes(fresh.items) == [("GW201", hazard_line + 1)]
        assert fresh.result_id not in (first.result_id, pending.result_id)
        expected_refreshes = 1
    else:
        # A client that cannot be told to pull again (Neovim 0.11) waits for the new result.
        expected_refreshes = 0
        assert s.refreshes == refreshes
    after = await s.status()
    assert after["pull_refreshes"] == status["pull_refreshes"] + expected_refreshes
    s.close(doc)
