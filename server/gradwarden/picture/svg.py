"""A ``Scene`` drawn as SVG: time runs left to right, one column per event, one lane per storage.

Every event is a link (``<a href>``) to its source line in the page, carries its facts as data
attributes (``data-kind``, ``data-line``, ``data-version`` ...: what the tests and the VS Code
webview read) and a ``<title>`` (the tooltip). Colours come from CSS classes that the page styles
for light and dark themes; the SVG itself is well-formed XML with no external reference.
"""
from __future__ import annotations

from html import escape
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.picture.scene import KIND_TITLES, Mark, Scene, Site

LABEL_W = 200  # the lane titles
COL_W = 168  # one event
AXIS_H = 74  # time axis: step, line, code
LANE_H = 112
PAD = 14
CHAR_W = 6.7  # average width of a 12 px sans-serif / 11 px monospace character
R = 11  # marker size

Label = Callable[[Site], str]  # "line 28" / "cell 2, line 3"
Text = Callable[[Site], str]  # the source line
Href = Callable[[Site], str]  # the link target of a site


def _x(s: object) -> str:
    return escape(str(s), quote=True)


def _fit(text: str, width: float, char_w: float = CHAR_W) -> str:
    text = " ".join(str(text).split())
    n = max(4, int(width / char_w))
    return text if len(text) <= n else text[: n - 1] + "…"


def _rich(text: str, width: float, cls: str = "") -> str:
    """``text`` with `names` in monospace tspans, cut to ``width``."""
    short = _fit(text, width)
    parts = short.split("`")
    out = []
    for i, part in enumerate(parts):
        if not part:
            continue
        if i % 2:
            out.append(f'<tspan class="mono">{_x(part)}</tspan>')
        else:
            out.append(_x(part))
    return "".join(out)


def _version_line(m: Mark) -> str:
    if m.kind == "created":
        return "version 0" if m.version == 0 else ""
    if m.kind == "save":
        return f"records v{m.version}" if m.version is not None else "saved"
    if m.kind in ("write", "step"):
        if m.version is not None and m.version_from is not None:
            return f"v{m.version_from} → v{m.version}"
        return "version bumped" if m.kind == "write" else "updates the weights"
    if m.kind == "data_write":
        return "version unchanged"
    if m.kind == "backward":
        if m.expects is not None and m.finds is not None:
            return f"expects v{m.expects} · finds v{m.finds}"
        if m.expects is not None:
            return f"expects v{m.expects}"
        return ""
    if m.kind == "freed":
        return "saved tensors freed"
    if m.kind == "reuse":
        return "built on a freed graph"
    return ""


def _outcome_line(m: Mark) -> Tuple[str, str]:
    if m.outcome == "raises":
        return ("✗ raises here", "bad")
    if m.outcome == "silent":
        return ("⚠ silently wrong", "warn")
    if m.breaks:
        return ("breaks the saved version", "bad")
    return ("", "")


