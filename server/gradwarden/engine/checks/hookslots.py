"""Forward hooks that keep a module's tensor in one slot while the module runs several times per
step (GW721).

``self.acts[name] = output`` (or ``module.saved_input = inputs[0]``) in a forward hook keeps only
the last call: a module shared by two towers, or applied twice in one forward, overwrites the
first call's value before anything reads it, and a penalty, a feature loss or a backward hook
computed from the slot silently covers one call only.

Reported at the hook's store when the same slot (an attribute of one object, the entry of one
dict under one key) is stored by the hooks of the same module twice, with grad on, without a
backward in between, and without the slot's container being read outside a hook in between
(reading it between the calls uses the first value: not lost; so does copying it, `dict(acts)`,
`{**acts}`, `acts.copy()`). When the code bound a second name to the container between the
calls (`fake = acts`), it meant to keep the first call's values and got the container itself:
reported there, where the fix (a copy) goes. The report waits for a read of the container outside
the hooks after the overwrite: a second call whose value nothing reads (a check that calls the module
again after the step) loses nothing; a module with a backward hook reads it in every backward.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, Optional, Tuple

from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, DictV, ObjV, SeqV, State, TensorV, Value


class HookSlots:
    """Held by the ``flow`` role as ``flow.hooks``."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # slot -> (module oid, where stored, the backward count then, the container's read count then, its order)
        self.stored: Dict[Tuple[Any, ...], Tuple[int, Span, int, int, int]] = {}
        self.reads: Dict[Tuple[str, int], int] = {}  # container -> how often code outside hooks read it
        # container -> (where a second name was bound to it outside hooks, how many stores came before)
        self.aliases: Dict[Tuple[str, int], Tuple[Span, int]] = {}
        self.stores = 0  # hook stores so far: orders an alias against the stores around it
        self.reported: set = set()
        # container -> overwrites found but not reported yet: reported when code outside the hooks reads it
        self.pending: Dict[Tuple[str, int], list] = {}

    @staticmethod
    def container_key(container: Value) -> Optional[Tuple[str, int]]:
        if isinstance(container, ObjV):
            return ("o", container.oid)
        if isinstance(container, DictV):
            return ("d", container.did)
        return None

    def note_alias(self, container: Value, stmt: ast.AST) -> None:
        """``fake = acts`` outside a hook: a second name for the container a hook fills."""
        if getattr(self.it, "hook_depth", 0):
            return
        key = self.container_key(container)
        if key is not None and any(k[0] == key for k in self.stored):
            self.aliases[key] = (self.it.span_of(stmt), self.stores)

    def note_read(self, container: Value) -> None:
        if getattr(self.it, "hook_depth", 0):
            return
        key = ("o", container.oid) if isinstance(container, ObjV) else ("d", container.did) \
            if isinstance(container, DictV) else None
        if key is not None:
            self.reads[key] = self.reads.get(key, 0) + 1
            for event in self.pending.pop(key, ()):
                self.it.emit(event)  # the overwritten slot is read: the first call's value is lost to it

    def note_store(self, st: State, container: Value, slot: Any, value: Value, stmt: ast.AST) -> None:
        module = getattr(self.it, "hook_module", None)
        if not getattr(self.it, "hook_depth", 0) or module is None or not st.grad_enabled:
            return
        if isinstance(value, SeqV):  # `self.outputs = [output]`: the slot holds this call's tensors only
            items = st.lists.get(value.lid, ())
            if not items or not all(isinstance(x, TensorV) for x in items) or value.kind == "homogeneous":
                return
        elif not isinstance(value, TensorV):
            return
        ckey = self.container_key(container)
        if ckey is None:
            return
        if not isinstance(slot, (str, int)):
            return
        key = (ckey, slot)
        span = self.it.span_of(stmt)
        backwards = len(st.meta.get("backwards", ()))
        reads = self.reads.get(ckey, 0)
        old = self.stored.get(key)
        self.stores += 1
        self.stored[key] = (module, span, backwards, reads, self.stores)
        if old is None or old[0] != module or old[2] != backwards or old[3] != reads:
            return
        alias = self.aliases.get(ckey)
        if alias is not None and alias[1] < old[4]:
            alias = None  # bound before the first call's store: not a copy meant to keep it
        where = alias[0] if alias is not None else span
        if key in self.reported or span in self.reported or where in self.reported:
            return
        self.reported.update((span, where))
        slot_text = self.it.text_of(stmt.targets[0]) if isinstance(stmt, ast.Assign) and stmt.targets else str(slot)
        call = self.it.span_of(self.it.hook_call) if getattr(self.it, "hook_call", None) is not None else None
        related = [Related(call, "the second call of the module overwrites the first call's value here", "call")] \
            if call is not None else []
        facts = {"slot": slot_text, "module": self.it.hook_module_text or "the module", "calls": "several",
                 "lead": ""}
        if alias is not None:
            # the code meant to keep the first call's values under a second name: the fix is a copy there
            facts["lead"] = "this binds a second name to the container the forward hook fills, not a copy " \
                "(copy it: `dict(...)`), so the first call's values it was meant to keep are overwritten: "
            related.insert(0, Related(span, "the hook's store that overwrites the slot", "note"))
        event = Event("hook_overwrite", where, facts, related=tuple(related))
        if st.attrs(module).get("__backward_hooked__") is not None:
            self.it.emit(event)  # the module's backward hook reads the slot in every backward
        else:
            self.pending.setdefault(ckey, []).append(event)


def slot_of(it: Any, target: ast.Subscript, st: State) -> Optional[Any]:
    """The key of ``d[key] = ...`` when it is a constant or a name bound to one."""
    sl = target.slice
    if not isinstance(sl, (ast.Constant, ast.Name, ast.Attribute)):
        return None
    v = it.ev.eval(sl, st)
    return v.value if isinstance(v, ConstV) and isinstance(v.value, (str, int)) else None
