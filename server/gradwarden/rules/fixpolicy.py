"""Which fix suggestions a finding may carry, given how sure the analysis is of it.

A fix changes code that runs. A finding of severity error or warning is proven on the code at
hand (it raises, or the gradients are silently wrong), so its fix is meant to change what the
program does there. An *information* finding is not proven: on the correct program it may well
be (the FGSM tutorial's ``data = data.to(device); data.requires_grad = True``, a running total
``x += emb(t)`` inside one forward, an ``out=`` op whose inputs need no grad), the fix must leave
the program doing exactly what it did. So an information finding carries

- only fixes of a *preserving* kind (below): applied where the hazard is not real, the program
  computes the same values and gradients (and a realiser refuses the fix where even that does
  not hold: another alias reads the written tensor afterwards, ...);
- and never as ``safe``: ``--fix`` leaves information findings alone; ``--unsafe-fixes`` or the
  editor's explicit choice applies them.

Some kinds are never safe, whatever the severity: ``complete_grads`` (GW307) changes the tuple a
custom ``backward`` returns, and real libraries build that tuple in ways the analysis may count
wrongly (``Cls._helper(...)``, ``(None,) * 3 + Fn.apply(...)``): its realiser offers it only when
the syntax fixes the count (fixes/functions.py), and it is never applied by a plain ``--fix``.

``tests/test_fix_oracle.py`` holds this to execution: every fix offered on a correct program of
the corpora and the random-program generator is applied, and the program must print and exit
the same as before.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, List

from gradwarden.engine.diagnostic import Fix, Severity

# (kind, mode) pairs (mode "" for kinds without modes) that keep a correct program's values and
# gradients: the rewrite only stops an in-place write from reaching memory that nothing but the
# written name reads (``x = x.clone()`` before the write, ``x = x.add(y)``, ``y = y + 1``,
# ``inplace=False``), keeps a graph alive a little longer (``retain_graph=True``), or builds the
# same leaf in another order (``leaf_last``: ``torch.randn(3).requires_grad_()``; the RNG draws
# the same numbers).
PRESERVING = frozenset({
    ("clone", "before_write"),
    ("clone", "grad_output"),
    ("augassign_to_binop", ""),
    ("inplace_to_outofplace", ""),
    ("inplace_false", ""),
    ("retain_graph", ""),
    ("leaf_last", ""),
})

# Kinds never applied by a plain ``--fix`` (see the module docstring).
NEVER_SAFE = frozenset({"complete_grads"})


def preserving(fix: Fix) -> bool:
    mode = fix.param("mode") if fix.kind == "clone" else ""
    return (fix.kind, mode) in PRESERVING


def vet_fixes(severity: Severity, fixes: Iterable[Fix]) -> List[Fix]:
    """The fixes a finding of ``severity`` (the engine's, before any user override: a user who
    raises a rule's severity does not make its finding proven) may carry, in order."""
    out: List[Fix] = []
    unproven = severity >= Severity.INFORMATION
    for fix in fixes:
        if unproven and not preserving(fix):
            continue
        if fix.safe and (unproven or fix.kind in NEVER_SAFE):
            fix = replace(fix, safe=False)
        out.append(fix)
    if out and not any(f.preferred for f in out):
        out[0] = replace(out[0], preferred=True)
    return out