def _shape(m: Mark, x: float, y: float) -> str:
    k = m.kind
    if k == "created":
        return f'<circle class="shape" cx="{x:.1f}" cy="{y:.1f}" r="{R - 2}"/>'
    if k == "save":
        return (f'<polygon class="shape" points="{x:.1f},{y - R - 1:.1f} {x + R + 1:.1f},{y:.1f} '
                f'{x:.1f},{y + R + 1:.1f} {x - R - 1:.1f},{y:.1f}"/>')
    if k in ("write", "data_write"):
        return f'<rect class="shape" x="{x - R:.1f}" y="{y - R:.1f}" width="{2 * R}" height="{2 * R}" rx="3"/>'
    if k == "step":
        return (f'<rect class="shape" x="{x - R:.1f}" y="{y - R:.1f}" width="{2 * R}" height="{2 * R}" rx="3"/>'
                f'<rect class="inner" x="{x - R + 4:.1f}" y="{y - R + 4:.1f}" width="{2 * R - 8}" '
                f'height="{2 * R - 8}" rx="1"/>')
    if k == "backward":
        return (f'<circle class="shape" cx="{x:.1f}" cy="{y:.1f}" r="{R}"/>'
                f'<path class="glyph" d="M{x - 5:.1f},{y + 2:.1f} A5,5 0 1 1 {x:.1f},{y + 5:.1f}"/>'
                f'<path class="glyph" d="M{x - 7.5:.1f},{y - 0.5:.1f} L{x - 5:.1f},{y + 3:.1f} '
                f'L{x - 1.5:.1f},{y:.1f}"/>')
    if k == "freed":
        return (f'<circle class="shape" cx="{x:.1f}" cy="{y:.1f}" r="{R}"/>'
                f'<path class="glyph" d="M{x - 5:.1f},{y - 5:.1f} L{x + 5:.1f},{y + 5:.1f} '
                f'M{x + 5:.1f},{y - 5:.1f} L{x - 5:.1f},{y + 5:.1f}"/>')
    if k in ("use", "reuse"):
        return (f'<polygon class="shape" points="{x - R:.1f},{y - R:.1f} {x + R + 2:.1f},{y:.1f} '
                f'{x - R:.1f},{y + R:.1f}"/>')
    return f'<circle class="shape" cx="{x:.1f}" cy="{y:.1f}" r="5"/>'


def render_svg(scene: Scene, *, label: Label, text: Text, href: Href, sid: str = "t") -> str:
    """The SVG of ``scene`` (``sid``: a prefix for the ids it defines, unique in the page)."""
    marks = list(scene.marks)
    lanes = list(scene.lanes) or []
    cols = max(1, len(marks))
    width = LABEL_W + cols * COL_W + PAD
    height = AXIS_H + max(1, len(lanes)) * LANE_H + 6
    lane_y: Dict[str, float] = {ln.key: AXIS_H + i * LANE_H + 48 for i, ln in enumerate(lanes)}
    col_x = [LABEL_W + i * COL_W + COL_W / 2 for i in range(cols)]
    out: List[str] = []
    title = f"{scene.code}: {scene.message}"
    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {width:.0f} {height:.0f}" '
               f'width="{width:.0f}" height="{height:.0f}" role="img" aria-labelledby="{sid}-title {sid}-desc" '
               f'data-code="{_x(scene.code)}" data-status="{_x(scene.status)}">')
    out.append(f'<title id="{sid}-title">{_x(title)}</title>')
    desc = "; ".join(f"{i + 1}. {label(m.site)}: {KIND_TITLES.get(m.kind, m.kind)} — {m.detail or m.label}"
                     for i, m in enumerate(marks))
    out.append(f'<desc id="{sid}-desc">{_x(desc)}</desc>')
    out.append(f'<defs><marker id="{sid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
               f'markerHeight="7" orient="auto-start-reverse"><path class="arrowhead" d="M0,0 L10,5 L0,10 z"/>'
               f'</marker></defs>')
    # ---- the time axis
    out.append('<g class="axis">')
    out.append(f'<text class="axis-title" x="{PAD}" y="22">time →</text>')
    out.append(f'<line class="axis-line" x1="{LABEL_W - 20}" y1="{AXIS_H - 12}" x2="{width - PAD}" '
               f'y2="{AXIS_H - 12}" marker-end="url(#{sid}-arrow)"/>')
    for i, m in enumerate(marks):
        x = col_x[i]
        line_text = text(m.site).strip()
        out.append(f'<a href="{_x(href(m.site))}" class="axis-link" data-file="{_x(m.site.filename)}" '
                   f'data-line="{m.site.row}">')
        out.append(f'<title>{_x(m.site.filename)}:{m.site.row}: {_x(line_text)}</title>')
        out.append(f'<text class="step-no" x="{x - COL_W / 2 + 8:.1f}" y="22">{i + 1}</text>')
        out.append(f'<text class="line-label" x="{x:.1f}" y="22" text-anchor="middle">{_x(_fit(label(m.site), COL_W - 36))}</text>')
        out.append(f'<text class="code" x="{x:.1f}" y="42" text-anchor="middle">{_x(_fit(line_text, COL_W - 10))}</text>')
        out.append('</a>')
        out.append(f'<line class="guide" x1="{x:.1f}" y1="{AXIS_H - 16}" x2="{x:.1f}" y2="{height - 4}"/>')
    out.append('</g>')
    # ---- lanes
    for ln in lanes:
        y = lane_y[ln.key]
        on = [i for i, m in enumerate(marks) if m.lane == ln.key]
        out.append(f'<g class="lane" data-lane="{_x(ln.key)}">')
        out.append(f'<text class="lane-title" x="{PAD}" y="{y + 4:.1f}">{_rich(ln.title, LABEL_W - PAD - 8)}</text>')
        if ln.note:
            out.append(f'<text class="lane-note" x="{PAD}" y="{y + 20:.1f}">{_rich(ln.note, LABEL_W - PAD - 8)}</text>')
        if on:
            x0, x1 = col_x[on[0]], col_x[on[-1]]
            out.append(f'<line class="lane-line" x1="{x0:.1f}" y1="{y:.1f}" x2="{x1 + COL_W / 2 - 8:.1f}" y2="{y:.1f}"/>')
            out.extend(_version_ribbon([marks[i] for i in on], [col_x[i] for i in on], y, x1 + COL_W / 2 - 8))
            out.extend(_expectation_arcs(marks, on, col_x, y))
        out.append('</g>')
    # .data / .detach() writes: the same memory as the saved tensor's lane
    for i, m in enumerate(marks):
        if m.kind == "data_write" and len(lanes) > 1:
            ys = sorted(lane_y.values())
            out.append(f'<line class="memory-link" x1="{col_x[i]:.1f}" y1="{ys[0] + R + 2:.1f}" '
                       f'x2="{col_x[i]:.1f}" y2="{ys[-1] - R - 2:.1f}"><title>same memory, another version counter'
                       f'</title></line>')
    # ---- the events
    for i, m in enumerate(marks):
        out.append(_mark(m, i, col_x[i], lane_y.get(m.lane, AXIS_H + 48), label, href))
    out.append('</svg>')
    return "".join(out)


