"""Whole-project analysis (issue 23): a finding made while following a script's imports is named
by the file and line its fix changes, reported once per run (whatever the number of scripts
reaching it, jobs, or the result cache), silenced by ``# noqa`` there, fixed there; the project's
bad input (import cycles, a module that does not parse, a missing module, star imports, names
from site packages, conditional imports) never crashes the run nor makes a finding up."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

from gradwarden.engine.analyze import findings_through_importers
from project_crossfile import HELPER, script

TRAIN = script("utils")


def project(root: Path, files: Dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def check_json(root: Path, *args: str) -> List[dict]:
    """``gradwarden check --output-format json`` from inside ``root`` (as a user runs it)."""
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--output-format", "json", *args],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def where(found: List[dict]) -> List[tuple]:
    return sorted((d["filename"], d["location"]["row"], d["code"]) for d in found)


def test_a_write_in_a_helper_is_reported_there_once_with_the_call_chain(tmp_path):
    root = project(tmp_path / "p", {"train.py": TRAIN, "utils/__init__.py": "", "utils/sampling.py": HELPER,
                                    "eval.py": TRAIN})  # two scripts reach the same write
    for args in ((".", "--no-cache"), (".", "--no-cache", "-j", "2"), (".",), (".",)):  # the last from the cache
        found = check_json(root, *args)
        assert where(found) == [("utils/sampling.py", 4, "GW306")], (args, found)
        related = {(r["filename"], r["kind"]) for r in found[0]["related"]}
        assert ("utils/sampling.py", "call") not in related
        assert {r["filename"] for r in found[0]["related"] if r["kind"] == "call"} <= {"train.py", "eval.py"}
        assert found[0]["related"], found


def test_noqa_on_the_cause_line_silences_it_and_fix_edits_the_helper(tmp_path):
    root = project(tmp_path / "p", {"train.py": TRAIN, "utils/__init__.py": "",
                                    "utils/sampling.py": HELPER.replace("= -1.0", "= -1.0  # noqa: GW306")})
    assert check_json(root, ".", "--no-cache") == []
    (root / "utils/sampling.py").write_text(HELPER)
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--fix", "--unsafe-fixes", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert (root / "train.py").read_text() == TRAIN
    assert (root / "utils/sampling.py").read_text() != HELPER, proc.stdout + proc.stderr
    compile((root / "utils/sampling.py").read_text(), "sampling.py", "exec")


def test_a_script_in_tools_without_a_marker_sees_the_packages_beside_it(tmp_path):
    """The folder given on the command line is the project's root."""
    root = project(tmp_path / "p", {"tools/train.py": TRAIN, "utils/__init__.py": "", "utils/sampling.py": HELPER})
    assert where(check_json(root, ".", "--no-cache")) == [("utils/sampling.py", 4, "GW306")]


def test_sys_path_insertion_and_namespace_packages(tmp_path):
    train = ("import os\nimport sys\n\nimport torch\n\n"
             "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))\n\n"
             "from helpers.sampling import ban_tokens_  # noqa: E402\n\n"
             "logits = torch.randn(2, 5, requires_grad=True).sigmoid()\n"
             "ban_tokens_(logits.unbind(0), [[1], [2]])\n"
             "logits.sum().backward()\n")
    root = project(tmp_path / "p", {"train.py": train, "lib/helpers/sampling.py": HELPER})  # no __init__.py
    assert where(check_json(root, ".", "--no-cache")) == [("lib/helpers/sampling.py", 4, "GW306")]


def test_registry_dict_and_config_module_are_followed(tmp_path):
    models = textwrap.dedent("""\
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                y = self.fc(x).sigmoid()
                y += 1
                return y


        HEADS = {"head": Head}


        def build(cfg):
            return HEADS[cfg["name"]]()
    """)
    train = textwrap.dedent("""\
        import torch

        import config
        from models import build

        model = build(config.CFG)
        model(torch.randn(2, 4)).sum().backward()
    """)
    root = project(tmp_path / "p", {"train.py": train, "config.py": 'CFG = {"name": "head"}\n', "models.py": models})
    assert where(check_json(root, ".", "--no-cache")) == [("models.py", 11, "GW201")]


