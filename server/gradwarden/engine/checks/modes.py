"""Training steps that run a module in eval mode (the ``self.training`` branch a training loop
meant to take was switched off): GW718/GW719 reported at the mode switch.

A module whose ``forward`` reads ``self.training`` (a straight-through quantizer, a Gumbel gate,
dropout written by hand) takes its other branch after ``.eval()`` or ``.train(False)``: ``round``
instead of the straight-through estimator, ``argmax`` instead of a hard Gumbel sample. When a
training step's backward then gives a parameter a zero gradient (GW718) or none (GW719) through
that branch, the line to change is the mode switch, not the op: the ``.train(False)`` of a helper,
or, when an ``.eval()`` inside the loop (validation) leaks into the next iteration, the
``.train()`` that runs once before the loop instead of at the start of each iteration.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.model import ConstV, ObjV, State


class ModeFacts:
    """Held by the ``flow`` role as ``flow.modes``."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # (call depth, the function running) -> the switch site, for a frame that read `self.training` False
        self.eval_frames: Dict[Tuple[int, int], Span] = {}
        self.sites: Dict[int, Span] = {}  # node id (a zero-derivative op) -> the switch site

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
