"""The language server's helpers without a client: positions in UTF-8/16/32, LSP line splitting,
notebook programs and magics, carrying diagnostics across edits, noqa edits, minimal edits,
editor settings, the worker pool (crash, timeout, stale kill, lanes), the hover table."""
from __future__ import annotations

import asyncio
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradwarden.engine.diagnostic import Diagnostic, Edit, Related, Severity, Span
from gradwarden.lsp import documents, options, positions
from gradwarden.lsp.actions import noqa_edit
from gradwarden.lsp.convert import minimal_edit, visible_span
from gradwarden.lsp.hover import noqa_codes_at
from gradwarden.lsp.jobs import apply_attached_fixes

TEXT = st.lists(st.sampled_from(list("ab é😀\t#") + ["\n", "\r\n", "\r", "\x0c", "\u2028"]), max_size=80).map("".join)


# --------------------------------------------------------------------------- positions
def test_split_lines_follows_lsp_not_str_splitlines():
    text = "a\x0cb\nc\u2028d\r\ne\rf"
    assert positions.split_lines(text) == ["a\x0cb", "c\u2028d", "e", "f"]
    assert positions.lsp_lines("x\n") == ["x", ""]
    assert positions.lsp_lines("") == [""]


@pytest.mark.parametrize("encoding,expected", [("utf-16", 6), ("utf-8", 9), ("utf-32", 5)])
def test_units(encoding, expected):
    line = 'x="é😀'  # 5 characters, one outside the BMP
    assert positions.units(line + "a", encoding) - positions.units("a", encoding) == expected


@settings(max_examples=300)
@given(text=TEXT, data=st.data())
def test_position_round_trip(text, data):
    for enc in ("utf-8", "utf-16", "utf-32"):
        index = positions.LineIndex(text, enc)
        row = data.draw(st.integers(1, len(index.lines)))
        line = index.lines[row - 1]
        col = data.draw(st.integers(1, len(line) + 1))
        l0, c0 = index.to_lsp(row, col)
        assert index.from_lsp(l0, c0) == (row, col)


def test_positions_clamp():
    index = positions.LineIndex("ab\ncd\n", "utf-16")
    assert index.to_lsp(99, 1) == (2, 0)
    assert index.from_lsp(99, 5) == (3, 1)
    assert index.from_lsp(0, 99) == (1, 3)
    assert index.from_lsp(-1, 0) == (1, 1)


# --------------------------------------------------------------------------- notebooks
def test_notebook_program_and_magics():
    cells = [
        ("c0", "%matplotlib inline\nimport torch\n", True),
        ("m1", "# title", False),
        ("c2", "x = !ls\n!pip install foo\nprint?\ny = 1", True),
        ("c3", "%%bash\necho hi\n", True),
        ("c4", "", True),
    ]
    prog = documents.build_notebook_program(cells)
    assert [c.uri for c in prog.cells] == ["c0", "c2", "c3", "c4"]
    assert prog.text.splitlines()[:2] == ["pass", "import torch"]
    assert "x = None" in prog.text and "pass" in prog.text
    import ast

    ast.parse(prog.text)  # magics masked: it parses
    assert prog.to_cell(3) == (prog.cells[1], 1)
    assert prog.to_program("c2", 4) == prog.cells[1].start + 3
    assert prog.cell_number(prog.cells[1]) == 2
    assert len(documents.split_lines(prog.text)) == sum(c.rows for c in prog.cells)


def test_locate_in_cells_and_edits_back():
    prog = documents.build_notebook_program([("a", "x = 1\ny = 2\n", True), ("b", "z = 3\n", True)])
    d = Diagnostic("GW201", "m", Severity.ERROR, "nb", Span(3, 1, 3, 6),
                   related=(Related(Span(1, 1, 1, 6), "save", "save"),))
    [loc] = documents.locate(prog, "nb", [d])
    assert loc.uri == "b" and loc.diagnostic.span == Span(1, 1, 1, 6)
    assert loc.related_uris == ("a",) and loc.diagnostic.related[0].span.row == 1
    per_cell = documents.edits_to_cells(prog, [Edit(Span(3, 1, 3, 1), "w = 0\n")])
    assert per_cell == {"b": [Edit(Span(1, 1, 1, 1), "w = 0\n")]}
    assert documents.edits_to_cells(prog, [Edit(Span(2, 1, 3, 2), "")]) is None  # crosses cells