def _version_ribbon(marks: Sequence[Mark], xs: Sequence[float], y: float, end: float) -> List[str]:
    """The counter's value between events ("v0", "v1"), where the events state it."""
    out: List[str] = []
    current: Optional[int] = None
    for i, m in enumerate(marks):
        if m.kind in ("created", "write", "step") and m.version is not None:
            current = m.version
        elif m.kind == "save" and m.version is not None:
            current = m.version
        elif m.kind == "backward" and m.finds is not None:
            current = m.finds
        if current is None:
            continue
        x_next = xs[i + 1] if i + 1 < len(xs) else end
        if x_next - xs[i] < 40:
            continue
        mid = (xs[i] + x_next) / 2
        out.append(f'<text class="ribbon" x="{mid:.1f}" y="{y - 5:.1f}" text-anchor="middle" '
                   f'data-version="{current}">v{current}</text>')
    return out


def _expectation_arcs(marks: Sequence[Mark], on: Sequence[int], col_x: Sequence[float], y: float) -> List[str]:
    """A dashed arc from each save to the backward that checks it: the version it expects."""
    out: List[str] = []
    for a in on:
        s = marks[a]
        if s.kind != "save" or s.version is None:
            continue
        b = next((j for j in on if j > a and marks[j].kind == "backward"), None)
        if b is None:
            continue
        bw = marks[b]
        broken = bw.finds is not None and bw.expects is not None and bw.finds != bw.expects
        x0, x1 = col_x[a], col_x[b]
        top = y - 40
        cls = "expect broken" if broken else "expect"
        out.append(f'<path class="{cls}" d="M{x0:.1f},{y - R - 2:.1f} C{x0:.1f},{top:.1f} {x1:.1f},{top:.1f} '
                   f'{x1:.1f},{y - R - 2:.1f}"/>')
        out.append(f'<text class="expect-label{" broken" if broken else ""}" x="{(x0 + x1) / 2:.1f}" '
                   f'y="{top + 6:.1f}" text-anchor="middle">expects v{s.version}</text>')
    return out


