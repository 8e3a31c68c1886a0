"""A training loss computed through an averaged copy of the model (``torch.optim.swa_utils.
AveragedModel``): the copy's parameters are a deep copy of the model's, so the backward trains the
copy, which no optimizer holds, and the parameters the optimizer holds never get a gradient. The line
to change is the forward through the copy under grad (the loss belongs on the model itself; the copy
is for ``update_parameters(model)`` and evaluation). The domain records, per averaged copy, its
parameters (``AveragedModel(...)``, domain/optimizers.py) and the first call of it with grad enabled
(domain/modules.py); GradientReach asks here when an optimizer's step finds stray gradients."""

from __future__ import annotations

import os
from typing import Optional, Sequence

from gradwarden.engine.checks.flowfacts import Cut
from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.model import State


def averaged_forward(st: State, stray: Sequence[int]) -> Optional[Span]:
    """Where the loss went through an averaged copy, when every stray trained tensor is a parameter
    of an averaged copy that was called with grad enabled; else None."""
    owners = st.meta.get("averaged_params")
    calls = st.meta.get("averaged_calls")
    if not owners or not calls:
        return None
    spans = [calls.get(owners.get(t)) for t in stray]
    if not spans or any(s is None for s in spans):
        return None
    return spans[0]


def averaged_why(cut: Cut, site: Span, step: Span, where: Span, opt: str) -> str:
    def line(span: Span) -> str:
        if span.file is None or span.file == where.file:
            return f"line {span.row}"
        return f"line {span.row} of `{os.path.basename(span.file)}`"
    return f"this forward goes through the averaged copy of the model (`AveragedModel` holds a deep copy of its " \
           f"parameters), so the backward trains {cut.what}, which no optimizer holds, and the parameters handed to " \
           f"`{opt}` at {line(site)} never get a gradient (the step at {line(step)} moves nothing the loss reaches); " \
           f"compute the training loss with the model itself and keep the averaged copy for `update_parameters` " \
           f"and evaluation"
