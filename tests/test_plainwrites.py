"""engine/front/plainwrites.py: which `+=` and `x[i] = ...` lines the trigger pre-pass may ignore.

PLAIN: each function's marked line (`# plain`) writes no tensor, and the pre-pass leaves it
out. COUNTED: the marked line (`# counted`) may write a tensor, and stays a trigger. The
torch test runs the claims the rules rest on (a tensor target raises on these operands).
"""
from __future__ import annotations

import ast
import textwrap

import pytest

from gradwarden.engine.front.source import SourceText
from gradwarden.engine.front.triggers import Triggers

PLAIN = {
    "list extended": """
        def f(n):
            blocks = []
            for i in range(n):
                blocks += [i]  # plain
            return blocks
    """,
    "dict item set": """
        def f(x):
            kw = {}
            kw[x] = 1  # plain
            return kw
    """,
    "literal counter": """
        def f(xs):
            idx = 0
            for x in xs:
                idx += 1  # plain
            return idx
    """,
    "string built": """
        def f(tags):
            text = ""
            for t in tags:
                text += t  # plain
            return text
    """,
    "list display added to anything": """
        def f(self, n):
            self.feature_info += [dict(n=n)]  # plain
    """,
    "string key set on anything": """
        def f(cfg, v):
            cfg['num_classes'] = v  # plain
    """,
    "list display added in a function with a walrus": """
        def f(xs, out):
            if (n := len(xs)) > 0:
                out += [n]  # plain
            return out
    """,
    "module-level dict filled before it is rebound": """
        import torch
        cfgs = {'a': {'x': 1}}
        for k in list(cfgs):
            cfgs[k + '_b'] = cfgs[k]  # plain
        cfgs = torch.tensor([1.0])
    """,
    "string key incremented on anything": """
        def f(state):
            state['step'] += 1  # plain
    """,
    "module-level dict() config": """
        model_cfgs = dict(a=1)
        model_cfgs['b'] = model_cfgs['a']  # plain
    """,
}

COUNTED = {
    "sum of tensors from zero": """
        def f(losses):
            total = 0
            for loss in losses:
                total += loss  # counted
            return total
    """,
    "parameter": """
        def f(x, y):
            x += y  # counted
            return x
    """,
    "element of a plain list": """
        def f(a, b):
            xs = [a]
            xs[0] += b  # counted
            return xs
    """,
    "list rebound to a tensor": """
        def f(t):
            xs = []
            xs = t.clone()
            xs[0] = 1  # counted
            return xs
    """,
    "loop target": """
        def f(ts):
            for t in ts:
                t[0] = 1  # counted
    """,
    "nonlocal in a nested function": """
        def f(t):
            xs = []
            def g():
                nonlocal xs
                xs = t
            g()
            xs[0] = 1  # counted
            return xs
    """,
    "walrus": """
        def f(t):
            xs = []
            if (xs := t.clone()) is not None:
                xs[0] = 1  # counted
            return xs
    """,
    "module-level tensor": """
        import torch
        w = torch.zeros(3)
        w[0] = 1  # counted
    """,
    "module-level dict() with dict rebound": """
        from mylib import dict
        cfg = dict(a=1)
        cfg[0] = 1  # counted
    """,
    "module-level dict rebound to a tensor before the write": """
        import torch
        cfgs = {}
        cfgs = torch.zeros(3)
        for k in range(3):
            cfgs[k] = 1  # counted
    """,
    "module-level counter that took a tensor": """
        import torch
        n = 0
        n += torch.ones(2)
        n += 1  # counted
    """,
    "module with a match statement": """
        cfg = {}
        match cfg:
            case _:
                pass
        cfg[0] = 1  # counted
    """,
    "module with a global statement": """
        cfg = {}
        def reset(t):
            global cfg
            cfg = t
        cfg[0] = 1  # counted
    """,
}


def _marked_row(src: str, mark: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if line.rstrip().endswith(mark))


def _trigger_at(src: str, row: int) -> bool:
    tree = ast.parse(src)
    trig = Triggers(tree, SourceText(src))
    return trig._trig[row] - trig._trig[row - 1] > 0


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_writes_are_not_triggers(name):
    src = textwrap.dedent(PLAIN[name])
    assert not _trigger_at(src, _marked_row(src, "# plain"))


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_writes_that_may_be_a_tensors_stay_triggers(name):
    src = textwrap.dedent(COUNTED[name])
    assert _trigger_at(src, _marked_row(src, "# counted"))


def test_a_function_with_only_plain_writes_is_not_analysed_on_its_own_and_its_callers_neither():
    src = textwrap.dedent("""
        import torch
        def cfg_blocks(n):
            out = []
            for i in range(n):
                out += [i]
            return out
        def build(n):
            return cfg_blocks(n)
        def step(x):
            x += 1
            return x
    """)
    tree = ast.parse(src)
    interesting = Triggers(tree, SourceText(src)).interesting
    names = {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and id(f) in interesting}
    assert names == {"step"}


OPERANDS = ["[1.0, 1.0]", "(1.0, 1.0)", "'a'", "f'{1}'", "{1: 2}", "{1.0}", "[v for v in (1.0, 2.0)]"]


@pytest.mark.parametrize("operand", OPERANDS)
def test_torch_raises_on_a_tensor_augmented_with_these(operand):
    torch = pytest.importorskip("torch")
    t = torch.zeros(2, requires_grad=True) * 1
    before = t._version
    with pytest.raises(TypeError):
        exec(f"t += {operand}", {"t": t})
    assert t._version == before


@pytest.mark.parametrize("write", ["t[{key}] = 1.0", "t[{key}] += 1"])
@pytest.mark.parametrize("key", ["'k'", "f'k{1}'", "b'k'"])
def test_torch_raises_on_a_tensor_indexed_by_a_string(key, write):
    torch = pytest.importorskip("torch")
    t = torch.zeros(2, requires_grad=True) * 1
    before = t._version
    with pytest.raises((TypeError, IndexError)):
        exec(write.format(key=key), {"t": t})
    assert t._version == before


def test_a_text_of_blank_rows_is_read_once_per_row():
    """A file analysed in parts is one part's code among rows blanked out (engine/incremental/parts.py): the
    module pass's checks look at each row once (a pattern that let ``^\\s*`` run over every
    following blank row from each row was quadratic: seconds per part). The answer is the same
    as for the text without the blank rows."""
    from gradwarden.engine.front.plainwrites import plain_module_rows

    code = "cfg = {}\ncfg[0] = 1\n"
    blank = "\n" * 200_000
    for text in (code, blank + code):
        tree = ast.parse(text)
        rows = plain_module_rows(tree.body, text)
        last_row = text.count("\n")  # the write
        assert dict(rows) == {last_row: 1}