# --------------------------------------------------------------------------- carrying
def test_row_mapping_and_carry():
    old = "a\nb\nc\nd\n"
    new = "a\nX\nY\nc\nd\n"  # b replaced by two lines
    m = documents.row_mapping(old, new)
    assert [m(r) for r in (1, 2, 3, 4)] == [1, None, 4, 5]
    d = Diagnostic("GW201", "m", Severity.ERROR, "f", Span(3, 1, 3, 2), related=(Related(Span(2, 1, 2, 2), "s"),))
    [moved] = documents.carry_diagnostics([d], m)
    assert moved.span.row == 4 and moved.related == () and moved.fixes == ()


@settings(max_examples=200)
@given(lines=st.lists(st.text(alphabet="abc", max_size=3), max_size=12), data=st.data())
def test_row_mapping_keeps_text(lines, data):
    old = "\n".join(lines)
    i = data.draw(st.integers(0, len(lines)))
    j = data.draw(st.integers(i, len(lines)))
    ins = data.draw(st.lists(st.text(alphabet="xyz", max_size=3), max_size=3))
    new_lines = lines[:i] + ins + lines[j:]
    m = documents.row_mapping(old, "\n".join(new_lines))
    old_split = documents.split_lines(old)
    new_split = documents.split_lines("\n".join(new_lines))
    for r in range(1, len(old_split) + 1):
        t = m(r)
        if t is not None:
            assert new_split[t - 1] == old_split[r - 1]


# --------------------------------------------------------------------------- noqa and edits
@pytest.mark.parametrize("line,expected", [
    ("y += 1", "y += 1  # noqa: GW201"),
    ("y += 1   ", "y += 1  # noqa: GW201"),
    ("y += 1  # noqa: GW303", "y += 1  # noqa: GW303, GW201"),
    ("y += 1  # keep this", "y += 1  # keep this  # noqa: GW201"),
    ("s = '# noqa: X1'; y += 1", "s = '# noqa: X1'; y += 1  # noqa: GW201"),
])
def test_noqa_edit(line, expected):
    e = noqa_edit([line], 1, "GW201")
    assert e is not None
    new, _ = apply_attached_fixes(line, [_with_edit(e)])
    assert new == expected
    from gradwarden.noqa import noqa_codes_on_line

    assert "GW201" in noqa_codes_on_line(new)


def test_noqa_edit_blanket_and_continuation():
    assert noqa_edit(["y += 1  # noqa"], 1, "GW201") is None
    lines = ["y = a + \\", "    b"]
    e = noqa_edit(lines, 1, "GW201")
    assert e.span.row == 2


def _with_edit(e: Edit) -> Diagnostic:
    from gradwarden.engine.diagnostic import Fix

    return Diagnostic("GW201", "m", Severity.ERROR, "f", Span(1, 1, 1, 1),
                      fixes=(Fix("noqa", "noqa", True, True, edits=(e,)),))


def test_noqa_codes_at_cursor():
    line = "y += 1  # noqa: GW201, GW303"
    assert noqa_codes_at(line, line.index("GW303") + 2) == ["GW303"]
    assert noqa_codes_at(line, line.index("noqa") + 1) == ["GW201", "GW303"]
    assert noqa_codes_at(line, 1) is None
    assert noqa_codes_at("x = '# noqa: GW201'", 10) is None
    assert noqa_codes_at("y  # noqa", 6) == []


@settings(max_examples=300)
@given(old=TEXT, new=TEXT)
def test_minimal_edit_reproduces_the_new_text(old, new):
    index = positions.LineIndex(old, "utf-32")
    edit = minimal_edit(old, new, index)
    if old == new:
        assert edit is None
        return
    s = index.from_lsp(edit.range.start.line, edit.range.start.character)
    e = index.from_lsp(edit.range.end.line, edit.range.end.character)
    from gradwarden.lsp.jobs import _Offsets

    off = _Offsets(old)
    a, b = off.of(*s), off.of(*e)
    assert old[:a] + edit.new_text + old[b:] == new


