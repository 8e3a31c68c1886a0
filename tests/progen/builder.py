"""Assembling a generated program: sections, frames, names, and the lines a hazard was planted on.

A pattern (``lifetime.py``, ``flow.py``) writes its code into the sections of a
:class:`Builder`:

- ``defs``: top-level classes and helper functions;
- ``setup``: what runs once before the loop (models, optimizers, carried state);
- ``step``: the body of one training iteration;
- ``after``: what runs once after the loop.

The *frame* decides how the sections become a program, so that the same hazard appears in the
shapes real code has:

- ``script``: setup, ``for`` loop and after at module level;
- ``function``: the same inside ``def main():`` called under ``if __name__ == "__main__":``;
- ``method``: a trainer class: setup in ``__init__``, the step in a method, the loop in
  ``fit``; what persists across iterations becomes an attribute (``self.x``).

Names that persist across iterations go through :meth:`Builder.var` (``x`` or ``self.x``);
every name is drawn at random from a pool, so a rule keyed on a name would not score.
A line written with ``mark="cause"`` is where the hazard was planted (the line its minimal fix
changes); the builder reports their numbers in the assembled program.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

FRAMES = ("script", "function", "method")

NAME_POOLS: Dict[str, Sequence[str]] = {
    "model": ("model", "net", "network", "encoder", "clf", "regressor", "backbone_net", "module"),
    "opt": ("opt", "optimizer", "optim", "sgd", "adam", "solver"),
    "loop": ("step", "it", "i", "epoch", "batch_idx", "t", "k"),
    "x": ("x", "inputs", "xb", "batch", "features", "data"),
    "y": ("y", "target", "labels", "yb", "targets"),
    "out": ("out", "pred", "logits", "output", "y_hat", "scores"),
    "loss": ("loss", "l", "objective", "err", "cost", "train_loss"),
    "h": ("h", "hidden", "state", "hx", "memory_state", "carry"),
    "trainer": ("Trainer", "Learner", "Runner", "Experiment", "Fitter"),
    "cls": ("Net", "Model", "MLP", "Head", "Block", "Regressor", "TinyNet"),
}


@dataclass
class Line:
    text: str  # relative indentation included ("    " per level)
    mark: Optional[str] = None


@dataclass
class Program:
    text: str
    family: str  # lifetime | flow
    pattern: str  # e.g. "carried-state"
    variant: str  # e.g. "no-detach"
    intent: str  # the error class the generator expects, "clean", "warn:<class>" or "silent"
    cause_lines: Tuple[int, ...]  # where the hazard was planted (1-based)
    frame: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.family}-{self.pattern}-{self.variant}-{self.seed}"


class Builder:
    def __init__(self, rng: random.Random, frame: Optional[str] = None, frames: Sequence[str] = FRAMES):
        self.rng = rng
        self.frame = frame or rng.choice(list(frames))
        self.sections: Dict[str, List[Line]] = {"defs": [], "setup": [], "step": [], "after": []}
        self.imports = ["import torch", "import torch.nn as nn"]
        self._names: Dict[str, str] = {}
        self._used: set = set()
        self.loop_var = self.name("loop")
        self.iterations = 3

    # --- names ----------------------------------------------------------------------------

    def name(self, role: str, key: Optional[str] = None) -> str:
        """A fresh name for ``role`` (from its pool), remembered under ``key`` (default role)."""
        key = key or role
        if key in self._names:
            return self._names[key]
        pool = [n for n in NAME_POOLS.get(role, (role,)) if n not in self._used]
        base = self.rng.choice(pool) if pool else role
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}{n}", n + 1
        self._used.add(candidate)
        self._names[key] = candidate
        return candidate

    def var(self, role: str, key: Optional[str] = None) -> str:
        """A name that lives across iterations: ``self.name`` in the method frame."""
        n = self.name(role, key)
        return f"self.{n}" if self.frame == "method" else n

    def local(self, role: str, key: Optional[str] = None) -> str:
        return self.name(role, key)

    def cls(self, role: str = "cls", key: Optional[str] = None) -> str:
        """A class name; its key space is apart from the variables' (``cls:<key>``)."""
        return self.name(role, "cls:" + (key or role))

    # --- writing --------------------------------------------------------------------------

    def add(self, section: str, text: str, mark: Optional[str] = None) -> None:
        """One or more lines (``text`` may hold newlines; ``mark`` applies to the first)."""
        for k, row in enumerate(text.split("\n")):
            self.sections[section].append(Line(row, mark if k == 0 else None))

    def defs(self, text: str, mark: Optional[str] = None) -> None:
        if self.sections["defs"]:
            self.sections["defs"].append(Line(""))
            self.sections["defs"].append(Line(""))
        self.add("defs", text, mark)

    def setup(self, text: str, mark: Optional[str] = None) -> None:
        self.add("setup", text, mark)

    def step(self, text: str, mark: Optional[str] = None) -> None:
        self.add("step", text, mark)

    def after(self, text: str, mark: Optional[str] = None) -> None:
        self.add("after", text, mark)

    def need(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)

    # --- assembling -----------------------------------------------------------------------

    def build(self, family: str, pattern: str, variant: str, intent: str, seed: int) -> Program:
        out: List[Line] = [Line(i) for i in self.imports] + [Line(""), Line("torch.manual_seed(0)"), Line("")]

        def put(lines: List[Line], indent: int) -> None:
            pad = "    " * indent
            for ln in lines:
                out.append(Line(pad + ln.text if ln.text else "", ln.mark))

        if self.sections["defs"]:
            out.append(Line(""))
            put(self.sections["defs"], 0)
            out += [Line(""), Line("")]
        setup, step, after = self.sections["setup"], self.sections["step"] or [Line("pass")], self.sections["after"]
        n = self.iterations
        if self.frame == "script":
            put(setup, 0)
            out.append(Line(f"for {self.loop_var} in range({n}):"))
            put(step, 1)
            put(after, 0)
        elif self.frame == "function":
            out.append(Line("def main():"))
            put(setup or [Line("pass")], 1)
            out.append(Line(f"    for {self.loop_var} in range({n}):"))
            put(step, 2)
            put(after, 1)
            out += [Line(""), Line(""), Line('if __name__ == "__main__":'), Line("    main()")]
        else:
            trainer = self.cls("trainer")
            out.append(Line(f"class {trainer}:"))
            out.append(Line("    def __init__(self):"))
            put(setup or [Line("pass")], 2)
            out.append(Line(""))
            out.append(Line(f"    def train_step(self, {self.loop_var}):"))
            put(step, 2)
            out.append(Line(""))
            out.append(Line("    def fit(self, n):"))
            out.append(Line(f"        for {self.loop_var} in range(n):"))
            out.append(Line(f"            self.train_step({self.loop_var})"))
            put(after, 2)
            out += [Line(""), Line(""), Line(f"{trainer}().fit({n})")]
        text = "\n".join(ln.text for ln in out) + "\n"
        marks = tuple(i + 1 for i, ln in enumerate(out) if ln.mark == "cause")
        return Program(text, family, pattern, variant, intent, marks, self.frame, seed)


