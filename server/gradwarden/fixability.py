"""Which fix ``--fix`` (or ``--unsafe-fixes``) would apply to each reported diagnostic, with
its edits, for the reports: the ``[*]`` marks and the ``N fixable with --fix`` line of the text
output, ``fix.edits`` in JSON and ``fixes`` in SARIF (so that other tools can apply them).

The engine attaches fix *suggestions*; whether one can be realised on the file's text, and
with which edits, only the fixer (libcst) knows. This asks the fixer's own first pass
(:func:`gradwarden.fixes.plan`), on the same text the diagnostics were computed on, so that
applying the reported edits gives what ``--fix`` writes. Only files with fixable
suggestions are read and parsed (libcst is imported only then).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix

SourceOf = Callable[[str], Optional[str]]  # filename -> the text the diagnostics describe


@dataclass(frozen=True)
class Chosen:
    fix: Fix  # with its edits realised on the file's text
    safe: bool  # applied by --fix (else only by --unsafe-fixes)


@dataclass
class FixIndex:
    """Per diagnostic (by identity): the fix a fix run applies, and every fix realised."""

    chosen: Dict[int, Chosen] = field(default_factory=dict)
    realised: Dict[int, Tuple[Fix, ...]] = field(default_factory=dict)

    def choice(self, d: Diagnostic) -> Optional[Chosen]:
        return self.chosen.get(id(d))

    def fixes(self, d: Diagnostic) -> Tuple[Fix, ...]:
        return self.realised.get(id(d), d.fixes)

    def counts(self, diags: Sequence[Diagnostic]) -> Tuple[int, int]:
        """(fixable with --fix, more with --unsafe-fixes)."""
        safe = unsafe = 0
        for d in diags:
            c = self.choice(d)
            if c is None:
                continue
            if c.safe:
                safe += 1
            else:
                unsafe += 1
        return safe, unsafe


def fixable_line(index: FixIndex, diags: Sequence[Diagnostic]) -> str:
    """``[*] 2 fixable with --fix (1 more with --unsafe-fixes)``, or "" when none is."""
    safe, unsafe = index.counts(diags)
    if not safe and not unsafe:
        return ""
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
    return f"[*] {safe} fixable with --fix{more}"


def _with_edits(doc, fix: Fix, text_edits) -> Fix:
    return replace(fix, edits=tuple(doc.to_edit(e) for e in text_edits))


Analyze = Callable[[str, str], List[Diagnostic]]  # (text, filename) -> the check pipeline's diagnostics


def index_fixes(diags: Sequence[Diagnostic], source_of: SourceOf, analyze: Optional[Analyze] = None) -> FixIndex:
    """Each diagnostic's choice: its first fix that ``--fix`` would try and that can be
    realised here (else the one ``--unsafe-fixes`` would), with edits on the original text.

    With ``analyze`` (the JSON and SARIF reports), the edits are made exact: when the fix
    run of a file does more than its first pass (two fixes on the same lines wait for a
    second pass; a fix reveals another finding), the file's edits become the line hunks
    between the original and what ``--fix`` (then ``--unsafe-fixes``) writes, each hunk
    carried by the fixed diagnostic nearest to it, so that applying the reported edits gives
    the fix run's file exactly."""
    out = FixIndex()
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        if d.fixes:
            by_file.setdefault(d.filename, []).append(d)
    if not by_file:
        return out
    from gradwarden.fixes import choose_fix, doc_for, edits_for

    for filename, file_diags in by_file.items():
        source = source_of(filename)
        if source is None:
            continue
        doc = doc_for(source)
        if not doc.ok:
            continue
        for d in file_diags:
            for unsafe in (False, True):
                got = choose_fix(source, d, unsafe)
                if got is not None:
                    out.chosen[id(d)] = Chosen(_with_edits(doc, got[0], got[1]), got[0].safe)
                    break
            realised = []
            for fix in d.fixes:
                edits = edits_for(source, d, fix)
                realised.append(replace(fix, edits=tuple(edits or ())))
            out.realised[id(d)] = tuple(realised)
        if analyze is not None and not filename.lower().endswith(".ipynb"):
            _make_exact(out, source, filename, file_diags, analyze)
    return out


