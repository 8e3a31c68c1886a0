"""A definition analysed on its own, or a call of the module's code, that runs out of its
allotment is run once more coarsely (paths joined at every statement, known sequences looped
over as of unknown length: ``Interpreter.analyse_alone``, ``Calls.coarse_retry``) before any
GW002.

Checked on counts (statement visits, notes), never on time: a training loop whose undecidable
branches multiply the paths through an inlined helper overruns a small allotment, the retry
finishes it and the hazard after the loop is still reported; a call whose inlined calls
really multiply still gets exactly one GW002; a definition that fits its allotment is never
retried (the same findings and the same work as before).
"""
from __future__ import annotations

import textwrap

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.interp import budget, calls
from gradwarden.engine.interp import interpreter as interp_mod

TRAIN = textwrap.dedent("""
    import torch


    def step(model, x):
        y = model(x)
        if y.sum() > 0:
            y = y * 2
        if y.mean() > 0:
            y = y + 1
        if y.max() > 0:
            y = y - 1
        if y.min() > 0:
            y = y / 2
        return y


    def train(model, loader, opt, epochs, steps):
        for epoch in range(3):
            for x in loader:
                for k in range(4):
                    loss = step(model, x).sum()
                    if loss > 10:
                        loss = step(model, x * 2).sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
        w = torch.randn(3, requires_grad=True)
        w.add_(1)
        return w


    model = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, [torch.randn(4)], opt, int(input()), int(input()))
""")
LEAF_WRITE_ROW = TRAIN.splitlines().index("    w.add_(1)") + 1
# the same functions with no module code calling them: `train` is analysed on its own
ALONE = TRAIN.split("\n\nmodel = ")[0] + "\n"


def _run(src: str):
    """(diagnostics, statement visits) of one analysis."""
    seen = []
    real = interp_mod.Interpreter.run

    def run(self):
        try:
            return real(self)
        finally:
            seen.append(self.work.statements)

    interp_mod.Interpreter.run = run
    try:
        diags = analyze_source(src, "train.py")
    finally:
        interp_mod.Interpreter.run = real
    return diags, sum(seen)


@pytest.mark.parametrize("src", [TRAIN, ALONE], ids=["called-from-module-code", "analysed-alone"])
def test_a_loop_whose_paths_multiply_is_finished_coarsely(monkeypatch, src) -> None:
    full, need = _run(src)
    assert not [d for d in full if d.code == "GW002"]
    assert any(d.row == LEAF_WRITE_ROW for d in full), [(d.row, d.code) for d in full]
    limit = need * 9 // 10  # the precise run needs a tenth more; the coarse one about a quarter
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", limit)
    cut, used = _run(src)
    assert used > limit  # the precise run did run out (then the retry ran)
    assert not [d for d in cut if d.code == "GW002"], [d.message for d in cut if d.code == "GW002"]
    # the hazard after the loop is found by the coarse run, with the same code as before
    assert {(d.row, d.code) for d in cut if d.row == LEAF_WRITE_ROW} == \
        {(d.row, d.code) for d in full if d.row == LEAF_WRITE_ROW}


@pytest.mark.parametrize("src", [TRAIN, ALONE], ids=["called-from-module-code", "analysed-alone"])
def test_without_the_retry_the_same_call_stops_with_one_note(monkeypatch, src) -> None:
    _, need = _run(src)
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", need * 9 // 10)
    monkeypatch.setattr(calls, "RETRY_SHARE", 10 ** 9)  # a retry allotment of one statement
    monkeypatch.setattr(interp_mod, "RETRY_SHARE", 10 ** 9)
    cut, _ = _run(src)
    notes = [d for d in cut if d.code == "GW002"]
    assert len(notes) == 1 and "`train`" in notes[0].message


RUNAWAY = textwrap.dedent("""
    import torch


    def a(x):
        return b(x) + b(x * 2) + b(x * 3) + b(x - 1) + b(x + 1) + b(x / 2)


    def b(x):
        return c(x) + c(x * 2) + c(x * 3) + c(x - 1) + c(x + 1) + c(x / 2)


    def c(x):
        return d(x) + d(x * 2) + d(x * 3) + d(x - 1) + d(x + 1) + d(x / 2)


    def d(x):
        return e(x) + e(x * 2) + e(x * 3) + e(x - 1) + e(x + 1) + e(x / 2)


    def e(x):
        y = x * 2
        return y + 1


    def train(model, loader, opt):
        for batch in loader:
            loss = a(model(batch)).mean()
            loss.backward()
            opt.step()


    model = torch.nn.Linear(4, 4)
    train(model, [torch.randn(2, 4)], torch.optim.SGD(model.parameters(), lr=0.1))
""")


@pytest.mark.parametrize("limit", [200, 400])
def test_a_call_tree_that_multiplies_still_stops_once(monkeypatch, limit) -> None:
    # one path or many, a(x) runs e's body 6**4 times: the coarse run overruns too
    _, need = _run(RUNAWAY)
    assert need > limit + limit // calls.RETRY_SHARE  # neither run fits
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", limit)
    diags, used = _run(RUNAWAY)
    notes = [d for d in diags if d.code == "GW002"]
    assert len(notes) == 1 and "`train`" in notes[0].message
    assert "inlined call" in notes[0].message  # named from the precise run's stop point
    # the precise allotment, then a third of it for the retry (and the module's own lines)
    assert used <= limit + limit // calls.RETRY_SHARE + 50, used


def test_a_call_within_its_allotment_is_not_retried(monkeypatch) -> None:
    entered = []
    real = calls.Calls.coarse_retry

    def spy(self, *a, **k):
        entered.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(calls.Calls, "coarse_retry", spy)
    diags, _ = _run(TRAIN)
    assert not entered and not [d for d in diags if d.code == "GW002"]


def test_a_second_call_goes_coarse_at_once(monkeypatch) -> None:
    # the module's code calls `train` twice (no leaf write: that would end the path there);
    # only the first call pays for the precise run
    once = TRAIN.replace("    w.add_(1)", "    w = w + 1")
    twice = once + "train(model, [torch.randn(4)], opt, int(input()), int(input()))\n"
    _, need_once = _run(once)
    limit = need_once * 9 // 10
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", limit)
    retried = []
    real = calls.Calls.coarse_retry

    def spy(self, *a, **k):
        retried.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(calls.Calls, "coarse_retry", spy)
    diags, used = _run(twice)
    assert len(retried) == 2 and not [d for d in diags if d.code == "GW002"]
    assert used < 2 * limit, (used, limit)  # one precise run that ran out, two coarse ones
