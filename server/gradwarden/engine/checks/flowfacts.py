"""The facts gradient-flow checks reason with, as small values (no interpreter here).

- ``Cut``: why a tensor certainly does not require grad, and where its gradient path was cut
  (``no_grad``, ``.detach()``, ``.item()`` re-wrapped by ``torch.tensor``, a non-differentiable
  op, an output a custom Function marked non-differentiable (``marked``), a frozen parameter),
  or ``DATA`` when it never required grad (a factory without
  ``requires_grad=True``). A tensor without a Cut is *unknown*: the checks stay silent on it.
  ``sure=False`` marks a cut that something unknown (an argument the analysis cannot see
  into) may have bypassed: findings built on it are information, not errors.
- ``NumberV`` (a value of the abstract state, engine/state/model.py): a Python number, never a
  tensor, so it carries no graph; its ``cut`` is one of these when it holds a tensor's *values*
  (``item``/``tolist``/``float(t)``), i.e. when a gradient path ends there.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.model import ConstV, NumberV, State

# kinds of cut, most telling first (the one a combination keeps)
KINDS = ("nograd", "detach", "sample", "rewrap", "item", "data_attr", "marked", "nondiff", "none_grad", "checkpoint", "frozen",
         "data")


@dataclass(frozen=True)
class Cut:
    kind: str
    span: Optional[Span] = None
    what: str = ""  # the call that cut it, for messages ("`.detach()`", "`argmax`")
    sure: bool = True
    stack: Tuple[Span, ...] = ()  # the call sites that led to the cut (outermost first)
    region: Optional[Span] = None  # no_grad: the `with` / decorator / set_grad_enabled that disabled grad
    origin: Optional["Cut"] = None  # rewrap: where the value left autograd (`.item()` ...)
    # no_grad: the region is a helper's decorator and the helper cut a graph-carrying argument it
    # was handed (a differentiable transform run under no_grad): the decorator is the fix
    at_region: bool = False
    # a value computed from frozen parameters and from values cut another way (a detached input)
    # keeps the most telling cut as its kind and the latest freeze here: when nothing else in a loss
    # requires grad, the freeze is what makes its backward raise (report_no_grad)
    # (not part of the cut's identity: tables keyed by the cut find it with or without)
    freeze: Optional["Cut"] = field(default=None, compare=False)
    flag_arg: bool = False  # frozen: the flag is a helper's argument (`set_requires_grad(net, False)`)
    # made inside a forward hook (`acts[k] = o.data`); a value computed from such a copy and from
    # values cut another way (a teacher's no_grad features) keeps the copy's cut in ``hooked``: the
    # hook's copy is reported wherever a loss uses it (engine/checks/reach.py)
    in_hook: bool = field(default=False, compare=False)
    hooked: Optional["Cut"] = field(default=None, compare=False)
    # the fix goes where the cut is made, in whichever function (a gradient taken without
    # ``create_graph=True``: the call is what changes), not at the call that reached it
    at_cut: bool = False


DATA = Cut("data")


def join_cuts(cuts: Iterable[Optional[Cut]]) -> Optional[Cut]:
    """The cut of a value computed from values with these cuts (all certainly not requiring
    grad): unknown if any is unknown; else the most telling one, unsure if any is."""
    best: Optional[Cut] = None
    sure = True
    freeze: Optional[Cut] = None
    hooked: Optional[Cut] = None
    for c in cuts:
        if c is None:
            return None
        sure = sure and c.sure
        hooked = hooked or c.hooked or (c if c.in_hook else None)
        for f in (c, c.freeze):
            if f is not None and f.kind == "frozen" and f.span is not None and \
                    (freeze is None or freeze.span is None or f.span.row >= freeze.span.row):
                freeze = f
        if best is None or KINDS.index(c.kind) < KINDS.index(best.kind):
            best = c
        elif c.kind == best.kind == "frozen" and c.span is not None and best.span is not None \
                and c.span.row > best.span.row:
            best = c  # of several freezes, the last one is what left nothing to train
    if best is None:
        return DATA
    if best.kind != "frozen" and freeze is not None and best.freeze != freeze:
        best = replace(best, freeze=freeze)
    if hooked is not None and hooked is not best and best.hooked is None:
        best = replace(best, hooked=hooked)
    return best if best.sure == sure else replace(best, sure=sure)


def unsure(c: Optional[Cut]) -> Optional[Cut]:
    return None if c is None else (c if not c.sure else replace(c, sure=False))


class ShapeV(NumberV):
    """``x.shape``: numbers, known to be the sizes of tensor ``tid``'s dims (an index gives a ``SizeV``)."""

    __slots__ = ("tid",)

    def __init__(self, tid: int) -> None:
        super().__init__(None)
        self.tid = tid


class SizeV(NumberV):
    """``x.shape[d] + offset`` (``x.size(d) - 1``): a number the code ties to one dim of tensor ``tid``.
    ``x.narrow(d, 1, x.size(d) - 1)`` is then ``x[..., 1:]`` whatever that size is (engine/checks/flowtorch.py)."""

    __slots__ = ("tid", "dim", "offset")

    def __init__(self, tid: int, dim: int, offset: int = 0) -> None:
        super().__init__(None)
        self.tid, self.dim, self.offset = tid, dim, offset


def optimizer_params(st: State, oid: int) -> Tuple[int, ...]:
    """The tensors the optimizer ``oid`` was built over (empty when the analysis does not know)."""
    p = st.attrs(oid).get("__params__")
    return p.value if isinstance(p, ConstV) and isinstance(p.value, tuple) else ()


def other_file(span: Span, where: Span, entry: str = "") -> Optional[str]:
    """The name of the file ``span`` lies in when it is not the file of the finding at ``where``
    (an optimizer built in ``utils/optim.py``, a finding in ``train.py``; ``entry``: the analysed
    file, which a span without a file is in); None when they are the same file."""
    if span.file == where.file or span.file is None and not entry:
        return None
    return os.path.basename(span.file or entry)


def line_ref(span: Span, where: Span, entry: str = "") -> str:
    """``line N``, naming the file when ``span`` lies in another module of the project than the
    finding (``other_file``)."""
    other = other_file(span, where, entry)
    return f"line {span.row}" if other is None else f"line {span.row} of `{other}`"
