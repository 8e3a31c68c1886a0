"""``augassign_to_binop`` and ``inplace_to_outofplace``: out-of-place rewrites, refused when
another alias of the tensor is read afterwards."""
from __future__ import annotations

import pytest

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


def aug(text, needle, **kw):
    return diag("GW201", span_of(text, needle), [fix("augassign_to_binop", target=span_of(text, needle), **kw)])


def oop(text, needle, **kw):
    return diag("GW201", span_of(text, needle), [fix("inplace_to_outofplace", target=span_of(text, needle), **kw)])


@pytest.mark.parametrize("line, expected", [
    ("y += 1", "y = y + 1"),
    ("y  *=  2. * math.pi  # scale", "y  = y *  (2. * math.pi)  # scale"),  # the spacing stays
    ("y -= a - b", "y = y - (a - b)"),
    ("y += a * b", "y = y + a * b"),
    ("y *= -s", "y = y * -s"),
    ("y **= 2", "y = y ** 2"),
    ("y /= (n + 1)", "y = y / (n + 1)"),
    ("y @= w if t else v", "y = y @ (w if t else v)"),
    ("self.h += self.b", "self.h = self.h + self.b"),
])
def test_rewrites(line, expected):
    text = src(f"""
        def f(x, a, b, s, n, w, t, v, math, self):
            y = torch.sigmoid(x)
            {line}
            return y
    """)
    assert expected in must(text, aug(text, line.split("  #")[0]))


def test_multiline_right_hand_side_with_comment_and_crlf():
    text = src("""
        def f(x, a):
            y = torch.sigmoid(x)
            y += (a   # first
                  + 1)
            return y
    """, crlf=True)
    new = must(text, aug(text, "y += (a   # first\r\n          + 1)"))
    assert "    y = y + (a   # first\r\n          + 1)\r\n" in new


def test_backslash_continuation_is_parenthesised():
    text = src("""
        def f(x, a):
            y = torch.sigmoid(x)
            y += a + \\
                1
            return y
    """)
    new = must(text, aug(text, "y += a + \\\n        1"))
    assert "y = y + (a + \\\n        1)" in new


def test_refused_for_a_subscript_target_or_when_an_alias_is_read_later():
    text = src("""
        def forward(self, x):
            feat = self.act(x)
            out = feat
            out += self.branch(feat)
            t = torch.sigmoid(x)
            t[:] += 1
            return out, feat
    """)
    assert realise(text, aug(text, "out += self.branch(feat)")) is None
    assert realise(text, aug(text, "t[:] += 1")) is None


def test_split_pieces_are_not_aliases_of_each_other():
    text = src("""
        def g(p):
            sx, sy, theta = torch.split(p, 1, -1)
            theta *= 2.
            return sx * theta + sy
    """)
    assert "theta = theta * 2." in must(text, aug(text, "theta *= 2."))


# --------------------------------------------------------------------------- out of place
@pytest.mark.parametrize("line, expected", [
    ("h.add_(1)", "h = h.add(1)"),
    ("h.clamp_(min=0, max=1)  # c", "h = h.clamp(min=0, max=1)  # c"),
    ("F.relu(h, inplace=True)", "h = F.relu(h)"),
    ("F.relu(inplace=True, input=h)", "h = F.relu(input=h)"),
    ("torch.add(h, 1, out=h)", "h = torch.add(h, 1)"),
])
def test_outofplace_statements(line, expected):
    text = src(f"""
        def f(x):
            h = torch.sigmoid(x)
            {line}
            return h
    """)
    first = line.split("  #")[0]
    assert expected in must(text, oop(text, first))


def test_outofplace_multiline_call_in_a_decorated_method_with_tabs():
    text = src("""
        class M:
            @property
            def f(self):
                h = torch.sigmoid(self.x)
                h.clamp_(  # keep it bounded
                    min=0,
                    max=1)
                return h
    """, tabs=True)
    new = must(text, oop(text, "h.clamp_(  # keep it bounded\n\t\t\tmin=0,\n\t\t\tmax=1)"))
    assert "\t\th = h.clamp(  # keep it bounded\n\t\t\tmin=0,\n\t\t\tmax=1)\n" in new


def test_outofplace_nested_use_and_refusals():
    text = src("""
        def f(x, g):
            h = torch.sigmoid(x)
            z = h.mul_(2) * 3
            k = torch.exp(x)
            k.copy_(g)
            v = torch.exp(x)
            u = v.mul_(2)
            return z, k, v, u
    """)
    assert "z = h.mul(2) * 3" in must(text, oop(text, "h.mul_(2)"))
    assert realise(text, oop(text, "k.copy_(g)")) is None  # no out-of-place twin
    assert realise(text, oop(text, "v.mul_(2)")) is None  # v is read later: it expects the update


def test_engine_to_fix_sigmoid_iadd_and_method():
    text = src("""
        import torch
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = torch.sigmoid(x)
        y += 1  # shift
        y.sum().backward()
        e = torch.exp(x)
        e.mul_(2)
        e.sum().backward()
    """)
    new = fix_all(text, unsafe=False)
    assert "y = y + 1  # shift" in new and "e = e.mul(2)" in new
    assert not analyze(new)
