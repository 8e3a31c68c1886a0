"""Training steps that run a module in eval mode (the ``self.training`` branch a training loop
meant to take was switched off): GW718/GW719 reported at the mode switch.

A module whose ``forward`` reads ``self.training`` (a straight-through quantizer, a Gumbel gate,
dropout written by hand) takes its other branch after ``.eval()`` or ``.train(False)``: ``round``
instead of the straight-through estimator, ``argmax`` instead of a hard Gumbel sample. When a
training step's backward then gives a parameter a zero gradient (GW718) or none (GW719) through
that branch, the line to change is the mode switch, not the op: the ``.train(False)`` of a helper,
or, when an ``.eval()`` inside the loop (validation) leaks into the next iteration, the
``.train()`` that runs once before the loop instead of at the start of each iteration.

The same switch also changes what torch's own mode-dependent layers compute (GW724): BatchNorm
normalises with its running statistics instead of the batch's (and stops updating them), Dropout
stops dropping. A training step (a backward into the parameters an optimizer then steps) that runs
such a model in eval mode trains it on other gradients than the author meant, and nothing raises.
Reported only when the model switched as a whole holds every parameter the optimizer steps (a
frozen backbone deliberately kept in eval is a part of the model, not all of it) and the program
shows it meant train mode: a `.train()` of that model somewhere, or the switch made by a helper.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, ObjV, RefV, State


class ModeFacts:
    """Held by the ``flow`` role as ``flow.modes``."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # (call depth, the function running) -> the switch site, for a frame that read `self.training` False
        self.eval_frames: Dict[Tuple[int, int], Span] = {}
        self.sites: Dict[int, Span] = {}  # node id (a zero-derivative op) -> the switch site
        self.pending: List[Event] = []  # GW724, emitted at the end unless GW718/GW719 names the same switch

    def note_training_read(self, st: State, obj: ObjV, value: Any) -> None:
        if not self.it.call_stack:
            return
        key = (len(self.it.call_stack), id(self.it.call_stack[-1]))
        if not (isinstance(value, ConstV) and value.value is False):
            self.eval_frames.pop(key, None)
            return
        site = self._switch_site(st, obj)
        if site is not None:
            self.eval_frames[key] = site

    def current(self) -> Optional[Span]:
        """The switch site when the running function took its eval-mode branch."""
        if not self.eval_frames or not self.it.call_stack:
            return None
        return self.eval_frames.get((len(self.it.call_stack), id(self.it.call_stack[-1])))

    def _switch_site(self, st: State, obj: ObjV) -> Optional[Span]:
        attrs = st.attrs(obj.oid)
        ev = attrs.get("__eval_at__")
        if not isinstance(ev, ConstV):
            return None
        span, loops = ev.value
        here = {lid for lid, _ in st.loop_ctx}
        if not here or not here & {lid for lid, _ in loops}:
            return span  # switched off before the loop (a helper's `.train(False)`): that call
        tr = attrs.get("__train_at__")
        if isinstance(tr, ConstV):
            tspan, tloops = tr.value
            if not here & {lid for lid, _ in tloops}:
                # `.eval()` inside the loop (validation), `.train()` once before it: from the second
                # iteration on the steps train in eval mode; `.train()` belongs inside the loop
                return tspan
            return None
        return span  # `.eval()` inside the loop and no `.train()` anywhere: the switch that is never undone

    # ------------------------------------------------------------------ GW724
    def at_step(self, st: State, tids: Sequence[int], span: Span) -> None:
        """``optimizer.step()`` with ``tids``: a model switched to eval mode as a whole, holding
        them all, with a BatchNorm/Dropout (or a module reading ``self.training``) inside."""
        if not any(t in st.grads for t in tids):
            return  # no backward reached them on this path: not a training step
        mods = self.it.modules
        want = set(tids)
        for oid in sorted(st.meta.get("mode_roots", ())):
            attrs = st.attrs(oid)
            tr, ev = attrs.get("training"), attrs.get("__eval_at__")
            if not (isinstance(tr, ConstV) and tr.value is False and isinstance(ev, ConstV)):
                continue
            root = ObjV(oid)
            held = {p.tid for _, p in mods.module_params(root, st)}
            if not want <= held or not any(st.t.get(t) is not None and st.t[t].rg is True for t in want):
                continue
            layer = next((name for name, m in mods.submodules(root, st) if _mode_dependent(st, m)), None)
            if layer is None:
                continue
            site = self._step_site(st, attrs, span)
            if site is None:
                continue
            kind = _kind(st, ObjV(oid), layer, mods)
            self.pending.append(Event("eval_mode_training", site, {
                "step_line": span.row, "layer": kind,
                "why": "this call switches it back on only once, before the loop, and the `.eval()` inside "
                       "the loop leaves the next iterations in eval mode; call `.train()` at the start of "
                       "every training iteration" if site != ev.value[0] else
                       "this call leaves it in eval mode; restore the mode the model had before (or call "
                       "`.train()` before the training step)"},
                related=(Related(span, "this step trains the model in eval mode", "step"),)
                + (self.it.call_chain() if site.file is not None and self.it.foreign_stack else ())))

    def finish(self) -> None:
        """Emit GW724 where no GW718/GW719 already names the same mode switch (a module reading
        `self.training` whose parameters the switch cut off: that finding says more)."""
        taken = {(k[1], k[4] if len(k) > 4 else None) for k in self.it.events
                 if k[0] in ("zero_gradient", "untrained_parameter")}
        for ev in self.pending:
            if (ev.span.row, ev.span.file) not in taken:
                self.it.emit(ev)
        self.pending = []

    def _step_site(self, st: State, attrs: Dict[str, Any], span: Span) -> Optional[Span]:
        ev = attrs["__eval_at__"].value
        espan, eloops = ev
        here = {lid for lid, _ in st.loop_ctx}
        tr = attrs.get("__train_at__")
        if here & {lid for lid, _ in eloops}:
            # `.eval()` inside the training loop (validation): the `.train()` that runs once
            # before it is the line to change; no `.train()` at all: the program never asked for
            # train mode (an evaluation it meant), silent
            if isinstance(tr, ConstV) and not here & {lid for lid, _ in tr.value[1]}:
                return tr.value[0]
            # no `.train()` anywhere, but the switch is an evaluation helper's (a function of its own
            # that also runs a `no_grad` block) that never restores the mode: the model was built in
            # train mode and the helper's switch leaks into the steps after it
            by_eval = attrs.get("__eval_by_evaluator__")
            if tr is None and isinstance(by_eval, ConstV) and by_eval.value is True:
                return espan
            return None
        depth = attrs.get("__mode_depth__")
        # switched off before the loop: by a helper (its `.eval()`/`.train(False)` is the line),
        # or by the training function itself after a `.train()` of its own
        if isinstance(depth, ConstV) and depth.value > len(self.it.call_stack) or isinstance(tr, ConstV):
            return espan
        return None


