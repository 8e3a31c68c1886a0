"""A seeded random-program generator that checks the static engine against torch.

    from progen import generate, generate_set
    programs = generate_set(n=300, seed=7, family="lifetime")

``lifetime`` (issue 9: graph lifetime, in-place writes, views, aliases), ``flow`` (issue 10:
gradient flow and torch's other autograd checks) and ``silent`` (issue 24: gradient that never
reaches a parameter or arrives non-finite, hooks that overwrite, ``fill_`` of expanded tensors,
overlapping shifts; the run itself is the oracle) are the vocabularies; ``all`` mixes them.
Each program is small, runnable (torch + stdlib), shaped like real training code (classes,
helpers, loops, a trainer class), and either carries one planted hazard (its line known) or is
a clean look-alike. ``oracle.py`` runs the programs under torch (``tests/torch_runner.py``) and
under the engine and compares; ``benchmarks/bench_progen.py`` prints the agreement table.
"""
from __future__ import annotations

import random
from typing import Dict, List, Tuple

from . import flow, lifetime, silent
from .builder import Builder, Program

FAMILIES: Dict[str, Dict[str, Tuple[object, float]]] = {
    "lifetime": lifetime.PATTERNS,
    "flow": flow.PATTERNS,
    "silent": silent.PATTERNS,
}
FAMILY_CHOICES = ("lifetime", "flow", "silent", "all")
# The families whose agreement with torch tests/test_progen.py requires of the engine. Every family is
# generated and checked against torch there; "silent" joined with the engine work of issue 24 (its
# disagreements at first contact: tests/progen/DISAGREEMENTS.md, "silent family").
ENGINE_CHECKED = ("lifetime", "flow", "silent")


def generate(seed: int, family: str) -> Program:
    """The program of ``seed`` in ``family`` (``lifetime`` | ``flow`` | ``silent`` | ``all``): deterministic."""
    rng = random.Random(seed)
    fam = rng.choice(sorted(FAMILIES)) if family == "all" else family
    if fam not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose from {', '.join(FAMILY_CHOICES)}")
    patterns = FAMILIES[fam]
    names = sorted(patterns)
    name = rng.choices(names, weights=[patterns[n][1] for n in names], k=1)[0]
    b = Builder(rng)
    fn = patterns[name][0]
    variant, intent = fn(b)  # type: ignore[operator]
    return b.build(fam, name, variant, intent, seed)


def generate_set(n: int, seed: int, family: str) -> List[Program]:
    """``n`` distinct programs from ``seed`` (a program whose text repeats an earlier one is
    skipped; at most ``20 * n`` draws)."""
    out, seen = [], set()
    for i in range(20 * n):
        if len(out) >= n:
            break
        p = generate(seed * 1_000_003 + i, family)
        if p.text in seen:
            continue
        seen.add(p.text)
        out.append(p)
    return out


__all__ = ["ENGINE_CHECKED", "FAMILIES", "FAMILY_CHOICES", "Program", "generate", "generate_set"]