# --------------------------------------------------------------------------- exact edits
def _apply(source: str, edits: Sequence[Edit]) -> Optional[str]:
    from gradwarden.fixes import doc_for
    from gradwarden.fixes._doc import TextEdit, apply_text_edits

    doc = doc_for(source)
    try:
        return apply_text_edits(source, [TextEdit(doc.offset(e.span.row, e.span.column),
                                                  doc.offset(e.span.end_row, e.span.end_column), e.content)
                                         for e in edits])
    except ValueError:  # overlapping edits
        return None


def line_hunks(old: str, new: str) -> List[Edit]:
    """The changes from ``old`` to ``new`` as whole-line replacements (1-based, end exclusive)."""
    from gradwarden.engine.diagnostic import Span

    a, b = old.splitlines(True), new.splitlines(True)
    out: List[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(Edit(Span(i1 + 1, 1, i2 + 1, 1), "".join(b[j1:j2])))
    return out


def _nearest(hunk: Edit, candidates: Sequence[Diagnostic], index: FixIndex) -> Diagnostic:
    """The diagnostic a hunk belongs to: one whose own edits touch the hunk's rows, else the
    one whose row is nearest."""
    lo, hi = hunk.span.row, max(hunk.span.row, hunk.span.end_row - 1)

    def distance(d: Diagnostic) -> Tuple[int, int]:
        choice = index.choice(d)
        rows = [(e.span.row, e.span.end_row) for e in (choice.fix.edits if choice else ())] or \
            [(d.span.row, d.span.end_row)]
        best = min(0 if (r0 <= hi and r1 >= lo) else min(abs(r0 - hi), abs(r1 - lo)) for r0, r1 in rows)
        return best, d.span.row

    return min(candidates, key=distance)


def _make_exact(out: FixIndex, source: str, filename: str, diags: List[Diagnostic], analyze: Analyze) -> None:
    from gradwarden.fixes.apply import fix_until_stable

    chosen = [d for d in diags if out.choice(d) is not None]
    if not chosen:
        return
    safe_ds = [d for d in chosen if out.choice(d).safe]  # type: ignore[union-attr]
    unsafe_ds = [d for d in chosen if not out.choice(d).safe]  # type: ignore[union-attr]

    # The --fix and --unsafe-fixes runs mostly visit the same texts (the same first pass when
    # no unsafe fix is chosen first): each text is analysed once.
    analysed: Dict[str, List[Diagnostic]] = {}

    def analyse(text: str) -> List[Diagnostic]:
        if text not in analysed:
            analysed[text] = analyze(text, filename)
        return list(analysed[text])

    def run(unsafe: bool) -> str:
        return fix_until_stable(source, analyse, unsafe=unsafe, diagnostics=list(diags)).source

    want_safe = run(False) if safe_ds else source
    want_all = run(True)
    safe_edits = [e for d in safe_ds for e in out.choice(d).fix.edits]  # type: ignore[union-attr]
    all_edits = safe_edits + [e for d in unsafe_ds for e in out.choice(d).fix.edits]  # type: ignore[union-attr]
    if _apply(source, safe_edits) == want_safe and _apply(source, all_edits) == want_all:
        return  # the first pass is the whole fix run: each diagnostic keeps its own edits
    safe_hunks = line_hunks(source, want_safe)
    all_hunks = line_hunks(source, want_all)
    unsafe_hunks = [h for h in all_hunks if h not in safe_hunks]
    assigned: Dict[int, List[Edit]] = {id(d): [] for d in chosen}
    for hunks, owners in ((safe_hunks, safe_ds or chosen), (unsafe_hunks, unsafe_ds or chosen)):
        for h in hunks:
            assigned[id(_nearest(h, owners, out))].append(h)
    for d in chosen:
        choice = out.choice(d)
        out.chosen[id(d)] = Chosen(replace(choice.fix, edits=tuple(assigned[id(d)])), choice.safe)  # type: ignore[union-attr]


def edits_of(choice: Optional[Chosen]) -> Tuple[Edit, ...]:
    return choice.fix.edits if choice is not None else ()