def test_visible_span():
    index = positions.LineIndex("x = (\n", "utf-16")
    assert visible_span(Span(1, 5, 1, 5), index) == Span(1, 5, 1, 6)
    assert visible_span(Span(1, 6, 1, 6), index) == Span(1, 5, 1, 6)


# --------------------------------------------------------------------------- settings
def test_parse_options_shapes_and_problems():
    opts, problems = options.parse_options({"settings": {"select": ["gw2"], "lintOn": "onSave",
                                                         "debounceMs": 20, "bogus": 1}})
    assert opts.select == ("GW2",) and opts.lint_on == "save" and opts.debounce_ms == 20
    assert problems == ["editor settings: `bogus`: unknown setting (ignored)"]
    opts, problems = options.parse_options({"gradwarden": {"ignore": "GW201, GW303", "run": "onType"}})
    assert opts.ignore == ("GW201", "GW303") and opts.lint_on == "type" and not problems
    opts, problems = options.parse_options({"severity": {"GW201": "loud"}, "workers": 99, "interpreter": "/py -X dev"})
    assert opts.severity == () and opts.workers == 2 and opts.interpreter == ("/py", "-X", "dev")
    assert len(problems) == 2


def test_settings_resolver_layers(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.gradwarden]\nignore = ["GW201"]\n')
    r = options.SettingsResolver(options.ServerOptions(), tmp_path)
    assert not r.for_file(str(tmp_path / "a.py")).is_enabled("GW201")
    r.update(options.parse_options({"select": ["GW201"]})[0])
    assert r.for_file(str(tmp_path / "a.py")).is_enabled("GW201")
    (tmp_path / "pyproject.toml").write_text("[tool.gradwarden]\nselect = [\n")
    r.invalidate()
    assert r.for_file(str(tmp_path / "a.py")).is_enabled("GW201")
    assert any("pyproject.toml" in p for p in r.take_problems())


# --------------------------------------------------------------------------- worker pool
# No durations here: a job that must "run long" is ``_hold``, which runs until the test opens its
# gate (a file), and the tests wait for pool states (``WorkerPool.wait_until``), never for time.
HOLD_MAX = 120.0  # a held job gives up after this long (False) so that a broken pool fails, not hangs


async def until_file(path, guard: float = HOLD_MAX) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + guard
    while not path.exists():
        assert loop.time() < deadline, f"{path} never appeared (hang guard)"
        await asyncio.sleep(0.01)


class Gate:
    def __init__(self, tmp_path, name: str) -> None:
        self.path = tmp_path / f"gate-{name}"

    def args(self):
        return (str(self.path), HOLD_MAX)

    def open(self) -> None:
        self.path.write_text("open")


