"""``clone``: every mode, on snippets with comments, odd formatting, multi-line expressions,
tabs, CRLF and decorators."""
from __future__ import annotations

import pytest

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


# --------------------------------------------------------------------------- expr
@pytest.mark.parametrize("crlf", [False, True])
def test_expr_appends_clone_to_expand(crlf):
    text = src("""
        import torch
        base = torch.zeros(2, 1, 3)
        mask = base.expand(2,   5, 3)  # broadcast view
        mask[:, :, 0] = 1
    """, crlf=crlf)
    d = diag("GW301", span_of(text, "mask[:, :, 0] = 1"),
             [fix("clone", target=span_of(text, "base.expand(2,   5, 3)"), mode="expr")])
    nl = "\r\n" if crlf else "\n"
    assert must(text, d) == text.replace("base.expand(2,   5, 3)  #", "base.expand(2,   5, 3).clone()  #")
    assert nl in must(text, d)


def test_expr_multiline_call_and_parenthesised_rhs():
    text = src("""
        import torch
        out = torch.randn(2, 3, 3)
        out[1] = (out[1]
                  .transpose(0, 1))  # swap
        p = torch.nn.Parameter(torch.rand(4, 3))
        p.data = a + b
    """)
    d = diag("GW302", span_of(text, "out[1] ="), [fix("clone", target=span_of(text, "out[1]\n          .transpose(0, 1)"), mode="expr")])
    new = must(text, d)
    assert ".transpose(0, 1)).clone()  # swap" in new or ".transpose(0, 1).clone())  # swap" in new
    d2 = diag("GW304", span_of(text, "p.data = a + b"), [fix("clone", target=span_of(text, "a + b"), mode="expr")])
    assert "p.data = (a + b).clone()" in must(text, d2)


def test_expr_refuses_twice():
    text = src("""
        mask = base.expand(2, 5).clone()
    """)
    d = diag("GW301", span_of(text, "mask"), [fix("clone", target=span_of(text, "base.expand(2, 5)"), mode="expr")])
    assert realise(text, d) is None


# --------------------------------------------------------------------------- before_write
def test_before_write_simple_with_comment_and_tabs():
    text = src("""
        import torch
        def f(x, w):
            d = torch.matmul(x, w)  # saved by the next matmul
            f = torch.matmul(d, w)
            d[:] = 1  # overwrite
            return f
    """, tabs=True)
    d = diag("GW201", span_of(text, "d[:] = 1"), [fix("clone", mode="before_write", name="d")])
    new = must(text, d)
    assert "\td = d.clone()\n\td[:] = 1  # overwrite" in new


def test_before_write_attribute_and_crlf():
    text = src("""
        class Q:
            @torch.no_grad()
            def enqueue(self, keys):
                self.queue[:, 0:2] = keys.T
    """, crlf=True)
    d = diag("GW201", span_of(text, "self.queue[:, 0:2] = keys.T"),
             [fix("clone", mode="before_write", name="self.queue")])
    new = must(text, d)
    assert "        self.queue = self.queue.clone()\r\n        self.queue[:, 0:2]" in new


def test_before_write_refuses_parameters():
    text = src("""
        import torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(torch.ones(3))
            def g(self):
                self.w[0] = 1
    """)
    d = diag("GW201", span_of(text, "self.w[0] = 1"), [fix("clone", mode="before_write", name="self.w")])
    assert realise(text, d) is None


def test_before_write_clones_the_base_of_a_view_that_is_read_later():
    text = src("""
        import torch
        def kernel(sq, ls):
            K = torch.exp(-0.5 * sq / ls)
            diag = K.diagonal(dim1=-2, dim2=-1)
            diag.add_(1e-3)
            return K
    """)
    d = diag("GW201", span_of(text, "diag.add_(1e-3)"), [fix("clone", mode="before_write", name="diag")],
             related=[("save", span_of(text, "torch.exp(-0.5 * sq / ls)"), "`exp` saves `K`")])
    new = must(text, d)
    assert "    K = K.clone()\n    diag = K.diagonal(dim1=-2, dim2=-1)" in new


