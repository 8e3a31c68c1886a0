"""``complete_grads`` and ``static_function``: fixes of custom autograd.Function definitions."""
from __future__ import annotations

import pytest

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


def grads(text, needle, got, want):
    return diag("GW307", span_of(text, needle), [fix("complete_grads", target=span_of(text, needle),
                                                     got=got, want=want)])


@pytest.mark.parametrize("ret, got, want, expected", [
    ("return g * ctx.k", 1, 2, "return g * ctx.k, None"),
    ("return g * ctx.k  # scale", 1, 3, "return g * ctx.k, None, None  # scale"),
    ("return (g, g)", 2, 3, "return (g, g, None)"),
    ("return g, g,", 2, 3, "return g, g, None,"),
    ("return (g if ctx.on else -g)", 1, 2, "return (g if ctx.on else -g), None"),
])
def test_complete_grads(ret, got, want, expected):
    text = src(f"""
        class Scale(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                {ret}
    """)
    assert expected in must(text, grads(text, ret.split("  #")[0], got, want))


def test_complete_grads_multiline_tuple_crlf_and_refusals():
    text = src("""
        class F(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return (g * 2,
                        g * 3)  # two
            @staticmethod
            def other(ctx, g):
                return helper(g)
    """, crlf=True)
    new = must(text, grads(text, "return (g * 2,\r\n                g * 3)", 2, 3))
    assert "g * 3, None)  # two" in new
    assert realise(text, grads(text, "return helper(g)", 1, 2)) is None


def test_static_function_converts_the_legacy_api_with_tabs_and_call_sites():
    text = src('''
        class Sign(torch.autograd.Function):
            """Legacy."""
            @some.decorator
            def forward(self, x):
                self.save_for_backward(x)  # keep x
                helper = lambda self: self
                return x.sign()

            def backward(self, g):
                x, = self.saved_tensors
                return g * (x.abs() <= 1).float()

        y = Sign()(torch.randn(3))
    ''', tabs=True)
    d = diag("GW308", span_of(text, "def forward(self, x):"),
             [fix("static_function", target=span_of(text, "def forward(self, x):"))])
    new = must(text, d)
    assert "\t@staticmethod\n\t@some.decorator\n\tdef forward(ctx, x):\n\t\tctx.save_for_backward(x)  # keep x" in new
    assert "helper = lambda self: self" in new  # a nested scope keeps its own `self`
    assert "\t@staticmethod\n\tdef backward(ctx, g):\n\t\tx, = ctx.saved_tensors" in new
    assert "y = Sign.apply(torch.randn(3))" in new


def test_static_function_refused_with_state_or_instances():
    text = src("""
        class Clip(torch.autograd.Function):
            def __init__(self, lo):
                self.lo = lo
            def forward(self, x):
                return x.clamp(min=self.lo)
        class Sign(torch.autograd.Function):
            def forward(self, x):
                return x.sign()
        f = Sign()
    """)
    d = diag("GW308", span_of(text, "def forward(self, x):\n        return x.clamp"),
             [fix("static_function", target=span_of(text, "def forward(self, x):\n        return x.clamp"))])
    assert realise(text, d) is None
    d2 = diag("GW308", span_of(text, "def forward(self, x):\n        return x.sign()"),
              [fix("static_function", target=span_of(text, "def forward(self, x):\n        return x.sign()"))])
    assert realise(text, d2) is None


def test_engine_to_fix_gradient_count():
    text = src("""
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k
            @staticmethod
            def backward(ctx, g):
                return g * ctx.k
        x = torch.randn(3, requires_grad=True)
        Scale.apply(x, 2.0).sum().backward()
    """)
    assert "GW307" in [d.code for d in analyze(text)]
    assert fix_all(text, unsafe=False) == text  # never a safe fix (rules/fixpolicy.py)
    new = fix_all(text, unsafe=True)
    assert "return g * ctx.k, None" in new and "GW307" not in [d.code for d in analyze(new)]


@pytest.mark.parametrize("ret, got", [
    ("return Cls._grads(g, a)", 1),  # a static helper returning a tuple (gpytorch)
    ("return (None,) * 3 + Inner.apply(g)", 1),  # tuple arithmetic with a Function's tuple (open_clip)
    ("return (None, None, None) + (Inner.apply(g),)", 1),
    ("return (None,) * 12", 1),  # trl
    ("return helper(g)", 1),
    ("return grads", 1),  # a name bound to who knows what
    ("return g.chunk(2)", 1),  # a tensor method that returns a tuple
    ("return *parts, None", 2),
    ("return (g, g)", 1),  # the analysis's count disagrees with the syntax's
])
def test_complete_grads_only_where_the_syntax_fixes_the_count(ret, got):
    text = src(f"""
        class Cls(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                a = g * 2
                grads = make(g)
                parts = [g]
                {ret}
    """)
    assert realise(text, grads(text, ret, got, 4)) is None


@pytest.mark.parametrize("ret, expected", [
    ("return a", "return a, None"),  # bound once to arithmetic on the gradient
    ("return torch.where(g > 0, g, 0 * g)", "return torch.where(g > 0, g, 0 * g), None"),
    ("return -g[..., 0].clone()", "return -g[..., 0].clone(), None"),
])
def test_complete_grads_follows_single_tensors(ret, expected):
    text = src(f"""
        class Cls(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                a = g * 2
                {ret}
    """)
    assert expected in must(text, grads(text, ret, 1, 2))
