"""The two HTML reports: ``gradwarden check --output-format html`` (the static timeline of every
finding) and ``gradwarden debug --report FILE`` (what the run really did: confirmed findings,
runtime-only ones, the static ones it did not reproduce, and the run's summary).

Pure functions: findings and a way to read files in, HTML text out. The debug report takes the
runtime bridge's ``DebugResult`` by its fields (this module sits below the bridge).
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.picture.from_run import scene_of_finding
from gradwarden.picture.from_static import scene_of
from gradwarden.picture.page import Sources, render_page
from gradwarden.picture.scene import Scene

Read = Callable[[str], Optional[str]]  # filename -> the text its diagnostics were computed on


def cached_lines(read: Read) -> Callable[[str], Optional[List[str]]]:
    cache: Dict[str, Optional[List[str]]] = {}

    def lines(filename: str) -> Optional[List[str]]:
        if filename not in cache:
            text = read(filename)
            cache[filename] = text.splitlines() if text is not None else None
        return cache[filename]

    return lines


def read_file(filename: str) -> Optional[str]:
    """A file's text (UTF-8, undecodable bytes replaced), or None."""
    try:
        with open(filename, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_report(diags: Sequence[Diagnostic], *, read: Read, locate=None, display: Callable[[str], str] = str,
                 errors: Sequence[str] = (), files_checked: Optional[int] = None) -> str:
    """``gradwarden check --output-format html``: every finding's static timeline."""
    ordered = sorted(diags, key=lambda d: (d.filename, d.span.row, d.span.column, d.code, d.message))
    scenes = [scene_of(d) for d in ordered]
    counts = Counter(d.severity.label for d in ordered)
    files = len({d.filename for d in ordered})
    summary: List[str] = []
    if ordered:
        by_sev = ", ".join(_plural(counts[s], s) if s != "information" else f"{counts[s]} information"
                           for s in ("error", "warning", "information", "hint") if counts[s])
        summary.append(f"{_plural(len(ordered), 'finding')} ({by_sev}) in {_plural(files, 'file')}"
                       + (f", {files_checked} checked" if files_checked is not None else "") + ".")
    for e in errors:
        summary.append(f"could not be checked: {e}")
    sources = Sources(lines=cached_lines(read), display=display, locate=locate)
    return render_page(scenes, sources, title="gradwarden check: autograd timelines", summary=summary,
                       empty="No findings: every file checked is clean." if not errors else "No findings.")


_ORDER = {"confirmed": 0, "runtime-only": 0, "not reproduced": 1, "not reached": 2}


def debug_report(result: Any, *, target: str, display: Callable[[str], str] = str,
                 read: Read = read_file) -> str:
    """``gradwarden debug --report FILE``: the run's findings, what really happened first."""
    findings = sorted(getattr(result, "findings", ()) or (),
                      key=lambda f: (_ORDER.get(f.status, 3), f.filename or "", f.row or 0, f.code))
    scenes: List[Scene] = [scene_of_finding(f) for f in findings]
    counts: Mapping[str, int] = getattr(result, "counts", {}) or {}
    summary = [f"`{target}`: {getattr(result, 'message', '') or getattr(result, 'status', '')}"]
    run_facts = []
    if getattr(result, "device", ""):
        run_facts.append(f"on {result.device}")
    if getattr(result, "torch_version", ""):
        run_facts.append(f"torch {result.torch_version}")
    run_facts.append(f"{getattr(result, 'backward_calls', 0)} backward call(s)")
    run_facts.append(f"{getattr(result, 'duration', 0.0):.1f} s")
    summary.append(", ".join(run_facts) + ".")
    summary.append(f"{_plural(len(findings), 'finding')}: {counts.get('confirmed', 0)} confirmed, "
                   f"{counts.get('runtime-only', 0)} runtime-only, {counts.get('not reproduced', 0)} not reproduced, "
                   f"{counts.get('not reached', 0)} not reached.")
    message = str(getattr(result, "message", "") or "")
    if getattr(result, "exception", None) and result.exception[:60] not in message:
        summary.append(f"the program raised: {result.exception}")
    if getattr(result, "error", None):
        summary.append(f"error: {result.error}")
    if getattr(result, "static_error", None):
        summary.append(f"note: {result.static_error}")
    if getattr(result, "log_path", None):
        summary.append(f"program output: {result.log_path}")
    sources = Sources(lines=cached_lines(read), display=display)
    return render_page(scenes, sources, title=f"gradwarden debug: {os.path.basename(target) or target}",
                       summary=summary, empty="The run found nothing: no static diagnostic, no runtime finding.")


__all__ = ["check_report", "debug_report", "read_file"]
