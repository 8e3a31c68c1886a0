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


def index_fixes(diags: Sequence[Diagnostic], source_of: SourceOf) -> FixIndex:
    out = FixIndex()
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        if d.fixes:
            by_file.setdefault(d.filename, []).append(d)
    if not by_file:
        return out
    from gradwarden.fixes import doc_for, edits_for, plan

    for filename, file_diags in by_file.items():
        source = source_of(filename)
        if source is None:
            continue
        doc = doc_for(source)
        if not doc.ok:
            continue
        for unsafe in (False, True):
            for d, fix, text_edits in plan(source, file_diags, unsafe):
                if id(d) not in out.chosen:
                    out.chosen[id(d)] = Chosen(_with_edits(doc, fix, text_edits), fix.safe)
        for d in file_diags:
            realised = []
            for fix in d.fixes:
                edits = edits_for(source, d, fix)
                realised.append(replace(fix, edits=tuple(edits)) if edits else replace(fix, edits=()))
            out.realised[id(d)] = tuple(realised)
    return out


def edits_of(choice: Optional[Chosen]) -> Tuple[Edit, ...]:
    return choice.fix.edits if choice is not None else ()