@pytest.mark.asyncio
async def test_worker_pool_crash_timeout_and_stale_kill(tmp_path):
    from gradwarden.lsp.worker import BACKGROUND, DIAGNOSTICS, JobFailed, JobTimeout, WorkerCrashed, WorkerPool

    pool = WorkerPool(2, timeout=HOLD_MAX * 2)
    pool.start()
    try:
        assert await pool.run("ping") == "pong"
        with pytest.raises(WorkerCrashed):
            await pool.run("_crash")
        assert await pool.run("ping") == "pong"
        with pytest.raises(JobTimeout):  # the job never ends by itself: only the timeout ends it
            await pool.run("_hold", *Gate(tmp_path, "never").args(), timeout=0.3)
        assert pool.timeouts == 1
        with pytest.raises(JobFailed):
            await pool.run("no-such-job")
        # A stale job (its caller gave up) is stopped inside its worker, which lives on.
        pids = pool.pids()
        task = asyncio.ensure_future(pool.run("_hold", *Gate(tmp_path, "stale").args(), lane=DIAGNOSTICS,
                                              kill_after=0.2))
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        task.cancel()
        await pool.wait_until(lambda: pool.cancelled == 1 and pool.running("_hold") == 0)
        assert pool.kills == 0 and pool.pids() == pids
        # A job that cannot be interrupted (blocked in native code) is killed with its worker
        # once the grace after the cancel has passed.
        started = tmp_path / "sleep-started"
        task = asyncio.ensure_future(pool.run("_sleep", 600, str(started), lane=DIAGNOSTICS, kill_after=0.2))
        await until_file(started)  # running inside the worker (a cancel sent earlier skips the job)
        task.cancel()
        await pool.wait_until(lambda: pool.kills == 1 and pool.running("_sleep") == 0)
        assert await pool.run("ping") == "pong"
        # Background jobs never take the last worker, and give theirs up: an interactive job
        # stops the running one (it runs again afterwards) while the other waits its turn.
        gate = Gate(tmp_path, "background")
        bg = [asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=BACKGROUND)) for _ in range(2)]
        await pool.wait_until(lambda: pool.running("_hold") == 1 and len(pool.queue) == 1)
        assert await pool.run("ping") == "pong"
        assert not any(t.done() for t in bg)  # answered while both background jobs still wait
        assert pool.preemptions == 1
        gate.open()
        assert await asyncio.gather(*bg) == [True, True]
    finally:
        await pool.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("foreground_first", [True, False])
async def test_background_job_is_preempted_for_foreground_work(tmp_path, foreground_first):
    """One worker, busy with background work (a prefetch, a workspace check): a foreground job
    stops it (the worker lives on) and runs first; the background job runs again afterwards.
    ``foreground_first=False`` (the old scheduling) is the negative control: the foreground job
    waits until the background job is done."""
    from gradwarden.lsp.worker import BACKGROUND, DIAGNOSTICS, WorkerPool

    pool = WorkerPool(1, foreground_first=foreground_first)
    pool.start()
    try:
        gate = Gate(tmp_path, "prefetch")
        bg = asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=BACKGROUND))
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        fg = asyncio.ensure_future(pool.run("ping", lane=DIAGNOSTICS))
        if foreground_first:
            assert await fg == "pong"
            assert not bg.done()  # re-run, waiting on its gate again
            assert (pool.preemptions, pool.cancelled, pool.kills, pool.alive()) == (1, 1, 0, 1)
            gate.open()
            assert await bg is True
        else:
            await pool.wait_until(lambda: len(pool.queue) == 1)  # the foreground job waits
            gate.open()
            done, _ = await asyncio.wait([bg, fg], return_when=asyncio.FIRST_COMPLETED)
            assert done == {bg} or bg.done()  # the background job ended first
            assert await fg == "pong" and pool.preemptions == 0
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_extra_workers_start_on_demand_and_retire(tmp_path):
    from gradwarden.lsp.worker import WorkerPool

    pool = WorkerPool(2, idle_retire=0.5)
    pool.start()
    try:
        assert pool.alive() == 1
        gate = Gate(tmp_path, "slow")
        slow = asyncio.ensure_future(pool.run("_hold", *gate.args()))
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        assert await pool.run("ping") == "pong"
        assert not slow.done()  # answered by a second worker, not behind the held job
        assert pool.alive() == 2
        gate.open()
        assert await slow is True
        await pool.wait_until(lambda: pool.retired == 1)
        assert pool.alive() == 1 and pool.crashes == 0
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_bulk_jobs_wait_instead_of_starting_a_worker(tmp_path, monkeypatch):
    """Jobs run with ``may_spawn=False`` (diagnostics of documents just opened) queue behind
    the one worker; a job that may spawn (the document being edited) still gets a new worker,
    ahead of the bulk jobs queued before it."""
    from gradwarden.lsp import worker
    from gradwarden.lsp.worker import DIAGNOSTICS, WorkerPool

    # Any job that may start a worker starts it at once: the bulk jobs below are past the
    # wait, so only ``may_spawn=False`` keeps them from starting one.
    monkeypatch.setattr(worker, "SPAWN_AFTER", 0.0)
    pool = WorkerPool(2, idle_retire=30)
    pool.start()
    try:
        gate = Gate(tmp_path, "bulk")
        bulk = [asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=DIAGNOSTICS, may_spawn=False))
                for _ in range(3)]
        await pool.wait_until(lambda: pool.running("_hold") == 1 and len(pool.queue) == 2)
        assert pool.alive() == 1
        assert await pool.run("ping", lane=DIAGNOSTICS) == "pong"
        assert not any(t.done() for t in bulk)  # not behind the bulk jobs queued before it
        assert pool.alive() == 2
        gate.open()
        assert await asyncio.gather(*bulk) == [True] * 3
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_idle_worker_drops_its_caches(monkeypatch):
    from gradwarden.lsp import worker

    monkeypatch.setattr(worker, "TRIM_AFTER", 0.3)
    pool = worker.WorkerPool(1, idle_retire=0.3)
    pool.start()
    try:
        assert await pool.run("hover_table", "import torch\nx = torch.ones(2, requires_grad=True)\n", "t.py")
        done = pool.completed
        await pool.wait_until(lambda: pool.completed > done)  # the trim job, sent by the pool itself
        assert pool.completed == done + 1 and all(p.trimmed for p in pool.procs)
        assert await pool.run("ping") == "pong"
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_thread_mode_runs_the_same_jobs():
    from gradwarden.lsp.worker import WorkerPool

    pool = WorkerPool(1, mode="thread")
    try:
        diags = await pool.run("diagnose", "import torch\nw = torch.zeros(2, requires_grad=True)\nw += 1\n", "t.py")
        assert [d.code for d in diags] == ["GW101"]
    finally:
        await pool.close()


