"""``LambdaLR`` schedules whose factor is zero at every step the program takes (GW741), and step-decay
schedulers whose ``gamma`` of 0 makes the learning rate 0 from their first decay on (GW744).

``LambdaLR(opt, lambda step: min(1.0, step // warmup))``: the learning rate of every step is
``base_lr * lr_lambda(n)``, ``n`` the number of ``scheduler.step()`` calls made before it (the
constructor applies ``lr_lambda(0)`` at once). Floor division, or a factor that only becomes positive
after more steps than the program takes, leaves every update multiplied by zero: nothing raises, the
loss is printed, the weights never move.

Decided by evaluating the program's own ``lr_lambda`` (a ``lambda`` or a function of the file) at the
count each ``optimizer.step()`` sees, on every path the analysis follows: reported only when every
step of that optimizer got a factor of exactly 0 and at least one step was taken. A factor the
analysis cannot evaluate (an unknown count, a value it does not follow) is not zero; a schedule that
starts at 0 and grows (``step / warmup``, zero only at the first step) moves the weights."""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, NONE, ObjV, RefV, SeqV, State, TRUE, UNKNOWN, Value, fresh_id


# where `gamma` goes among the positional arguments of each step-decay scheduler
DECAY_GAMMA_AT = {"StepLR": 2, "MultiStepLR": 2, "ExponentialLR": 1}


class LambdaSchedules:
    """Held by the ``optim`` role as ``optim.schedules``."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # the LambdaLR call -> [zero steps, other steps], over every path
        self.factors: Dict[Span, List[int]] = {}
        # a step-decay scheduler with gamma 0 -> [its class, the count of its first decay, steps taken at lr 0]
        self.decayed: Dict[Span, List[Any]] = {}
        it.finishers.append(self.finish)

    def construct(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        opt = args[0] if args else kwargs.get("optimizer", UNKNOWN)
        fn = args[1] if len(args) > 1 else kwargs.get("lr_lambda", UNKNOWN)
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__sched__", TRUE)
        if isinstance(opt, ObjV) and "__optim__" in st.attrs(opt.oid) and isinstance(fn, RefV) \
                and fn.kind in ("lambda", "func"):
            span = self.it.span_of(node)
            st.set_attr(obj.oid, "__count__", ConstV(0))
            prev = st.attrs(opt.oid).get("__lambdas__")
            entry = (obj.oid, fn, span)
            st.set_attr(opt.oid, "__lambdas__", ConstV((prev.value if isinstance(prev, ConstV) else ()) + (entry,)))
        return obj

    def construct_decay(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                        node: ast.AST) -> Value:
        """``StepLR``/``MultiStepLR``/``ExponentialLR`` with a ``gamma`` known to be 0 (GW744): from the
        ``scheduler.step()`` count of the first decay on, every step's learning rate is 0."""
        kind = qual.rsplit(".", 1)[-1]
        opt = args[0] if args else kwargs.get("optimizer", UNKNOWN)
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__sched__", TRUE)
        gamma = kwargs.get("gamma", args[DECAY_GAMMA_AT[kind]] if len(args) > DECAY_GAMMA_AT[kind] else None)
        if not (isinstance(gamma, ConstV) and not isinstance(gamma.value, bool) and isinstance(gamma.value, (int, float))
                and gamma.value == 0) or not (isinstance(opt, ObjV) and "__optim__" in st.attrs(opt.oid)):
            return obj
        first = 1
        if kind == "StepLR":
            size = args[1] if len(args) > 1 else kwargs.get("step_size")
            first = size.value if isinstance(size, ConstV) and isinstance(size.value, int) and size.value > 0 else None
        elif kind == "MultiStepLR":
            ms = args[1] if len(args) > 1 else kwargs.get("milestones")
            got = None
            if isinstance(ms, SeqV) and ms.kind in ("list", "tuple"):
                items = st.lists.get(ms.lid, ())
                got = [v.value for v in items if isinstance(v, ConstV)] if len(items) else None
                if got is not None and len(got) != len(items):
                    got = None
            first = min(got) if got and all(isinstance(m, int) for m in got) else None
        if first is None:
            return obj
        st.set_attr(obj.oid, "__count__", ConstV(0))
        prev = st.attrs(opt.oid).get("__decays__")
        entry = (obj.oid, first, self.it.span_of(node), kind)
        st.set_attr(opt.oid, "__decays__", ConstV((prev.value if isinstance(prev, ConstV) else ()) + (entry,)))
        return obj

    def method(self, obj: ObjV, name: str, st: State) -> Value:
        count = st.attrs(obj.oid).get("__count__")
        if name == "step" and isinstance(count, ConstV):
            st.set_attr(obj.oid, "__count__", ConstV(count.value + 1))
        return NONE if name == "step" else UNKNOWN

    def at_step(self, opt: ObjV, st: State, node: ast.AST) -> None:
        """``opt.step()``: the factor each LambdaLR of this optimizer gives this step."""
        entries = st.attrs(opt.oid).get("__lambdas__")
        for oid, fn, span in entries.value if isinstance(entries, ConstV) else ():
            count = st.attrs(oid).get("__count__")
            factor: Value = UNKNOWN
            if isinstance(count, ConstV) and isinstance(count.value, int):
                factor = self.it.ev.call(fn, [ConstV(count.value)], {}, st.fork(), node)
            zero = isinstance(factor, ConstV) and isinstance(factor.value, (int, float)) and \
                not isinstance(factor.value, bool) and factor.value == 0
            tally = self.factors.setdefault(span, [0, 0])
            tally[0 if zero else 1] += 1
        decays = st.attrs(opt.oid).get("__decays__")
        for oid, first, span, kind in decays.value if isinstance(decays, ConstV) else ():
            count = st.attrs(oid).get("__count__")
            if isinstance(count, ConstV) and isinstance(count.value, int) and count.value >= first:
                self.decayed.setdefault(span, [kind, first, 0])[2] += 1

    def finish(self) -> None:
        for span, (zero, other) in self.factors.items():
            if zero and not other:
                self.it.emit(Event("lr_always_zero", span, {"steps": zero}))
        self.factors = {}
        for span, (kind, first, zero) in self.decayed.items():
            self.it.emit(Event("lr_decayed_to_zero", span, {"kind": kind, "first": first, "steps": zero}))
        self.decayed = {}


__all__: Tuple[str, ...] = ("DECAY_GAMMA_AT", "LambdaSchedules")