_MODE_LAYERS = ("BatchNorm", "SyncBatchNorm", "Dropout", "AlphaDropout", "FeatureAlphaDropout")


def _mode_dependent(st: State, m: ObjV) -> bool:
    """A module in eval mode whose forward differs from train mode's."""
    attrs = st.attrs(m.oid)
    tr = attrs.get("training")
    if not (isinstance(tr, ConstV) and tr.value is False):
        return False
    q = attrs.get("__torch__")
    if isinstance(q, ConstV):
        short = str(q.value).rsplit(".", 1)[-1]
        if not short.startswith(_MODE_LAYERS):
            return False
        if "Norm" in short:
            rm = attrs.get("running_mean")  # track_running_stats=False: batch statistics in both modes
            return not (isinstance(rm, ConstV) and rm.value is None)
        p = attrs.get("p")
        return not (isinstance(p, ConstV) and p.value in (0, 0.0))
    cls = attrs.get("__class__")
    if isinstance(cls, RefV) and cls.kind == "class" and getattr(cls.target, "is_module", False):
        found = cls.target.find_method("forward")
        return found is not None and any(isinstance(n, ast.Attribute) and n.attr == "training"
                                         and isinstance(n.value, ast.Name) and n.value.id == "self"
                                         for n in ast.walk(found[1]))
    return False


def _kind(st: State, root: ObjV, layer: str, mods: Any) -> str:
    """What the eval-mode layer does instead (for the message)."""
    for name, m in mods.submodules(root, st):
        if name != layer:
            continue
        q = st.attrs(m.oid).get("__torch__")
        if isinstance(q, ConstV):
            short = str(q.value).rsplit(".", 1)[-1]
            if "Norm" in short:
                return f"`{short}` normalises with its running statistics instead of the batch's"
            return f"`{short}` drops nothing"
        cls = st.attrs(m.oid).get("__class__")
        if isinstance(cls, RefV):
            return f"`{cls.target.name}` takes its eval-mode branch (`self.training` is False)"
    return "mode-dependent layer runs as in evaluation"
