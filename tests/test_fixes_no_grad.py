"""``no_grad``: wrap an in-place update of a leaf, re-indenting it (multi-line statements,
strings, tabs, CRLF, decorators) or joining the ``with torch.no_grad():`` block above."""
from __future__ import annotations

import pytest

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


def d101(text, needle):
    return diag("GW101", span_of(text, needle), [fix("no_grad", target=span_of(text, needle))])


def test_wraps_and_reindents_a_multiline_statement_keeping_comments():
    text = src("""
        import torch
        w = torch.zeros(3, requires_grad=True)
        # initialise
        w[:] = torch.tensor([1.0,
                             2.0,   # middle
                             3.0])  # done
        print(w)
    """)
    new = must(text, d101(text, "w[:] = torch.tensor([1.0,\n                     2.0,   # middle\n                     3.0])"))
    assert new == src("""
        import torch
        w = torch.zeros(3, requires_grad=True)
        # initialise
        with torch.no_grad():
            w[:] = torch.tensor([1.0,
                                 2.0,   # middle
                                 3.0])  # done
        print(w)
    """)


def test_tabs_and_crlf_inside_a_decorated_function():
    text = src("""
        import torch as T
        @T.no_grad.__class__
        def init(w):
            w.normal_()
            return w
    """, tabs=True, crlf=True)
    new = must(text, d101(text, "w.normal_()"))
    assert "\twith T.no_grad():\r\n\t\tw.normal_()\r\n\treturn w" in new


def test_joins_the_no_grad_block_right_above():
    text = src("""
        import torch
        def edit(w, a, b):
            with torch.no_grad():
                w[:, 0] -= a
            w[:, 0] += b
    """)
    new = must(text, d101(text, "w[:, 0] += b"))
    assert new.endswith("    with torch.no_grad():\n        w[:, 0] -= a\n        w[:, 0] += b\n")


def test_multiline_string_lines_are_not_reindented():
    text = src('''
        def f(w):
            w.add_(len("""a
        b"""))
    ''')
    new = must(text, d101(text, 'w.add_(len("""a\nb"""))'))
    assert '        w.add_(len("""a\nb"""))' in new


def test_adds_import_torch_when_missing():
    text = src("""
        from torch import nn
        p = nn.Parameter(nn.init.zeros_(nn.Parameter(torch_empty())))
        p += 1
    """)
    new = must(text, d101(text, "p += 1"))
    assert "import torch\n" in new and "with torch.no_grad():\n    p += 1" in new


def test_refuses_when_the_inplace_result_is_used_or_the_line_is_shared():
    text = src("""
        y = w.relu_() * 2
        a = 1; w += 1
    """)
    assert realise(text, d101(text, "w.relu_()")) is None
    assert realise(text, d101(text, "w += 1")) is None


@pytest.mark.parametrize("crlf", [False, True])
def test_engine_to_fix_leaf_normal(crlf):
    text = src("""
        import torch
        w = torch.empty(10)
        w.requires_grad = True
        w.normal_()
    """, crlf=crlf)
    assert [d.code for d in analyze(text)] == ["GW101"]
    new = fix_all(text, unsafe=False)
    nl = "\r\n" if crlf else "\n"
    assert new.endswith(f"with torch.no_grad():{nl}    w.normal_(){nl}")
    assert not analyze(new)
