"""The timeline picture of the finding under the cursor (``gradwarden.showTimeline``), as HTML:
the same page as ``gradwarden check --output-format html`` (``gradwarden.picture``), for one
document's findings, with what the last debug run of the file saw. Pure: the unit's program,
its located diagnostics and verdicts in, the page out.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.lsp.documents import Located, Program, uri_key
from gradwarden.lsp.hover import diagnostic_at, diagnostic_touching
from gradwarden.lsp.verdicts import Verdict
from gradwarden.picture.from_run import scene_of_finding
from gradwarden.picture.from_static import scene_of
from gradwarden.picture.page import Sources, render_page
from gradwarden.picture.reports import cached_lines, read_file
from gradwarden.picture.scene import Scene


def chosen(items: Sequence[Located], uri: str, position: Optional[Tuple[int, int]]) -> List[Diagnostic]:
    """The findings to draw (program rows): the one under ``position`` (program row, column;
    the most severe when several overlap), else one whose save or backward site is there, else
    those on its line, else every finding of the document."""
    here = [it.origin or it.diagnostic for it in items if uri_key(it.uri) == uri_key(uri)]
    if position is not None:
        row, col = position
        hit = diagnostic_at(here, row, col) or diagnostic_touching(here, row, col)
        if hit is not None:
            return [hit]
        on_line = [d for d in here if d.span.row <= row <= d.span.end_row]
        if on_line:
            return on_line
    return sorted(here, key=lambda d: (d.span.row, d.span.column, d.code))


def _verdict_for(d: Diagnostic, verdicts: Sequence[Verdict]) -> Optional[Verdict]:
    for v in verdicts:
        vd = v.diagnostic
        if v.replaces_static and vd.code == d.code and (vd.span.row, vd.span.column) == (d.span.row, d.span.column):
            return v
    return None


def scenes_for(diags: Sequence[Diagnostic], verdicts: Sequence[Verdict]) -> List[Scene]:
    out: List[Scene] = []
    for d in diags:
        v = _verdict_for(d, verdicts)
        finding = v.finding if v is not None else None
        if finding is not None and getattr(finding, "row", None) == d.span.row:
            out.append(scene_of_finding(finding))  # the rows of the run are the rows of this text
        else:
            out.append(scene_of(d, status=v.status if v is not None else ""))
    return out


def timeline_page(*, uri: str, filename: str, display: str, program: Program, items: Sequence[Located],
                  verdicts: Sequence[Verdict] = (), position: Optional[Tuple[int, int]] = None
                  ) -> Tuple[str, int, str]:
    """(HTML, number of findings drawn, title) for document ``uri`` of a unit whose engine
    filename is ``filename`` (shown as ``display``)."""
    diags = chosen(items, uri, position)
    scenes = scenes_for(diags, verdicts)
    text_lines = program.text.splitlines()

    def read(name: str) -> Optional[str]:
        return None if name == filename else read_file(name)

    disk = cached_lines(read)

    def lines(name: str) -> Optional[List[str]]:
        return text_lines if name == filename else disk(name)

    def locate(name: str, row: int) -> Optional[Tuple[int, int]]:
        if name != filename or not program.is_notebook:
            return None
        found = program.to_cell(row)
        return (program.cell_number(found[0]), found[1]) if found else None

    sources = Sources(lines=lines, display=lambda name: display if name == filename else name,
                      locate=locate if program.is_notebook else None)
    if len(scenes) == 1:
        s = scenes[0]
        title = f"{s.code} timeline: {display}:{sources.label(s.site).replace('line ', '')}"
    else:
        title = f"gradwarden timelines: {display}"
    html = render_page(scenes, sources, title=title, empty=f"No gradwarden finding in {display}.")
    return html, len(scenes), title


__all__ = ["chosen", "scenes_for", "timeline_page"]
