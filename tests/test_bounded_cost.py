"""Bounded cost on any input (issue 13): the engine's work is counted, never timed.

- Nests of ``for``/``if``/``while`` levels (the benchmark's shape, a data-dependent ``if`` at
  every level, analysed in context): statement visits grow at most quadratically with the
  depth (2..40), paths held stay under the cap, no analysis stops early, and the hazard at the
  bottom of the nest is still found.
- Nested loops over known sequences stop unrolling past ``MAX_UNROLL_PRODUCT``.
- A definition that overruns its budget yields exactly one information note (GW002) on that
  definition, no crash, and every finding outside it is unchanged.

Times and memory are measured by ``benchmarks/bench_bounded.py`` (same inputs).
"""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import List, Tuple

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.assembly import new_interpreter
from gradwarden.engine.diagnostic import Diagnostic, Severity
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.interp import budget
from gradwarden.engine.interp.budget import Work
from gradwarden.engine.interp.interpreter import MAX_PATHS, MAX_UNROLL_PRODUCT

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bounded", REPO / "benchmarks" / "bench_bounded.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


bench = _bench()


def work_of(src: str) -> Tuple[Work, List[str]]:
    interp = new_interpreter(ast.parse(src), SourceText(src), "nest.py")
    events = interp.run()
    return interp.work, [e.kind for e in events]


# --------------------------------------------------------------------------- nests
NEST_DEPTHS = (2, 4, 8, 16, 24, 32, 40)


@pytest.fixture(scope="module")
def nests():
    return {d: work_of(bench.nest_source(d)) for d in NEST_DEPTHS}


def test_nest_work_grows_at_most_quadratically(nests) -> None:
    counts = {d: nests[d][0].statements for d in NEST_DEPTHS}
    print("statement visits by depth:", counts)
    base = NEST_DEPTHS[1]
    for d in NEST_DEPTHS[2:]:
        # quadratic: a level's body runs once per enclosing loop in its second iteration
        assert counts[d] <= counts[base] * (d / base) ** 2, (d, counts)
    for lo, hi in zip(NEST_DEPTHS[1:], NEST_DEPTHS[2:]):
        assert counts[hi] / counts[lo] <= 1.5 * (hi / lo) ** 2, (lo, hi, counts)


def test_nest_paths_stay_capped_and_nothing_stops(nests) -> None:
    for d, (work, kinds) in nests.items():
        assert work.peak_paths <= MAX_PATHS, (d, work)
        assert not work.stopped, (d, work.stopped)
        assert "analysis_stopped" not in kinds


def test_nest_hazard_at_the_bottom_is_still_found(nests) -> None:
    # `h` carries the graph that the previous iteration's backward freed (GW402), at any depth
    for d, (_, kinds) in nests.items():
        assert "stale_use" in kinds, (d, kinds)


def _known_nest(depth: int) -> str:
    lines = ["import torch", "", "w = torch.randn(3, requires_grad=True)", "acc = torch.zeros(3)"]
    ind = ""
    for i in range(depth):
        lines.append(f"{ind}for a{i} in range(3):")
        ind += "    "
        lines.append(f"{ind}acc = acc + w * a{i}")
    lines.append(f"{ind}acc.sum().backward()")
    return "\n".join(lines) + "\n"


def test_known_sequence_nests_stop_unrolling() -> None:
    # 3 ** 12 runs of the innermost body if every level unrolled; the product cap keeps it
    # to at most MAX_UNROLL_PRODUCT runs per nest level
    counts = {}
    for depth in (3, 6, 12):
        work, kinds = work_of(_known_nest(depth))
        counts[depth] = work.statements
        assert not work.stopped and "analysis_stopped" not in kinds
        assert work.statements <= 4 * MAX_UNROLL_PRODUCT * depth, (depth, work)
    assert counts[12] <= 4 * counts[6], counts


# --------------------------------------------------------------------------- budget
LIBRARY = '''import torch


def before():
    w = torch.randn(3, requires_grad=True)
    w.add_(1)
    return w


def hot(model, opt, loader, steps):
{body}


def after(x):
    y = torch.sigmoid(x)
    y.mul_(2)
    y.sum().backward()
'''


def _hot_body(depth: int) -> str:
    src = bench.nest_source(depth, call=False)
    body = src.split("def train(model, opt, loader, steps):\n", 1)[1]
    return body.rstrip("\n")


def _outside(diags: List[Diagnostic], lo: int, hi: int) -> List[Tuple[int, int, str, str]]:
    return sorted((d.span.row, d.span.column, d.code, d.message) for d in diags
                  if not lo <= d.span.row <= hi and d.code != "GW002")


def _hot_range(src: str) -> Tuple[int, int]:
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "hot")
    return fn.lineno, fn.end_lineno or fn.lineno


@pytest.mark.parametrize("script", [False, True], ids=["analysed-alone", "called-from-module-code"])
def test_budget_overrun_gives_one_note_and_keeps_other_findings(monkeypatch, script) -> None:
    src = LIBRARY.format(body=_hot_body(12))
    if script:
        src += ("\n\nmodel = torch.nn.Linear(4, 4)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "hot(model, opt, [torch.randn(4)], 3)\nz = torch.randn(3, requires_grad=True)\nz.add_(1)\n")
    lo, hi = _hot_range(src)
    full = analyze_source(src, "lib.py")
    assert not [d for d in full if d.code == "GW002"], "the default budget is enough for this function"
    limit = 100
    need, _ = work_of(src)
    assert need.statements > 2 * limit  # the small budget below does cut `hot` short

    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", limit)
    cut = analyze_source(src, "lib.py")
    notes = [d for d in cut if d.code == "GW002"]
    assert len(notes) == 1, [(d.row, d.message) for d in notes]
    note = notes[0]
    assert note.severity is Severity.INFORMATION
    assert note.span.row == lo and "`hot`" in note.message and "stopped early" in note.message
    assert _outside(cut, lo, hi) == _outside(full, lo, hi)
    assert {d.row for d in full if d.code == "GW101"} <= {d.row for d in cut}  # before(), module code
    if script:
        assert any(d.code == "GW101" and d.row > hi for d in cut)  # the code after the call still ran


def test_budget_overrun_of_the_module_code_is_one_note_on_line_1(monkeypatch) -> None:
    lines = ["import torch", "x = torch.randn(3, requires_grad=True)"]
    lines += [f"y{i} = x * {i}" for i in range(50)]
    src = "\n".join(lines) + "\n"
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", 20)
    diags = analyze_source(src, "script.py")
    notes = [d for d in diags if d.code == "GW002"]
    assert len(notes) == 1 and notes[0].row == 1 and "top-level code" in notes[0].message


def test_budget_is_per_definition(monkeypatch) -> None:
    # each function below needs well under the limit; together they need far more than it
    funcs = "\n\n".join(f"def f{i}(x):\n    y = x.sigmoid()\n    y.mul_(2)\n    y.sum().backward()\n"
                        for i in range(40))
    src = "import torch\n\n\n" + funcs
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", 50)  # the module code needs 41
    diags = analyze_source(src, "many.py")
    assert not [d for d in diags if d.code == "GW002"]
    assert len([d for d in diags if d.code == "GW201"]) == 40
