"""What real repositories do to build objects across files, followed by the project analysis
(issue 23): attribute-style config objects (a ``dict`` subclass read through ``__getattr__``), a
config module loaded by ``importlib.import_module`` with a literal name, a ``@torch.no_grad()``
helper that transforms the tensor it is given, and a target carrying a freed graph (one finding,
not two). Each hazard was run under torch 2.13 (the comment names what it does); each correct
twin must stay silent."""
from __future__ import annotations

import json
import subprocess
import sys

from project_runs import loud, project


# an attribute-style config (``cfg.OPT`` reads ``self["OPT"]``); torch raises at the second backward:
# "one of the variables needed for gradient computation has been modified by an inplace operation"
ATTR_CONFIG = {
    "lib/options.py": """
        BASE = {"OPT": "SGD", "LR": 0.1}


        class Options(dict):
            def __init__(self, **kw):
                super().__init__(BASE)
                self.update(kw)

            def __getattr__(self, key):
                return self[key]
    """,
    "lib/gan.py": """
        import torch
        import torch.nn as nn


        class Pair(nn.Module):
            def __init__(self, opts):
                super().__init__()
                self.g = nn.Linear(4, 4)
                self.d = nn.Linear(4, 1)
                make = getattr(torch.optim, opts.OPT)
                self.opt_g = make(self.g.parameters(), lr=opts.LR)
                self.opt_d = make(self.d.parameters(), lr=opts.LR)

            def update(self, x):
                fake = self.g(x)
                self.opt_d.zero_grad()
                self.opt_g.zero_grad()
                d_loss = self.d(fake.detach()).mean()
                g_loss = -self.d(fake).mean()
                d_loss.backward()
                self.opt_d.step()
                g_loss.backward()
                self.opt_g.step()
    """,
    "run.py": """
        import torch
        from lib.options import Options
        from lib.gan import Pair

        if __name__ == "__main__":
            pair = Pair(Options(LR=0.01))
            for _ in range(2):
                pair.update(torch.randn(3, 4))
    """,
}


def test_an_attribute_style_config_object_names_the_optimizer(tmp_path):
    assert loud(project(tmp_path / "bad", ATTR_CONFIG)) == [("lib/gan.py", 21, "GW501")]
    # the fix: the generator's loss computed after the discriminator's step
    g_line = " " * 16 + "g_loss = -self.d(fake).mean()\n"
    step_line = " " * 16 + "self.opt_d.step()\n"
    fixed = dict(ATTR_CONFIG, **{"lib/gan.py": ATTR_CONFIG["lib/gan.py"].replace(g_line, "").replace(
        step_line, step_line + g_line)})
    assert fixed["lib/gan.py"] != ATTR_CONFIG["lib/gan.py"]
    assert loud(project(tmp_path / "ok", fixed)) == []


def test_an_attr_dict_whose_dict_is_itself(tmp_path):
    files = dict(ATTR_CONFIG, **{"lib/options.py": """
        class Options(dict):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                self.__dict__ = self


        BASE = Options(OPT="Adam", LR=0.1)
    """, "run.py": ATTR_CONFIG["run.py"].replace("Pair(Options(LR=0.01))", "Pair(BASE)").replace(
        "import Options", "import BASE")})
    assert loud(project(tmp_path / "bad", files)) == [("lib/gan.py", 21, "GW501")]


# a config module named by a literal to importlib, a registry filled by a decorator; torch raises
# at the backward: "... output 0 of ReluBackward0, is at version 1; expected version 0"
IMPORTED_CONFIG = {
    "settings/small.py": """
        net = {"kind": "Block", "width": 4, "act": {"kind": "ReLU", "inplace": True}}
    """,
    "core/__init__.py": "",
    "core/registry.py": """
        import torch.nn as nn

        BLOCKS = {}


        def register(cls):
            BLOCKS[cls.__name__] = cls
            return cls


        def build(spec):
            spec = dict(spec)
            return BLOCKS[spec.pop("kind")](**spec)


        def build_act(spec):
            spec = dict(spec)
            return getattr(nn, spec.pop("kind"))(**spec)
    """,
    "core/block.py": """
        import torch.nn as nn

        from core.registry import build_act, register


        @register
        class Block(nn.Module):
            def __init__(self, width, act):
                super().__init__()
                self.conv = nn.Linear(width, width)
                self.act = build_act(act)
                self.out = nn.Linear(width, 1)
                self.skip = nn.Linear(width, 1)

            def forward(self, x):
                h = self.conv(x)
                return self.skip(h) + self.out(self.act(h))
    """,
    "main.py": """
        import importlib

        import torch

        import core.block  # noqa: F401  (registers Block)
        from core.registry import build


        def main():
            cfg = importlib.import_module("settings.small")
            net = build(cfg.net)
            net(torch.randn(2, 4)).sum().backward()


        if __name__ == "__main__":
            main()
    """,
}


def test_a_config_module_loaded_by_import_module_with_a_literal_name(tmp_path):
    assert loud(project(tmp_path / "bad", IMPORTED_CONFIG)) == [("core/block.py", 17, "GW201")]
    fixed = dict(IMPORTED_CONFIG, **{"settings/small.py": IMPORTED_CONFIG["settings/small.py"].replace(
        '"inplace": True', '"inplace": False')})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a box decode run under @torch.no_grad() and used in the loss: nothing raises, the predictions
# get no gradient through it; the fix drops the decorator
NO_GRAD_HELPER = {
    "ops/boxes.py": """
        import torch


        @torch.no_grad()
        def decode(raw):
            return torch.cat((raw[:, :2].sigmoid(), raw[:, 2:].exp()), 1)
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        from ops.boxes import decode

        head = nn.Linear(3, 5)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for _ in range(2):
            raw = head(torch.randn(5, 3))
            loss = raw[:, 4].pow(2).mean() + (decode(raw[:, :4]) - 1).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


def test_a_no_grad_helper_transforming_its_argument_is_reported_at_its_decorator(tmp_path):
    assert loud(project(tmp_path / "bad", NO_GRAD_HELPER)) == [("ops/boxes.py", 4, "GW722")]
    fixed = dict(NO_GRAD_HELPER, **{"ops/boxes.py": NO_GRAD_HELPER["ops/boxes.py"].replace(
        "@torch.no_grad()\n        ", "")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a target kept from the previous iteration with its graph: torch raises at the second backward
# ("Trying to backward through the graph a second time"); that is the one finding (GW402 where it
# is kept), not also GW505 ("gradients flow into the target"), which never happens
FREED_TARGET = {
    "memory.py": """
        import torch


        class Memory:
            def __init__(self):
                self.last = torch.zeros(4, 3)

            def keep(self, out):
                self.last = out * 0.5
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from memory import Memory

        net = nn.Linear(3, 3)
        mem = Memory()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(4, 3)
        for _ in range(2):
            out = net(x)
            loss = F.mse_loss(out, mem.last)
            opt.zero_grad()
            loss.backward()
            opt.step()
            mem.keep(out)
    """,
}


def test_a_target_carrying_a_freed_graph_is_one_finding(tmp_path):
    found = loud(project(tmp_path / "bad", FREED_TARGET))
    assert [c for _, _, c in found] == ["GW402"], found


# argparse defaults name the recurrent module (`getattr(nn, args.cell)`: an LSTM), and a helper that
# detaches tensors and lists hands the LSTM's `(h, c)` tuple back unchanged; torch raises at the
# second chunk's backward ("Trying to backward through the graph a second time")
REPACKAGE = {
    "lm/state.py": """
        import torch


        def cut_history(state):
            if isinstance(state, torch.Tensor):
                return state.detach()
            if isinstance(state, list):
                return [cut_history(s) for s in state]
            return state
    """,
    "lm/net.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, cell):
                super().__init__()
                self.rnn = getattr(nn, cell)(3, 5)
                self.out = nn.Linear(5, 2)

            def forward(self, x, state):
                y, state = self.rnn(x, state)
                return self.out(y), state
    """,
    "fit.py": """
        import argparse

        import torch

        from lm.net import Net
        from lm.state import cut_history

        parser = argparse.ArgumentParser()
        parser.add_argument("--cell", default="LSTM")
        parser.add_argument("--chunks", type=int, default="3")
        args = parser.parse_args()

        if __name__ == "__main__":
            net = Net(args.cell)
            state = (torch.zeros(1, 2, 5), torch.zeros(1, 2, 5))
            for _ in range(args.chunks):
                state = cut_history(state)
                y, state = net(torch.randn(4, 2, 3), state)
                y.sum().backward()
    """,
}


def test_a_detaching_helper_that_returns_a_tuple_unchanged_is_where_the_graph_is_kept(tmp_path):
    assert loud(project(tmp_path / "bad", REPACKAGE)) == [("lm/state.py", 9, "GW402")]
    fixed = dict(REPACKAGE, **{"lm/state.py": REPACKAGE["lm/state.py"].replace(
        "isinstance(state, list)", "isinstance(state, (list, tuple))").replace(
        "[cut_history(s) for s in state]", "type(state)(cut_history(s) for s in state)")})
    assert loud(project(tmp_path / "ok", fixed)) == []
    # a command-line value the code passes itself is not a default: unknown, silent
    unknown = dict(REPACKAGE, **{"fit.py": REPACKAGE["fit.py"].replace(
        "parser.parse_args()", 'parser.parse_args(["--cell", "GRU"])')})
    assert loud(project(tmp_path / "given", unknown)) == []


# a package whose `__init__` defines the registry and then imports the submodules that fill it
# (`from . import register` runs while the package is still being imported); torch raises at the
# backward: "... output 0 of SigmoidBackward0, is at version 1; expected version 0"
LATE_REGISTRY = {
    "heads/__init__.py": """
        HEADS = {}


        def register(name):
            def add(cls):
                HEADS[name] = cls
                return cls
            return add


        from . import gate  # noqa: E402,F401
    """,
    "heads/gate.py": """
        import torch
        import torch.nn as nn

        from . import register


        @register("gate")
        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                g = torch.sigmoid(self.lin(x))
                g.mul_(2.0)
                return g
    """,
    "main.py": """
        import torch

        from heads import HEADS

        HEADS["gate"]()(torch.randn(2, 3)).sum().backward()
    """,
}


