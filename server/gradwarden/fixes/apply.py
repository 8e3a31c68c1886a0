"""Applying fixes to a file: passes to a fixed point, checked by re-analysis, and written
back atomically in the file's own encoding, BOM and newline style.

Each pass takes the current diagnostics, picks one realisable fix per diagnostic (the
preferred one first; only safe ones unless ``unsafe``), applies those that do not touch the
same lines (the others wait for the next pass), then re-analyses. A fix whose diagnostic is
still there afterwards is reverted and never tried again on that diagnostic (the next
candidate fix is tried instead), so a fix that does not work never piles up and a second
run changes nothing. The loop stops when a pass applies nothing or after ``max_passes``.
"""
from __future__ import annotations

import codecs
import difflib
import io
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Fix
from gradwarden.fixes import doc_for, plan
from gradwarden.fixes._doc import TextEdit, apply_text_edits
from gradwarden.fixes._syntax import compiles_after

Analyze = Callable[[str], List[Diagnostic]]
MAX_PASSES = 10


@dataclass
class AppliedFix:
    code: str
    kind: str
    title: str
    safe: bool
    row: int  # row of the diagnostic, in the source the fix was applied to
    # which of the diagnostics the run started from this fix fixed (their index), None for one
    # that an earlier fix revealed; the fix itself, its pass (0: the first) and its edits on
    # that pass's text
    origin: Optional[int] = None
    fix: Optional[Fix] = None
    pass_index: int = 0
    edits: Tuple[TextEdit, ...] = ()


@dataclass
class FixOutcome:
    source: str  # the fixed text
    applied: List[AppliedFix] = field(default_factory=list)
    initial: List[Diagnostic] = field(default_factory=list)  # the diagnostics the run started from
    remaining: List[Diagnostic] = field(default_factory=list)  # diagnostics of the fixed text
    passes: int = 0

    @property
    def count(self) -> int:
        return len(self.applied)

    def fixed(self) -> Dict[int, AppliedFix]:
        """id of each diagnostic the run started from -> the fix applied to it."""
        return {id(self.initial[a.origin]): a for a in self.applied if a.origin is not None}


def _key(source: str, diag: Diagnostic, fix: Fix) -> Tuple[str, str, str, str]:
    doc = doc_for(source)
    line = doc.row_text(diag.span.row).strip()
    return diag.code, line, fix.kind, fix.param("mode")


def _map_offset(offset: int, edits: Sequence[TextEdit]) -> int:
    """Where ``offset`` of the old text is in the text with ``edits`` applied."""
    shift = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start == e.end:  # an insertion at or before the offset pushes it right
            if e.start <= offset:
                shift += len(e.content)
        elif e.end <= offset:
            shift += len(e.content) - (e.end - e.start)
        elif e.start <= offset:
            return e.start + shift  # inside a replaced range: its start
    return offset + shift


def _inserted_rows(new: str, edits: Sequence[TextEdit], only: Sequence[TextEdit]) -> Set[int]:
    """Rows of the new text (``edits`` applied) that hold the text inserted by the edits in
    ``only`` (moved statements...)."""
    nd = doc_for(new)
    rows: Set[int] = set()
    shift = 0
    mine = {id(e) for e in only}
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        start = e.start + shift
        if id(e) in mine and e.content.strip():
            r0, _ = nd.position(start)
            r1, _ = nd.position(start + len(e.content.rstrip("\r\n")))
            rows.update(range(r0, r1 + 1))
        shift += len(e.content) - (e.end - e.start)
    return rows


def _still_there(old: str, new: str, diag: Diagnostic, edits: Sequence[TextEdit],
                 new_diags: Sequence[Diagnostic], inserted: Set[int]) -> bool:
    """Is ``diag`` reported again after the edits: same code at its (mapped) row, or on a
    statement the edits moved (same text, on a row the edits inserted)?"""
    od, nd = doc_for(old), doc_for(new)
    row, _ = nd.position(_map_offset(od.offset(diag.span.row, diag.span.column), edits))
    text = od.row_text(diag.span.row).strip()
    for d in new_diags:
        if d.code != diag.code:
            continue
        if d.span.row == row:
            return True
        if d.span.row in inserted and nd.row_text(d.span.row).strip() == text:
            return True
    return False


