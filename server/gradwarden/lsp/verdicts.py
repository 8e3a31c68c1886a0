"""A debug run's verdicts as diagnostics, marked in place: the static diagnostics the run
confirmed read ``[confirmed] ...`` (with the run's evidence as related information), those it
ran without seeing anything ``[not reproduced] ...``, those whose line never ran
``[not reached] ...``; what only the run saw is a diagnostic of its own (source
``gradwarden (runtime)``). Pure functions over the runtime bridge's findings (duck-typed: this
module does not import the bridge) and the engine's ``Diagnostic``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterable, List, Optional, Sequence

from gradwarden.engine.diagnostic import Diagnostic

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not reproduced"
NOT_REACHED = "not reached"
RUNTIME_ONLY = "runtime-only"
STATIC_VERDICTS = (CONFIRMED, NOT_REPRODUCED, NOT_REACHED)
RUNTIME_SOURCE = "gradwarden (runtime)"
STATIC_SOURCE = "gradwarden"


@dataclass(frozen=True)
class Verdict:
    """One diagnostic the last debug run of a file stands for."""

    diagnostic: Diagnostic  # program rows; a static one's message marked with the verdict
    status: str  # confirmed | not reproduced | not reached | runtime-only
    source: str  # the LSP ``source`` it is published with
    finding: Any = None  # the bridge's Finding (the timeline picture draws what the run saw)

    @property
    def replaces_static(self) -> bool:
        """A verdict on a static diagnostic is shown in its place, and only while it exists."""
        return self.status in STATIC_VERDICTS


def mark(message: str, status: str) -> str:
    """``[confirmed] message`` (a message marked once, however often the run repeats)."""
    tag = f"[{status}] "
    for s in STATIC_VERDICTS:
        if message.startswith(f"[{s}] "):
            message = message[len(s) + 3:]
    return tag + message


def _same_file(a: Optional[str], b: str) -> bool:
    if a is None:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return a == b


def verdicts_of(findings: Iterable[Any], path: str) -> List[Verdict]:
    """The verdicts of a run's ``findings`` on the file ``path``."""
    out: List[Verdict] = []
    for f in findings:
        status = getattr(f, "status", "")
        if not _same_file(getattr(f, "filename", None), path):
            continue
        static: Optional[Diagnostic] = getattr(f, "static", None)
        if status == RUNTIME_ONLY or static is None:
            out.append(Verdict(f.to_diagnostic(), RUNTIME_ONLY, RUNTIME_SOURCE, f))
        elif status == CONFIRMED:
            d = f.to_diagnostic()  # the static diagnostic with the run's evidence in related
            out.append(Verdict(replace(d, message=mark(d.message, CONFIRMED)), CONFIRMED, RUNTIME_SOURCE, f))
        elif status in (NOT_REPRODUCED, NOT_REACHED):
            out.append(Verdict(replace(static, message=mark(static.message, status)), status, STATIC_SOURCE, f))
    return out


def counts(verdicts: Sequence[Verdict]) -> Dict[str, int]:
    out = {s: 0 for s in (CONFIRMED, NOT_REPRODUCED, NOT_REACHED, RUNTIME_ONLY)}
    for v in verdicts:
        out[v.status] = out.get(v.status, 0) + 1
    return out


def summary_text(c: Dict[str, int]) -> str:
    parts = [f"{c.get(CONFIRMED, 0)} confirmed", f"{c.get(NOT_REPRODUCED, 0)} not reproduced"]
    if c.get(NOT_REACHED):
        parts.append(f"{c[NOT_REACHED]} not reached")
    if c.get(RUNTIME_ONLY):
        parts.append(f"{c[RUNTIME_ONLY]} runtime-only")
    return ", ".join(parts)


__all__ = ["CONFIRMED", "NOT_REACHED", "NOT_REPRODUCED", "RUNTIME_ONLY", "RUNTIME_SOURCE", "Verdict", "counts",
           "mark", "summary_text", "verdicts_of"]