# --------------------------------------------------------------------------- hover table
def test_hover_table_lookup_equals_explain_at():
    """Hover answers from a table recorded once per text (a background job); every lookup must
    give exactly what the engine's explain_at gives for the same position."""
    from gradwarden.engine.explain.explain import explain_at
    from gradwarden.lsp.hover_table import build, lookup
    from lsp_session import seed_cases

    checked = found = 0
    for case in seed_cases():
        text = case.read_text()
        table = build(text, case.name)
        assert table is not None
        for row, line in enumerate(text.splitlines(), 1):
            for col in range(1, len(line) + 1, 3):
                want = explain_at(text, case.name, row, col)
                assert lookup(table, row, col) == want, (case.name, row, col)
                checked += 1
                found += want is not None
    assert checked > 500 and found > 100


def test_hover_table_of_a_text_that_does_not_parse_is_empty():
    from gradwarden.lsp.hover_table import build, lookup

    table = build("import torch\nx = torch.exp(\n", "t.py")
    assert table is not None and len(table) == 0 and lookup(table, 2, 1) is None


def test_a_cancel_wrapped_by_library_code_is_still_a_cancel(monkeypatch):
    """A cancel raised inside library code may come out wrapped (seen in CI: inside libcst's
    import, as ``RuntimeError: Error calling __set_name__``); the fix job then reported "fix
    failed" and answered as if it had finished. A wrapped interruption ends the job as the
    cancel it was; an ordinary failure of one fix still gives None for that fix only."""
    from gradwarden.lsp.jobs import fix_edits_many
    from gradwarden.lsp.worker import JobCancelled, cancellation_in

    try:
        try:
            raise JobCancelled()
        except JobCancelled as inner:
            raise RuntimeError("Error calling __set_name__") from inner
    except RuntimeError as wrapped:
        assert cancellation_in(wrapped)
        assert not cancellation_in(RuntimeError("an ordinary failure"))

    class Interrupting:  # a fix whose realisation is interrupted inside library code
        title = "interrupted"

    def interrupted(*_args):
        try:
            raise JobCancelled()
        except JobCancelled as inner:
            raise RuntimeError("wrapped by a library") from inner

    monkeypatch.setattr("gradwarden.lsp.jobs.fix_edits", interrupted)
    with pytest.raises(RuntimeError) as info:
        fix_edits_many("x = 1\n", [(None, Interrupting())])
    assert cancellation_in(info.value)
    monkeypatch.setattr("gradwarden.lsp.jobs.fix_edits", lambda *a: (_ for _ in ()).throw(ValueError("broken")))
    assert fix_edits_many("x = 1\n", [(None, Interrupting())]) == [None]  # an ordinary failure: one None


