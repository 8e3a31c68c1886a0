"""A tensor's version-counter timeline: the data hover shows (what the recorder produces)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from gradwarden.engine.diagnostic import Span


@dataclass(frozen=True)
class TimelineEvent:
    span: Span
    kind: str  # created | save | write | data_write | backward | freed | step
    message: str
    version: Optional[int] = None


@dataclass(frozen=True)
class Timeline:
    name: str  # the expression under the cursor
    span: Span  # its range
    events: Tuple[TimelineEvent, ...]
    requires_grad: Optional[bool] = None
    is_leaf: Optional[bool] = None
    note: str = ""  # aliasing facts: "a view of `x`", "shares its version counter with ..."
