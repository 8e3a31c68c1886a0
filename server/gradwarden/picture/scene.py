"""What a timeline picture shows, as data: the lanes (one per storage, i.e. per version counter;
views that share a counter are one lane) and the marks on them (created, saved, written, stepped,
freed, backward...) in the order they happen, each with its source line and the version numbers
that apply. Built by ``from_static`` (a static diagnostic) and ``from_run`` (a debug run's
finding); drawn by ``svg``; laid out in a page by ``page``. No I/O, no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

# What each kind of mark is, in the order of a typical story (the tie-breaker when no version
# number orders two marks).
KINDS = ("created", "save", "use", "write", "step", "data_write", "freed", "reuse", "backward", "note")
_RANK = {k: i for i, k in enumerate(KINDS)}
KIND_TITLES = {
    "created": "created",
    "save": "saved for backward",
    "use": "taken into a graph",
    "write": "in-place write",
    "step": "optimizer step",
    "data_write": "write through .data",
    "freed": "graph freed",
    "reuse": "stale graph reused",
    "backward": "backward",
    "note": "note",
}


@dataclass(frozen=True)
class Site:
    """A source position: the file as the report names it, 1-based row and column."""

    filename: str
    row: int
    column: int = 1


@dataclass(frozen=True)
class Mark:
    """One event on a lane."""

    lane: str  # Lane.key
    kind: str  # one of KINDS
    site: Site
    label: str  # short, drawn under the marker
    detail: str = ""  # the whole sentence (tooltip, event list)
    version: Optional[int] = None  # the counter's value after this event (a save: the value it records)
    version_from: Optional[int] = None  # a write: the value before it
    expects: Optional[int] = None  # a backward: the version its saved tensor was saved at
    finds: Optional[int] = None  # a backward: the version it finds
    primary: bool = False  # the finding's own site
    outcome: str = ""  # "raises" | "silent": where the hazard strikes
    breaks: bool = False  # the write that moves the counter past what a save expects
    seen: Optional[bool] = None  # debug run: True = seen happening; False = only predicted; None = static
    via: Tuple[Site, ...] = ()  # where the call that made it happen is (a module called elsewhere)


@dataclass(frozen=True)
class Lane:
    key: str
    title: str  # what the lane is: "`out`", "`K` (also `diag`)", "graph of `loss`"
    note: str = ""  # e.g. "views share one version counter", ".data: same memory, own counter"


@dataclass(frozen=True)
class Scene:
    """The picture of one finding."""

    code: str
    severity: str  # error | warning | information | hint
    message: str
    site: Site
    lanes: Tuple[Lane, ...]
    marks: Tuple[Mark, ...]  # in time order
    rule: str = ""
    status: str = ""  # "" (static) | confirmed | runtime-only | not reproduced | not reached
    facts: Tuple[str, ...] = ()  # extra lines: the tensor's shape, the ops the run saw, ...

    def lane(self, key: str) -> Optional[Lane]:
        return next((lane for lane in self.lanes if lane.key == key), None)

    def marks_on(self, key: str) -> List[Mark]:
        return [m for m in self.marks if m.lane == key]

    def versions(self) -> List[int]:
        """The version numbers the picture states, in time order (tests read these)."""
        out: List[int] = []
        for m in self.marks:
            for v in (m.version_from, m.version, m.expects, m.finds):
                if v is not None:
                    out.append(v)
        return out


# --------------------------------------------------------------------------- time order
def time_order(marks: Sequence[Mark]) -> List[Mark]:
    """The marks in the order they happen.

    Rows are not time: a module defined above runs below, a loop's second iteration writes
    above its backward. The version counter is time for one storage: a save at version v
    happens after the write that made v and before the write that makes v + 1; the backward
    that checks it comes last. Marks without a version fall back on the kind's place in the
    story (created, saved, used, written, freed, reused, backward), then on the row.
    """
    if not marks:
        return []
    saves = [m.version for m in marks if m.kind == "save" and m.version is not None]
    last_save = max(saves) if saves else 0
    # A story whose counter is known (the version-counter rules, a debug run's evidence).
    versioned = any(m.version is not None for m in marks if m.kind in ("write", "step", "save"))
    indexed = list(enumerate(marks))

    def key(item: Tuple[int, Mark]) -> Tuple[float, float, float, int, int, int]:
        i, m = item
        rank = _RANK.get(m.kind, len(KINDS))
        if versioned:
            if m.kind == "created":
                return (0, -1, 0, m.site.row, m.site.column, i)
            if m.kind in ("write", "step") and m.version is not None:
                return (1, m.version, 0, m.site.row, m.site.column, i)
            if m.kind == "save" and m.version is not None:
                return (1, m.version, 1, m.site.row, m.site.column, i)
            if m.kind == "data_write":  # changes what a save recorded, without a version
                return (1, last_save, 2, m.site.row, m.site.column, i)
            if m.kind in ("backward", "freed", "reuse"):
                return (2, rank, 0, m.site.row, m.site.column, i)
            return (1, last_save, 3, m.site.row, m.site.column, i)
        # an optimizer step in a story without versions uses what the backward left in .grad
        rank = _RANK["backward"] + 0.5 if m.kind == "step" else rank
        return (0, rank, 0, m.site.row, m.site.column, i)

    return [m for _, m in sorted(indexed, key=key)]


def mark_breaking_write(marks: Sequence[Mark]) -> List[Mark]:
    """Flag, per lane, the first write after a save that moves the counter past the saved
    version: the write behind the error (or behind the silent change)."""
    out = list(marks)
    saved: Dict[str, int] = {}
    for i, m in enumerate(out):
        if m.kind == "save" and m.version is not None and m.lane not in saved:
            saved[m.lane] = m.version
        elif m.kind in ("write", "step") and m.lane in saved and m.version is not None \
                and m.version > saved[m.lane]:
            out[i] = replace(m, breaks=True)
            del saved[m.lane]  # one per save
    return out


@dataclass
class SceneBuilder:
    """Collects lanes and marks, then orders them (both builders use it)."""

    lanes: Dict[str, Lane] = field(default_factory=dict)
    marks: List[Mark] = field(default_factory=list)

    def lane(self, key: str, title: str, note: str = "") -> str:
        if key not in self.lanes:
            self.lanes[key] = Lane(key, title, note)
        return key

    def add(self, mark: Mark) -> None:
        self.marks.append(mark)

    def build(self, *, code: str, severity: str, message: str, site: Site, rule: str = "", status: str = "",
              facts: Sequence[str] = ()) -> Scene:
        ordered = mark_breaking_write(time_order(self.marks))
        used = [k for k in self.lanes if any(m.lane == k for m in ordered)]
        # lanes top to bottom in the order they first appear in time
        used.sort(key=lambda k: next(i for i, m in enumerate(ordered) if m.lane == k))
        return Scene(code=code, severity=severity, message=message, site=site,
                     lanes=tuple(self.lanes[k] for k in used), marks=tuple(ordered), rule=rule, status=status,
                     facts=tuple(facts))


__all__ = ["KINDS", "KIND_TITLES", "Lane", "Mark", "Scene", "SceneBuilder", "Site", "mark_breaking_write",
           "time_order"]
