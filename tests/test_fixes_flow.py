"""The fixes of the gradient-flow rules (fixes/flow.py), proven on the rules' own INVALID
examples: the fix removes the diagnostic, and the fixed program runs under torch (the error
the example demonstrates is gone)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Dict, List, Tuple

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity
from gradwarden.fixes import edits_for
from gradwarden.fixes.apply import fix_until_stable
from gradwarden.rules import all_rules

FIXED_CODES = ("GW701", "GW702", "GW703", "GW704", "GW705", "GW706", "GW708", "GW709", "GW710", "GW711", "GW712", "GW713",
               "GW714", "GW715", "GW716", "GW718")


def _src(snippet: str) -> str:
    return textwrap.dedent(snippet).strip("\n") + "\n"


def _fixed() -> List[Tuple[str, int, str, str]]:
    out = []
    for rule in all_rules():
        if rule.code not in FIXED_CODES:
            continue
        for i, snippet in enumerate(rule.INVALID):
            src = _src(snippet)
            res = fix_until_stable(src, lambda s: analyze_source(s, "example.py"), unsafe=True)
            if res.source != src:
                out.append((rule.code, i, src, res.source))
    return out


# programs beyond the rules' examples, for fixes the examples do not exercise
EXTRA = (
    ("GW701", """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        @torch.no_grad()
        def predict(x):
            return model(x)
        loss = predict(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
        """),
    ("GW701", """
        import torch
        from torch import nn
        model = nn.Linear(4, 1)
        total = torch.tensor(0.0)
        for i in range(3):
            total += model(torch.randn(2, 4)).pow(2).mean().item()
        total.backward()
        """),
    ("GW705", """
        import torch
        w = torch.randn(3, requires_grad=True).double()
        (w * 2).sum().backward()
        print(w.grad)
        """),
)


def _extra() -> List[Tuple[str, int, str, str]]:
    out = []
    for i, (code, snippet) in enumerate(EXTRA):
        src = _src(snippet)
        res = fix_until_stable(src, lambda s: analyze_source(s, "example.py"), unsafe=True)
        out.append((code, 100 + i, src, res.source))
    return out


FIXED = _fixed() + _extra()


def test_every_fixable_rule_fixes_one_of_its_examples():
    assert {c for c, _, _, _ in FIXED} == set(FIXED_CODES)


@pytest.mark.parametrize("code,index,before,after", FIXED, ids=[f"{c}-{i}" for c, i, _, _ in FIXED])
def test_fix_removes_the_diagnostic(code, index, before, after):
    left = [d for d in analyze_source(after, "example.py") if d.code == code and d.severity <= Severity.WARNING]
    assert not left, (after, [(d.row, d.message) for d in left])


@pytest.fixture(scope="module")
def runs() -> Dict[Tuple[str, int], Dict]:
    pytest.importorskip("torch")
    from test_flow_programs import _RUNNER

    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps([f[3] for f in FIXED]),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {(c, i): r for (c, i, _, _), r in zip(FIXED, results)}


@pytest.mark.parametrize("code,index", [(c, i) for c, i, _, _ in FIXED], ids=[f"{c}-{i}" for c, i, _, _ in FIXED])
def test_fixed_example_runs_under_torch(runs, code, index):
    res = runs[(code, index)]
    assert not res["exc"], f"{code} example {index} still raises {res['exc']}: {res['msg']}"


def test_per_sample_loss_of_a_helper_is_reduced_at_its_return():
    """GW702's example of a helper's per-sample loss: the diagnostic names the helper's `return`
    (the line the fix changes), and the fix edits that line only; the caller's backward is left
    as written (the fixed program runs: test_fixed_example_runs_under_torch)."""
    [(before, after)] = [(b, a) for c, _, b, a in FIXED if c == "GW702" and "def per_sample_loss" in b]
    changed = [(x, y) for x, y in zip(before.splitlines(), after.splitlines()) if x != y]
    assert changed == [("    return recon + mu.pow(2).sum(dim=1)  # <-",
                        "    return (recon + mu.pow(2).sum(dim=1)).mean()  # <-")]


def test_fixes_refuse_code_they_do_not_understand():
    src = "import torch\nx = torch.randn(3)\nprint(x)\n"
    diags = analyze_source("import torch\nw = torch.randn(3, requires_grad=True) * 2\nprint(w.grad)\n", "e.py")
    fix = next(f for d in diags for f in d.fixes if f.kind == "leaf_last")
    diag = next(d for d in diags if any(f is fix for f in d.fixes))
    # the same fix applied to another text where nothing matches at the target: refused, not guessed
    assert edits_for(src, diag, fix) is None
