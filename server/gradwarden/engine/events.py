"""Events: what the interpreter saw happen, in the terms of the hazard, before any wording.

The interpreter emits events; rules (gradwarden.rules) turn them into Diagnostics. Each
event carries the spans the message and the related locations need.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from gradwarden.engine.diagnostic import Related, Span


@dataclass
class Event:
    kind: str  # leaf_inplace | version_mismatch | data_write | freed_graph | expanded_write | ...
    span: Span  # the primary location (where the hazard is caused)
    facts: Dict[str, Any] = field(default_factory=dict)
    related: Tuple[Related, ...] = ()
    timeline: Tuple[Related, ...] = ()
    # Facts the fix suggestions need (statement span, kind of write, ...)
    fix_facts: Dict[str, Any] = field(default_factory=dict)
    severity: Optional[int] = None  # override of the rule's default (Severity value)