def maybe(rng: random.Random, p: float = 0.5) -> bool:
    return rng.random() < p


def pick(rng: random.Random, options: Sequence, weights: Optional[Sequence[float]] = None):
    return rng.choices(list(options), weights=weights, k=1)[0] if weights else rng.choice(list(options))


# --- common pieces ----------------------------------------------------------------------------


def mlp_class(b: Builder, din: int, dout: int, hidden: int = 8, act: Optional[str] = None, key: str = "cls") -> str:
    """A small two-layer network class in ``defs``; returns its name."""
    name = b.cls("cls", key)
    act = act or pick(b.rng, ["torch.relu", "torch.tanh", "torch.sigmoid", "nn.functional.gelu"])
    l1, l2 = pick(b.rng, [("fc1", "fc2"), ("inp", "out"), ("lin1", "lin2"), ("hidden", "head")])
    b.defs(
        f"class {name}(nn.Module):\n"
        f"    def __init__(self, din={din}, dout={dout}):\n"
        f"        super().__init__()\n"
        f"        self.{l1} = nn.Linear(din, {hidden})\n"
        f"        self.{l2} = nn.Linear({hidden}, dout)\n"
        f"\n"
        f"    def forward(self, x):\n"
        f"        return self.{l2}({act}(self.{l1}(x)))"
    )
    return name


def batch_helper(b: Builder, din: int, dout: int) -> str:
    """A ``get_batch`` helper in ``defs``; returns its name."""
    name = pick(b.rng, ["get_batch", "make_batch", "sample_batch", "load_batch"])
    if name in b._used:
        return name
    b._used.add(name)
    b.defs(
        f"def {name}(n={4}):\n"
        f"    return torch.randn(n, {din}), torch.randn(n, {dout})"
    )
    return name


def data_lines(b: Builder, x: str, y: str, din: int, dout: int, n: int = 4) -> str:
    """Statements that make one batch (a helper call or inline)."""
    if maybe(b.rng, 0.5):
        helper = batch_helper(b, din, dout)
        return f"{x}, {y} = {helper}()"
    return f"{x} = torch.randn({n}, {din})\n{y} = torch.randn({n}, {dout})"


def logging_noise(b: Builder, loss: str) -> Optional[str]:
    """A clean statement real loops have (logging a detached number), or None."""
    r = b.rng.random()
    if r < 0.25:
        return f"if {b.loop_var} % 2 == 0:\n    print(f\"{b.loop_var}={{{b.loop_var}}} loss={{{loss}.item():.4f}}\")"
    if r < 0.4:
        return f"_ = float({loss}.detach())"
    return None
