"""A static diagnostic's story as a ``Scene``.

What the engine knows travels in the ``Diagnostic``: its own site, its related locations (each
with a kind: save, backward, freed, created, step, write, call, note) and, for the
version-counter rules, the saved tensor's timeline (created at version 0, saved at version v,
each write bumping it, the backward that expects v). The version numbers and names are read
from those entries' texts, which the engine writes in a fixed form ("at version 1", "bumps the
version to 2", "expects version 1, finds version 2", "saves `out`").
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Related
from gradwarden.picture.scene import Mark, Scene, SceneBuilder, Site

_NAME = re.compile(r"`+([^`]+?)`+")
_BUMPS = re.compile(r"bumps the version to (\d+)")
_EXPECTS = re.compile(r"expects version (\d+)(?:, finds version (\d+))?")
_AT_VERSION = re.compile(r"\b(?:at )?version (\d+)\b")
_SAVES = re.compile(r"saves `+([^`]+?)`+")
_SAVED_BY = re.compile(r"saved by `+([^`]+?)`+")
_OP_SAVES = re.compile(r"^`+([^`]+?)`+ saves")
_CHANGES = re.compile(r"(?:changes|modifies|writes into|on parameter|on tensor|on) `+([^`]+?)`+")

# What the finding's own site is in its story, by rule family.
_PRIMARY_ROLE = {
    "GW401": "freed", "GW402": "reuse", "GW403": "created", "GW404": "note", "GW405": "created",
    "GW501": "step", "GW502": "step", "GW503": "created", "GW504": "reuse", "GW505": "created",
    "GW506": "created", "GW507": "created", "GW307": "note", "GW308": "note", "GW309": "note",
    "GW310": "note", "GW701": "note", "GW702": "note", "GW703": "note", "GW704": "write", "GW705": "note",
    "GW706": "note", "GW707": "note", "GW708": "note", "GW709": "note", "GW710": "step", "GW715": "note",
    "GW716": "note", "GW717": "save", "GW718": "note", "GW001": "note", "GW002": "note",
}
_WRITE_FAMILIES = ("GW1", "GW2", "GW3", "GW6", "GW71")


def primary_role(code: str) -> str:
    role = _PRIMARY_ROLE.get(code)
    if role is not None:
        return role
    return "write" if code.startswith(_WRITE_FAMILIES) else "note"


def _int(m: Optional["re.Match[str]"], group: int = 1) -> Optional[int]:
    if m is None or m.group(group) is None:
        return None
    return int(m.group(group))


def _names(text: str) -> List[str]:
    return [n.strip() for n in _NAME.findall(text)]


def _first_name(text: str) -> Optional[str]:
    names = _names(text)
    return names[0] if names else None


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _site(d: Diagnostic, r: Optional[Related] = None) -> Site:
    span = r.span if r is not None else d.span
    return Site((r.filename if r is not None and r.filename else None) or d.filename, span.row, span.column)


# --------------------------------------------------------------------------- one mark per entry
def _timeline_mark(d: Diagnostic, r: Related, lane: str) -> Mark:
    """An entry of the engine's version timeline (kinds created, save, write, backward)."""
    text = r.message
    site = _site(d, r)
    if r.kind == "created":
        return Mark(lane, "created", site, "created", text, version=0)
    if r.kind == "save":
        op = (_SAVED_BY.search(text) or _OP_SAVES.search(text))
        version = _int(_AT_VERSION.search(text))
        label = f"{op.group(1) if op else 'saved'} saves"
        return Mark(lane, "save", site, label, text, version=version)
    if r.kind == "backward":
        m = _EXPECTS.search(text)
        expects, finds = _int(m, 1), _int(m, 2)
        outcome = "raises" if finds is not None and expects is not None and finds != expects else ""
        return Mark(lane, "backward", site, "backward", text, expects=expects, finds=finds, outcome=outcome)
    if r.kind in ("write", "step"):
        version = _int(_BUMPS.search(text))
        op = text.split(" bumps", 1)[0].strip().strip("`") or "write"
        kind = "step" if r.kind == "step" or op.endswith(".step()") else "write"
        return Mark(lane, kind, site, _short(op, 24), text, version=version,
                    version_from=version - 1 if version is not None else None)
    return Mark(lane, _kind_of(r.kind), site, _short(text, 30), text)


