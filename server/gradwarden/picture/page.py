"""The timeline pictures of a run, as one self-contained HTML page: inline SVG and CSS, no script,
no font or image to fetch, light and dark themes (``prefers-color-scheme``, and VS Code's
webview theme classes). Each finding gets its picture, the events in words, and the source lines
involved; every event of the picture links to its line there.

``render_page`` is a pure function: scenes and a way to read source lines in, HTML text out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden import __version__
from gradwarden.picture.scene import KIND_TITLES, Scene, Site
from gradwarden.picture.svg import legend_svg, render_svg

Lines = Callable[[str], Optional[Sequence[str]]]  # filename -> its lines (None: unreadable)
Display = Callable[[str], str]  # filename -> how the page names it
Locate = Callable[[str, int], Optional[Tuple[int, int]]]  # filename, row -> (cell, row in cell) for notebooks

STATUS_TEXT = {
    "confirmed": "confirmed by the debug run",
    "runtime-only": "seen only in the debug run",
    "not reproduced": "not reproduced: the line ran, nothing of the kind happened",
    "not reached": "not reached: the line never ran",
}
CONTEXT = 1  # source lines shown around each event


@dataclass(frozen=True)
class Sources:
    """How the page reads and names the files its findings are in."""

    lines: Lines
    display: Display = lambda name: name  # noqa: E731
    locate: Optional[Locate] = None  # notebooks: program row -> (cell, row)

    def label(self, site: Site) -> str:
        where = self.locate(site.filename, site.row) if self.locate else None
        return f"cell {where[0]}, line {where[1]}" if where else f"line {site.row}"

    def gutter(self, filename: str, row: int) -> str:
        where = self.locate(filename, row) if self.locate else None
        return f"{where[0]}:{where[1]}" if where else str(row)

    def text(self, site: Site) -> str:
        lines = self.lines(site.filename)
        if not lines or not 1 <= site.row <= len(lines):
            return ""
        return lines[site.row - 1]


def _x(s: object) -> str:
    return escape(str(s), quote=True)


def _code_spans(text: str) -> str:
    """A message with its `names` as <code>."""
    parts = re.split(r"(`+[^`]+?`+)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append(f"<code>{_x(p.strip('`'))}</code>")
        else:
            out.append(_x(p))
    return "".join(out)


def _anchor(sid: str, files: Dict[str, int], site: Site) -> str:
    return f"{sid}-s{files.setdefault(site.filename, len(files))}-L{site.row}"


def _section(scene: Scene, index: int, sources: Sources) -> str:
    sid = f"f{index}"
    files: Dict[str, int] = {scene.site.filename: 0}
    for m in scene.marks:
        files.setdefault(m.site.filename, len(files))
        for v in m.via:
            files.setdefault(v.filename, len(files))

    def href(site: Site) -> str:
        return "#" + _anchor(sid, files, site)

    svg = render_svg(scene, label=sources.label, text=sources.text, href=href, sid=sid)
    sev = scene.severity
    where = f"{sources.display(scene.site.filename)}:{sources.label(scene.site).replace('line ', '')}"
    head = [f'<section class="finding sev-{_x(sev)}" id="{sid}" data-code="{_x(scene.code)}" '
            f'data-file="{_x(scene.site.filename)}" data-line="{scene.site.row}">',
            f'<h2><span class="badge code">{_x(scene.code)}</span> <span class="badge sev {_x(sev)}">{_x(sev)}</span>']
    if scene.status:
        head.append(f' <span class="badge status st-{_x(scene.status.replace(" ", "-"))}">{_x(scene.status)}</span>')
    head.append(f' <a class="where" href="{href(scene.site)}">{_x(where)}</a>')
    if scene.rule:
        head.append(f' <span class="rule">{_x(scene.rule)}</span>')
    head.append("</h2>")
    head.append(f'<p class="message">{_code_spans(scene.message)}</p>')
    if scene.status in STATUS_TEXT:
        head.append(f'<p class="verdict">{_x(STATUS_TEXT[scene.status])}</p>')
    if scene.facts:
        head.append('<ul class="facts">' + "".join(f"<li>{_code_spans(f)}</li>" for f in scene.facts) + "</ul>")
    head.append(f'<figure class="picture"><div class="scroll">{svg}</div></figure>')
    events = []
    for i, m in enumerate(scene.marks):
        tags = []
        if m.primary:
            tags.append("reported here")
        if m.breaks:
            tags.append("the write that breaks it")
        if m.seen is True:
            tags.append("seen in the run")
        elif m.seen is False:
            tags.append("predicted, not seen")
        tag = f' <span class="tags">({_x(", ".join(tags))})</span>' if tags else ""
        where_m = sources.label(m.site)
        if m.site.filename != scene.site.filename:
            where_m = f"{sources.display(m.site.filename)}, {where_m}"
        events.append(f'<li class="k-{_x(m.kind)}"><a href="{href(m.site)}">{_x(where_m)}</a> — '
                      f'<span class="kind">{_x(KIND_TITLES.get(m.kind, m.kind))}</span>: '
                      f'{_code_spans(m.detail or m.label)}{tag}</li>')
    head.append('<ol class="events">' + "".join(events) + "</ol>")
    head.append(_excerpts(scene, sid, files, sources))
    head.append("</section>")
    return "".join(head)


def _excerpts(scene: Scene, sid: str, files: Dict[str, int], sources: Sources) -> str:
    """The source lines of the events (and a line around each), one block per file."""
    hits: Dict[str, Dict[int, List[str]]] = {}
    for i, m in enumerate(scene.marks):
        hits.setdefault(m.site.filename, {}).setdefault(m.site.row, []).append(f"{i + 1}")
        for v in m.via:
            hits.setdefault(v.filename, {}).setdefault(v.row, [])
    hits.setdefault(scene.site.filename, {}).setdefault(scene.site.row, [])
    blocks = []
    for filename in sorted(hits, key=lambda f: files.get(f, 99)):
        lines = sources.lines(filename)
        rows = sorted(hits[filename])
        if not lines:
            body = "".join(f'<span class="ln hit" id="{_anchor(sid, files, Site(filename, r))}">'
                           f'{_x(sources.gutter(filename, r))}</span> (source not available)' for r in rows)
        else:
            show = sorted({r + d for r in rows for d in range(-CONTEXT, CONTEXT + 1) if 1 <= r + d <= len(lines)})
            out = []
            prev = None
            for r in show:
                if prev is not None and r > prev + 1:
                    out.append('<span class="gap">⋮</span>')
                prev = r
                steps = hits[filename].get(r)
                cls = "ln hit" if steps is not None else "ln"
                mark = f'<span class="steps">{_x(" ".join(steps))}</span>' if steps else '<span class="steps"></span>'
                out.append(f'<span class="{cls}" id="{_anchor(sid, files, Site(filename, r))}" '
                           f'data-file="{_x(filename)}" data-line="{r}">{mark}<span class="no">'
                           f'{_x(sources.gutter(filename, r))}</span> {_x(lines[r - 1])}</span>')
            body = "".join(out)
        blocks.append(f'<div class="excerpt"><div class="file">{_x(sources.display(filename))}</div>'
                      f'<pre class="source">{body}</pre></div>')
    return '<details class="sources" open><summary>source</summary>' + "".join(blocks) + "</details>"


def render_page(scenes: Sequence[Scene], sources: Sources, *, title: str, summary: Sequence[str] = (),
                empty: str = "No findings.") -> str:
    """The HTML document of ``scenes`` (in the order given)."""
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="color-scheme" content="light dark">',
             f'<meta name="generator" content="gradwarden {_x(__version__)}">',
             f"<title>{_x(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
             f'<header><h1>{_x(title)}</h1>']
    for line in summary:
        parts.append(f'<p class="summary">{_code_spans(line)}</p>')
    if scenes:
        toc = []
        for i, s in enumerate(scenes, 1):
            status = f' <span class="badge status st-{_x(s.status.replace(" ", "-"))}">{_x(s.status)}</span>' \
                if s.status else ""
            toc.append(f'<li><a href="#f{i}"><span class="badge code">{_x(s.code)}</span> '
                       f'{_x(sources.display(s.site.filename))}:{_x(sources.label(s.site).replace("line ", ""))}'
                       f'</a>{status} {_code_spans(_short(s.message))}</li>')
        parts.append('<nav><ol class="toc">' + "".join(toc) + "</ol></nav>")
        parts.append(f'<details class="key"><summary>how to read the pictures</summary>{legend_svg()}'
                     '<p>Time runs left to right; each lane is one storage (views of a tensor share its version '
                     'counter, so they share a lane). A save records the counter\'s version; every in-place write '
                     'bumps it; the backward checks that the version is still the one the save recorded '
                     '(dashed arc). The finding\'s own line is circled. Each event links to its source line '
                     'below the picture. In a debug report a green dot marks what the run saw; a faded event '
                     'was predicted but not seen.</p></details>')
    parts.append("</header>")
    parts.append("<main>")
    if not scenes:
        parts.append(f'<p class="empty">{_x(empty)}</p>')
    for i, scene in enumerate(scenes, 1):
        parts.append(_section(scene, i, sources))
    parts.append("</main>")
    parts.append(f'<footer>gradwarden {_x(__version__)}</footer>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


CSS = """
:root{color-scheme:light dark;--sans:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",monospace;
--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--link:#0969da;
--save:#0969da;--write:#bc4c00;--step:#8250df;--backward:#6e40c9;--created:#59636e;--freed:#6e7781;
--use:#1b7c83;--data:#9a6700;--bad:#cf222e;--warn:#9a6700;--ok:#1a7f37;--halo:rgba(207,34,46,.10);--hit:#fff8c5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--panel:#151b23;
--link:#4493f8;--save:#4493f8;--write:#f0883e;--step:#ab7df8;--backward:#b083f0;--created:#9198a1;--freed:#8b949e;
--use:#39c5cf;--data:#d29922;--bad:#f85149;--warn:#d29922;--ok:#3fb950;--halo:rgba(248,81,73,.16);--hit:#3b2e0a}}
body.vscode-light{--bg:var(--vscode-editor-background,#fff);--fg:var(--vscode-editor-foreground,#1f2328);
--muted:#59636e;--line:#d1d9e0;--panel:rgba(127,127,127,.08);--link:var(--vscode-textLink-foreground,#0969da);
--save:#0969da;--write:#bc4c00;--step:#8250df;--backward:#6e40c9;--created:#59636e;--freed:#6e7781;--use:#1b7c83;
--data:#9a6700;--bad:#cf222e;--warn:#9a6700;--ok:#1a7f37;--halo:rgba(207,34,46,.10);--hit:rgba(255,200,0,.18)}
body.vscode-dark,body.vscode-high-contrast{--bg:var(--vscode-editor-background,#0d1117);
--fg:var(--vscode-editor-foreground,#e6edf3);--muted:#9198a1;--line:#3d444d;--panel:rgba(127,127,127,.10);
--link:var(--vscode-textLink-foreground,#4493f8);--save:#4493f8;--write:#f0883e;--step:#ab7df8;--backward:#b083f0;
--created:#9198a1;--freed:#8b949e;--use:#39c5cf;--data:#d29922;--bad:#f85149;--warn:#d29922;--ok:#3fb950;
--halo:rgba(248,81,73,.16);--hit:rgba(255,200,0,.14)}
html,body{background:var(--bg);color:var(--fg)}
body{font:14px/1.45 var(--sans);margin:0;padding:16px 24px 40px;max-width:1400px}
a{color:var(--link)}
code,pre{font-family:var(--mono);font-size:12.5px}
h1{font-size:20px;margin:4px 0 8px}
h2{font-size:15px;margin:0 0 6px;display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.summary{margin:2px 0;color:var(--fg)}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid var(--line);background:var(--panel)}
.badge.code{font-family:var(--mono)}
.badge.sev.error{color:var(--bad);border-color:var(--bad)}
.badge.sev.warning{color:var(--warn);border-color:var(--warn)}
.badge.sev.information,.badge.sev.hint{color:var(--link);border-color:var(--link)}
.badge.st-confirmed,.badge.st-runtime-only{color:var(--ok);border-color:var(--ok)}
.badge.st-not-reproduced,.badge.st-not-reached{color:var(--muted)}
.rule{color:var(--muted);font-family:var(--mono);font-size:12px}
.finding{border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:16px 0;background:var(--bg)}
.message{margin:4px 0 8px}
.verdict{margin:0 0 8px;color:var(--muted);font-style:italic}
.facts{margin:0 0 8px;padding-left:18px;color:var(--muted);font-size:13px}
.picture{margin:0}
.scroll{overflow-x:auto;border-radius:6px;background:var(--panel);padding:4px 0}
.events{margin:8px 0;padding-left:22px;font-size:13px}
.events .kind{color:var(--muted)}
.events .tags{color:var(--muted);font-style:italic}
.toc{padding-left:22px;font-size:13px}
.toc li{margin:2px 0}
details summary{cursor:pointer;color:var(--muted);font-size:13px}
.excerpt .file{font-family:var(--mono);font-size:12px;color:var(--muted);margin-top:6px}
pre.source{margin:2px 0;padding:6px 0;background:var(--panel);border-radius:6px;overflow-x:auto}
pre.source .ln{display:block;padding:0 10px}
pre.source .ln.hit{background:var(--hit)}
pre.source .ln:target{outline:2px solid var(--link);outline-offset:-2px}
pre.source .no{display:inline-block;min-width:3.5em;text-align:right;color:var(--muted);padding-right:8px}
pre.source .steps{display:inline-block;min-width:2.5em;color:var(--bad);font-weight:600}
pre.source .gap{display:block;padding:0 10px;color:var(--muted)}
footer{color:var(--muted);font-size:12px;margin-top:24px}
.empty{font-size:15px}
svg.timeline{display:block;font-family:var(--sans);font-size:12px}
svg.timeline text{fill:var(--fg)}
svg .mono,svg .code{font-family:var(--mono)}
svg .axis-title{fill:var(--muted);font-size:11px;font-style:italic}
svg .axis-line{stroke:var(--muted);stroke-width:1.2}
svg .arrowhead{fill:var(--muted)}
svg .step-no{fill:var(--muted);font-weight:700;font-size:11px}
svg .line-label{fill:var(--link);font-weight:600}
svg .code{font-size:11px;fill:var(--fg)}
svg .guide{stroke:var(--line);stroke-dasharray:2 4}
svg .lane-title{font-weight:700;font-size:13px}
svg .lane-note{fill:var(--muted);font-size:11px}
svg .lane-line{stroke:var(--muted);stroke-width:2;opacity:.6}
svg .ribbon{fill:var(--muted);font-size:11px;font-family:var(--mono)}
svg .expect{fill:none;stroke:var(--save);stroke-width:1.6;stroke-dasharray:5 4}
svg .expect.broken{stroke:var(--bad)}
svg .expect-label{fill:var(--save);font-size:11px;font-weight:700}
svg .expect-label.broken{fill:var(--bad)}
svg .memory-link{stroke:var(--data);stroke-width:1.6;stroke-dasharray:2 3}
svg .mark .shape{stroke-width:2;fill:var(--bg);stroke:var(--muted)}
svg .mark .glyph{fill:none;stroke:var(--bg);stroke-width:2;stroke-linecap:round;stroke-linejoin:round}
svg .mark .inner{fill:none;stroke:var(--bg);stroke-width:1.5}
svg .k-created .shape{stroke:var(--created);fill:var(--bg)}
svg .k-save .shape{stroke:var(--save);fill:var(--save)}
svg .k-write .shape{stroke:var(--write);fill:var(--write)}
svg .k-step .shape{stroke:var(--step);fill:var(--step)}
svg .k-data_write .shape{stroke:var(--data);fill:var(--bg);stroke-dasharray:4 2}
svg .k-backward .shape{stroke:var(--backward);fill:var(--backward)}
svg .k-freed .shape{stroke:var(--freed);fill:var(--freed)}
svg .k-use .shape{stroke:var(--use);fill:var(--use)}
svg .k-reuse .shape{stroke:var(--bad);fill:var(--bg)}
svg .k-note .shape{stroke:var(--muted);fill:var(--muted)}
svg .mark.breaks .shape,svg .mark.o-raises .shape{stroke:var(--bad);stroke-width:3}
svg .mark.o-silent .shape{stroke:var(--warn);stroke-width:3}
svg .halo{fill:var(--halo);stroke:var(--bad);stroke-width:1.2;stroke-dasharray:3 3}
svg .mark-label{font-weight:600}
svg .mark-version{fill:var(--muted);font-family:var(--mono);font-size:11px}
svg .mark-outcome{font-weight:700;font-size:11.5px}
svg .mark-outcome.bad{fill:var(--bad)}
svg .mark-outcome.warn{fill:var(--warn)}
svg .seen-dot{fill:var(--ok);stroke:var(--bg);stroke-width:1.5}
svg .mark.predicted .shape{opacity:.55}
svg a{cursor:pointer}
svg a:hover .shape,svg a:focus .shape{stroke-width:3.5}
svg a:hover .mark-label,svg a:hover .line-label{text-decoration:underline}
svg .legend-text{fill:var(--fg);font-size:12px}
""".strip()


__all__ = ["CSS", "STATUS_TEXT", "Sources", "render_page"]
