"""The budget counts calls too deep to follow (engine/interp/calls.py): such a call is not
run, but its arguments were evaluated, and a call tree as wide as it is deep (six calls on a
line) spends most of its work there. Counted, a runaway tree stops after about as many calls
as its allotment (not six times more: the statement count alone was blind to them)."""
from __future__ import annotations

import textwrap

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.interp import budget, calls


def _wide_tree(levels: int) -> str:
    lines = ["import torch", "", ""]
    for k in range(levels):
        nxt = f"level{k + 1}"
        if k + 1 == levels:
            lines += [f"def level{k}(x):", "    return x * 2 + 1", "", ""]
        else:
            lines += [f"def level{k}(x):",
                      f"    return {nxt}(x) + {nxt}(x * 2) + {nxt}(x - 1) + {nxt}(x / 2) + {nxt}(x + 1) + {nxt}(-x)",
                      "", ""]
    lines += [textwrap.dedent("""
        def train(model, loader, opt):
            for batch in loader:
                loss = level0(model(batch)).mean()
                loss.backward()
                opt.step()


        model = torch.nn.Linear(4, 4)
        train(model, [torch.randn(2, 4)], torch.optim.SGD(model.parameters(), lr=0.1))
    """)]
    return "\n".join(lines)


def test_calls_too_deep_to_follow_count_against_the_budget(monkeypatch) -> None:
    # train -> level0 -> ... -> level6: the calls of level7 are past the call depth limit
    src = _wide_tree(9)
    entered = []
    real = calls.Calls.call_function

    def spy(self, *a, **k):
        entered.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(calls.Calls, "call_function", spy)
    limit = 300
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", limit)
    diags = analyze_source(src, "tree.py")
    assert [d.code for d in diags if d.code == "GW002"] == ["GW002"]
    # every call entered is a statement visit or a counted refusal: the allotment bounds them
    assert len(entered) <= 2 * limit, len(entered)


def test_a_shallow_call_tree_is_unaffected(monkeypatch) -> None:
    # three levels: every call runs, none is refused, no note
    diags = analyze_source(_wide_tree(3), "tree.py")
    assert not [d for d in diags if d.code == "GW002"]
