"""The patterns measured on real libraries (issue 25, ``benchmarks/PRECISION.md``), reduced to
small programs in ``tests/data/precision`` (see its README): each one's static expectation
(no finding, no error/warning, or the findings an injected bug must give) and, under torch,
what running it does. Plus the pure pieces behind them: how many values a custom backward
returns (``engine/domain/returncount.py``) and what the "analysis stopped" note (GW002) says.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity
from gradwarden.engine.domain.returncount import ReturnCounter, tuple_elements
from gradwarden.engine.interp import budget

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "precision"
DRIVER = "# --- driver: run under torch, not analysed ---"
SUITE = "precision-patterns"  # its section of tests/data/proofs.json
_HEADER = re.compile(r"^#\s*(\w+)\s*:\s*(.*)$")


@dataclass
class Reduction:
    path: Path
    expect: str  # "none", "quiet" or findings
    findings: List[Tuple[str, str, int]]  # (code, severity, row)
    torch: str  # ok | raises | silent

    @property
    def name(self) -> str:
        return self.path.name

    def analysed_text(self) -> str:
        text = self.path.read_text(encoding="utf-8")
        return text.split(DRIVER, 1)[0]


def _load() -> List[Reduction]:
    out = []
    for p in sorted(DATA.glob("*.py")):
        meta = {}
        for line in p.read_text(encoding="utf-8").splitlines()[:12]:
            m = _HEADER.match(line)
            if m:
                meta.setdefault(m.group(1), []).append(m.group(2).strip())
        expects = meta.get("expect", [])
        findings = []
        for e in expects:
            if e not in ("none", "quiet"):
                code, sev, row = e.split()
                findings.append((code, sev, int(row)))
        out.append(Reduction(p, expects[0] if expects else "", findings, (meta.get("torch") or [""])[0]))
    return out


REDUCTIONS = _load()


def test_every_reduction_has_a_header() -> None:
    assert len(REDUCTIONS) >= 12, [r.name for r in REDUCTIONS]
    for r in REDUCTIONS:
        assert r.expect, f"{r.name}: no `# expect:`"
        assert r.torch in ("ok", "raises", "silent"), f"{r.name}: `# torch:` is {r.torch!r}"
        assert "# from:" in r.path.read_text(encoding="utf-8"), f"{r.name}: no `# from:`"
        if r.expect in ("none", "quiet"):
            assert r.torch in ("ok", "silent") or r.findings, r.name
    kinds = {r.expect if r.expect in ("none", "quiet") else "findings" for r in REDUCTIONS}
    assert kinds == {"none", "quiet", "findings"}


def _severity(d) -> str:
    return {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(d.severity, "information")


@pytest.mark.parametrize("red", REDUCTIONS, ids=lambda r: r.name)
def test_reduction_static(red: Reduction) -> None:
    diags = analyze_source(red.analysed_text(), str(red.path))
    shown = "\n".join(f"  {d.span.row}: {d.code} {_severity(d)} {d.message}" for d in diags)
    loud = [d for d in diags if _severity(d) in ("error", "warning")]
    if red.expect == "none":
        assert not diags, f"{red.name}: a noise pattern must give no finding:\n{shown}"
    elif red.expect == "quiet":
        assert not loud, f"{red.name}: a false-alarm pattern must give no error or warning:\n{shown}"
    else:
        got = {(d.code, _severity(d), d.span.row) for d in diags}
        for want in red.findings:
            assert want in got, f"{red.name}: want {want}, got:\n{shown}"
        extra = [d for d in loud if (d.code, _severity(d), d.span.row) not in red.findings]
        assert not extra, f"{red.name}: errors/warnings besides the expected ones:\n{shown}"


def test_reduction_labels_under_torch(tmp_path) -> None:
    pytest.importorskip("torch")
    from torch_runner import Job, prove

    def judge(red: Reduction):
        def ok(outcome) -> bool:
            s = outcome.summary
            if s.get("rc") is None:
                return False
            if red.torch == "raises":
                return s["rc"] != 0 and str(s.get("exc", "")).startswith("RuntimeError")
            if s["rc"] != 0:
                return False
            return bool(s.get("mismatch")) == (red.torch == "silent")
        return ok

    jobs = [Job(r.name, r.path, timeout=120) for r in REDUCTIONS]
    results, prover = prove(jobs, None, SUITE, tmp_path, judges={r.name: judge(r) for r in REDUCTIONS})
    bad = [f"{r.name} (torch: {r.torch}): {results[r.name].describe()}" for r in REDUCTIONS
           if not judge(r)(results[r.name])]
    print(prover.summary_line("precision reductions"))
    assert not bad, "\n".join(bad)


def test_silent_expanded_write_says_it_does_not_raise() -> None:
    red = next(r for r in REDUCTIONS if r.name == "expand_write_loop_index.py")
    (d,) = [d for d in analyze_source(red.analysed_text(), str(red.path)) if d.code == "GW301"]
    assert "does not raise" in d.message and "silently changes every broadcast copy" in d.message
    assert "raises (" not in d.message


# --------------------------------------------------------------------------- returned lengths
def _counter(src: str) -> Tuple[ReturnCounter, ast.Return]:
    tree = ast.parse(textwrap.dedent(src))
    fn = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Fn")
    methods = {m.name: m for m in fn.body if isinstance(m, ast.FunctionDef)}
    ret = next(n for n in ast.walk(methods["backward"]) if isinstance(n, ast.Return))
    return ReturnCounter(tree, "Fn", methods), ret


@pytest.mark.parametrize("expr, want", [
    ("(None,) * 12", 12),
    ("2 * (None, g)", 4),
    ("(None, None, None) + (Fn.apply(g),)", 4),
    ("(None,) * 3 + Fn.apply(g)", 5),  # forward returns two tensors
    ("Fn._helper(g)", 2),
    ("helper(g) + (None,)", 3),  # a function of the module returning two values
    ("(g,) + other.thing(g)", None),  # a function of another library: not known
    ("g * ctx.scale", 1),
    ("g.clone()", 1),
    ("g.chunk(2)", None),
    ("(None,) * n", None),
    ("grads[1:]", None),
    ("(*grads, None)", None),
    ("(None,) + tuple(g for _ in range(3))", None),
])
def test_returned_length(expr: str, want: Optional[int]) -> None:
    src = f"""
        import torch
        import other


        def helper(x):
            return x, x


        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2, a * 3

            @staticmethod
            def _helper(g):
                return g, g

            @staticmethod
            def backward(ctx, g):
                return {expr}
    """
    counter, ret = _counter(src)
    assert counter.count(ret.value, ["g"]) == want


def test_tuple_elements_of_tuple_arithmetic() -> None:
    e = ast.parse("(None, None) + (f(g),) + (None,) * 2", mode="eval").body
    assert [ast.unparse(x) for x in tuple_elements(e)] == ["None", "None", "f(g)", "None"]


# --------------------------------------------------------------------------- GW002
def test_analysis_stopped_names_the_line_and_what_grew(monkeypatch) -> None:
    src = textwrap.dedent("""
        import torch


        def step(model, x, flags):
            y = model(x)
            if flags[0]:
                y = y * 2
            if flags[1]:
                y = y + 1
            return y


        def train(model, loader, opt, flags):
            for epoch in range(10 ** 6):
                for x in loader:
                    loss = step(model, x, flags).sum()
                    loss.backward()
                    opt.step()
    """)
    monkeypatch.setattr(budget, "STATEMENTS_PER_DEFINITION", 12)  # runs out inside `step`, inlined in the loops
    (note,) = [d for d in analyze_source(src, "train.py") if d.code == "GW002"]
    assert note.span.row == src.splitlines().index("def train(model, loader, opt, flags):") + 1
    m = re.search(r"analysis stopped early at line (\d+): `train`", note.message)
    assert m, note.message
    row = int(m.group(1))
    assert "def train" not in src.splitlines()[row - 1]  # a line inside it, not its header
    assert row < src.splitlines().index("def train(model, loader, opt, flags):") + 1  # inside `step`
    assert "2 enclosing loops" in note.message and "1 inlined call deep (`step`)" in note.message
    assert any(r.message == "the analysis stopped here" and r.span.row == row for r in note.related)