def test_before_write_refuses_when_the_view_is_saved_after_it_is_taken_and_break_alias_does_it():
    text = src("""
        def forward(self, x):
            feat = self.act(self.head(x))
            out = feat
            for branch in self.branches:
                out += branch(feat)
            return self.tail(out)
    """)
    d = diag("GW201", span_of(text, "out += branch(feat)"),
             [fix("clone", mode="before_write", name="out"), fix("clone", safe=False, mode="break_alias", name="out")],
             related=[("save", span_of(text, "branch(feat)"), "`Conv2d` saves `feat`")])
    assert realise(text, d, d.fixes[0]) is None
    assert "out = feat.clone()" in must(text, d, d.fixes[1])


def test_before_write_inline_in_a_one_line_suite():
    text = src("""
        def f(d):
            if True: d[0] = 1
            return d
    """)
    d = diag("GW201", span_of(text, "d[0] = 1"), [fix("clone", mode="before_write", name="d")])
    assert "if True: d = d.clone(); d[0] = 1" in must(text, d)


# --------------------------------------------------------------------------- argument
def test_argument_clone_of_a_leaf_given_to_an_inplace_module():
    text = src("""
        class F(nn.Module):
            def forward(self, x):
                w = self.relu(
                    self.w,   # weights
                )
                return w * x
    """)
    d = diag("GW101", span_of(text, "self.relu(\n            self.w,   # weights\n        )"),
             [fix("clone", target=span_of(text, "self.relu(\n            self.w,   # weights\n        )"),
                  mode="argument", name="self.w")])
    assert "self.w.clone(),   # weights" in must(text, d)


# --------------------------------------------------------------------------- grad_output
def test_grad_output_alias_definition_gets_the_clone():
    text = src("""
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad_output):
                input, = ctx.saved_tensors
                grad_input = grad_output  # alias!
                grad_input[input < 0] = 0
                return grad_input
    """)
    d = diag("GW303", span_of(text, "grad_input[input < 0] = 0"), [fix("clone", mode="grad_output")])
    assert "grad_input = grad_output.clone()  # alias!" in must(text, d)


def test_grad_output_written_directly_is_cloned_at_the_top_after_the_docstring():
    text = src('''
        class STE(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                """Straight-through."""
                g.clamp_(-1.0, 1.0)
                return g
    ''')
    d = diag("GW303", span_of(text, "g.clamp_(-1.0, 1.0)"), [fix("clone", mode="grad_output")])
    new = must(text, d)
    assert '"""Straight-through."""\n        g = g.clone()\n        g.clamp_(' in new


def test_grad_output_one_line_body_and_view():
    text = src("""
        class T(torch.autograd.Function):
            @staticmethod
            def backward(ctx, go): go.mul_(2); return go
        class U(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad_output):
                c = grad_output.size(1)
                part = grad_output[:, c // 3:c * 2 // 3]
                part[0] = 1.0
                return part
    """)
    d = diag("GW303", span_of(text, "go.mul_(2)"), [fix("clone", mode="grad_output")])
    assert "def backward(ctx, go): go = go.clone(); go.mul_(2); return go" in must(text, d)
    d2 = diag("GW303", span_of(text, "part[0] = 1.0"), [fix("clone", mode="grad_output")])
    assert "part = grad_output[:, c // 3:c * 2 // 3].clone()" in must(text, d2)


# --------------------------------------------------------------------------- data
def test_data_alias_becomes_a_copy():
    text = src("""
        def forward(self, x):
            out = torch.sigmoid(self.fc(x))
            snap = out  .data   # for the dashboard
            snap.sub_(snap.mean())
            return x * out
    """)
    d = diag("GW601", span_of(text, "snap.sub_(snap.mean())"), [fix("clone", safe=False, mode="data")])
    assert "snap = out.detach().clone()   # for the dashboard" in must(text, d)


def test_data_direct_write_is_refused():
    text = src("""
        for p in m.parameters():
            p.data.add_(p.grad, alpha=-0.1)
    """)
    d = diag("GW601", span_of(text, "p.data.add_(p.grad, alpha=-0.1)"), [fix("clone", safe=False, mode="data")])
    assert realise(text, d) is None


# --------------------------------------------------------------------------- end to end
def test_engine_to_fix_saved_matmul_setitem():
    text = src("""
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        f = torch.matmul(d, w2)
        d[:] = 1
        f.backward()
    """)
    assert any(d.code == "GW201" for d in analyze(text))
    new = fix_all(text, unsafe=False)
    assert "d = d.clone()\nd[:] = 1" in new
    assert not [d for d in analyze(new) if d.code == "GW201"]