def fix_until_stable(source: str, analyze: Analyze, *, unsafe: bool = False, max_passes: int = MAX_PASSES,
                     diagnostics: Optional[List[Diagnostic]] = None) -> FixOutcome:
    """Fix ``source`` to a fixed point. ``analyze(text)`` returns the diagnostics to fix (the
    CLI passes the full pipeline: engine, noqa, rule selection)."""
    current = source
    diags = list(diagnostics) if diagnostics is not None else analyze(current)
    out = FixOutcome(source, initial=list(diags))
    # each current diagnostic that is one the run started from -> that one's index (followed
    # through the passes: same code, at the row the edits moved it to)
    origin: Dict[int, int] = {id(d): i for i, d in enumerate(diags)}
    failed: Set[Tuple[str, str, str, str]] = set()
    passes = 0
    for pass_index in range(max_passes):
        passes += 1

        def skip(d: Diagnostic, f: Fix, _src: str = current) -> bool:
            return _key(_src, d, f) in failed

        chosen = plan(current, diags, unsafe, skip)
        if not chosen:
            break
        # apply, check, and revert what did not work (then re-check the rest)
        accepted = list(chosen)
        new_text, new_diags = current, diags
        while accepted:
            edits = [e for _, _, es in accepted for e in es]
            try:
                new_text = apply_text_edits(current, edits)
                if not compiles_after(doc_for(current), edits, new_text):
                    raise SyntaxError("the fixes of this pass do not compile together")
            except (SyntaxError, ValueError):
                bad = accepted.pop()
                failed.add(_key(current, bad[0], bad[1]))
                continue
            try:
                new_diags = analyze(new_text)
            except Exception:  # noqa: BLE001 - the engine failed on the fixed text: drop the pass
                for c in accepted:
                    failed.add(_key(current, c[0], c[1]))
                accepted = []
                break
            broken = [c for c in accepted
                      if _still_there(current, new_text, c[0], edits, new_diags, _inserted_rows(new_text, edits, c[2]))]
            if _parse_error(new_diags) and not _parse_error(diags):
                broken = accepted[:]
            if not broken:
                break
            for c in broken:
                failed.add(_key(current, c[0], c[1]))
            accepted = [c for c in accepted if c not in broken]
        if not accepted:
            continue  # next pass tries the next candidates
        for d, f, es in accepted:
            out.applied.append(AppliedFix(d.code, f.kind, f.title, f.safe, d.span.row, origin.get(id(d)), f,
                                          pass_index, tuple(es)))
        origin = _follow(current, new_text, edits, diags, new_diags, origin, {id(c[0]) for c in accepted})
        # the failed keys name the diagnostic by its line's text, so they hold on the new text too
        current, diags = new_text, new_diags
    out.source = current
    out.remaining = diags
    out.passes = passes
    return out


def _follow(old: str, new: str, edits: Sequence[TextEdit], old_diags: Sequence[Diagnostic],
            new_diags: Sequence[Diagnostic], origin: Dict[int, int], fixed: Set[int]) -> Dict[int, int]:
    """``origin`` carried over to the diagnostics of the fixed text: a diagnostic that was not
    fixed is the one of the same code at the position the edits moved it to."""
    od, nd = doc_for(old), doc_for(new)
    by_place: Dict[Tuple[str, int], List[Diagnostic]] = {}
    for d in new_diags:
        by_place.setdefault((d.code, d.span.row), []).append(d)
    out: Dict[int, int] = {}
    for d in old_diags:
        o = origin.get(id(d))
        if o is None or id(d) in fixed:
            continue
        row, col = nd.position(_map_offset(od.offset(d.span.row, d.span.column), edits))
        here = [x for x in by_place.get((d.code, row), ()) if id(x) not in out]
        if here:
            best = min(here, key=lambda x: abs(x.span.column - col))
            out[id(best)] = o
    return out


def _parse_error(diags: Sequence[Diagnostic]) -> bool:
    return any(d.code == "GW001" for d in diags)


# --------------------------------------------------------------------------- files
@dataclass
class Decoded:
    text: str  # newlines as in the file
    encoding: str
    bom: bool


def decode(data: bytes) -> Decoded:
    """Decode like Python does (PEP 263 cookie, UTF-8 BOM). Raises UnicodeDecodeError /
    SyntaxError for undecodable content."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    bom = data.startswith(codecs.BOM_UTF8)
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    norm = "utf-8" if encoding == "utf-8-sig" else encoding
    return Decoded(text, norm, bom)


def encode(dec: Decoded, text: str) -> bytes:
    data = text.encode(dec.encoding)
    if dec.bom:
        data = codecs.BOM_UTF8 + data
    return data


def write_atomic(path: str, data: bytes) -> None:
    """Rewrite the user's file ``path`` with ``data`` (a temporary file in the same folder and
    a rename; its owner, group and mode kept). Raises ``atomicio.NotWritable`` (nothing
    written) when the invoking user may not write it, ``OSError`` otherwise."""
    from gradwarden.atomicio import replace_user_file

    replace_user_file(path, data, sync=True)


def unified_diff(old: str, new: str, filename: str) -> str:
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, fromfile=f"a/{filename}", tofile=f"b/{filename}"))
    out: List[str] = []
    for line in lines:
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def counts_by_code(applied: Sequence[AppliedFix]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for a in applied:
        out[a.code] = out.get(a.code, 0) + 1
    return out
