"""Which fix ``--fix`` (or ``--unsafe-fixes``) applies to each reported diagnostic, for the
reports: the ``[*]`` marks and the ``N fixable with --fix`` line of the text output, ``fix.edits``
in JSON and ``fixes`` in SARIF (so that other tools can apply them).

The engine attaches fix *suggestions*; whether one is applied only the fix run knows: the fixer
(libcst) may not be able to realise it on this text, and a realised fix that does not remove
its finding (checked by analysing the fixed text) is reverted. So a diagnostic is marked
fixable only when the fix run itself fixes it: :func:`index_fixes` runs ``--fix``'s loop
(:func:`gradwarden.fixes.apply.fix_until_stable`) on the text the diagnostics were computed on,
then ``--unsafe-fixes``'s where a finding left over has an unsafe fix, and reads which of the
reported diagnostics each run fixed. ``[*] N fixable`` is then what ``--fix`` applies, and after
``--fix`` nothing it could fix is left marked. Only files with fix suggestions are read, parsed
and run (libcst is imported only then); the result cache keeps the outcome per file
(``cache.ResultCache.index_fixes``).

Lazily: the text output needs only the marks (``edits=False``); the edits of each fix (and
every suggestion's own realisation, JSON's ``fixes``) are computed only for JSON and SARIF.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix

SourceOf = Callable[[str], Optional[str]]  # filename -> the text the diagnostics describe


@dataclass(frozen=True)
class Chosen:
    fix: Fix  # with its edits realised on the file's text (none when the report asked for no edits)
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
    """``[*] 2 fixable with --fix (1 more with --unsafe-fixes)``, ``[*] 1 fixable with --fix
    --unsafe-fixes``, or "" when none is."""
    safe, unsafe = index.counts(diags)
    if not safe and not unsafe:
        return ""
    if not safe:
        return f"[*] {unsafe} fixable with --fix --unsafe-fixes"
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
    return f"[*] {safe} fixable with --fix{more}"


Analyze = Callable[[str, str], List[Diagnostic]]  # (text, filename) -> the check pipeline's diagnostics


def index_fixes(diags: Sequence[Diagnostic], source_of: SourceOf, analyze: Analyze, edits: bool = True) -> FixIndex:
    """Each diagnostic that a fix run fixes, with the fix applied to it: the run of ``--fix``
    first (``safe``), then, for what it leaves, the run of ``--unsafe-fixes``.

    With ``edits`` (JSON, SARIF), each such fix carries edits on the original text such that
    applying the safe ones gives what ``--fix`` writes and applying all of them what
    ``--fix --unsafe-fixes`` writes: a fix's own edits when each run is a single pass, else
    the line hunks between the original and the run's result, each carried by a fixed
    diagnostic whose fix touched it; and ``realised``: every suggestion's own edits."""
    out = FixIndex()
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diags:
        if d.fixes:
            by_file.setdefault(d.filename, []).append(d)
    if not by_file:
        return out
    from gradwarden.fixes import doc_for

    for filename, file_diags in by_file.items():
        source = source_of(filename)
        if source is None or not doc_for(source).ok:
            continue
        if filename.lower().endswith(".ipynb"):
            _first_pass(out, source, file_diags, edits)  # cells are fixed one by one (notebook.py)
        else:
            _index_file(out, source, filename, file_diags, analyze, edits)
        if edits:
            _realise_all(out, source, file_diags)
    return out


def _realise_all(out: FixIndex, source: str, diags: Sequence[Diagnostic]) -> None:
    from gradwarden.fixes import edits_for

    for d in diags:
        out.realised[id(d)] = tuple(replace(f, edits=tuple(edits_for(source, d, f) or ())) for f in d.fixes)


def _first_pass(out: FixIndex, source: str, diags: Sequence[Diagnostic], edits: bool) -> None:
    """Notebooks: each diagnostic's first fix that can be realised (their fix run goes cell by
    cell, gradwarden.notebook)."""
    from gradwarden.fixes import choose_fix, doc_for

    doc = doc_for(source)
    for d in diags:
        for unsafe in (False, True):
            got = choose_fix(source, d, unsafe)
            if got is not None:
                fix = replace(got[0], edits=tuple(doc.to_edit(e) for e in got[1]) if edits else ())
                out.chosen[id(d)] = Chosen(fix, got[0].safe)
                break