def _kind_of(related_kind: str) -> str:
    return {"created": "created", "save": "save", "write": "write", "step": "step", "backward": "backward",
            "freed": "freed", "call": "note", "note": "note", "use": "use", "first-use": "use",
            "reuse": "reuse", "data_write": "data_write"}.get(related_kind, "note")


def _related_mark(d: Diagnostic, r: Related, lane: str) -> Mark:
    """A related location (no engine timeline): its kind, its version when it states one."""
    text = r.message
    kind = _kind_of(r.kind)
    site = _site(d, r)
    silent = "silently" in text
    fails = "fails" in text or "raise" in text
    outcome = "silent" if silent else ("raises" if fails else "")
    if kind == "save":
        op = _OP_SAVES.search(text)
        version = _int(_AT_VERSION.search(text))
        label = f"{op.group(1)} saves" if op else "saved"
        return Mark(lane, "save", site, _short(label, 24), text, version=version)
    if kind == "backward":
        label = "backward" if not ("second" in text or "again" in text) else "backward again"
        return Mark(lane, "backward", site, label, text, outcome=outcome)
    if kind == "freed":
        return Mark(lane, "freed", site, "graph freed", text)
    if kind == "created":
        return Mark(lane, "created", site, _short(text.replace(" here", ""), 26), text)
    if kind == "step":
        name = _first_name(text)
        return Mark(lane, "step", site, _short(name or "step", 24), text)
    return Mark(lane, kind, site, _short(text, 26), text, outcome=outcome)


# --------------------------------------------------------------------------- lanes
def _story_names(d: Diagnostic) -> List[str]:
    """Names of the storage in a version story: created, saved, written (one counter)."""
    names: List[str] = []
    for r in tuple(d.timeline) + tuple(d.related):
        if r.kind == "created":
            n = _first_name(r.message)
        elif r.kind == "save":
            m = _SAVES.search(r.message)
            n = m.group(1) if m else None
        else:
            n = None
        if n and n not in ("tensor", "its output") and n not in names:
            names.append(n)
    m = _CHANGES.search(d.message)
    if m and m.group(1) not in names:
        names.append(m.group(1))
    return names


def _lane_title(names: Sequence[str], fallback: str) -> Tuple[str, str]:
    if not names:
        return fallback, ""
    title = f"`{names[0]}`"
    if len(names) > 1:
        title += " (also " + ", ".join(f"`{n}`" for n in names[1:3]) + ")"
        return title, "views: one storage, one counter"
    return title, ""


def scene_of(d: Diagnostic, status: str = "") -> Scene:
    """The scene of a static diagnostic (``status``: a debug run's verdict, if any)."""
    b = SceneBuilder()
    role = primary_role(d.code)
    code = d.code
    if code in ("GW601", "GW602"):
        _data_write_story(b, d)
    elif d.timeline:
        _version_story(b, d, role)
    else:
        _related_story(b, d, role)
    return b.build(code=d.code, severity=d.severity.label, message=d.message, site=_site(d), rule=d.rule,
                   status=status)


def _version_story(b: SceneBuilder, d: Diagnostic, role: str) -> None:
    title, note = _lane_title(_story_names(d), "the saved tensor")
    lane = b.lane("storage", title, note or "one version counter")
    calls = tuple(_site(d, r) for r in d.related if r.kind == "call")
    primary_done = False
    marks = [_timeline_mark(d, r, lane) for r in d.timeline]
    # the finding's own write: the timeline entry on its line (the last one there, for a loop
    # that writes once per iteration: the one that breaks the saved version is flagged later)
    for i in reversed(range(len(marks))):
        m = marks[i]
        if m.kind in ("write", "step") and m.site.row == d.span.row and m.site.filename == d.filename:
            marks[i] = replace(m, primary=True, via=calls, kind="step" if role == "step" else m.kind)
            primary_done = True
            break
    for m in marks:
        b.add(m)
    if not primary_done:
        b.add(Mark(lane, role if role in ("write", "step") else "write", _site(d),
                   _short(_first_name(d.message) or d.code, 24), d.message, primary=True, via=calls))


