"""Quick fixes: the engine attaches fix suggestions to every diagnostic as data
(:class:`~gradwarden.engine.diagnostic.Fix`: kind, title, safety, target span, params); this
package *realises* them as minimal text edits, computed with libcst on the current source.

Pure API (no I/O, never raises on odd input), used by the CLI (``check --fix``) and the
language server (code actions):

- :func:`edits_for` ``(source, diagnostic, fix) -> list[Edit] | None`` — the edits of one fix,
  or None when the fix cannot be realised on this source (the assumption it needs does not
  hold, e.g. another alias of the tensor is read later so an out-of-place rewrite would
  change what that alias sees);
- :func:`fix_source` ``(source, diagnostics, unsafe) -> (new_source, applied)`` — one pass:
  the chosen fix of every diagnostic, overlapping ones deferred;
- :func:`gradwarden.fixes.apply.fix_until_stable` — passes until nothing changes, each one
  re-analysed, every applied fix checked to remove its diagnostic (reverted otherwise).

One module per fix kind (``clone``, ``detach``, ``retain_graph``, ``augassign_to_binop``,
``inplace_to_outofplace``, ``no_grad``, ``move_step``,
``inplace_false``, ``recompute``; ``functions``: ``complete_grads`` and ``static_function``
for custom autograd.Function definitions); each registers a realiser with :func:`realiser`.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix
from gradwarden.fixes.registry import REALISERS, FixContext, Realiser, parse_span, realiser, span_param

__all__ = ["REALISERS", "FixContext", "Realiser", "parse_span", "realiser", "span_param", "allowed",
           "candidate_fixes", "choose_fix", "doc_for", "edits_for", "fix_source", "plan", "text_edits_for"]

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.fixes._doc import Doc, TextEdit

# ``_doc`` imports libcst (about half a second): it is imported when a fix is realised, not
# when the package is (``gradwarden check`` imports ``gradwarden.fixes.cli`` for its options).
_DOC_NAMES = ("CannotFix", "Doc", "TextEdit", "apply_text_edits", "merge_edits")


def __getattr__(name: str) -> Any:  # PEP 562: ``from gradwarden.fixes import Doc`` still works
    if name in _DOC_NAMES:
        from gradwarden.fixes import _doc

        return getattr(_doc, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# --------------------------------------------------------------------------- parse cache
_CACHE: "OrderedDict[str, Doc]" = OrderedDict()
_CACHE_SIZE = 8


def doc_for(source: str) -> Doc:
    doc = _CACHE.get(source)
    if doc is None:
        from gradwarden.fixes._doc import Doc

        doc = Doc(source)
        _CACHE[source] = doc
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(source)
    return doc


def _load_realisers() -> None:
    if REALISERS:
        return
    # Importing registers them.
    from gradwarden.fixes import (  # noqa: F401
        augassign, clone, detach, flow, functions, inplace_false, move_step, no_grad, outofplace,
        recompute, retain_graph, reveal_write,
    )


# --------------------------------------------------------------------------- API
def text_edits_for(source: str, diagnostic: Diagnostic, fix: Fix) -> Optional[List[TextEdit]]:
    """Like :func:`edits_for`, as offsets into ``source`` (realised once per text, diagnostic
    and fix: realisers are pure)."""
    try:
        _load_realisers()
        fn = REALISERS.get(fix.kind)
        if fn is None:
            return None
        doc = doc_for(source)
        if not doc.ok:
            return None
    except Exception:  # noqa: BLE001 - a realiser bug must never break the caller
        return None
    key = ("edits", fn, diagnostic, fix)  # the same fix is realised several times per report
    try:
        if key not in doc.memo:
            doc.memo[key] = _realise(fn, doc, source, diagnostic, fix)
        edits = doc.memo[key]
    except TypeError:  # a diagnostic built with unhashable parts (a list): realised each time
        edits = _realise(fn, doc, source, diagnostic, fix)
    return None if edits is None else list(edits)


def _realise(fn: Realiser, doc: "Doc", source: str, diagnostic: Diagnostic, fix: Fix) -> Optional[Tuple["TextEdit", ...]]:
    from gradwarden.fixes._doc import CannotFix, apply_text_edits, merge_edits
    from gradwarden.fixes._syntax import compiles_after

    try:
        edits = merge_edits(fn(FixContext(doc, diagnostic, fix)))
        if not edits:
            return None
        new = apply_text_edits(source, edits)
        if new == source or not compiles_after(doc, edits, new, diagnostic.filename or "<fix>"):
            return None
        return tuple(edits)
    except CannotFix:
        return None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    except Exception:  # noqa: BLE001 - a realiser bug must never break the caller
        return None


def edits_for(source: str, diagnostic: Diagnostic, fix: Fix) -> Optional[List[Edit]]:
    """The minimal edits (1-based character spans, end exclusive) that apply ``fix`` to
    ``source``, or None when it cannot be realised here. Pure; never raises."""
    edits = text_edits_for(source, diagnostic, fix)
    if edits is None:
        return None
    doc = doc_for(source)
    return [doc.to_edit(e) for e in edits]


def allowed(fix: Fix, unsafe: bool) -> bool:
    return fix.safe or unsafe


def candidate_fixes(diagnostic: Diagnostic, unsafe: bool) -> List[Fix]:
    """The fixes to try, in order: the preferred one, then the others as listed."""
    fixes = list(diagnostic.fixes)
    fixes.sort(key=lambda f: 0 if f.preferred else 1)
    return [f for f in fixes if allowed(f, unsafe)]


def choose_fix(source: str, diagnostic: Diagnostic, unsafe: bool,
               skip: Callable[[Diagnostic, Fix], bool] = lambda d, f: False
               ) -> Optional[Tuple[Fix, List[TextEdit]]]:
    """The first allowed fix of ``diagnostic`` that can be realised (and is not skipped)."""
    for fix in candidate_fixes(diagnostic, unsafe):
        if skip(diagnostic, fix):
            continue
        edits = text_edits_for(source, diagnostic, fix)
        if edits is not None:
            return fix, edits
    return None


def _rows(doc: Doc, edits: Sequence[TextEdit]) -> set:
    rows = set()
    for e in edits:
        r0, _ = doc.position(e.start)
        r1, c1 = doc.position(e.end)
        if e.end > e.start and c1 == 1 and r1 > r0:
            r1 -= 1  # a deletion up to the start of the next line does not touch that line
        rows.update(range(r0, r1 + 1))
    return rows


def plan(source: str, diagnostics: Sequence[Diagnostic], unsafe: bool,
         skip: Callable[[Diagnostic, Fix], bool] = lambda d, f: False
         ) -> List[Tuple[Diagnostic, Fix, List[TextEdit]]]:
    """The fixes of one pass: one per diagnostic, none touching a row another one touches
    (those wait for the next pass)."""
    from gradwarden.fixes._doc import apply_text_edits

    try:
        doc = doc_for(source)
        chosen: List[Tuple[Diagnostic, Fix, List[TextEdit]]] = []
        taken: set = set()
        for diag in sorted(diagnostics, key=lambda d: (d.span.row, d.span.column, d.code)):
            got = choose_fix(source, diag, unsafe, skip)
            if got is None:
                continue
            fix, edits = got
            rows = _rows(doc, edits)
            if rows & taken:
                continue
            try:
                apply_text_edits(source, [e for _, _, es in chosen for e in es] + list(edits))
            except ValueError:
                continue
            taken |= rows
            chosen.append((diag, fix, edits))
        return chosen
    except Exception:  # noqa: BLE001
        return []


def fix_source(source: str, diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> Tuple[str, int]:
    """Apply, in one pass, the chosen fix of each diagnostic (safe fixes only unless
    ``unsafe``); fixes that would touch the same lines as an earlier one are left for a later
    pass. Returns (new source, number of fixes applied). Pure; never raises."""
    from gradwarden.fixes._doc import apply_text_edits
    from gradwarden.fixes._syntax import compiles_after

    chosen = plan(source, diagnostics, unsafe)
    if not chosen:
        return source, 0
    try:
        edits = [e for _, _, es in chosen for e in es]
        new = apply_text_edits(source, edits)
        if not compiles_after(doc_for(source), edits, new):
            return source, 0
    except Exception:  # noqa: BLE001
        return source, 0
    return new, len(chosen)


__all__ = [
    "CannotFix", "Doc", "FixContext", "REALISERS", "TextEdit", "candidate_fixes", "choose_fix", "doc_for",
    "edits_for", "fix_source", "parse_span", "plan", "realiser", "span_param", "text_edits_for",
]