def _index_file(out: FixIndex, source: str, filename: str, diags: List[Diagnostic], analyze: Analyze,
                edits: bool) -> None:
    from gradwarden.fixes.apply import fix_until_stable

    # The --fix and --unsafe-fixes runs mostly visit the same texts: each is analysed once.
    analysed: Dict[str, List[Diagnostic]] = {}

    def analyse(text: str) -> List[Diagnostic]:
        if text not in analysed:
            analysed[text] = analyze(text, filename)
        return list(analysed[text])

    safe_run = fix_until_stable(source, analyse, unsafe=False, diagnostics=list(diags)) \
        if any(f.safe for d in diags for f in d.fixes) else None
    safe_fixed = safe_run.fixed() if safe_run is not None else {}
    # --unsafe-fixes's run: needed for the count when a finding --fix leaves has an unsafe fix;
    # for exact edits whenever any fix is unsafe (it may pick an unsafe fix first)
    left = [d for d in diags if id(d) not in safe_fixed and any(not f.safe for f in d.fixes)]
    need_all = left or (edits and any(not f.safe for d in diags for f in d.fixes))
    all_run = fix_until_stable(source, analyse, unsafe=True, diagnostics=list(diags)) if need_all else None
    all_fixed = all_run.fixed() if all_run is not None else {}
    for d in diags:
        a = safe_fixed.get(id(d))
        safe = a is not None
        a = a or all_fixed.get(id(d))
        if a is not None and a.fix is not None:
            out.chosen[id(d)] = Chosen(replace(a.fix, edits=()), safe)
    if edits and out.chosen:
        _exact_edits(out, source, diags, safe_run, all_run)


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
    """The changes from ``old`` to ``new`` as whole-line replacements (1-based, end exclusive);
    a block of lines replaced one for one is split into one hunk per line."""
    from gradwarden.engine.diagnostic import Span

    a, b = old.splitlines(True), new.splitlines(True)
    out: List[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            out += [Edit(Span(i1 + k + 1, 1, i1 + k + 2, 1), b[j1 + k]) for k in range(i2 - i1)]
        elif tag != "equal":
            out.append(Edit(Span(i1 + 1, 1, i2 + 1, 1), "".join(b[j1:j2])))
    return out


def _exact_edits(out: FixIndex, source: str, diags: Sequence[Diagnostic], safe_run, all_run) -> None:
    """Give each fixed diagnostic's fix its edits on ``source`` (see :func:`index_fixes`)."""
    from gradwarden.fixes import doc_for

    doc = doc_for(source)
    fixed = [d for d in diags if out.choice(d) is not None]
    safe_ds = [d for d in fixed if out.choice(d).safe]  # type: ignore[union-attr]
    unsafe_ds = [d for d in fixed if not out.choice(d).safe]  # type: ignore[union-attr]
    want_safe = safe_run.source if safe_run is not None else source
    want_all = all_run.source if all_run is not None else want_safe
    applied = {**(all_run.fixed() if all_run is not None else {}), **(safe_run.fixed() if safe_run is not None else {})}
    own: Dict[int, Tuple[Edit, ...]] = {}
    for d in fixed:
        a = applied[id(d)]
        own[id(d)] = tuple(doc.to_edit(e) for e in a.edits) if a.pass_index == 0 else ()
    safe_edits = [e for d in safe_ds for e in own[id(d)]]
    all_edits = safe_edits + [e for d in unsafe_ds for e in own[id(d)]]
    if all(own[id(d)] for d in fixed) and _apply(source, safe_edits) == want_safe and \
            _apply(source, all_edits) == want_all:
        for d in fixed:  # each run is its first pass: each diagnostic keeps its own edits
            out.chosen[id(d)] = Chosen(replace(out.chosen[id(d)].fix, edits=own[id(d)]), out.chosen[id(d)].safe)
        return
    safe_hunks = line_hunks(source, want_safe)
    unsafe_hunks = [h for h in line_hunks(source, want_all) if h not in safe_hunks]
    assigned: Dict[int, List[Edit]] = {id(d): [] for d in fixed}

    def rows(d: Diagnostic) -> List[Tuple[int, int]]:
        return [(e.span.row, e.span.end_row) for e in own[id(d)]] or [(d.span.row, d.span.end_row)]

    for hunks, owners in ((safe_hunks, safe_ds or fixed), (unsafe_hunks, unsafe_ds or fixed)):
        _assign(hunks, owners, rows, assigned)
    for d in fixed:
        choice = out.chosen[id(d)]
        if assigned[id(d)]:
            out.chosen[id(d)] = Chosen(replace(choice.fix, edits=tuple(assigned[id(d)])), choice.safe)
        else:  # its change lies in the same lines as another fix's: that one carries it
            del out.chosen[id(d)]


def _distance(hunk: Edit, spans: List[Tuple[int, int]]) -> int:
    lo, hi = hunk.span.row, max(hunk.span.row, hunk.span.end_row - 1)
    return min(0 if (r0 <= hi and r1 >= lo) else min(abs(r0 - hi), abs(r1 - lo)) for r0, r1 in spans)


def _assign(hunks: Sequence[Edit], owners: Sequence[Diagnostic], rows, assigned: Dict[int, List[Edit]]) -> None:
    """Each hunk to the owner whose edits (or position) lie nearest to it; first every owner
    gets the nearest hunk nobody has yet, so that no fixed diagnostic is left without edits
    while there are hunks enough."""
    free = list(range(len(hunks)))
    order = sorted(owners, key=lambda d: min((_distance(h, rows(d)) for h in hunks), default=0))
    for d in order:
        if not free:
            break
        best = min(free, key=lambda i: (_distance(hunks[i], rows(d)), i))
        assigned[id(d)].append(hunks[best])
        free.remove(best)
    for i in free:
        d = min(owners, key=lambda d: (_distance(hunks[i], rows(d)), d.span.row))
        assigned[id(d)].append(hunks[i])
    for d in owners:
        assigned[id(d)].sort(key=lambda e: (e.span.row, e.span.column))


def edits_of(choice: Optional[Chosen]) -> Tuple[Edit, ...]:
    return choice.fix.edits if choice is not None else ()
