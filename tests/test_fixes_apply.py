"""The pure API (``edits_for``, ``fix_source``), the fixed-point loop (passes, overlaps,
reverting a fix that does not work, idempotence) and the file helpers (encoding, BOM,
newlines, atomic writes)."""
from __future__ import annotations

import codecs
import os
import stat

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradwarden.engine.diagnostic import Fix, Span
from gradwarden.fixes import REALISERS, _load_realisers, edits_for, fix_source
from gradwarden.fixes.apply import decode, encode, fix_until_stable, unified_diff, write_atomic

from fixes_helpers import analyze, diag, fix, must, span_of, src

LEAFS = src("""
    import torch
    w = torch.zeros(3, requires_grad=True)
    v = torch.zeros(3, requires_grad=True)
    w += 1
    v.normal_()
""")


def test_fix_source_applies_safe_fixes_only_unless_unsafe():
    text = src("""
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake).mean()
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
    """)
    diags = analyze(text)
    assert fix_source(text, diags, unsafe=False) == (text, 0)
    new, n = fix_source(text, diags, unsafe=True)
    assert n == 1 and "D(fake.detach())" in new


def test_fix_source_one_pass_defers_overlapping_fixes_and_the_loop_finishes_them():
    diags = analyze(LEAFS)
    assert [d.code for d in diags] == ["GW101"]  # the engine stops at the first raise
    new, n = fix_source(LEAFS, diags)
    assert n == 1
    out = fix_until_stable(LEAFS, analyze)
    assert out.source.endswith("with torch.no_grad():\n    w += 1\n    v.normal_()\n")
    assert out.count == 2 and not out.remaining


def test_two_fixes_on_the_same_rows_are_not_applied_together():
    text = src("""
        import torch
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x)
        k = torch.exp(x)
        h += 1; k += 1
        (h + k).sum().backward()
    """)
    d1 = diag("GW201", span_of(text, "h += 1"), [fix("augassign_to_binop", target=span_of(text, "h += 1"))])
    d2 = diag("GW201", span_of(text, "k += 1"), [fix("clone", mode="before_write", name="k")])
    new, n = fix_source(text, [d1, d2])
    assert n == 1
    compile(new, "t", "exec")


def test_a_fix_that_does_not_remove_its_diagnostic_is_reverted_and_not_retried():
    text = src("""
        import torch
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x)
        h += 1
    """)
    stuck = diag("GW201", span_of(text, "h += 1"),
                 [fix("augassign_to_binop", target=span_of(text, "h += 1")),
                  fix("clone", mode="before_write", name="h")])
    calls = []

    def analyze_stuck(t):
        calls.append(t)
        row = next(i for i, line in enumerate(t.splitlines(), 1) if line.startswith("h ") and "sigmoid" not in line
                   and "clone" not in line)
        return [diag("GW201", Span(row, 1, row, 7), stuck.fixes)]

    out = fix_until_stable(text, analyze_stuck)
    assert out.source == text and out.count == 0
    assert len(calls) >= 3  # both candidates were tried and reverted


def test_idempotent_on_a_fixed_text():
    once = fix_until_stable(LEAFS, analyze).source
    again = fix_until_stable(once, analyze)
    assert again.source == once and again.count == 0


def test_a_data_write_is_never_made_loud():
    """``x.data`` -> ``x.detach()`` would turn silently wrong gradients into a crash: the fixer
    has no such fix (a fix never makes a running program raise)."""
    _load_realisers()
    assert "data_to_detach" not in REALISERS


# --------------------------------------------------------------------------- never raises
ODD = [
    "", "\n", "x = (", "\x00", "def f(:\n", "import torch\nw += 1\n", LEAFS, LEAFS.replace("\n", "\r\n"),
    "\ufeffimport torch\nw.add_(1)\n", "é = 1\nw[0] = 'ü'\n", "if x:\n\tw += 1\n", "a = 1; b += 2 \\\n  + 3\n",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.sampled_from(ODD), kind=st.sampled_from(sorted(["clone", "detach", "retain_graph",
                                                              "augassign_to_binop", "inplace_to_outofplace",
                                                              "no_grad", "move_step",
                                                              "inplace_false", "recompute", "nope"])),
       mode=st.sampled_from(["", "expr", "before_write", "break_alias", "argument", "grad_output", "data",
                             "stale_use", "assignment", "later_loss", "call_arg", "running_total",
                             "before_use", "into_loop", "after_step", "bogus"]),
       r=st.integers(-2, 8), c=st.integers(-2, 40), er=st.integers(-2, 8), ec=st.integers(-2, 40))
def test_edits_for_never_raises(text, kind, mode, r, c, er, ec):
    _load_realisers()
    span = Span(r, c, er, ec)
    f = Fix(kind, "t", safe=True, target=span, params=(("mode", mode), ("backward_span", f"{er}:1:{er}:9")))
    d = diag("GW201", span, [f])
    edits = edits_for(text, d, f)
    assert edits is None or isinstance(edits, list)
    new, n = fix_source(text, [d], unsafe=True)
    assert isinstance(new, str) and n in (0, 1)


def test_every_fix_kind_has_a_realiser():
    _load_realisers()
    assert set(REALISERS) >= {"clone", "detach", "retain_graph", "augassign_to_binop", "inplace_to_outofplace",
                              "no_grad", "move_step", "inplace_false", "recompute"}


# --------------------------------------------------------------------------- files
@pytest.mark.parametrize("data", [
    b"x = 1\r\ny = 2\r\n",
    codecs.BOM_UTF8 + "é = 1\n".encode("utf-8"),
    "# -*- coding: latin-1 -*-\ns = 'é'\r".encode("latin-1"),
    b"no newline at end",
])
def test_decode_encode_round_trip(data):
    dec = decode(data)
    assert not dec.text.startswith("\ufeff")
    assert encode(dec, dec.text) == data


def test_write_atomic_keeps_permissions_and_leaves_no_temp(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("x = 1\n")
    os.chmod(p, 0o640)
    write_atomic(str(p), b"x = 2\n")
    assert p.read_bytes() == b"x = 2\n"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert [q.name for q in tmp_path.iterdir()] == ["m.py"]


def test_unified_diff_marks_a_missing_final_newline():
    out = unified_diff("a = 1", "a = 2", "m.py")
    assert out.startswith("--- a/m.py\n+++ b/m.py\n") and "\\ No newline at end of file" in out
