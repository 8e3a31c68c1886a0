"""``retain_graph`` and ``inplace_false``: small argument edits that keep the user's layout."""
from __future__ import annotations

import pytest

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


def rg(text, needle):
    return diag("GW401", span_of(text, needle), [fix("retain_graph", target=span_of(text, needle))])


@pytest.mark.parametrize("call, expected", [
    ("loss.backward()", "loss.backward(retain_graph=True)"),
    ("loss.backward( )", "loss.backward(retain_graph=True )"),
    ("loss.backward(g)", "loss.backward(g, retain_graph=True)"),
    ("loss.backward(g,)", "loss.backward(g, retain_graph=True,)"),
    ("loss.backward(retain_graph=False)", "loss.backward(retain_graph=True)"),
    ("loss.backward(g, False)", "loss.backward(g, True)"),
    ("torch.autograd.backward(loss)", "torch.autograd.backward(loss, retain_graph=True)"),
    ("(a * b).sum().backward()", "(a * b).sum().backward(retain_graph=True)"),
    ("loss.backward(**kw)", "loss.backward(**kw, retain_graph=True)"),
])
def test_retain_graph_forms(call, expected):
    text = src(f"""
        {call}  # first pass
        other.backward()
    """)
    assert must(text, rg(text, call)).startswith(expected + "  # first pass")


def test_retain_graph_multiline_call_with_comments_and_crlf():
    text = src("""
        loss.backward(
            gradient=g,  # weights
        )
    """, crlf=True)
    new = must(text, rg(text, "loss.backward(\r\n    gradient=g,  # weights\r\n)"))
    assert new == "loss.backward(\r\n    gradient=g, retain_graph=True,  # weights\r\n)\r\n"


def test_retain_graph_already_there_is_refused():
    text = src("loss.backward(retain_graph=True)\n")
    assert realise(text, rg(text, "loss.backward(retain_graph=True)")) is None


def test_engine_to_fix_two_backwards():
    text = src("""
        import torch
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x)
        h.sum().backward()   # class 0
        (h * 2).sum().backward()
    """)
    new = fix_all(text, unsafe=False)
    assert "h.sum().backward(retain_graph=True)   # class 0" in new
    assert not analyze(new)


# --------------------------------------------------------------------------- inplace_false
def ipf(text, needle, code="GW201"):
    return diag(code, span_of(text, "y = self.act(x)"), [fix("inplace_false", target=span_of(text, needle))])


@pytest.mark.parametrize("ctor, expected", [
    ("nn.Dropout(0.25, inplace=True)", "nn.Dropout(0.25, inplace=False)"),
    ("nn.ReLU(True)", "nn.ReLU(False)"),
    ("nn.LeakyReLU(0.2, True)", "nn.LeakyReLU(0.2, False)"),
    ("nn.ReLU(inplace = True)", "nn.ReLU(inplace = False)"),
])
def test_inplace_false_forms(ctor, expected):
    text = src(f"""
        class M(nn.Module):
            def __init__(self):
                self.act = {ctor}  # memory
            def forward(self, x):
                y = self.act(x)
                return y
    """)
    assert f"self.act = {expected}  # memory" in must(text, ipf(text, ctor))


def test_inplace_false_multiline_sequential_and_refusals():
    text = src("""
        main = nn.Sequential(
            nn.Conv2d(3, 8, 4),
            nn.LeakyReLU(0.2,
                         inplace=True),  # !
        )
        relu = nn.ReLU()
        y = self.act(x)
    """)
    new = must(text, ipf(text, "nn.LeakyReLU(0.2,\n                 inplace=True)"))
    assert "inplace=False),  # !" in new
    assert realise(text, ipf(text, "nn.ReLU()")) is None


def test_inplace_false_refused_when_called_for_its_side_effect():
    text = src("""
        class M(nn.Module):
            def __init__(self):
                self.act = nn.ReLU(inplace=True)
            def forward(self, x):
                self.act(x)
                y = self.act(x)
                return x
    """)
    assert realise(text, ipf(text, "nn.ReLU(inplace=True)")) is None
