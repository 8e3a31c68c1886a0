"""Version-counter timelines for hover: what the engine saw happen to the tensor at a position.

``explain_at(source, filename, row, column)`` re-runs the analysis with recording on and
returns the timeline of the tensor bound to the name (or the in-place op / backward call)
under the cursor: where it was created, each op that saved it and at which version, each
in-place write that bumped its version, and each backward that went through it.
"""
from __future__ import annotations

from typing import Optional

from gradwarden.engine.explain.timeline import Timeline, TimelineEvent

__all__ = ["Timeline", "TimelineEvent", "explain_at"]


def explain_at(source: str, filename: str, row: int, column: int) -> Optional[Timeline]:
    """The timeline of the tensor at ``row``/``column`` (1-based), or None."""
    from gradwarden.engine.explain.recorder import explain

    return explain(source, filename, row, column)