def test_decorator_registries_filled_by_importing_the_package(tmp_path):
    """``@register("name")`` (a closure of a factory) and ``@REG.register_module()`` (a method's
    closure over ``self``) fill registries when the package's ``__init__`` imports the module;
    a config key then builds the class; a library decorator is not run."""
    registry = textwrap.dedent("""\
        NETS = {}


        def register(name):
            def deco(cls):
                NETS[name] = cls
                return cls
            return deco


        class Registry:
            def __init__(self):
                self._modules = {}

            def register_module(self, name=None):
                def _register(cls):
                    self._modules[name or cls.__name__] = cls
                    return cls
                return _register

            def get(self, key):
                return self._modules[key]


        HEADS = Registry()
    """)
    heads = textwrap.dedent("""\
        import dataclasses

        import torch.nn as nn

        from .registry import HEADS, register


        @register("sig")
        class SigHead(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                y = self.fc(x).sigmoid()
                y += 1
                return y


        @HEADS.register_module()
        @dataclasses.dataclass
        class ExpHead(nn.Module):
            def __post_init__(self):
                super().__init__()

            def forward(self, x):
                y = x.exp()
                y.mul_(2)
                return y
    """)
    train = textwrap.dedent("""\
        import torch

        import nets
        from nets.registry import HEADS, NETS

        CFG = {"head": "sig"}
        x = torch.randn(2, 4, requires_grad=True)
        NETS[CFG["head"]]()(x).sum().backward()
    """)
    # (the first hazard raises: the other script reaches the second registry)
    train2 = train.replace('NETS[CFG["head"]]()', 'HEADS.get("ExpHead")()')
    root = project(tmp_path / "p", {"train.py": train, "train2.py": train2,
                                    "nets/__init__.py": "from . import heads  # noqa: F401\n",
                                    "nets/registry.py": registry, "nets/heads.py": heads})
    assert where(check_json(root, ".", "--no-cache")) == [("nets/heads.py", 16, "GW201"), ("nets/heads.py", 28, "GW201")]


BAD_INPUT = {
    "cycle": {"a.py": "from b import g\n\ndef f(x):\n    return g(x)\n",
              "b.py": "from a import f\n\ndef g(x):\n    return x\n"},
    "broken": {"broken.py": "def f(:\n"},
    "star": {"helpers.py": "def g(x):\n    return x * 2\n"},
    "site": {},
}
SCRIPT = textwrap.dedent("""\
    import torch
    from a import f
    from broken import nothing
    from missing_module import h
    from helpers import *
    from json import loads
    try:
        from fast import kernel
    except ImportError:
        kernel = None
    if torch.cuda.is_available():
        from a import f as g

    x = torch.randn(3, requires_grad=True)
    y = f(x).sigmoid()
    z = g(y) if kernel else loads("1")
    y.sum().backward()
""")


def test_bad_input_neither_crashes_nor_makes_a_finding_up(tmp_path):
    files = {"train.py": SCRIPT}
    for part in BAD_INPUT.values():
        files.update(part)
    root = project(tmp_path / "p", files)
    found = check_json(root, ".", "--no-cache")
    assert where(found) == [("broken.py", 1, "GW001")], found  # the parse error, in its own file only


def test_a_syntax_error_in_one_file_never_hides_the_others(tmp_path):
    root = project(tmp_path / "p", {"train.py": TRAIN, "utils/__init__.py": "", "utils/sampling.py": HELPER,
                                    "other.py": "def f(:\n"})
    assert where(check_json(root, ".", "--no-cache")) == [("other.py", 1, "GW001"), ("utils/sampling.py", 4, "GW306")]


def test_the_helper_alone_shows_what_its_importers_found(tmp_path):
    """What the language server does for an opened helper (engine.analyze.findings_through_importers),
    with the document's unsaved text standing for the file."""
    root = project(tmp_path / "p", {".git/HEAD": "", "train.py": TRAIN, "utils/__init__.py": "",
                                    "utils/sampling.py": HELPER})
    helper = str(root / "utils" / "sampling.py")
    found = findings_through_importers(HELPER, helper)
    assert [(d.filename, d.span.row, d.code) for d in found] == [(helper, 4, "GW306")]
    assert any(r.filename and r.filename.endswith("train.py") and r.kind == "call" for r in found[0].related)
    edited = HELPER.replace("row[ids] = -1.0", "row = row.masked_fill(row > 9, -1.0)")
    assert findings_through_importers(edited, helper) == []  # the buffer, not the file on disk
    assert [d.span.row for d in findings_through_importers(HELPER, helper)] == [4]
