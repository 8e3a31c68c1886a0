"""A debug run's finding as a ``Scene``: what really happened.

Takes the runtime bridge's ``Finding`` (``gradwarden.runtime.findings``) by its fields, without
importing the bridge (this module sits below it). A runtime finding is drawn from its sites and
evidence (the versions the run measured, the ops it saw); a static diagnostic the run
confirmed is drawn as the engine predicted it, each event the run saw marked as seen and given
the run's version numbers; one the run did not reproduce (or never reached) keeps its static
picture, with that verdict.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.picture.from_static import scene_of as static_scene_of
from gradwarden.picture.scene import Mark, Scene, SceneBuilder, Site

# runtime related-site kinds -> mark kinds
_SITE_KIND = {"write": "write", "save": "save", "backward": "backward", "freed": "freed", "step": "step",
              "created": "created", "first-use": "use", "use": "use", "reuse": "reuse", "holder": "note",
              "call": "note", "note": "note"}


def _norm(path: str) -> str:
    try:
        return os.path.normcase(os.path.realpath(path))
    except (OSError, ValueError):
        return path


def _site(s: Any) -> Optional[Site]:
    if s is None:
        return None
    return Site(str(s.filename), int(s.row), 1)


def _tensor_title(ev: Dict[str, Any]) -> str:
    t = ev.get("tensor") or {}
    shape = t.get("shape")
    dtype = t.get("dtype")
    if shape is None and not dtype:
        return "the saved tensor"
    dims = "[" + ", ".join(str(x) for x in shape) + "]" if shape is not None else ""
    return " ".join(p for p in (dtype or "tensor", dims) if p)


def runtime_marks(f: Any) -> Tuple[List[Tuple[str, str, str]], List[Mark]]:
    """(lanes as (key, title, note), marks) of what the run saw for finding ``f``."""
    ev = dict(getattr(f, "evidence", None) or {})
    versions = ev.get("versions") or {}
    kind = getattr(f, "kind", "")
    code = getattr(f, "code", "")
    lanes: List[Tuple[str, str, str]] = []
    marks: List[Mark] = []
    saved = versions.get("saved")
    current = versions.get("current")
    severity = getattr(f, "severity", "error")
    save_op = ev.get("save_op") or ""
    write_op = ev.get("write_op") or "in-place write"
    write, save = _site(f.write_site), _site(f.save_site)
    backward, freed = _site(f.backward_site), _site(f.freed_site)
    if kind in ("version-counter", "data-write", "fused-step"):
        lanes.append(("storage", _tensor_title(ev), f"saved by {save_op}" if save_op else "one version counter"))
        if save is not None:
            marks.append(Mark("storage", "save", save, f"{save_op or 'saved'} saves", f"saved for backward by "
                              f"{save_op or 'a node'}" + (f" at version {saved}" if saved is not None else ""),
                              version=saved, seen=True))
        if write is not None:
            if kind == "data-write":
                lanes.append(("alias", "its .data alias", "same memory, own counter"))
                marks.append(Mark("alias", "data_write", write, write_op, f"{write_op} through another version "
                                  "counter: the memory changes, the saved version does not", primary=True,
                                  outcome="silent", seen=True))
            else:
                step = code in ("GW501", "GW502") or kind == "fused-step"
                w_from, w_to = versions.get("write_from"), versions.get("write_to")
                detail = f"{write_op}" + (f": version {w_from} -> {w_to}" if w_from is not None else "")
                if kind == "fused-step":
                    detail = f"{write_op}: a fused step writes the weights without bumping their version"
                marks.append(Mark("storage", "step" if step else "write", write, write_op, detail,
                                  version=w_to, version_from=w_from, primary=True, seen=True,
                                  outcome="silent" if kind == "fused-step" else ""))
        if backward is not None:
            outcome = "raises" if severity == "error" else "silent"
            found = current if current is not None else saved
            detail = "backward " + ("raised" if outcome == "raises" else "used the changed values") + \
                (f": expected version {saved}, found {found}" if saved is not None else "")
            marks.append(Mark("storage", "backward", backward, "backward", detail, expects=saved, finds=found,
                              outcome=outcome, seen=True))
        return lanes, marks
    graph = kind == "freed-graph"
    lanes.append(("main", "the graph" if graph else "the tensor", "its saved tensors" if graph else ""))
    primary_at = (_norm(f.filename), f.row) if getattr(f, "filename", None) and getattr(f, "row", None) else None
    for mk, site in (("write", write), ("save", save), ("freed", freed), ("backward", backward)):
        if site is not None:
            marks.append(Mark("main", mk, site, _label(mk, ev), _detail(mk, ev, severity), seen=True,
                              outcome=("raises" if severity == "error" else "silent") if mk == "backward" else ""))
    for r in getattr(f, "related", ()) or ():
        site = _site(r.site)
        if site is None:
            continue
        mk = _SITE_KIND.get(r.kind, "note")
        marks.append(Mark("main", mk, site, (r.message or r.kind)[:26], r.message or r.kind, seen=True))
    if primary_at is not None:
        for i, m in enumerate(marks):
            if (_norm(m.site.filename), m.site.row) == primary_at:
                marks[i] = replace(m, primary=True)
                break
        else:
            marks.append(Mark("main", "write" if kind.endswith("write") or "inplace" in kind else "note",
                              Site(f.filename, f.row), code, getattr(f, "message", ""), primary=True, seen=True,
                              outcome="raises" if severity == "error" and backward is None else ""))
    return lanes, marks


def _label(kind: str, ev: Dict[str, Any]) -> str:
    if kind == "write":
        return str(ev.get("write_op") or "in-place write")
    if kind == "save":
        return f"{ev.get('save_op') or 'saved'} saves"
    return {"freed": "graph freed", "backward": "backward"}.get(kind, kind)


def _detail(kind: str, ev: Dict[str, Any], severity: str) -> str:
    if kind == "backward":
        return str(ev.get("error") or ("backward raised" if severity == "error" else "backward"))
    if kind == "freed":
        return "this backward freed the graph"
    return _label(kind, ev)


def scene_of_finding(f: Any) -> Scene:
    """The scene of a debug run's finding (static or runtime-only)."""
    status = getattr(f, "status", "")
    static = getattr(f, "static", None)
    facts = _facts(f)
    if static is not None:
        scene = static_scene_of(static, status=status)
        source = getattr(f, "runtime", None)
        if source is None:
            return replace(scene, facts=tuple(facts))
        return _merge(scene, source, facts)
    lanes, marks = runtime_marks(f)
    b = SceneBuilder()
    for key, title, note in lanes:
        b.lane(key, title, note)
    for m in marks:
        b.add(m)
    site = Site(f.filename or "?", f.row or 1, 1)
    return b.build(code=f.code, severity=f.severity, message=f.message, site=site, status=status, facts=facts)