def test_a_registry_filled_by_the_submodules_its_package_imports_at_its_end(tmp_path):
    assert loud(project(tmp_path / "bad", LATE_REGISTRY)) == [("heads/gate.py", 15, "GW201")]
    fixed = dict(LATE_REGISTRY, **{"heads/gate.py": LATE_REGISTRY["heads/gate.py"].replace(
        "g.mul_(2.0)", "g = g * 2.0")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# `runpy.run_path` of a project config file whose path the code spells out; torch raises at the
# backward: "... output 0 of SigmoidBackward0, is at version 1; expected version 0"
RUN_PATH = {
    "configs/base.py": """
        act = dict(type="ReLU", inplace=True)
    """,
    "train.py": """
        import runpy

        import torch
        import torch.nn as nn

        cfg = runpy.run_path("configs/base.py")
        spec = dict(cfg["act"])
        act = getattr(nn, spec.pop("type"))(**spec)
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        act(y).sum().backward()
    """,
}


def test_a_config_file_run_by_runpy_run_path(tmp_path):
    assert loud(project(tmp_path / "bad", RUN_PATH)) == [("train.py", 11, "GW201")]
    fixed = dict(RUN_PATH, **{"configs/base.py": 'act = dict(type="ReLU", inplace=False)\n'})
    assert loud(project(tmp_path / "ok", fixed)) == []


# PPO's two losses of a shared body with a step between them (p39): torch raises at the value
# backward ("modified by an inplace operation", GW501 at the step); the value head's parameters get
# their gradient from that backward once the step is moved, so they are not "never trained" (GW719)
STEP_BETWEEN_LOSSES = {
    "agents/model.py": """
        import torch.nn as nn


        class ActorCritic(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
                self.pi = nn.Linear(8, 2)
                self.v = nn.Linear(8, 1)

            def forward(self, obs):
                h = self.body(obs)
                return self.pi(h), self.v(h).squeeze(-1)
    """,
    "main.py": """
        import torch

        from agents.model import ActorCritic

        net = ActorCritic()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for it in range(2):
            obs = torch.randn(5, 4)
            with torch.no_grad():
                _, values = net(obs)
            for _ in range(2):
                logits, v = net(obs)
                policy_loss = (logits.logsumexp(-1) * values).mean()
                value_loss = (values - v).pow(2).mean()
                opt.zero_grad()
                policy_loss.backward(retain_graph=True)
                opt.step()
                value_loss.backward()
                opt.step()
    """,
}


def test_parameters_a_raising_backward_reaches_are_not_reported_untrained(tmp_path):
    root = project(tmp_path / "p", STEP_BETWEEN_LOSSES)
    assert loud(root) == [("main.py", 17, "GW501")]
    fixed = dict(STEP_BETWEEN_LOSSES, **{"main.py": STEP_BETWEEN_LOSSES["main.py"].replace(
        "                opt.step()\n                value_loss", "                value_loss")})
    assert loud(project(tmp_path / "f", fixed)) == []


# pix2pix's model lookup (p34): `importlib.import_module("models." + name + "_model")`, then the class
# whose lowercased name is `name.replace("_", "") + "model"` among the module's `__dict__` items;
# torch raises at the backward ("modified by an inplace operation": the ReLU overwrote the input
# the shortcut conv saved), the fix goes in `models/gan_model.py`
NAME_SCAN = {
    "models/__init__.py": """
        import importlib


        def find_model_using_name(model_name):
            modellib = importlib.import_module("models." + model_name + "_model")
            target = model_name.replace("_", "") + "model"
            for name, cls in modellib.__dict__.items():
                if name.lower() == target:
                    return cls
            raise ValueError(model_name)
    """,
    "models/gan_model.py": """
        import torch.nn as nn


        class GanModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.shortcut = nn.Conv2d(2, 2, 1)
                self.act = nn.ReLU(inplace=True)
                self.conv = nn.Conv2d(2, 2, 3, padding=1)

            def forward(self, x):
                s = self.shortcut(x)
                return s + self.conv(self.act(x))
    """,
    "train.py": """
        import torch

        from models import find_model_using_name

        if __name__ == "__main__":
            stem = torch.nn.Conv2d(1, 2, 1)
            model = find_model_using_name("gan")()
            model(stem(torch.randn(1, 1, 4, 4))).sum().backward()
    """,
}


def test_a_model_class_found_by_scanning_a_module_dict_with_string_methods(tmp_path):
    assert loud(project(tmp_path / "p", NAME_SCAN)) == [("models/gan_model.py", 13, "GW201")]
    fixed = dict(NAME_SCAN, **{"models/gan_model.py": NAME_SCAN["models/gan_model.py"].replace("inplace=True",
                                                                                              "inplace=False")})
    assert loud(project(tmp_path / "f", fixed)) == []
    # a name no class matches: the lookup raises ValueError, nothing to report
    other = dict(NAME_SCAN, **{"train.py": NAME_SCAN["train.py"].replace('"gan"', '"cycle_gan"')})
    assert loud(project(tmp_path / "o", other)) == []


# a `src/` layout whose script in `scripts/` puts `Path(__file__).resolve().parents[1] / "src"` on
# sys.path (p36); the helper writes in place into a leaf that requires grad: torch raises at once
# ("a leaf Variable that requires grad is being used in an in-place operation")
SRC_LAYOUT = {
    "pyproject.toml": """
        [project]
        name = "pkg"
        version = "0.1"
    """,
    "src/pkg/__init__.py": "",
    "src/pkg/ops.py": """
        def shift_(w):
            w.add_(1.0)
    """,
    "scripts/run.py": """
        import sys
        from pathlib import Path

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

        import torch  # noqa: E402

        from pkg.ops import shift_  # noqa: E402

        if __name__ == "__main__":
            w = torch.zeros(3, requires_grad=True)
            shift_(w)
    """,
}


def test_a_src_folder_put_on_sys_path_through_path_parents(tmp_path):
    assert loud(project(tmp_path / "p", SRC_LAYOUT)) == [("src/pkg/ops.py", 2, "GW101")]
    fixed = dict(SRC_LAYOUT, **{"src/pkg/ops.py": SRC_LAYOUT["src/pkg/ops.py"].replace(
        "    w.add_(1.0)", "    with torch.no_grad():\n                w.add_(1.0)").replace("def shift_", "import torch\n\n\n        def shift_")})
    assert loud(project(tmp_path / "f", fixed)) == []
    # an index the text does not spell out: not followed, nothing claimed
    unknown = dict(SRC_LAYOUT, **{"scripts/run.py": SRC_LAYOUT["scripts/run.py"].replace("parents[1]", "parents[UP]")})
    assert loud(project(tmp_path / "u", unknown)) == []


# a DQN replay memory as the PyTorch tutorial writes it (p35): `namedtuple` transitions in a
# `deque(maxlen=capacity)`, a batch made by `Transition(*zip(*random.sample(memory, n)))`. The agent
# pushes encoder features that still hold their graph: the next replayed batch goes through a graph
# the previous backward freed ("Trying to backward through the graph a second time")
REPLAY = {
    "memory.py": """
        import random
        from collections import deque, namedtuple

        Transition = namedtuple("Transition", ("state", "reward"))


        class ReplayMemory:
            def __init__(self, capacity):
                self.memory = deque([], maxlen=capacity)

            def push(self, *args):
                self.memory.append(Transition(*args))

            def sample(self, batch_size):
                return random.sample(self.memory, min(batch_size, len(self.memory)))
    """,
    "main.py": """
        import json

        import torch
        import torch.nn as nn

        from memory import ReplayMemory, Transition

        if __name__ == "__main__":
            config = json.loads('{"capacity": 100}')
            encoder, head = nn.Linear(4, 3), nn.Linear(3, 1)
            opt = torch.optim.SGD(head.parameters(), lr=0.1)
            memory = ReplayMemory(config["capacity"])
            for step in range(3):
                memory.push(encoder(torch.randn(4)), 1.0)
                batch = Transition(*zip(*memory.sample(8)))
                loss = head(torch.stack(batch.state)).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
}


def test_a_replay_memory_of_namedtuples_in_a_deque_keeps_the_graph(tmp_path):
    found = loud(project(tmp_path / "p", REPLAY))
    assert [(f, line) for f, line, _ in found] == [("memory.py", 12)] and found[0][2] in ("GW402", "GW403"), found
    fixed = dict(REPLAY, **{"main.py": REPLAY["main.py"].replace("memory.push(encoder(torch.randn(4)), 1.0)",
                                                                 "memory.push(encoder(torch.randn(4)).detach(), 1.0)")})
    assert loud(project(tmp_path / "f", fixed)) == []
    # a deque that keeps one item: what it holds at the next step is not the previous step's
    one = dict(REPLAY, **{"memory.py": REPLAY["memory.py"].replace("maxlen=capacity", "maxlen=1")})
    assert loud(project(tmp_path / "o", one)) == []


def test_the_import_graph_follows_import_module_with_a_built_name(tmp_path):
    """The language server shows in `models/gan_model.py` what the analysis of `train.py` found
    there: the graph links them through `import_module("models." + name + "_model")` (p34)."""
    from gradwarden.engine.front.projectgraph import ProjectGraph

    root = project(tmp_path / "p", dict(NAME_SCAN, **{"setup.py": "", "models/other.py": "X = 1\n"}))
    graph = ProjectGraph(root.resolve())
    assert graph.importers(root / "models" / "gan_model.py") == [(root / "train.py").resolve()]
    assert graph.importers(root / "models" / "other.py") == []  # the name's ends do not allow it


def test_the_import_graph_sees_a_file_made_since_its_last_walk(tmp_path):
    """A module created after the folder was walked (the walk is reused for a while) is walked
    again when it is asked about, so its importers are known at once."""
    from gradwarden.engine.front.projectgraph import ProjectGraph

    root = project(tmp_path / "p", {"setup.py": "", "old.py": "X = 1\n"})
    graph = ProjectGraph(root.resolve())
    assert graph.importers(root / "old.py") == []
    project(root, {"helper.py": "Y = 2\n", "run.py": "from helper import Y\nprint(Y)\n"})
    assert graph.importers(root / "helper.py") == [(root / "run.py").resolve()]


# a notebook export (no main block, no autograd call of its own) calling a project helper; torch
# raises at the backward: "output 0 of SigmoidBackward0 ... modified by an inplace operation"
NOTEBOOK_HELPER = """
    import torch


    def run(model):
        y = model(torch.randn(4, 3)).sigmoid()
        y.mul_(2)
        y.sum().backward()
"""


def test_a_script_without_main_block_calling_a_project_helper_is_an_entry(tmp_path):
    files = {"models/wrap2.py": NOTEBOOK_HELPER,
             "nb_export.py": "import torch.nn as nn\nfrom models.wrap2 import run\n\nrun(nn.Linear(3, 1))\n"}
    assert loud(project(tmp_path, files)) == [("models/wrap2.py", 6, "GW201")]


def test_a_package_module_with_module_level_calls_is_not_run_as_a_program(tmp_path):
    # the same call from a module of a regular package (a library's registration at import) is
    # not an entry; the helper itself is never called, so nothing is reported
    files = {"lib/__init__.py": "", "lib/wrap2.py": NOTEBOOK_HELPER,
             "lib/registry.py": "import torch.nn as nn\nfrom lib.wrap2 import run\n\nrun(nn.Linear(3, 1))\n"}
    assert loud(project(tmp_path, files)) == []


def test_a_script_calling_only_site_packages_is_not_an_entry_for_them(tmp_path):
    files = {"models/wrap2.py": NOTEBOOK_HELPER,
             "setup_env.py": "import torch\nfrom models import wrap2\n\ntorch.manual_seed(0)\n"}
    assert loud(project(tmp_path, files)) == []


# a ``@dataclass`` config whose list field comes from ``field(default_factory=...)`` names the
# callbacks a trainer in another module runs; torch raises at once in the callback: "a leaf
# Variable that requires grad is being used in an in-place operation"
DATACLASS_CALLBACKS = {
    "config.py": """
        from dataclasses import dataclass, field
        from typing import List


        @dataclass
        class Config:
            lr: float = 0.1
            scale: float = 0.5
            callbacks: List[str] = field(default_factory=lambda: ["shrink"])
    """,
    "hooks/shrink.py": """
        class Shrink:
            def __init__(self, cfg):
                self.cfg = cfg

            def on_step_end(self, model):
                for p in model.parameters():
                    p.mul_(self.cfg.scale)
    """,
    "hooks/__init__.py": """
        from .shrink import Shrink

        HOOKS = {"shrink": Shrink}


        def build(cfg):
            return [HOOKS[name](cfg) for name in cfg.callbacks]
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from config import Config
        from hooks import build


        def main(cfg):
            model = nn.Linear(3, 1)
            opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
            callbacks = build(cfg)
            for _ in range(2):
                opt.zero_grad()
                model(torch.randn(4, 3)).sum().backward()
                opt.step()
                for cb in callbacks:
                    cb.on_step_end(model)


        if __name__ == "__main__":
            main(Config())
    """,
}


def test_a_dataclass_config_binds_its_fields_and_factories(tmp_path):
    assert loud(project(tmp_path / "bad", DATACLASS_CALLBACKS)) == [("hooks/shrink.py", 7, "GW101")]
    # the same config with no callback named: nothing runs the write
    none = dict(DATACLASS_CALLBACKS, **{"config.py": DATACLASS_CALLBACKS["config.py"].replace('["shrink"]', "[]")})
    assert loud(project(tmp_path / "none", none)) == []
    # a keyword given to the constructor wins over the default
    kw = dict(DATACLASS_CALLBACKS, **{"train.py": DATACLASS_CALLBACKS["train.py"].replace(
        "main(Config())", "main(Config(callbacks=[]))")})
    assert loud(project(tmp_path / "kw", kw)) == []


# a gradient penalty taken without create_graph=True: nothing raises, and the penalty (a
# constant) never reaches the critic's weights (torch: the critic's .grad equals that of the
# loss without the penalty)
GRADIENT_PENALTY = {
    "losses/penalty.py": """
        import torch


        def gradient_penalty(critic, x):
            x = x.requires_grad_(True)
            out = critic(x)
            g = torch.autograd.grad(out, x, torch.ones_like(out))[0]
            return ((g.norm(2, dim=1) - 1) ** 2).mean()
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from losses.penalty import gradient_penalty

        if __name__ == "__main__":
            critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
            opt = torch.optim.Adam(critic.parameters())
            for _ in range(2):
                real, fake = torch.randn(4, 2), torch.randn(4, 2)
                opt.zero_grad()
                loss = critic(fake).mean() - critic(real).mean() + 10.0 * gradient_penalty(critic, real)
                loss.backward()
                opt.step()
    """,
}


def test_a_gradient_taken_without_create_graph_is_a_dead_term_where_it_is_taken(tmp_path):
    assert loud(project(tmp_path / "bad", GRADIENT_PENALTY)) == [("losses/penalty.py", 7, "GW722")]
    fixed = dict(GRADIENT_PENALTY, **{"losses/penalty.py": GRADIENT_PENALTY["losses/penalty.py"].replace(
        "torch.ones_like(out))", "torch.ones_like(out), create_graph=True)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a rollout buffer keeps the critic's values with their graph; the update stacks them once and
# backwards through them in each epoch: "Trying to backward through the graph a second time"
ROLLOUT_BUFFER = {
    "rl/buffer.py": """
        import torch


        class Buffer:
            def __init__(self):
                self.values, self.rewards = [], []

            def add(self, value, reward):
                self.values.append(value)
                self.rewards.append(reward)

            def finish(self):
                self.adv = torch.stack(self.rewards) - torch.stack(self.values)
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from rl.buffer import Buffer



        def collect(buf, critic):
            for _ in range(4):
                buf.add(critic(torch.randn(3)).squeeze(), torch.randn(()))
            buf.finish()


        if __name__ == "__main__":
            critic = nn.Linear(3, 1)
            policy = nn.Linear(3, 1)
            opt = torch.optim.SGD(policy.parameters(), lr=0.1)  # the critic is trained elsewhere
            buf = Buffer()
            collect(buf, critic)
            obs = torch.randn(4, 3)
            for epoch in range(2):
                loss = -(policy(obs).squeeze(-1) * buf.adv).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
}


def test_a_graph_kept_in_a_buffer_is_reported_where_it_was_kept(tmp_path):
    assert loud(project(tmp_path / "bad", ROLLOUT_BUFFER)) == [("rl/buffer.py", 9, "GW403")]
    fixed = dict(ROLLOUT_BUFFER, **{"rl/buffer.py": ROLLOUT_BUFFER["rl/buffer.py"].replace(
        "self.values.append(value)", "self.values.append(value.detach())")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a model zoo: ``from .zoo_mlp import *`` (its ``__all__``) and a factory looking the constructor up
# in ``globals()``; the script clamps the sigmoid output in place: torch raises at the backward
# ("output 0 of SigmoidBackward0 ... modified by an inplace operation")
MODEL_ZOO = {
    "models/__init__.py": """
        from .zoo_mlp import *


        def create_model(name, **kwargs):
            if name not in globals():
                raise ValueError(name)
            return globals()[name](**kwargs)
    """,
    "models/zoo_mlp.py": """
        import torch.nn as nn

        __all__ = ["mlp_tiny"]


        def mlp_tiny(in_dim=4):
            return nn.Sequential(nn.Linear(in_dim, 8), nn.ReLU(), nn.Linear(8, 1))
    """,
    "train.py": """
        import torch
        import models

        if __name__ == "__main__":
            model = models.create_model("mlp_tiny", in_dim=4)
            probs = torch.sigmoid(model(torch.randn(5, 4)))
            probs.clamp_(1e-4, 1 - 1e-4)
            probs.sum().backward()
    """,
}


def test_a_star_import_and_a_globals_lookup_build_the_model(tmp_path):
    assert loud(project(tmp_path / "bad", MODEL_ZOO)) == [("train.py", 7, "GW201")]
    # a name the module's ``__all__`` leaves out is not bound by the star import: unknown, silent
    hidden = dict(MODEL_ZOO, **{"models/zoo_mlp.py": MODEL_ZOO["models/zoo_mlp.py"].replace(
        '["mlp_tiny"]', '["mlp_other"]')})
    assert loud(project(tmp_path / "hidden", hidden)) == []
    fixed = dict(MODEL_ZOO, **{"train.py": MODEL_ZOO["train.py"].replace(
        "probs.clamp_(1e-4, 1 - 1e-4)", "probs = probs.clamp(1e-4, 1 - 1e-4)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a forward hook that is an object of the user's class (``__call__``), attached from another
# module, scales the Tanh output in place: torch raises at the backward ("output 0 of Tanh ...
# modified by an inplace operation")
HOOK_OBJECT = {
    "utils/hooks.py": """
        class Scaler:
            def __init__(self, factor):
                self.factor = factor

            def __call__(self, module, inputs, output):
                output.mul_(self.factor)

            def attach(self, module):
                return module.register_forward_hook(self)
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from utils.hooks import Scaler

        if __name__ == "__main__":
            model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 3))
            Scaler(0.5).attach(model[1])
            model(torch.randn(4, 6)).sum().backward()
    """,
}


def test_a_hook_object_with_call_runs_as_the_module_runs(tmp_path):
    assert loud(project(tmp_path / "bad", HOOK_OBJECT)) == [("utils/hooks.py", 6, "GW201")]
    fixed = dict(HOOK_OBJECT, **{"utils/hooks.py": HOOK_OBJECT["utils/hooks.py"].replace(
        "output.mul_(self.factor)", "return output * self.factor")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# the model module named by an f-string over an argparse default; the script doubles the sigmoid
# output in place: torch raises at the backward ("output 0 of SigmoidBackward0 ... modified")
FSTRING_IMPORT = {
    "models/__init__.py": "",
    "models/tiny_gate.py": """
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return torch.sigmoid(self.fc(x))
    """,
    "train.py": """
        import argparse
        import importlib

        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", default="tiny_gate")
        args = parser.parse_args()

        if __name__ == "__main__":
            model = importlib.import_module(f"models.{args.arch}").Model()
            out = model(torch.randn(2, 4))
            out.mul_(2)
            out.sum().backward()
    """,
}


def test_an_fstring_of_known_strings_names_the_module(tmp_path):
    assert loud(project(tmp_path / "bad", FSTRING_IMPORT)) == [("train.py", 13, "GW201")]
    # a part that is not a known string (a number formatted with a spec) leaves the name unknown
    spec = dict(FSTRING_IMPORT, **{"train.py": FSTRING_IMPORT["train.py"].replace(
        'f"models.{args.arch}"', 'f"models.{args.arch}{1:d}"')})
    assert loud(project(tmp_path / "spec", spec)) == []


# a head returning a `torch.distributions.Normal` subclass whose property reads `self.scale`, set by
# torch's own constructor (which the analysis does not follow): the backward goes where the analysis
# cannot see, and the training file never names `log_scale`, read only in the head's module. Under
# torch 2.13 `log_scale` gets a gradient (0.1 at the first step), so it is not "never trained"
# (GW719; the program runs as `python -m gausspkg.fit`); the old scan looked for reads in the
# training file's text and put the warning at `gausspkg/fit.py` with the row of `head.py`'s return
DISTRIBUTION_HEAD = {
    "gausspkg/__init__.py": "",
    "gausspkg/head.py": """
        import torch
        import torch.nn as nn


        class SpreadNormal(torch.distributions.Normal):
            def __init__(self, loc, scale):
                super().__init__(loc, scale)

            @property
            def log_spread(self):
                return torch.log(self.scale).sum(-1)


        class GaussianHead(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = nn.Linear(width, 1)
                self.log_scale = nn.Parameter(torch.zeros(1))

            def forward(self, h):
                return SpreadNormal(self.proj(h), torch.exp(self.log_scale))
    """,
    "gausspkg/fit.py": """
        import torch

        from gausspkg.head import GaussianHead


        def train(xs, ys, steps=20):
            head = GaussianHead(xs.shape[1])
            opt = torch.optim.Adam(head.parameters(), lr=0.05)
            for _ in range(steps):
                opt.zero_grad()
                dist = head(xs)
                loss = ((dist.loc - ys) ** 2).mean() + 0.1 * dist.log_spread.mean()
                loss.backward()
                opt.step()
            return head


        if __name__ == "__main__":
            torch.manual_seed(0)
            train(torch.randn(16, 3), torch.randn(16, 1))
    """,
}


def test_a_parameter_read_only_in_its_own_module_is_not_untrained_when_the_backward_is_open(tmp_path):
    assert loud(project(tmp_path / "p", DISTRIBUTION_HEAD)) == []


# a block three package levels down (`vitlite/models/layers/block.py`) importing a helper two levels
# up (`from ...utils.ops import DropPath`), reached from the script through two re-exporting
# `__init__.py`; torch raises at the backward: "one of the variables needed for gradient
# computation has been modified by an inplace operation: [...] which is output 0 of AddBackward0"
NESTED_PACKAGES = {
    "vitlite/__init__.py": """
        from .models import ViT
    """,
    "vitlite/models/__init__.py": """
        from .vit import VisionTransformer as ViT

        __all__ = ["ViT"]
    """,
    "vitlite/models/layers/__init__.py": "",
    "vitlite/utils/__init__.py": "",
    "vitlite/utils/ops.py": """
        import torch.nn as nn


        class DropPath(nn.Module):
            def __init__(self, p=0.0):
                super().__init__()
                self.p = p

            def forward(self, x):
                return x
    """,
    "vitlite/models/layers/block.py": """
        import torch.nn as nn

        from ...utils.ops import DropPath


        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm = nn.LayerNorm(dim)
                self.mlp = nn.Linear(dim, dim)
                self.drop_path = DropPath()

            def forward(self, x):
                x += self.drop_path(self.mlp(self.norm(x)))
                return x
    """,
    "vitlite/models/vit.py": """
        import torch.nn as nn

        from .layers.block import Block


        class VisionTransformer(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.embed = nn.Linear(4, dim)
                self.block = Block(dim)

            def forward(self, x):
                return self.block(self.embed(x)).sum()
    """,
    "train.py": """
        import torch

        from vitlite import ViT

        if __name__ == "__main__":
            model = ViT()
            model(torch.randn(2, 4)).backward()
    """,
}


def test_package_inits_on_the_way_do_not_count_toward_the_modules_followed(tmp_path):
    # train -> vitlite/__init__ -> models/__init__ -> vit -> layers/block -> utils/ops: six modules
    # run, three of them a package's __init__ on the way (Python runs those for every submodule)
    assert loud(project(tmp_path / "bad", NESTED_PACKAGES)) == [("vitlite/models/layers/block.py", 14, "GW201")]
    block = NESTED_PACKAGES["vitlite/models/layers/block.py"]
    fixed = dict(NESTED_PACKAGES, **{"vitlite/models/layers/block.py": block.replace("x += ", "x = x + ")})
    assert fixed["vitlite/models/layers/block.py"] != block
    assert loud(project(tmp_path / "ok", fixed)) == []


# two losses through a shared trunk, each backwarded by a helper (an Accelerate-like
# `accelerator.backward(loss, **kwargs)`), one `zero_grad()` before and one step after: correct
# (run under torch 2.13: each parameter's `.grad` is the sum of the two losses' gradients of this
# step, as with `(main + aux).backward()`)
BACKWARD_HELPER = {
    "utils/accel.py": """
        class Accelerator:
            def __init__(self, accumulation_steps=1):
                self.accumulation_steps = accumulation_steps

            def backward(self, loss, **kwargs):
                loss = loss / self.accumulation_steps
                loss.backward(**kwargs)
    """,
    "engine/trainer.py": """
        def train_step(accelerator, model, optimizer, x):
            logits, aux = model(x)
            optimizer.zero_grad()
            accelerator.backward(logits.sum(), retain_graph=True)
            accelerator.backward(aux.pow(2).mean())
            optimizer.step()
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        from engine.trainer import train_step
        from utils.accel import Accelerator


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.trunk = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
                self.cls_head = nn.Linear(8, 3)
                self.aux_head = nn.Linear(8, 2)

            def forward(self, x):
                h = self.trunk(x)
                return self.cls_head(h), self.aux_head(h)


        if __name__ == "__main__":
            model = Net()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            accelerator = Accelerator()
            for _ in range(3):
                train_step(accelerator, model, optimizer, torch.randn(4, 6))
    """,
}


def test_a_backward_helper_called_for_two_losses_is_two_backwards(tmp_path):
    assert loud(project(tmp_path / "ok", BACKWARD_HELPER)) == []
    # without the zero_grad the trunk's gradients do add up over the iterations (GW710 kind)
    trainer = BACKWARD_HELPER["engine/trainer.py"]
    bad = dict(BACKWARD_HELPER, **{"engine/trainer.py": trainer.replace("    optimizer.zero_grad()\n", "")})
    assert bad["engine/trainer.py"] != trainer
    assert loud(project(tmp_path / "bad", bad)) != []


# mmcv's `Config.fromfile` written by hand: the config file loaded through
# `importlib.util.spec_from_file_location` / `module_from_spec` / `exec_module`, its path an argparse
# default; torch raises at the backward: "[...] which is output 0 of SigmoidBackward0, is at version 1"
CONFIG_FROMFILE = {
    "configs/tiny.py": """
        model = dict(type="Head", act=dict(type="Sigmoid"), scale=2.0)
        optimizer = dict(lr=0.1)
    """,
    "utils/config.py": """
        import importlib.util


        class Config:
            @staticmethod
            def fromfile(filename):
                spec = importlib.util.spec_from_file_location("cfg", filename)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return {k: v for k, v in module.__dict__.items() if not k.startswith("__")}
    """,
    "train.py": """
        import argparse

        import torch
        import torch.nn as nn

        from utils.config import Config


        class Head(nn.Module):
            def __init__(self, act, scale):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.act = getattr(nn, act["type"])()
                self.scale = scale

            def forward(self, x):
                y = self.act(self.fc(x))
                y.mul_(self.scale)
                return y.sum()


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("config", nargs="?", default="configs/tiny.py")
            args = parser.parse_args()
            cfg = Config.fromfile(args.config)
            mcfg = dict(cfg["model"])
            mcfg.pop("type")
            model = Head(**mcfg)
            opt = torch.optim.SGD(model.parameters(), lr=cfg["optimizer"]["lr"])
            model(torch.randn(2, 4)).backward()
            opt.step()


        if __name__ == "__main__":
            main()
    """,
}


def test_a_config_file_loaded_through_spec_from_file_location(tmp_path):
    assert loud(project(tmp_path / "bad", CONFIG_FROMFILE)) == [("train.py", 18, "GW201")]
    # the same program with a config whose activation saves nothing `mul_` could break
    fixed = dict(CONFIG_FROMFILE, **{"configs/tiny.py": CONFIG_FROMFILE["configs/tiny.py"].replace("Sigmoid", "GELU")})
    assert fixed["configs/tiny.py"] != CONFIG_FROMFILE["configs/tiny.py"]
    assert loud(project(tmp_path / "ok", fixed)) == []


# a model built by a classmethod factory (`Model.from_config(cfg)`, as detectron2's `@configurable`
# and transformers' `from_config` do); torch raises at the backward: "[...] which is output 0 of
# SigmoidBackward0, is at version 1"
CLASSMETHOD_FACTORY = {
    "models/__init__.py": "",
    "models/net.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, width=4, act="Identity"):
                super().__init__()
                self.fc = nn.Linear(4, width)
                self.act = getattr(nn, act)()

            @classmethod
            def from_config(cls, cfg):
                return cls(**cfg)

            def forward(self, x):
                y = self.act(self.fc(x))
                y.mul_(2)
                return y.sum()
    """,
    "train.py": """
        import torch

        from models.net import Net

        CFG = {"width": 4, "act": "Sigmoid"}

        if __name__ == "__main__":
            Net.from_config(CFG)(torch.randn(2, 4)).backward()
    """,
}


def test_a_classmethod_factory_binds_the_class(tmp_path):
    assert loud(project(tmp_path / "bad", CLASSMETHOD_FACTORY)) == [("models/net.py", 16, "GW201")]
    fixed = dict(CLASSMETHOD_FACTORY, **{"train.py": CLASSMETHOD_FACTORY["train.py"].replace('"Sigmoid"', '"GELU"')})
    assert fixed["train.py"] != CLASSMETHOD_FACTORY["train.py"]
    assert loud(project(tmp_path / "ok", fixed)) == []


# a registry filled by a plain module-level call in the package's `__init__`
# (`BACKBONES.register_module(Net)`, no decorator) and looked up with `.get(cfg.pop("type"))`;
# torch raises at the backward: "[...] which is output 0 of SigmoidBackward0, is at version 1"
REGISTRATION_CALL = {
    "lib/registry.py": """
        class Registry:
            def __init__(self, name):
                self._name = name
                self._module_dict = {}

            def register_module(self, cls=None, name=None):
                def _register(c):
                    self._module_dict[name or c.__name__] = c
                    return c
                return _register(cls) if cls is not None else _register

            def get(self, key):
                return self._module_dict.get(key)


        BACKBONES = Registry("backbone")
    """,
    "lib/net.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, width=4, act="Identity"):
                super().__init__()
                self.fc = nn.Linear(4, width)
                self.act = getattr(nn, act)()

            def forward(self, x):
                y = self.act(self.fc(x))
                y.mul_(2)
                return y.sum()
    """,
    "lib/__init__.py": """
        from .registry import BACKBONES
        from .net import Net

        BACKBONES.register_module(Net)
    """,
    "train.py": """
        import torch

        from lib import BACKBONES

        cfg = dict(type="Net", width=4, act="Sigmoid")


        def build(cfg):
            args = cfg.copy()
            return BACKBONES.get(args.pop("type"))(**args)


        if __name__ == "__main__":
            build(cfg)(torch.randn(2, 4)).backward()
    """,
}


def test_a_module_level_registration_call_fills_the_registry(tmp_path):
    assert loud(project(tmp_path / "bad", REGISTRATION_CALL)) == [("lib/net.py", 12, "GW201")]
    fixed = dict(REGISTRATION_CALL, **{"train.py": REGISTRATION_CALL["train.py"].replace('"Sigmoid"', '"GELU"')})
    assert fixed["train.py"] != REGISTRATION_CALL["train.py"]
    assert loud(project(tmp_path / "ok", fixed)) == []
    # a module-level call of something else (a builtin, a site package) is left alone
    noisy = dict(REGISTRATION_CALL, **{"lib/__init__.py": REGISTRATION_CALL["lib/__init__.py"].rstrip(" ") + "        print(BACKBONES)\n"})
    assert loud(project(tmp_path / "noisy", noisy)) == [("lib/net.py", 12, "GW201")]


# members added with `setattr(self, f"gate{i}", ...)` and called through `getattr(self, f"gate{i}")`
# (an f-string of a loop index); torch raises at the backward: "[...] which is output 0 of Sigmoid,
# is at version 1"
FSTRING_MEMBERS = {
    "nets/blocks.py": """
        import torch.nn as nn


        def gate(ch):
            return nn.Sequential(nn.Linear(ch, ch), nn.Sigmoid())
    """,
    "nets/net.py": """
        import torch.nn as nn

        from nets.blocks import gate


        class Net(nn.Module):
            def __init__(self, depth=2):
                super().__init__()
                self.depth = depth
                for i in range(depth):
                    setattr(self, f"gate{i:d}", gate(4))

            def forward(self, x):
                for i in range(self.depth):
                    att = getattr(self, f"gate{i}")(x)
                    att.mul_(2.0)
                    x = x * att
                return x.sum()
    """,
    "train.py": """
        import torch

        from nets.net import Net

        if __name__ == "__main__":
            Net()(torch.randn(2, 4)).backward()
    """,
}


def test_members_named_by_an_fstring_of_the_loop_index(tmp_path):
    assert loud(project(tmp_path / "bad", FSTRING_MEMBERS)) == [("nets/net.py", 16, "GW201")]
    fixed = dict(FSTRING_MEMBERS, **{"nets/net.py": FSTRING_MEMBERS["nets/net.py"].replace(
        "att.mul_(2.0)", "att = att.mul(2.0)")})
    assert fixed["nets/net.py"] != FSTRING_MEMBERS["nets/net.py"]
    assert loud(project(tmp_path / "ok", fixed)) == []


# a config file run with `exec(compile(f.read(), path, "exec"), ns)` (a hand-written
# `Config.fromfile`); torch raises at the backward: "[...] which is output 0 of Tanh, is at version 1"
EXEC_CONFIG = {
    "configs/base.py": """
        act = dict(type="Hardtanh", inplace=True)
    """,
    "lib/config.py": """
        def load(path):
            ns = {}
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), ns)
            return {k: v for k, v in ns.items() if not k.startswith("__")}
    """,
    "lib/model.py": """
        import torch.nn as nn


        def build(cfg):
            act = dict(cfg["act"])
            kind = act.pop("type")
            return nn.Sequential(nn.Linear(4, 4), nn.Tanh(), getattr(nn, kind)(**act))
    """,
    "train.py": """
        import argparse

        import torch

        from lib.config import load
        from lib.model import build

        parser = argparse.ArgumentParser()
        parser.add_argument("--config", default="configs/base.py")
        model = build(load(parser.parse_args().config))
        model(torch.randn(2, 4)).sum().backward()
    """,
}


def test_a_config_file_run_with_exec(tmp_path):
    assert loud(project(tmp_path / "bad", EXEC_CONFIG)) == [("lib/model.py", 7, "GW201")]
    fixed = dict(EXEC_CONFIG, **{"configs/base.py": EXEC_CONFIG["configs/base.py"].replace("True", "False")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# an optimizer over `itertools.chain` of two networks' parameters (CycleGAN), stepped before a
# helper runs D on the generator's output without `.detach()`; torch raises at D's backward:
# "Trying to backward through the graph a second time"; the fix is at the use in the helper
CHAIN_OPTIMIZER = {
    "gan/model.py": """
        import itertools

        import torch
        import torch.nn as nn


        class Pair:
            def __init__(self):
                self.g1, self.g2, self.d = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 1)
                self.opt_g = torch.optim.SGD(itertools.chain(self.g1.parameters(), self.g2.parameters()), lr=0.1)
                self.opt_d = torch.optim.SGD(self.d.parameters(), lr=0.1)

            def d_loss(self, fake):
                loss = self.d(fake).mean()
                loss.backward()

            def step(self, x):
                self.fake = self.g2(self.g1(x).tanh())
                self.opt_g.zero_grad()
                (-self.d(self.fake).mean()).backward()
                self.opt_g.step()
                self.opt_d.zero_grad()
                fake = self.fake
                self.d_loss(fake)
                self.opt_d.step()
    """,
    "train.py": """
        import torch

        from gan.model import Pair

        if __name__ == "__main__":
            pair = Pair()
            pair.step(torch.randn(3, 4))
    """,
}


def test_a_chained_optimizer_and_a_missing_detach_in_the_helper(tmp_path):
    assert loud(project(tmp_path / "bad", CHAIN_OPTIMIZER)) == [("gan/model.py", 14, "GW402")]
    fixed = dict(CHAIN_OPTIMIZER, **{"gan/model.py": CHAIN_OPTIMIZER["gan/model.py"].replace(
        "self.d(fake).mean()", "self.d(fake.detach()).mean()")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# PPO: the rollout's log-probabilities appended to a storage object with their graph, stacked by a
# method of it and used in several optimizer epochs; torch raises at the second epoch's backward:
# "Trying to backward through the graph a second time". The advantages normalized from the
# storage's `returns()` (a method of an argument, in a method analysed alone too) keep no graph.
ROLLOUT_LOGPROBS = {
    "rl/storage.py": """
        import torch


        class Storage:
            def __init__(self):
                self.logps, self.rewards = [], []

            def add(self, logp, reward):
                self.logps.append(logp)
                self.rewards.append(reward)

            def returns(self):
                return torch.tensor(self.rewards)

            def batch(self):
                return torch.stack(self.logps)
    """,
    "rl/ppo.py": """
        import torch


        class PPO:
            def __init__(self, policy):
                self.policy = policy
                self.opt = torch.optim.SGD(policy.parameters(), lr=0.01)

            def update(self, storage, obs):
                old = storage.batch()
                ret = storage.returns()
                adv = (ret - ret.mean()) / (ret.std() + 1e-8)
                for _ in range(3):
                    new = torch.log_softmax(self.policy(obs), -1)[:, 0]
                    loss = -(torch.exp(new - old) * adv).mean()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
    """,
    "main.py": """
        import torch
        import torch.nn as nn

        from rl.ppo import PPO
        from rl.storage import Storage

        if __name__ == "__main__":
            policy = nn.Linear(4, 2)
            storage = Storage()
            obs = torch.randn(5, 4)
            for i in range(5):
                storage.add(torch.log_softmax(policy(obs[i]), -1)[0], 1.0)
            PPO(policy).update(storage, obs)
    """,
}


def test_a_rollout_kept_in_storage_is_reported_at_the_store(tmp_path):
    assert loud(project(tmp_path / "bad", ROLLOUT_LOGPROBS)) == [("rl/storage.py", 9, "GW403")]
    fixed = dict(ROLLOUT_LOGPROBS, **{"rl/storage.py": ROLLOUT_LOGPROBS["rl/storage.py"].replace(
        "self.logps.append(logp)", "self.logps.append(logp.detach())")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# AdamW groups split from `named_parameters()` by name filters in another module
# (`engine/optim.py`): the LayerNorm weights fall in neither group. Nothing raises; torch leaves
# `norm.weight` unchanged by every step although it gets a gradient (GW719 at the filter)
NAME_FILTER_GROUPS = {
    "engine/optim.py": """
        import torch


        def build_optimizer(model):
            no_decay = ["bias", "norm.weight"]
            decay = [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)]
            plain = [p for n, p in model.named_parameters() if n.endswith(".bias")]
            return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": plain, "weight_decay": 0.0}])
    """,
    "model.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.norm = nn.LayerNorm(4)

            def forward(self, x):
                return self.norm(self.fc(x)).pow(2).mean()
    """,
    "train.py": """
        import torch

        from engine.optim import build_optimizer
        from model import Net

        if __name__ == "__main__":
            net = Net()
            opt = build_optimizer(net)
            for _ in range(2):
                loss = net(torch.randn(3, 4))
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
}


def test_name_filtered_groups_built_in_another_module(tmp_path):
    assert loud(project(tmp_path / "bad", NAME_FILTER_GROUPS)) == [("engine/optim.py", 7, "GW719")]
    fixed = dict(NAME_FILTER_GROUPS, **{"engine/optim.py": NAME_FILTER_GROUPS["engine/optim.py"].replace(
        'if n.endswith(".bias")', "if any(nd in n for nd in no_decay)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# heads set with `self.__setattr__(head, ...)` in a loop and called with `self.__getattr__(head)`
# (CenterNet); the heatmap head ends in `nn.Sigmoid()` and the loss helper applies `sigmoid_()` to
# its output. torch: "output 0 of Sigmoid, is at version 1; expected version 0"
DUNDER_HEADS = {
    "nets/heads.py": """
        import torch.nn as nn


        class Heads(nn.Module):
            def __init__(self, heads):
                super().__init__()
                self.heads = heads
                for head, n in heads.items():
                    layers = [nn.Linear(4, n)]
                    if head == "hm":
                        layers.append(nn.Sigmoid())
                    self.__setattr__(head, nn.Sequential(*layers))

            def forward(self, x):
                return {head: self.__getattr__(head)(x) for head in self.heads}
    """,
    "nets/loss.py": """
        import torch


        def focal_input(x):
            return torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    """,
    "train.py": """
        import torch

        from nets.heads import Heads
        from nets.loss import focal_input

        if __name__ == "__main__":
            model = Heads({"hm": 2, "wh": 2})
            out = model(torch.randn(3, 4))
            loss = focal_input(out["hm"]).mean() + out["wh"].abs().mean()
            loss.backward()
    """,
}


def test_members_set_and_read_through_explicit_dunder_calls(tmp_path):
    assert loud(project(tmp_path / "bad", DUNDER_HEADS)) == [("nets/loss.py", 5, "GW201")]
    fixed = dict(DUNDER_HEADS, **{"nets/loss.py": DUNDER_HEADS["nets/loss.py"].replace("x.sigmoid_()", "x")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a loss package reading its own functions by name: `getattr(sys.modules[__name__], name)` over a
# config's list; the NLL term clamps `exp`'s output in place. torch: "output 0 of Exp, is at version 1"
OWN_MODULE_GETATTR = {
    "losses/__init__.py": """
        import sys

        from .terms import l1_loss, nll_loss

        _self = sys.modules[__name__]


        def build(terms):
            fns = [(getattr(_self, name), w) for name, w in terms]
            return lambda pred, logvar, y: sum(w * fn(pred, logvar, y) for fn, w in fns)
    """,
    "losses/terms.py": """
        import torch


        def l1_loss(pred, logvar, y):
            return (pred - y).abs().mean()


        def nll_loss(pred, logvar, y):
            var = torch.exp(logvar)
            var.clamp_(min=1e-6)
            return (torch.log(var) + (pred - y) ** 2 / var).mean()
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        import losses

        net = nn.Linear(4, 8)
        criterion = losses.build([("l1_loss", 1.0), ("nll_loss", 0.1)])
        out = net(torch.randn(3, 4))
        loss = criterion(out[:, :4], out[:, 4:], torch.randn(3, 4))
        loss.backward()
    """,
}


def test_a_package_reading_its_own_functions_through_sys_modules(tmp_path):
    assert loud(project(tmp_path / "bad", OWN_MODULE_GETATTR)) == [("losses/terms.py", 10, "GW201")]
    fixed = dict(OWN_MODULE_GETATTR, **{"losses/terms.py": OWN_MODULE_GETATTR["losses/terms.py"].replace(
        "var.clamp_(min=1e-6)", "var = var.clamp(min=1e-6)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# fine-tuning: the optimizer built in `utils/` over the model's parameters, then
# `model.reset_classifier(n)` gives the model a new head no optimizer holds (run: the head's weight
# is unchanged after the steps); the call is what moves before the optimizer's construction
RESET_AFTER_OPTIMIZER = {
    "nets.py": """
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.head = nn.Linear(4, 10)

            def reset_classifier(self, n):
                self.head = nn.Linear(4, n)

            def forward(self, x):
                return self.head(self.body(x).relu())
    """,
    "utils/optim.py": """
        import torch


        def create_optimizer(model):
            return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    """,
    "train.py": """
        import torch

        from nets import Net
        from utils.optim import create_optimizer


        def main():
            model = Net()
            opt = create_optimizer(model)
            model.reset_classifier(3)
            for _ in range(2):
                loss = model(torch.randn(5, 4)).logsumexp(1).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()


        if __name__ == "__main__":
            main()
    """,
}


def test_a_module_replaced_by_a_call_after_the_optimizer_is_reported_at_the_call(tmp_path):
    assert loud(project(tmp_path / "bad", RESET_AFTER_OPTIMIZER)) == [("train.py", 10, "GW719")]
    fixed = dict(RESET_AFTER_OPTIMIZER, **{"train.py": RESET_AFTER_OPTIMIZER["train.py"].replace(
        "opt = create_optimizer(model)\n            model.reset_classifier(3)",
        "model.reset_classifier(3)\n            opt = create_optimizer(model)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# the optimizer built in a helper of another module over `model.parameters()`, then a head made
# lazily in `forward` on the first batch (run: the head's weight is unchanged after the steps, no
# optimizer holds it); reported where the head is made, as when the optimizer is built in the script
OPTIMIZER_IN_A_HELPER_LAZY_HEAD = {
    "utils/optim.py": """
        import torch


        def build_optimizer(model, lr=0.1):
            return torch.optim.SGD(model.parameters(), lr=lr)
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        from utils.optim import build_optimizer


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 8)
                self.head = None

            def forward(self, x):
                h = self.body(x).relu()
                if self.head is None:
                    self.head = nn.Linear(h.shape[1], 3)
                return self.head(h)


        model = Net()
        opt = build_optimizer(model)
        for _ in range(2):
            loss = model(torch.randn(5, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    """,
}


def test_a_module_attached_after_an_optimizer_built_in_another_module(tmp_path):
    assert loud(project(tmp_path / "bad", OPTIMIZER_IN_A_HELPER_LAZY_HEAD)) == [("train.py", 16, "GW719")]
    fixed = dict(OPTIMIZER_IN_A_HELPER_LAZY_HEAD, **{"train.py": OPTIMIZER_IN_A_HELPER_LAZY_HEAD["train.py"].replace(
        "self.head = None", "self.head = nn.Linear(8, 3)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


def test_a_cross_file_finding_names_the_file_of_a_line_it_cites(tmp_path):
    # the finding sits in train.py; the optimizer it cites was built at line 5 of utils/optim.py,
    # which the message names ("line 5" alone would read as train.py's line 5), while the step it
    # cites is in train.py itself and stays "line 15"
    root = project(tmp_path / "bad", RESET_AFTER_OPTIMIZER)
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    (finding,) = [d for d in json.loads(proc.stdout) if d["code"] == "GW719"]
    assert finding["filename"].endswith("train.py")
    assert "built at line 5 of `optim.py`" in finding["message"]
    assert "the step at line 15 leaves" in finding["message"]
    assert "given the new module" in finding["message"]


# `act_kwargs or {}` with a dict of options handed in: the dict's truth is its items (torch raises at
# the backward: "output 0 of SigmoidBackward0 ... modified by an inplace operation")
OPTIONS_OR_EMPTY = {
    "configs/default.py": """
        cfg = {"model": {"act": "ReLU6", "act_kwargs": {"inplace": True}, "gate": True}}
    """,
    "models/blocks.py": """
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self, act="ReLU", act_kwargs=None, gate=False):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                layers = [nn.Sigmoid()] if gate else []
                layers.append(getattr(nn, act)(**(act_kwargs or {})))
                self.post = nn.Sequential(*layers)

            def forward(self, x):
                return self.post(self.fc(x))
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from configs.default import cfg
        from models.blocks import Block

        if __name__ == "__main__":
            m = cfg["model"]
            net = nn.Sequential(*[Block(m["act"], m["act_kwargs"], m["gate"]) for _ in range(2)])
            net(torch.randn(3, 4)).sum().backward()
    """,
}


def test_a_known_dict_or_a_default_is_the_dict(tmp_path):
    assert loud(project(tmp_path / "bad", OPTIONS_OR_EMPTY)) == [("models/blocks.py", 9, "GW201")]
    fixed = dict(OPTIONS_OR_EMPTY, **{"configs/default.py": OPTIONS_OR_EMPTY["configs/default.py"].replace(
        "True}", "False}")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a dict of lambdas at the top of a package's `__init__.py` (`model_dict["student"]()`): the lambda
# reads that module's names wherever it is called (torch raises at the backward: "output 0 of
# ReluBackward0 ... modified by an inplace operation")
MODULE_LAMBDAS = {
    "nets/__init__.py": """
        from .mlp import MLP

        model_dict = {"student": lambda: MLP(hidden=8)}
    """,
    "nets/mlp.py": """
        import torch.nn as nn


        class MLP(nn.Module):
            def __init__(self, hidden=16):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, hidden), nn.ReLU())

            def forward(self, x):
                return self.body(x)
    """,
    "losses.py": """
        def cosine(f):
            f /= f.norm(dim=1, keepdim=True) + 1e-6
            return f.sum()
    """,
    "train.py": """
        import torch
        from losses import cosine
        from nets import model_dict

        if __name__ == "__main__":
            student = model_dict["student"]()
            cosine(student(torch.randn(3, 4))).backward()
    """,
}


def test_a_lambda_of_another_module_reads_that_modules_names(tmp_path):
    assert loud(project(tmp_path / "bad", MODULE_LAMBDAS)) == [("losses.py", 2, "GW201")]
    fixed = dict(MODULE_LAMBDAS, **{"losses.py": MODULE_LAMBDAS["losses.py"].replace(
        "f /= f.norm(dim=1, keepdim=True) + 1e-6", "f = f / (f.norm(dim=1, keepdim=True) + 1e-6)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a `src/` layout whose script puts `ROOT / "src"` on sys.path through module-level names
# (`FILE = Path(__file__).resolve()`, `ROOT = FILE.parent.parent`); torch raises at the backward:
# "output 0 of ExpBackward0 ... modified by an inplace operation"
PATH_THROUGH_NAMES = {
    "pyproject.toml": """
        [project]
        name = "kit"
    """,
    "src/kit/__init__.py": "",
    "src/kit/loss.py": """
        import torch


        def focal(ce):
            pt = torch.exp(-ce)
            pt += 1e-6
            return ((1 - pt) ** 2 * ce).mean()
    """,
    "scripts/train.py": """
        import sys
        from pathlib import Path

        FILE = Path(__file__).resolve()
        ROOT = FILE.parent.parent
        sys.path.insert(0, str(ROOT / "src"))

        import torch
        from kit.loss import focal

        if __name__ == "__main__":
            w = torch.randn(4, requires_grad=True)
            focal(w.relu()).backward()
    """,
}


def test_a_sys_path_entry_spelled_through_module_level_names(tmp_path):
    assert loud(project(tmp_path / "bad", PATH_THROUGH_NAMES)) == [("src/kit/loss.py", 6, "GW201")]
    fixed = dict(PATH_THROUGH_NAMES, **{"src/kit/loss.py": PATH_THROUGH_NAMES["src/kit/loss.py"].replace(
        "pt += 1e-6", "pt = pt + 1e-6")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# `checkpoint(self.module, x, use_reentrant=False)` in a wrapper module computes the block: its
# parameters are trained (no GW719 for a deep copy made for a reference computation), and what the
# block does is seen through it (torch 2.13: `Hardtanh(inplace=True)` on `Tanh`'s output raises
# without checkpointing; p80 in tests/data/projects is the silent form of it under this checkpoint)
CHECKPOINT_WRAPPER = {
    "utils/ckpt.py": """
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint


        class Wrapper(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module

            def forward(self, x):
                return checkpoint(self.module, x, use_reentrant=False)
    """,
    "train.py": """
        import copy
        import torch
        import torch.nn as nn
        from utils.ckpt import Wrapper

        if __name__ == "__main__":
            model = nn.Sequential(Wrapper(nn.Sequential(nn.Linear(4, 4), nn.Tanh())), nn.Linear(4, 2))
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(2):
                ref = copy.deepcopy(model)
                ref(torch.randn(3, 4)).sum().backward()
                loss = model(torch.randn(3, 4)).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
    """,
}


def test_a_checkpointed_module_is_computed_through_the_checkpoint(tmp_path):
    assert loud(project(tmp_path / "ok", CHECKPOINT_WRAPPER)) == []
    bad = dict(CHECKPOINT_WRAPPER, **{"train.py": CHECKPOINT_WRAPPER["train.py"].replace(
        "nn.Tanh())", "nn.Tanh(), nn.Hardtanh(inplace=True))")})
    assert [f[0] for f in loud(project(tmp_path / "bad", bad))] == ["train.py"]


# a Hydra-like `_target_` split with `rsplit(".", 1)` and the module imported by
# `".".join(module_name.split("."))`: string methods that make or read a sequence of known strings
# (torch raises at the backward: "output 0 of SigmoidBackward0 ... modified by an inplace operation")
TARGET_SPLIT_JOIN = {
    "models/gated.py": """
        import torch
        import torch.nn as nn


        class Gated(nn.Module):
            def __init__(self, dim=4, inplace=False):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.act = nn.Hardtanh(0.0, 0.5, inplace=inplace)

            def forward(self, x):
                return self.act(torch.sigmoid(self.fc(x)))
    """,
    "train.py": """
        import importlib

        import torch

        TARGET = "models.gated.Gated"


        def build(target, **kwargs):
            module_name, cls_name = target.rsplit(".", 1)
            module = importlib.import_module(".".join(module_name.split(".")))
            return getattr(module, cls_name)(**kwargs)


        if __name__ == "__main__":
            net = build(TARGET, dim=4, inplace=True)
            net(torch.randn(2, 4)).sum().backward()
    """,
}


def test_a_target_split_and_joined_by_string_methods(tmp_path):
    assert loud(project(tmp_path / "bad", TARGET_SPLIT_JOIN)) == [("models/gated.py", 12, "GW201")]
    fixed = dict(TARGET_SPLIT_JOIN, **{"train.py": TARGET_SPLIT_JOIN["train.py"].replace(
        "inplace=True)", "inplace=False)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# an ``@property`` returning a submodule, called as ``self.head(x)``: reading it runs the getter. The
# head's ``ReLU(inplace=True)`` overwrites the ``Sigmoid`` output; torch raises at the backward: "one
# of the variables needed for gradient computation has been modified by an inplace operation"
PROPERTY_HEAD = {
    "nets/multi.py": """
        import torch.nn as nn


        class Multi(nn.Module):
            def __init__(self, tasks):
                super().__init__()
                self.heads = nn.ModuleDict({
                    t: nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=True)) for t in tasks
                })
                self.task = tasks[0]

            @property
            def head(self):
                return self.heads[self.task]

            def forward(self, x):
                return self.head(x)
    """,
    "train.py": """
        import torch
        from nets.multi import Multi

        model = Multi(["a", "b"])
        model(torch.randn(2, 4)).sum().backward()
    """,
}


def test_a_property_read_runs_its_getter(tmp_path):
    assert loud(project(tmp_path / "bad", PROPERTY_HEAD)) == [("nets/multi.py", 8, "GW201")]
    fixed = dict(PROPERTY_HEAD, **{"nets/multi.py": PROPERTY_HEAD["nets/multi.py"].replace(
        "nn.ReLU(inplace=True)", "nn.ReLU()")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a constructor whose defaults name its own module's imports (``act_kwargs=ACT_KWARGS`` from a config
# module): they are read in that module, not where the call is. ``F.relu6(g, inplace=True)`` on the
# ``sigmoid`` output; torch raises at the backward (modified by an inplace operation)
DEFAULTS_AT_HOME = {
    "config.py": """
        ACT = "relu6"
        ACT_KWARGS = dict(inplace=True)
    """,
    "net/gate.py": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from config import ACT, ACT_KWARGS


        class Gate(nn.Module):
            def __init__(self, dim, act=ACT, *, act_kwargs=ACT_KWARGS):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.act = getattr(F, act)
                self.act_kwargs = act_kwargs

            def forward(self, x):
                return self.act(torch.sigmoid(self.fc(x)), **self.act_kwargs)
    """,
    "train.py": """
        import torch
        from net.gate import Gate

        Gate(4)(torch.randn(2, 4)).sum().backward()
    """,
}


def test_defaults_are_read_in_the_functions_own_module(tmp_path):
    assert loud(project(tmp_path / "bad", DEFAULTS_AT_HOME)) == [("net/gate.py", 16, "GW201")]
    fixed = dict(DEFAULTS_AT_HOME, **{"config.py": DEFAULTS_AT_HOME["config.py"].replace(
        "inplace=True", "inplace=False")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# SWA: the loss computed through ``AveragedModel(model)`` (a deep copy of the parameters) trains the
# copy, and the optimizer's parameters (the model's) never get a gradient: silent (run under torch
# 2.13: ``model[0].weight.grad`` stays None after the step). Reported at the forward through the copy.
AVERAGED_FORWARD = {
    "swa/loop.py": """
        import torch.nn.functional as F


        def train_epoch(model, swa_model, optimizer, data):
            for x, y in data:
                loss = F.mse_loss(swa_model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                swa_model.update_parameters(model)
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from torch.optim.swa_utils import AveragedModel
        from swa.loop import train_epoch

        model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        swa_model = AveragedModel(model)
        data = [(torch.randn(4, 6), torch.randn(4, 1)) for _ in range(2)]
        train_epoch(model, swa_model, optimizer, data)
    """,
}


def test_a_loss_through_the_averaged_copy_trains_no_optimized_parameter(tmp_path):
    assert loud(project(tmp_path / "bad", AVERAGED_FORWARD)) == [("swa/loop.py", 6, "GW719")]
    fixed = dict(AVERAGED_FORWARD, **{"swa/loop.py": AVERAGED_FORWARD["swa/loop.py"].replace(
        "F.mse_loss(swa_model(x), y)", "F.mse_loss(model(x), y)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a ``@contextmanager`` of another module entering ``torch.no_grad()`` around its ``yield``: the block
# of ``with frozen_eval(t):`` runs without grad, so a loss from a forward inside it has no graph (run
# under torch 2.13: "element 0 of tensors does not require grad"). Reported at that forward, in the
# caller's file, not at the helper's ``with`` (which is right for the teacher).
CONTEXT_GENERATOR = {
    "helpers/ctx.py": """
        import contextlib

        import torch


        @contextlib.contextmanager
        def frozen_eval(module):
            module.eval()
            try:
                with torch.no_grad():
                    yield module
            finally:
                module.train()
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from helpers.ctx import frozen_eval

        teacher, student = nn.Linear(4, 4), nn.Linear(4, 4)
        x = torch.randn(3, 4)
        with frozen_eval(teacher) as t:
            target = t(x)
            pred = student(x)
        loss = (pred - target).pow(2).mean()
        loss.backward()
    """,
}


def test_a_with_over_a_contextmanager_runs_its_block_at_the_yield(tmp_path):
    assert loud(project(tmp_path / "bad", CONTEXT_GENERATOR)) == [("train.py", 9, "GW701")]
    fixed = dict(CONTEXT_GENERATOR, **{"train.py": CONTEXT_GENERATOR["train.py"].replace(
        "            pred = student(x)\n", "        pred = student(x)\n")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a decorator factory of the user's code whose ``functools.wraps`` wrapper post-processes the method's
# result in place: the call goes through the wrapper (run under torch 2.13: "output 0 of SigmoidBackward0
# ... modified by an inplace operation"). Reported at the wrapper's write, in the decorator's file.
METHOD_WRAPPER = {
    "common/deco.py": """
        from functools import wraps


        def sharpen(power):
            def outer(fn):
                @wraps(fn)
                def inner(self, *args, **kwargs):
                    y = fn(self, *args, **kwargs)
                    y.pow_(power)
                    return y
                return inner
            return outer
    """,
    "net.py": """
        import torch
        import torch.nn as nn
        from common.deco import sharpen


        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            @sharpen(2)
            def forward(self, x):
                return torch.sigmoid(self.fc(x))
    """,
    "train.py": """
        import torch
        from net import Gate

        Gate()(torch.randn(2, 4)).sum().backward()
    """,
}


def test_a_method_is_called_through_its_user_decorators_wrapper(tmp_path):
    assert loud(project(tmp_path / "bad", METHOD_WRAPPER)) == [("common/deco.py", 9, "GW201")]
    fixed = dict(METHOD_WRAPPER, **{"common/deco.py": METHOD_WRAPPER["common/deco.py"].replace(
        "y.pow_(power)", "y = y.pow(power)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a registry filled by a parent's ``__init_subclass__`` (class keywords), in a class-level dict, looked
# up by a ``SimpleNamespace`` config; the registered block keeps its output on ``self`` with its graph
# (run under torch 2.13: "Trying to backward through the graph a second time").
SUBCLASS_HOOK = {
    "blocks/base.py": """
        import torch.nn as nn


        class Block(nn.Module):
            kinds = {}

            def __init_subclass__(cls, kind=None, **kw):
                super().__init_subclass__(**kw)
                Block.kinds[kind] = cls
    """,
    "blocks/memory.py": """
        import torch.nn as nn
        from blocks.base import Block


        class Memory(Block, kind="memory"):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.last = None

            def forward(self, x):
                y = self.fc(x)
                if self.last is not None:
                    y = y + self.last
                self.last = y
                return y
    """,
    "train.py": """
        import types

        import torch
        from blocks.base import Block
        import blocks.memory

        cfg = types.SimpleNamespace(kind="memory", steps=2)
        net = Block.kinds[cfg.kind]()
        for _ in range(cfg.steps):
            net(torch.randn(2, 4)).sum().backward()
    """,
}


def test_init_subclass_fills_a_class_level_registry(tmp_path):
    assert loud(project(tmp_path / "bad", SUBCLASS_HOOK)) == [("blocks/memory.py", 15, "GW402")]
    fixed = dict(SUBCLASS_HOOK, **{"blocks/memory.py": SUBCLASS_HOOK["blocks/memory.py"].replace(
        "self.last = y", "self.last = y.detach()")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# an ``Enum`` member looked up by its value (``Kind(name)``) keys a factory dict of two different
# classes; the chosen one scales ``tanh``'s output in place (run under torch 2.13: "output 0 of
# TanhBackward0 ... modified by an inplace operation").
ENUM_LOOKUP = {
    "zoo.py": """
        from enum import Enum

        import torch
        import torch.nn as nn


        class Kind(Enum):
            SQUASH = "squash"
            PLAIN = "plain"


        class Squash(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                y = torch.tanh(self.fc(x))
                y *= 2
                return y


        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)


        FACTORY = {Kind.SQUASH: Squash, Kind.PLAIN: Plain}
    """,
    "train.py": """
        import torch
        from zoo import FACTORY, Kind

        net = FACTORY[Kind("squash")]()
        net(torch.randn(2, 4)).sum().backward()
    """,
}


def test_an_enum_called_with_a_value_is_its_member(tmp_path):
    assert loud(project(tmp_path / "bad", ENUM_LOOKUP)) == [("zoo.py", 19, "GW201")]
    fixed = dict(ENUM_LOOKUP, **{"zoo.py": ENUM_LOOKUP["zoo.py"].replace("y *= 2", "y = y * 2")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a text config beside its loader, found through ``os.path.join(os.path.dirname(__file__), ...)`` and
# parsed line by line by the project's own code (``key = value``, ``"on"`` -> True); the flag makes
# ``Hardtanh(inplace=True)`` overwrite ``tanh``'s output (run under torch 2.13: "output 0 of
# TanhBackward0 ... modified by an inplace operation").
TEXT_CONFIG = {
    "settings/__init__.py": """
        import os


        def read_settings(path=os.path.join(os.path.dirname(__file__), "run.cfg")):
            out = {}
            with open(path) as f:
                for raw in f:
                    raw = raw.strip()
                    if not raw or raw.startswith(";"):
                        continue
                    key, value = [part.strip() for part in raw.split("=", 1)]
                    out[key] = value == "on"
            return out
    """,
    "settings/run.cfg": """
        ; activation
        clip_inplace = on
    """,
    "train.py": """
        import torch
        import torch.nn as nn
        from settings import read_settings

        opts = read_settings()
        net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Hardtanh(inplace=opts["clip_inplace"]))
        net(torch.randn(2, 4)).sum().backward()
    """,
}


def test_a_text_config_read_by_the_projects_own_loader(tmp_path):
    assert loud(project(tmp_path / "bad", TEXT_CONFIG)) == [("train.py", 6, "GW201")]
    fixed = dict(TEXT_CONFIG, **{"settings/run.cfg": TEXT_CONFIG["settings/run.cfg"].replace("= on", "= off")})
    assert loud(project(tmp_path / "ok", fixed)) == []


def test_gw719_names_the_entry_file_of_a_line_it_cites_from_another_module(tmp_path):
    # the finding is in `swa/loop.py`; the optimizer it cites was built in the entry script: every
    # line the message cites outside the finding's own file names that file
    root = project(tmp_path / "bad", AVERAGED_FORWARD)
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    (finding,) = [d for d in json.loads(proc.stdout) if d["code"] == "GW719"]
    assert finding["filename"].endswith("loop.py")
    assert "handed to `optimizer` at line 7 of `train.py`" in finding["message"]
    assert "at line 7," not in finding["message"] and "at line 7)" not in finding["message"]


# loss terms registered with their weight by a decorator factory in modules the entry imports for
# that effect alone (`LOSSES[fn] = w`: the function is the key), summed over `LOSSES.items()`;
# torch raises at the backward: "... output 0 of SigmoidBackward0, is at version 1"
SIDE_EFFECT_REGISTRY = {
    "losses/__init__.py": """
        LOSSES = {}


        def register(weight):
            def deco(fn):
                LOSSES[fn] = weight
                return fn
            return deco


        def total_loss(out):
            return sum(w * fn(out) for fn, w in LOSSES.items())
    """,
    "losses/bounded.py": """
        from losses import register


        @register(1.0)
        def bounded(out):
            prob = out.sigmoid()
            return prob.clamp_(0.05, 0.95).log().neg().mean()
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        import losses.bounded  # noqa: F401
        from losses import total_loss

        model = nn.Linear(4, 3)
        total_loss(model(torch.randn(6, 4))).backward()
    """,
}


def test_functions_registered_as_dict_keys_by_a_side_effect_import(tmp_path):
    assert loud(project(tmp_path / "bad", SIDE_EFFECT_REGISTRY)) == [("losses/bounded.py", 7, "GW201")]
    fixed = dict(SIDE_EFFECT_REGISTRY, **{"losses/bounded.py": SIDE_EFFECT_REGISTRY["losses/bounded.py"].replace(
        "prob.clamp_(", "prob.clamp(")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# `nn.Sequential(OrderedDict(...))` over the classes a package names in `__all__`; the gate scales
# the exponential's output in place: "... output 0 of ExpBackward0, is at version 1"
ORDERED_DICT_SEQUENTIAL = {
    "layers/__init__.py": """
        from .expo import Expo
        from .gate import HalfGate

        __all__ = ["Expo", "HalfGate"]
    """,
    "layers/expo.py": """
        import torch
        import torch.nn as nn


        class Expo(nn.Module):
            def forward(self, x):
                return torch.exp(x)
    """,
    "layers/gate.py": """
        import torch.nn as nn


        class HalfGate(nn.Module):
            def forward(self, x):
                return x.mul_(0.5)
    """,
    "train.py": """
        from collections import OrderedDict

        import torch
        import torch.nn as nn

        import layers

        blocks = OrderedDict()
        for name in layers.__all__:
            blocks[name.lower()] = getattr(layers, name)()
        net = nn.Sequential(OrderedDict(list(blocks.items()) + [("head", nn.Linear(6, 1))]))
        net(torch.randn(5, 6, requires_grad=True)).sum().backward()
    """,
}


def test_a_sequential_of_an_ordered_dict_and_a_saver_line_named_with_its_file(tmp_path):
    root = project(tmp_path / "bad", ORDERED_DICT_SEQUENTIAL)
    assert loud(root) == [("layers/gate.py", 6, "GW201")]
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    (finding,) = [d for d in json.loads(proc.stdout) if d["code"] == "GW201"]
    assert "which `exp` (line 7 of expo.py)" in finding["message"]  # the saver is in another module
    fixed = dict(ORDERED_DICT_SEQUENTIAL, **{"layers/gate.py": ORDERED_DICT_SEQUENTIAL["layers/gate.py"].replace(
        "x.mul_(0.5)", "x.mul(0.5)")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# an EMA helper with its arguments swapped writes the live parameters under no_grad, called between
# the forward and the backward: "... [torch.FloatTensor [8, 1]], which is output 0 of AsStridedBackward0"
EMA_WRITES_LIVE = {
    "utils/ema.py": """
        import copy

        import torch


        class ModelEMA:
            def __init__(self, model, decay=0.99):
                self.ema = copy.deepcopy(model)
                self.decay = decay

            @torch.no_grad()
            def update(self, model):
                for ema_p, p in zip(self.ema.parameters(), model.parameters()):
                    p.mul_(self.decay).add_(ema_p, alpha=1 - self.decay)
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        from utils.ema import ModelEMA

        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        ema = ModelEMA(model)
        loss = model(torch.randn(6, 4)).pow(2).mean()
        ema.update(model)
        loss.backward()
    """,
}


def test_an_update_routine_writing_parameters_names_its_write(tmp_path):
    # reported at the routine's call between the forward and the backward (moving it after the
    # backward is a fix), with the write in the helper module among the related places
    root = project(tmp_path / "bad", EMA_WRITES_LIVE)
    assert loud(root) == [("train.py", 9, "GW501")]
    proc = subprocess.run([sys.executable, "-m", "gradwarden", "check", "--no-cache", "--output-format", "json", "."],
                          cwd=root, capture_output=True, text=True, timeout=300)
    (finding,) = [d for d in json.loads(proc.stdout) if d["code"] == "GW501"]
    writes = [r for r in finding["related"] if "written here" in r["message"]]
    assert writes and writes[0]["filename"].endswith("ema.py") and writes[0]["location"]["row"] == 14
    fixed = dict(EMA_WRITES_LIVE, **{"utils/ema.py": EMA_WRITES_LIVE["utils/ema.py"].replace(
        "p.mul_(self.decay).add_(ema_p,", "ema_p.mul_(self.decay).add_(p,")})
    assert loud(project(tmp_path / "ok", fixed)) == []


# a JSON config beside the package, read through `Path(__file__).parent / "cfg.json"`, decides an
# in-place scale of a `chunk` view: "Output 0 of SplitBackward0 is a view and is being modified inplace"
JSON_CONFIG = {
    "attn/__init__.py": "",
    "attn/cfg.json": """
        {"dim": 8, "scale_inplace": true}
    """,
    "attn/config.py": """
        import json
        from pathlib import Path

        CONFIG_PATH = Path(__file__).parent / "cfg.json"


        def load_config(path=CONFIG_PATH):
            with open(path) as f:
                return json.load(f)
    """,
    "train.py": """
        import torch
        import torch.nn as nn

        from attn.config import load_config

        cfg = load_config()
        qk = nn.Linear(cfg["dim"], 2 * cfg["dim"])
        q, k = qk(torch.randn(4, cfg["dim"])).chunk(2, dim=-1)
        if cfg["scale_inplace"]:
            q.mul_(0.5)
        else:
            q = q * 0.5
        (q @ k.t()).sum().backward()
    """,
}


def test_a_json_config_read_beside_its_package(tmp_path):
    assert loud(project(tmp_path / "bad", JSON_CONFIG)) == [("train.py", 10, "GW306")]
    fixed = dict(JSON_CONFIG, **{"attn/cfg.json": JSON_CONFIG["attn/cfg.json"].replace("true", "false")})
    assert loud(project(tmp_path / "ok", fixed)) == []
