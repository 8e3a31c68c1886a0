"""engine/domain/initprobe.py: which in-place-configuring ``__init__`` provably builds no container.

A wrong "builds none" would silently drop the probe of an ``nn.Sequential`` (a missed
finding), so every way an ``__init__`` can put a container on ``self`` is an INVALID example
here, and the end-to-end tests check the finding itself.
"""
from __future__ import annotations

import ast
import textwrap

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.domain.initprobe import builds_no_container

HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn import Sequential as Seq\nSHARED = nn.Sequential(nn.ReLU())\n"
TORCH = {"torch": "torch", "nn": "torch.nn", "Seq": "torch.nn.Sequential"}

NONE_BUILT = [
    """
    class A(nn.Module):
        def __init__(self, width=4):
            super().__init__()
            self.fc = nn.Linear(width, width)
            self.act = nn.ReLU(inplace=True)
    """,
    """
    class A(torch.nn.Module):
        def __init__(self, width: int, drop: float = 0.1) -> None:
            super(A, self).__init__()
            hidden = max(width, 8)
            self.fc = nn.Linear(width, hidden)
            nn.init.zeros_(self.fc.bias)
            self.act = nn.LeakyReLU(0.2, inplace=True)
            self.drop = nn.Dropout(drop, inplace=True)
    """,
]

MAY_BUILD = [
    # a container, directly or under another name
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True))
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = Seq(nn.Linear(4, 4), nn.ReLU(inplace=True))
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.modules.container.Sequential(nn.ReLU(inplace=True))
    """,
    # an object of the module, a helper, a method, a parameter's value, a default argument
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
            self.body = SHARED
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = make_block(inplace=True)
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = self.build(inplace=True)
    """,
    """
    class A(nn.Module):
        def __init__(self, layer=nn.ReLU):
            super().__init__()
            self.body = layer(inplace=True)
    """,
    """
    class A(nn.Module):
        def __init__(self, body=SHARED):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
            self.body = body
    """,
    # a parameter or a local named like a torch module or a builtin
    """
    class A(nn.Module):
        def __init__(self, nn):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
    """,
    """
    class A(nn.Module):
        def __init__(self, width):
            super().__init__()
            list = make_block
            self.act = nn.ReLU(inplace=True)
            self.body = list(width)
    """,
    # a base class whose __init__ may build one; builtins that reach the module's objects
    """
    class A(Base):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
    """,
    """
    class A(nn.Sequential):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
            self.body = globals()["SHARED"]
    """,
    """
    class A(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU(inplace=True)
            self.body = (lambda: SHARED)()
    """,
]


def _check(code: str) -> bool:
    cls = ast.parse(textwrap.dedent(code)).body[0]
    init = next(s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__")
    return builds_no_container(init, cls, TORCH.get)


@pytest.mark.parametrize("code", NONE_BUILT)
def test_builds_none(code: str) -> None:
    assert _check(code) is True


@pytest.mark.parametrize("code", MAY_BUILD)
def test_may_build_one(code: str) -> None:
    assert _check(code) is False


def test_the_probe_still_runs_where_a_container_is_built() -> None:
    """An in-place chain inside a container built by an __init__ that only configures modules
    (LeakyReLU(inplace) then Dropout(inplace): the second overwrites what the first saved):
    found with and without other modules beside the container, and not where the chain is
    out of place."""
    for extra in ("", "        self.fc = nn.Linear(4, 4)\n"):
        for inplace in (True, False):
            code = (HEADER + "\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    + extra
                    + f"        self.body = nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.2, inplace={inplace}),\n"
                    + f"                                  nn.Dropout(0.5, inplace={inplace}))\n")
            errors = [d for d in analyze_source(code, "t.py") if d.severity.name == "ERROR"]
            assert bool(errors) is inplace, code