def _mark(m: Mark, i: int, x: float, y: float, label: Label, href: Href) -> str:
    classes = ["mark", f"k-{m.kind}"]
    if m.primary:
        classes.append("primary")
    if m.breaks:
        classes.append("breaks")
    if m.outcome:
        classes.append(f"o-{m.outcome}")
    if m.seen is True:
        classes.append("seen")
    elif m.seen is False:
        classes.append("predicted")
    attrs = [f'class="{" ".join(classes)}"', f'href="{_x(href(m.site))}"', f'data-step="{i + 1}"',
             f'data-kind="{m.kind}"', f'data-file="{_x(m.site.filename)}"', f'data-line="{m.site.row}"']
    for name, value in (("version", m.version), ("from", m.version_from), ("expects", m.expects),
                        ("finds", m.finds)):
        if value is not None:
            attrs.append(f'data-{name}="{value}"')
    if m.outcome:
        attrs.append(f'data-outcome="{m.outcome}"')
    if m.seen is not None:
        attrs.append(f'data-seen="{str(m.seen).lower()}"')
    tip = f"{i + 1}. {label(m.site)} ({m.site.filename}:{m.site.row}): {KIND_TITLES.get(m.kind, m.kind)}"
    tip += f" — {m.detail or m.label}"
    if m.via:
        tip += " — runs from " + ", ".join(label(v) for v in m.via)
    if m.seen is True:
        tip += " — seen in the debug run"
    elif m.seen is False:
        tip += " — predicted, not seen in the debug run"
    parts = [f'<a {" ".join(attrs)}><title>{_x(tip)}</title>']
    if m.primary:
        parts.append(f'<circle class="halo" cx="{x:.1f}" cy="{y:.1f}" r="{R + 7}"/>')
    parts.append(_shape(m, x, y))
    if m.seen is True:
        parts.append(f'<circle class="seen-dot" cx="{x + R + 2:.1f}" cy="{y - R - 2:.1f}" r="4"/>')
    w = COL_W - 12
    parts.append(f'<text class="mark-label" x="{x:.1f}" y="{y + R + 17:.1f}" text-anchor="middle">'
                 f'{_rich(m.label, w)}</text>')
    version = _version_line(m)
    if version:
        parts.append(f'<text class="mark-version" x="{x:.1f}" y="{y + R + 32:.1f}" text-anchor="middle">'
                     f'{_x(_fit(version, w))}</text>')
    outcome, cls = _outcome_line(m)
    if outcome:
        parts.append(f'<text class="mark-outcome {cls}" x="{x:.1f}" y="{y + R + 47:.1f}" text-anchor="middle">'
                     f'{_x(outcome)}</text>')
    parts.append('</a>')
    return "".join(parts)



LEGEND = (("created", "created (version 0)"), ("save", "saved for backward (records the version)"),
          ("write", "in-place write (bumps the version)"), ("step", "optimizer step (writes the weights)"),
          ("data_write", "write through .data / .detach() (no bump)"), ("freed", "graph freed by a backward"),
          ("reuse", "a stale graph taken in again"), ("backward", "backward (checks the versions)"))


def legend_svg() -> str:
    """The shapes and what they mean, one row (the page's key)."""
    width = 250
    items = []
    for i, (kind, text) in enumerate(LEGEND):
        col, row = i % 4, i // 4
        x, y = 16 + col * width, 18 + row * 30
        m = Mark("legend", kind, Site("", 0), "")
        items.append(f'<g class="mark k-{kind}">{_shape(m, x, y)}<text class="legend-text" x="{x + 20}" '
                     f'y="{y + 4}">{_x(text)}</text></g>')
    height = 18 + ((len(LEGEND) + 3) // 4) * 30
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline legend" viewBox="0 0 {4 * width} {height}" '
            f'width="{4 * width}" height="{height}" role="img" aria-label="key to the shapes">{"".join(items)}</svg>')


__all__ = ["LEGEND", "legend_svg", "render_svg"]
