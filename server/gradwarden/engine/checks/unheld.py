"""Parameters the loss trains that no optimizer holds (GW719), because the optimizer built over
``model.parameters()`` never saw them:

- a submodule attached to the model after the optimizer was built (a head made lazily in
  ``forward``, ``setattr(model, name, LoRALinear(child))`` after the optimizer): reported where
  the module is made — the constructor call of the program when the parameters are made inside a
  class's ``__init__``, so the line named is the one to move before the optimizer;
- modules kept in a plain Python ``list`` attribute (``self.blocks = [nn.Linear(d, d) ...]``):
  torch registers only modules assigned directly or through ``nn.ModuleList``/``Sequential``, so
  ``model.parameters()`` leaves them out; their gradients are computed at every backward and never
  applied. Reported where they are made (``nn.ModuleList`` is the fix).

Held by :class:`~gradwarden.engine.checks.reach.GradientReach` as ``reach.unheld`` and asked at
every optimizer step of a training loop."""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.checks.flowfacts import optimizer_params as _params_of
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import State, TensorV


class UnheldParameters:
    def __init__(self, reach: Any) -> None:
        self.reach = reach
        self.it = reach.it
        self.flow = reach.flow
        # parameter -> the call of the program that entered the constructor it was made in
        self.made_by: Dict[int, Span] = {}
        self._stores: Dict[str, Optional[Span]] = {}  # list attribute -> the statement that makes it

    def note_param(self, tid: int) -> None:
        """A parameter made while a call runs: remember the call into the outermost ``__init__``
        (``LoRALinear(child)``, ``Head(d)`` inside a forward), where the module it belongs to is made."""
        for fdef, span in zip(self.it.call_stack, self.it.call_spans):
            if getattr(fdef, "name", None) == "__init__":
                self.made_by[tid] = span
                return

    def at_step(self, st: State, oid: int, span: Span, site: Span, opt: str) -> None:
        model = self.reach._optimized_model(st, site, oid)
        built = self.flow.opt_built_id.get(oid)
        if model is None or built is None:
            return
        held = self.reach._held(st)
        now = self.it.modules.module_params(model, st)
        if set(_params_of(st, oid)) - {t.tid for _, t in now}:
            # the optimizer holds tensors the model no longer has: a parameter was replaced (a
            # re-wrap), not added — the stray-parameter check says that, at the same line
            return
        late = [t for _, t in now if t.tid > built and self._stray(st, t, held)]
        if late:
            self._attached_later(st, late, span, site, opt)
        registered = {t.tid for _, t in now}
        listed = [(n, t) for n, t in self.it.modules.module_params(model, st, plain_lists=True)
                  if t.tid not in registered and self._stray(st, t, held)]
        if listed:
            self._in_plain_list(st, listed, span, site, opt)

    def _stray(self, st: State, t: TensorV, held: Any) -> bool:
        """A leaf parameter that requires grad, got a gradient, and no optimizer holds."""
        info = st.t.get(t.tid)
        return t.tid not in held and bool(st.grads.get(t.tid)) and info is not None and info.param \
            and info.rg is True and info.leaf and t.tid not in self.flow.manual_grads and info.created is not None

    def _place(self, st: State, tid: int) -> Span:
        return self.made_by.get(tid) or st.t[tid].created

    def _first_report(self, key: Tuple[str, Span]) -> bool:
        if key in self.reach.reported:
            return False
        self.reach.reported.add(key)
        return True

    def _list_store(self, attr: str) -> Optional[Span]:
        """The one statement of the analysed file that stores a list into ``self.<attr>``
        (``self.blocks = [...]``, ``self.blocks = []``): the line ``nn.ModuleList`` goes on."""
        if attr not in self._stores:
            found = [n for n in ast.walk(self.it.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                     and isinstance(n.targets[0], ast.Attribute) and n.targets[0].attr == attr
                     and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self"
                     and isinstance(n.value, (ast.List, ast.ListComp, ast.Tuple))]
            self._stores[attr] = self.it.span_of(found[0]) if len(found) == 1 else None
        return self._stores[attr]

    def _attached_later(self, st: State, late: Sequence[TensorV], span: Span, site: Span, opt: str) -> None:
        made = self._place(st, late[0].tid)
        if not self._first_report(("attached", made)):
            return
        self.it.emit(Event("untrained_parameter", made, {
            "names": _names(st, [t.tid for t in late]),
            "opt": opt, "opt_line": site.row,
            "fate": f"made here after the `{opt}` at line {site.row} was built over the model's parameters, are "
                    f"held by no optimizer",
            "why": f"the optimizer took the parameters the model had when it was built; the loss gives these "
                   f"gradients, and the step at line {span.row} never applies them (build the module before the "
                   f"optimizer, or add it with `add_param_group`)"},
            related=(Related(site, "the optimizer built before the module existed", "optimizer"),
                     Related(span, "stepped without them", "step"))))

    def _in_plain_list(self, st: State, listed: List[Tuple[str, TensorV]], span: Span, site: Span, opt: str) -> None:
        attr = _list_attr(listed[0][0])
        made = self._list_store(attr.rsplit(".", 1)[-1]) or st.t[listed[0][1].tid].created
        if not self._first_report(("plain_list", made)):
            return
        self.it.emit(Event("untrained_parameter", made, {
            "names": _names(st, [t.tid for _, t in listed]),
            "opt": opt, "opt_line": site.row,
            "fate": f"of modules kept in the plain list `{attr}`, are held by no optimizer",
            "why": f"torch registers no module held in a Python list, so `parameters()` (and the `{opt}` built "
                   f"from it at line {site.row}, `state_dict()`, `.to()`) leaves them out; the loss gives them "
                   f"gradients that the step at line {span.row} never applies (hold them in `nn.ModuleList`)"},
            related=(Related(site, "built over the model's registered parameters only", "optimizer"),
                     Related(span, "stepped without them", "step"))))


def _list_attr(name: str) -> str:
    """``blocks`` of ``blocks.0.weight`` (``enc.layers`` of ``enc.layers.1.bias``): the path up to
    the list's index."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.isdigit():
            return ".".join(parts[:i]) or name
    return name


def _names(st: State, tids: Sequence[int]) -> str:
    names = sorted({st.t[t].name or "a parameter" for t in tids})
    shown = ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return shown if len(tids) < 2 else f"{len(tids)} parameters ({shown})"