def _merge(scene: Scene, runtime: Any, facts: List[str]) -> Scene:
    """The static picture, with what the run saw: matching events get the run's versions and
    are marked seen; what the run saw elsewhere is added (seen), the rest stays predicted."""
    _, seen = runtime_marks(runtime)
    lane = scene.lanes[0].key if scene.lanes else "main"
    marks = list(scene.marks)
    used = set()
    for i, m in enumerate(marks):
        for j, r in enumerate(seen):
            if j in used or r.kind != m.kind or (_norm(r.site.filename), r.site.row) != (_norm(m.site.filename), m.site.row):
                continue
            used.add(j)
            marks[i] = replace(m, seen=True,
                               version=r.version if r.version is not None else m.version,
                               version_from=r.version_from if r.version_from is not None else m.version_from,
                               expects=r.expects if r.expects is not None else m.expects,
                               finds=r.finds if r.finds is not None else m.finds,
                               detail=m.detail + (f" (debug run: {r.detail})" if r.detail and r.detail != m.detail else ""))
            break
    for j, r in enumerate(seen):
        if j not in used and r.kind in ("save", "write", "step", "backward", "freed", "data_write"):
            target = lane if scene.lane(r.lane) is None else r.lane
            marks.append(replace(r, lane=target, primary=False))
    b = SceneBuilder()
    for ln in scene.lanes:
        b.lane(ln.key, ln.title, ln.note)
    for m in marks:
        b.add(replace(m, breaks=False))
    return b.build(code=scene.code, severity=scene.severity, message=scene.message, site=scene.site,
                   rule=scene.rule, status=scene.status, facts=facts)


def _facts(f: Any) -> List[str]:
    ev = dict(getattr(f, "evidence", None) or {})
    src = getattr(f, "runtime", None)
    if src is not None:
        ev = dict(getattr(src, "evidence", None) or {}, **ev)
    out: List[str] = []
    t = ev.get("tensor") or {}
    if t:
        shape = t.get("shape")
        out.append("tensor: " + " ".join(str(x) for x in (t.get("type") or t.get("dtype") or "tensor",
                                                          shape if shape is not None else "", t.get("device") or "")
                                         if x != ""))
    if ev.get("write_op"):
        out.append(f"write: {ev['write_op']}")
    if ev.get("save_op"):
        out.append(f"saved by: {ev['save_op']}")
    v = ev.get("versions") or {}
    if v.get("saved") is not None:
        out.append(f"versions: saved at {v['saved']}, found {v.get('current', '?')} at backward")
    if ev.get("error"):
        out.append(f"error: {str(ev['error'])[:300]}")
    ranks = getattr(f, "ranks", ()) or ()
    if len(ranks) > 1:
        out.append("ranks: " + ", ".join(str(r) for r in ranks))
    return out


__all__ = ["runtime_marks", "scene_of_finding"]
