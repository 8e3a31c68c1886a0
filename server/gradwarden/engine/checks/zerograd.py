"""Zero-derivative ops on every gradient path to a leaf: ``round``, ``floor``, ``ceil``,
``trunc``, ``sign``.

PyTorch's derivative of these ops is zero everywhere (``derivatives.yaml``: ``zeros_like``),
yet their output requires grad, so nothing raises: a parameter that reaches a loss only through
one of them receives a zero gradient and never trains (quantization or binarization without a
straight-through estimator, a loss computed on rounded predictions). A leaf that also reaches
the loss another way (``w + (w.round() - w).detach()``, the fractional part of a coordinate)
trains normally and is not reported.

Proof, not guess: the graph a backward runs is walked from its roots, and only when every
node on the live part was fed by inputs the analysis sees (``Node.opaque`` false); an unknown
input might carry a live path to the same leaf.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import Node, State, TensorV, walk_nodes

ZERO_DERIVATIVE = frozenset({"round", "floor", "ceil", "trunc", "fix", "sign", "sgn",
                             "round_", "floor_", "ceil_", "trunc_", "fix_", "sign_", "sgn_"})


def dead_leaves(roots: Sequence[Node]) -> List[Tuple[Node, Set[int]]]:
    """Each zero-derivative node that a backward from ``roots`` reaches through a live path,
    with the leaves reachable only through such nodes. Empty when any live node is opaque."""
    live: Set[int] = set()
    boundary: List[Node] = []
    seen: Set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.opaque:
            return []
        if n.op in ZERO_DERIVATIVE:
            boundary.append(n)
            continue
        live.update(n.leaves)
        stack.extend(n.inputs)
    out: List[Tuple[Node, Set[int]]] = []
    claimed: Set[int] = set()
    for z in sorted(boundary, key=lambda n: n.seq):
        behind = {leaf for m in walk_nodes([z]) for leaf in m.leaves} - live - claimed
        if behind:
            out.append((z, behind))
            claimed |= behind
    return out


def check_zero_gradient(self: Any, st: State, roots: Sequence[TensorV], span: Span) -> None:
    """At a backward: report each zero-derivative op that is the only way some leaf requiring
    grad reaches the roots (the leaf then gets a zero gradient from this backward)."""
    nodes = []
    for r in roots:
        info = st.t.get(r.tid)
        if info is None or info.rg is not True or info.grad_fn is None:
            return
        nodes.append(info.grad_fn)
    for z, leaves in dead_leaves(nodes):
        names = sorted({_leaf_name(st, t) for t in leaves})
        shown = ", ".join(f"`{n}`" for n in names[:3]) + (" and others" if len(names) > 3 else "")
        mode = self.it.flow.modes.sites.get(z.id)  # taken because the module was left in eval mode
        ste = None if mode is not None else _straight_through_around(st, nodes, z)
        if ste is not None:
            self.it.emit(Event("zero_gradient", ste, {
                "op": z.op.rstrip("_"), "names": shown, "verb": "reaches" if len(names) == 1 else "reach",
                "line": span.row, "mode": " (this straight-through estimator detaches the live value on both "
                "sides, so the only path left is the op's: keep the live value outside the detach)"},
                related=(Related(z.span, f"`{z.op.rstrip('_')}` is the only path left", "note"),
                         Related(span, "this backward gives them zero gradients", "backward"))))
            continue
        related: Tuple[Related, ...] = (Related(span, "this backward gives them zero gradients", "backward"),)
        if mode is not None:
            related = (Related(z.span, f"`{z.op.rstrip('_')}` is the eval-mode branch of the module", "note"),) + related
        self.it.emit(Event("zero_gradient", mode or z.span, {
            "op": z.op.rstrip("_"), "names": shown, "verb": "reaches" if len(names) == 1 else "reach",
            "line": span.row, "mode": "" if mode is None else
            " (the training step runs the module's eval-mode branch: this call leaves it in eval mode; set "
            "`.train()` at the start of every training iteration)"},
            related=related, fix_facts={"backward_span": span, "op": z.op} if mode is None else {}))


def _straight_through_around(st: State, roots: Sequence[Node], z: Node) -> Optional[Span]:
    """The statement that consumes the zero-derivative op's output together with a ``.detach()``
    of the op's own input, made on that same statement (``a.detach() + (a.round() - a.detach())``):
    a straight-through estimator written with the live value detached, the line the fix changes.
    None when the op's output is used any other way."""
    src = set(z.input_tids)
    if not src:
        return None
    made = {(info.created.row, info.created.file) for info in st.t.values()
            if info.alias_of in src and info.created is not None}
    if not made:
        return None
    for n in walk_nodes(list(roots)):
        if any(i.id == z.id for i in n.inputs) and (n.span.row, n.span.file) in made:
            return n.span
    return None


def _leaf_name(st: State, tid: int) -> str:
    info = st.t.get(tid)
    name = info.name if info is not None else ""
    return name or "a tensor that requires grad"


__all__: Tuple[str, ...] = ("ZERO_DERIVATIVE", "dead_leaves", "check_zero_gradient")