# --------------------------------------------------------------------------- module structure
def lsp_imports():
    """module -> the gradwarden.lsp modules it imports, anywhere in it (module level, inside
    functions, under TYPE_CHECKING)."""
    import ast
    from pathlib import Path

    import gradwarden.lsp

    folder = Path(gradwarden.lsp.__file__).parent
    graph = {}
    for path in sorted(folder.glob("*.py")):
        name = path.stem
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "gradwarden.lsp":
                    found.update(a.name for a in node.names)
                elif node.module.startswith("gradwarden.lsp."):
                    found.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[2] for a in node.names if a.name.startswith("gradwarden.lsp."))
        graph[name] = found - {name}
    return graph


def test_server_is_the_only_wiring():
    """server.py maps requests to helpers; no helper imports the server (not even for type
    hints: they see it through ``context.ServerContext``). That no module of the package
    imports another in a circle is tests/test_import_graph.py's."""
    graph = lsp_imports()
    importers_of_server = sorted(m for m, deps in graph.items() if "server" in deps)
    assert importers_of_server == ["cli"], importers_of_server


@pytest.mark.asyncio
async def test_background_work_for_a_document_runs_away_from_its_home_worker(tmp_path):
    """A document's home is the worker of its last incremental analysis (its caches). Its
    background work (the prefetch) goes to another worker, started for it if need be, so the
    next edit's analysis finds the home free: no stop request, no wait, no cold start."""
    from gradwarden.lsp.worker import BACKGROUND, DIAGNOSTICS, WorkerPool

    pool = WorkerPool(2, timeout=HOLD_MAX * 2)
    pool.start()
    try:
        home = await pool.run("_pid", lane=DIAGNOSTICS, affinity="doc", finish_when_stale=True)
        assert pool.alive() == 1
        gate = Gate(tmp_path, "prefetch")
        bg = asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=BACKGROUND, affinity="doc"))
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        assert pool.alive() == 2 and next(p.pid for p in pool.procs if p.job is not None) != home
        assert await pool.run("_pid", lane=DIAGNOSTICS, affinity="doc", finish_when_stale=True) == home
        assert (pool.home_waits, pool.preemptions, pool.kills) == (0, 0, 0)
        gate.open()
        assert await bg is True
        assert [p.pid for p in pool.procs if "doc" in p.affinities] == [home]  # still its home
    finally:
        await pool.close()


