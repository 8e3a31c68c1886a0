"""Property-based fuzzing through the real server: random and mutated Python (the labelled cases
in ../shared/cases, the test data) sent through didOpen / incremental didChange / hover /
codeAction at random places. Every request must be answered (no error response), the server
must log no error, and its copy of the document must stay exactly the client's (checked at the
end of each example through the diagnostics of the final text).

Derandomized (the same examples on every run); ``GRADWARDEN_FUZZ_EXAMPLES=N`` runs more."""
from __future__ import annotations

import asyncio
import os
from typing import List

import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_lsp import LanguageClient

from lsp_fixtures import REPO, server_config, start_session
from lsp_session import HANG_GUARD, cases_dir, codes

pytestmark = pytest.mark.asyncio(loop_scope="module")


def corpus() -> List[str]:
    files = sorted(cases_dir().rglob("*.py")) + sorted((REPO / "tests" / "data").rglob("*.py"))
    assert files, "no fuzz corpus (../shared/cases, tests/data)"
    return [f.read_text(encoding="utf-8", errors="surrogateescape") for f in files]


CORPUS = corpus()
PYTHONISH = st.sampled_from(list("abxyz_0123456789 \t\n()[]{}:=+-*/.,#'\"\\@!%^&|<>~") +
                            ["y += 1", ".add_(", "backward()", "torch.", "def ", "class ", "    ",
                             "with torch.no_grad():", "# noqa: GW201", "\r\n", "é", "😀", "\x0c", "\u2028",
                             "'''", "lambda", ".data", "requires_grad=True", "retain_graph=True"])
INSERT = st.lists(PYTHONISH, min_size=1, max_size=6).map("".join) | st.text(max_size=8)


@st.composite
def edits(draw, text_len: int):
    """(start, end, replacement) as fractions of the text, so they apply to any version."""
    a = draw(st.floats(0, 1))
    length = draw(st.sampled_from([0, 0, 1, 2, 5, 20, 200]))
    return a, length, draw(INSERT | st.just(""))


@st.composite
def scenarios(draw):
    base = draw(st.sampled_from(CORPUS) | st.text(max_size=300) | st.lists(PYTHONISH, max_size=60).map("".join))
    changes = draw(st.lists(edits(len(base)), max_size=12))
    probes = draw(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=4))
    return base, changes, probes


def apply(text: str, change) -> str:
    a, length, ins = change
    start = int(a * len(text))
    return text[:start] + ins + text[start + length:]


@pytest_lsp.fixture(config=server_config(), scope="module", params=["vscode", "emacs"])
async def fuzz_client(lsp_client: LanguageClient, request, workspace_dir):
    session = await start_session(lsp_client, request.param, workspace_dir)
    yield
    await session.close_all()
    await lsp_client.shutdown_session()


EXAMPLES = int(os.environ.get("GRADWARDEN_FUZZ_EXAMPLES", "100"))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(scenario=scenarios())
async def test_fuzz_open_change_hover_code_action(fuzz_client, scenario):
    s = fuzz_client.session
    s.begin_test()
    base, changes, probes = scenario
    doc = s.open(s.unique("fuzz"), base, write=False)
    for change in changes:
        s.change(doc, apply(doc.text, change))
    lines = doc.lines()
    for fl, fc in probes:
        line = min(int(fl * len(lines)), len(lines) - 1)
        col = min(int(fc * (len(lines[line]) + 1)), len(lines[line]))
        await asyncio.wait_for(s.hover(doc, line, col), HANG_GUARD)
        end_line = min(line + 2, len(lines) - 1)
        await asyncio.wait_for(s.code_actions(doc, s.range(doc, line, col, end_line, len(lines[end_line]))), HANG_GUARD)
    # The server's text is the client's: same diagnostics as the engine on our text.
    from gradwarden.runner import diagnose

    want = sorted((d.code, d.span.row) for d in diagnose(doc.text, "x.py"))
    got = await s.diagnostics(doc, lambda ds: sorted(c for c, _ in codes(ds)) == sorted(c for c, _ in want)
                              or any(c == "GW001" for c, _ in codes(ds)))
    assert got is not None
    s.close(doc)
    s.end_test()
