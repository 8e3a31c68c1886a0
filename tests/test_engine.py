"""Engine behaviours not covered by a single rule's examples: bad input, library code analysed
without a main block, imports from the user's project, hover timelines, path semantics."""
import textwrap

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity
from gradwarden.engine.explain.explain import explain_at
from project_import import TRAIN


def codes(src, filename="t.py"):
    return [(d.row, d.code) for d in analyze_source(textwrap.dedent(src), filename) if d.severity <= Severity.WARNING]


# ---------------------------------------------------------------- bad input never raises
def test_syntax_error_is_one_diagnostic():
    diags = analyze_source("import torch\nx = (\n", "bad.py")
    assert [d.code for d in diags] == ["GW001"] and "syntax error" in diags[0].message


def test_undecodable_bytes_are_one_diagnostic():
    diags = analyze_source(b"# -*- coding: utf-8 -*-\nx = '\xff\xfe'\n", "bad.py")
    assert [d.code for d in diags] == ["GW001"]


def test_bom_and_latin1_cookie_decode():
    assert analyze_source("\ufeffimport torch\n".encode("utf-8"), "a.py") == []
    assert analyze_source("# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"), "b.py") == []


def test_deep_nesting_and_big_files_do_not_crash():
    deep = "x = " + "(" * 150 + "1" + ")" * 150 + "\n"
    analyze_source(deep, "deep.py")  # may be a GW001 (parser limit) but never an exception
    big = "import torch\n" + "y = torch.zeros(3) + 1\n" * 60000
    assert len(big) > 1_000_000
    assert analyze_source(big, "big.py") == []  # over 1 M characters, no trigger: only its syntax checked (engine/incremental/parts.py)


def test_unknown_imports_and_dynamic_code_are_quiet():
    assert codes("""
        import torch
        from mystery import thing
        x = thing(torch.randn(3, requires_grad=True))
        x += 1
        getattr(x, "backward")()
        exec("print(1)")
    """) == []


# ---------------------------------------------------------------- path semantics
def test_an_immediate_error_ends_its_path():
    # PyTorch raises at the first write: the second one never runs, so it is not reported.
    assert codes("""
        import torch
        w = torch.zeros(3, requires_grad=True)
        w += 1
        w *= 2
    """) == [(4, "GW101")]


def test_branches_are_followed_separately_and_constants_prune_them():
    src = """
        import torch
        def f(x, clone=False):
            y = torch.sigmoid(x)
            if clone:
                y = y.clone()
            y += 1
            return y
        x = torch.randn(3, requires_grad=True)
        f(x, clone=True).sum().backward()
    """
    assert codes(src) == []
    assert codes(src.replace("clone=True)", "clone=False)")) == [(7, "GW201")]


def test_step_after_zero_grad_without_backward_writes_nothing():
    assert codes("""
        import torch
        lin = torch.nn.Linear(2, 2)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        y = lin(torch.randn(3, 2, requires_grad=True))
        opt.zero_grad()
        opt.step()
        y.sum().backward()
    """) == []


def test_nn_init_is_not_a_leaf_error_but_still_bumps_versions():
    assert codes("""
        import torch
        import torch.nn as nn
        lin = nn.Linear(2, 2)
        nn.init.zeros_(lin.bias)
    """) == []
    assert codes("""
        import torch
        import torch.nn as nn
        lin = nn.Linear(2, 2)
        y = lin(torch.randn(3, 2, requires_grad=True))
        nn.init.normal_(lin.weight)
        y.sum().backward()
    """) == [(6, "GW201")]


# ---------------------------------------------------------------- library code (no main block)
def test_module_methods_are_analysed_without_a_caller():
    assert codes("""
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, padding=1)
                self.act = nn.ReLU(inplace=True)
            def forward(self, x):
                out = self.act(self.conv(x))
                out += x
                return out
    """) == [(10, "GW201")]


def test_inplace_chains_inside_sequential_are_probed():
    assert codes("""
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.main = nn.Sequential(
                    nn.Conv2d(3, 8, 3),
                    nn.LeakyReLU(0.2, inplace=True),
                    nn.Dropout(0.5, inplace=True),
                )
            def forward(self, x):
                return self.main(x)
    """) == [(9, "GW201")]


def test_pure_library_functions_stay_silent():
    assert codes("""
        import torch
        def normalize(x):
            return (x - x.mean()) / x.std()
        class Cfg:
            size = 3
    """) == []


# ---------------------------------------------------------------- project imports
def test_models_imported_from_the_project_are_followed(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models.py").write_text(textwrap.dedent("""
        import torch.nn as nn
        class D(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 1)
            def forward(self, x):
                return self.fc(x)
    """))
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    got = [(d.row, d.code) for d in analyze_source(script.read_bytes(), str(script))]
    assert got == [(9, "GW501")]  # reported in the script, at the step


# ---------------------------------------------------------------- hover timelines
def test_timeline_names_save_write_and_backward():
    src = "import torch\nx = torch.ones(2, requires_grad=True)\ny = torch.sigmoid(x)\ny += 1\ny.sum().backward()\n"
    tl = explain_at(src, "t.py", 4, 1)
    assert tl is not None and tl.name == "y" and tl.requires_grad is True
    kinds = [(e.span.row, e.kind) for e in tl.events]
    assert (3, "save") in kinds and (4, "write") in kinds and (5, "backward") in kinds
    backward = [e for e in tl.events if e.kind == "backward"][0]
    assert "expects version 0" in backward.message and "finds version 1" in backward.message


def test_timeline_of_a_detach_alias_mentions_the_shared_counter():
    src = ("import torch\nw = torch.ones(2, 1, requires_grad=True)\nd = torch.ones(1, 2) @ w\n"
           "d_ = d.detach()\nd_[:] = 1\n")
    tl = explain_at(src, "t.py", 5, 1)
    assert tl is not None and "shares its version counter" in tl.note


def test_timeline_outside_any_tensor_is_none():
    assert explain_at("import torch\nn = 3\n", "t.py", 2, 1) is None
    assert explain_at("x = (\n", "t.py", 1, 1) is None
