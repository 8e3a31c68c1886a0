"""Commands: the workspace-wide check with $/progress (exclusions, .gitignore, open files left
to the live analysis, cancellation), the server status, the runtime debug run (the only way the
server makes user code run), and the guarantee that the server never imports torch."""
from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from lsp_fixtures import server_config, start_session
from lsp_session import HANG_GUARD, codes, end_started_session, eventually

pytestmark = pytest.mark.asyncio(loop_scope="function")

SIGMOID = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")
CLEAN = "import torch\n\nx = torch.ones(2)\nprint(x * 2)\n"


@pytest_lsp.fixture(config=server_config(), params=["vscode", "emacs"])
async def raw(lsp_client: LanguageClient, request):
    lsp_client.profile_name = request.param
    yield
    await end_started_session(lsp_client)


def make_tree(root: Path, n_clean: int = 30) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "bad.py").write_text(SIGMOID)
    (root / "pkg" / "latin1.py").write_bytes(b"# -*- coding: utf-8 -*-\ns = '\xe9'\n")  # not UTF-8
    for i in range(n_clean):
        (root / "pkg" / f"clean_{i}.py").write_text(CLEAN)
    (root / "build").mkdir()
    (root / "build" / "generated.py").write_text(SIGMOID)  # excluded by default
    (root / "ignored").mkdir()
    (root / "ignored" / "bad.py").write_text(SIGMOID)
    (root / ".gitignore").write_text("ignored/\n")
    (root / ".git").mkdir()


async def test_check_workspace_with_progress(raw, tmp_path):
    make_tree(tmp_path)
    s = await start_session(raw, raw.profile_name, tmp_path)
    s.begin_test()
    opened = s.open("pkg/opened.py", SIGMOID)  # open: the live analysis speaks for it
    await s.diagnostics(opened, lambda ds: len(ds) == 1)
    result = await s.command("gradwarden.checkWorkspace")
    assert result["files"] == 32 and result["checked"] == 32, result  # bad, latin1, 30 clean
    assert result["cancelled"] is False
    assert result["diagnostics"] == 2, result  # GW201 in bad.py, GW001 (cannot decode) in latin1.py
    assert "32 of 32 files checked" in result["summary"]
    bad_uri = (tmp_path / "pkg" / "bad.py").as_uri()
    published = {p.uri for p in s.publishes}
    assert bad_uri in published
    assert codes(s.latest_publish(bad_uri).diagnostics) == [("GW201", 5)]
    assert (tmp_path / "pkg" / "latin1.py").as_uri() in published
    assert (tmp_path / "build" / "generated.py").as_uri() not in published
    assert (tmp_path / "ignored" / "bad.py").as_uri() not in published
    # $/progress: begin, reports, end (the client created the token when asked)
    reports = [r for token, rs in raw.progress_reports.items() for r in rs]
    kinds = [type(r).__name__ for r in reports]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd", kinds
    assert any(k == "WorkDoneProgressReport" for k in kinds)
    # Fixed on disk, checked again: its diagnostics are cleared.
    (tmp_path / "pkg" / "bad.py").write_text(CLEAN)
    result = await s.command("gradwarden.checkWorkspace")
    assert result["diagnostics"] == 1
    assert not s.latest_publish(bad_uri).diagnostics


async def test_check_workspace_can_be_cancelled(raw, tmp_path):
    make_tree(tmp_path, n_clean=400)
    s = await start_session(raw, raw.profile_name, tmp_path)
    s.begin_test()
    task = asyncio.ensure_future(s.command("gradwarden.checkWorkspace"))
    await eventually(lambda: bool(raw.progress_reports) and bool(raw.progress_reports[list(raw.progress_reports)[0]]),
                     "the workspace check reported progress")
    token = list(raw.progress_reports)[0]
    raw.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, HANG_GUARD)
    assert result["cancelled"] is True and result["checked"] < result["files"], result


async def test_status_and_no_torch(raw, tmp_path):
    s = await start_session(raw, raw.profile_name, tmp_path)
    s.begin_test()
    doc = s.open("a.py", SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    await s.hover(doc, 4, 0)
    [d] = await s.diagnostics(doc)
    await s.code_actions(doc, d.range)
    status = await s.status()
    assert status["torch_imported"] is False
    assert status["workers"]["mode"] == "process" and 1 <= len(status["workers"]["pids"]) <= 2
    # Neither the server nor its workers have torch's libraries mapped.
    for pid in [status["pid"], *status["workers"]["pids"]]:
        maps = Path(f"/proc/{pid}/maps")
        if maps.exists():
            text = maps.read_text()
            assert "libtorch" not in text and "/torch/" not in text, f"torch loaded in process {pid}"


async def test_debug_run(raw, tmp_path):
    s = await start_session(raw, raw.profile_name, tmp_path,
                            init_options={"interpreter": [sys.executable]})
    s.begin_test()
    doc = s.open("run_me.py", SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    result = await asyncio.wait_for(s.command("gradwarden.debugRun", {"uri": doc.uri, "device": "cpu",
                                                                       "timeout": 120}), HANG_GUARD)
    assert result["status"] in ("failed", "ok", "stopped"), result
    assert result["confirmed"] == 1, result  # the in-place write to sigmoid's output, confirmed
    assert "confirmed" in result["summary"]


async def test_debug_run_errors_are_clear(raw, tmp_path):
    s = await start_session(raw, raw.profile_name, tmp_path,
                            init_options={"interpreter": [str(tmp_path / "no-such-python")]})
    s.begin_test()
    doc = s.open("a.py", SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    with pytest.raises(Exception) as info:
        await s.command("gradwarden.debugRun", doc.uri)
    assert "debug run" in str(info.value)
    with pytest.raises(Exception) as info:
        await s.command("gradwarden.debugRun", (tmp_path / "not-open.py").as_uri())
    assert "open Python file" in str(info.value)
    s.end_test(allow_errors=True)
    s.begin_test()