@pytest.mark.asyncio
@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no thread priorities on this platform")
async def test_background_jobs_run_at_a_lower_priority_than_the_edits_analyses():
    from gradwarden.lsp.worker import BACKGROUND, BACKGROUND_NICE, DIAGNOSTICS, INTERACTIVE, WorkerPool

    pool = WorkerPool(1)
    pool.start()
    try:
        base = await pool.run("_niceness", lane=DIAGNOSTICS)
        assert await pool.run("_niceness", lane=INTERACTIVE) == base
        assert await pool.run("_niceness", lane=BACKGROUND) == min(base + BACKGROUND_NICE, 19)
        assert await pool.run("_niceness", lane=DIAGNOSTICS) == base  # the next job's thread is a new one
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_an_edit_analysis_stops_background_work_on_its_documents_worker_rather_than_start_cold(tmp_path):
    """The document's background work had to run on its home (the other worker was busy then);
    the other worker is idle now. The edit's incremental analysis stops that background job and
    runs on the home, not cold on the idle worker; the background job runs again after."""
    from gradwarden.lsp.worker import BACKGROUND, DIAGNOSTICS, WorkerPool

    pool = WorkerPool(2, timeout=HOLD_MAX * 2)
    pool.start()
    try:
        home = await pool.run("_pid", lane=DIAGNOSTICS, affinity="doc", finish_when_stale=True)
        first_gate, other_gate = Gate(tmp_path, "first"), Gate(tmp_path, "other")
        first = asyncio.ensure_future(pool.run("_hold", *first_gate.args(), lane=DIAGNOSTICS))  # on the home
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        other = asyncio.ensure_future(pool.run("_hold", *other_gate.args(), lane=DIAGNOSTICS))  # a second worker
        await pool.wait_until(lambda: pool.running("_hold") == 2)
        first_gate.open()
        assert await first is True
        gate = Gate(tmp_path, "prefetch")
        bg = asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=BACKGROUND, affinity="doc"))
        await pool.wait_until(lambda: pool.running("_hold") == 2)  # on the home: nowhere else free
        other_gate.open()
        assert await other is True
        ran_on = await pool.run("_pid", lane=DIAGNOSTICS, affinity="doc", finish_when_stale=True)
        assert ran_on == home
        assert (pool.home_waits, pool.preemptions, pool.kills) == (1, 1, 0)
        gate.open()
        assert await bg is True  # re-run after the edit's analysis
        assert [p.pid for p in pool.procs if "doc" in p.affinities] == [home]
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_a_stale_incremental_analysis_finishes_and_the_next_one_waits_for_its_worker(tmp_path):
    """A stale ``finish_when_stale`` job (the incremental analysis of a text edited again) is
    neither stopped nor killed: it finishes, and the next job of the same document waits for
    that worker (its caches) although another worker is idle."""
    from gradwarden.lsp.worker import DIAGNOSTICS, WorkerPool

    pool = WorkerPool(2, timeout=HOLD_MAX * 2)
    pool.start()
    try:
        assert await pool.run("ping") == "pong"
        pool._spawn()  # a second worker, idle
        assert pool.alive() == 2
        gate = Gate(tmp_path, "stale")
        stale = asyncio.ensure_future(pool.run("_hold", *gate.args(), lane=DIAGNOSTICS, affinity="doc",
                                               finish_when_stale=True))
        await pool.wait_until(lambda: pool.running("_hold") == 1)
        holder = next(p.pid for p in pool.procs if p.job is not None)
        stale.cancel()
        nxt = asyncio.ensure_future(pool.run("ping", lane=DIAGNOSTICS, affinity="doc", finish_when_stale=True))
        await asyncio.sleep(0.3)
        assert not nxt.done() and pool.running("_hold") == 1  # waiting for the document's worker
        gate.open()
        assert await nxt == "pong"
        assert (pool.cancelled, pool.kills) == (0, 0)
        assert holder in pool.pids()
        # and it ran there: the worker that finished the stale job took it
        assert any("doc" in p.affinities and p.pid == holder for p in pool.procs)
    finally:
        await pool.close()


@pytest.mark.asyncio
async def test_a_request_leaves_an_edited_documents_preparation_to_its_quiet_time(monkeypatch):
    """Hover and code actions that find nothing prepared start the preparation at once, except
    in a document whose quiet-time prefetch is scheduled (it is being edited): then the timer
    starts it, not the request made in the pause between two edits."""
    from types import SimpleNamespace

    from gradwarden.lsp import prefetch
    from gradwarden.lsp.prepared import Prepared

    started = []
    monkeypatch.setattr(prefetch, "prepare_now", lambda ls, key, result: started.append(key))
    ls = SimpleNamespace(prepared=Prepared())
    prefetch.prepare_on_request(ls, "opened", object())  # only open: no timer
    assert started == ["opened"]
    loop = asyncio.get_running_loop()
    result = object()
    ls.prepared.timers["edited"] = loop.call_later(60, lambda: None)
    ls.prepared.timer_results["edited"] = result
    prefetch.prepare_on_request(ls, "edited", result)
    assert started == ["opened"]  # left to the timer
    prefetch.prepare_on_request(ls, "edited", object())  # a result the timer will not prepare
    assert started == ["opened", "edited"]
    ls.prepared.cancel("edited")  # the next edit cancels it; a request then prepares again
    prefetch.prepare_on_request(ls, "edited", result)
    assert started == ["opened", "edited", "edited"]