def _data_write_story(b: SceneBuilder, d: Diagnostic) -> None:
    """GW601/GW602: the saved tensor's lane, and the alias the write went through (same memory,
    its own version counter: the save's version never moves)."""
    saved_names = [m.group(1) for r in d.related if r.kind == "save" for m in [_SAVES.search(r.message)] if m]
    written = _CHANGES.search(d.message)
    written_name = written.group(1) if written else None
    if d.code == "GW602":  # the message names the graph tensor; the alias is anonymous
        saved_title = f"`{written_name}`" if written_name else "the graph tensor"
        alias_title, via = "its detached alias", ".detach()/.data"
    else:
        saved_title = f"`{saved_names[0]}`" if saved_names else "the tensor autograd uses"
        via = ".data" if ".data" in d.message else "an alias"
        alias_title = f"`{written_name}`" if written_name and written_name not in saved_names else f"{via} alias"
    saved = b.lane("saved", saved_title, "one version counter")
    alias = b.lane("alias", alias_title, "same memory, own counter")
    marks = [_related_mark(d, r, saved) for r in d.related]
    saved_at = next((m.version for m in marks if m.kind == "save" and m.version is not None), None)
    for m in marks:
        if m.kind == "backward" and saved_at is not None:
            # the write went through another counter: the check passes on changed values
            m = replace(m, expects=saved_at, finds=saved_at)
        b.add(m)
    b.add(Mark(alias, "data_write", _site(d), _short(_primary_label(d, "write"), 24), d.message,
               primary=True, outcome="silent"))


def _related_story(b: SceneBuilder, d: Diagnostic, role: str) -> None:
    graph = d.code.startswith("GW4") or d.code == "GW504"
    name = _subject_name(d.message)
    if graph:
        title = f"graph of `{name}`" if name else "the graph"
        note = "its saved tensors"
    elif d.code.startswith("GW5") and d.code not in ("GW501", "GW502"):
        title, note = (f"`{name}`" if name else "the loss"), "its gradients"
    else:
        title, note = (f"`{name}`" if name else "the tensor"), ""
    lane = b.lane("main", title, note)
    calls = tuple(_site(d, r) for r in d.related if r.kind == "call")
    primary_site = _site(d)
    marks = [_related_mark(d, r, lane) for r in d.related if r.kind != "call"]
    merged = False
    for i, m in enumerate(marks):
        if m.site.row == primary_site.row and m.site.filename == primary_site.filename and \
                (m.kind == role or (role == "note" and not merged)):
            marks[i] = replace(m, primary=True, detail=d.message, via=calls)
            merged = True
            break
    for m in marks:
        b.add(m)
    if not merged:
        outcome = ""
        if role == "write" and d.severity.label == "error" and not any(m.kind == "backward" for m in marks):
            outcome = "raises"  # raises at once, at the write
        b.add(Mark(lane, role, primary_site, _short(_primary_label(d, role), 26), d.message, primary=True,
                   outcome=outcome, via=calls))


_IDENT = re.compile(r"^[A-Za-z_][\w.]*(\[[^\]]*\])*(\.[\w.]+)*$")
_OP = re.compile(r"in-place (.+?) (?:on|writes|modifies|changes|through)\b")


def _subject_name(message: str) -> Optional[str]:
    """The tensor a message is about: the one it says is written, else its first name that
    reads like a variable (not an operator such as `+=`)."""
    m = _CHANGES.search(message)
    if m:
        return m.group(1)
    return next((n for n in _names(message) if _IDENT.match(n)), None)


def _primary_label(d: Diagnostic, role: str) -> str:
    name = _subject_name(d.message)
    if role == "write":
        op = _OP.search(d.message)
        return op.group(1).strip("`") if op else (name or "in-place write")
    if role == "step":
        return name or "step"
    if role == "reuse":
        return f"`{name}` reused" if name else "stale graph reused"
    if role == "created":
        return f"`{name}` built" if name else "built here"
    return d.message.split(";")[0]


def scenes_of(diags: Iterable[Diagnostic]) -> List[Scene]:
    return [scene_of(d) for d in diags]


__all__ = ["primary_role", "scene_of", "scenes_of"]
