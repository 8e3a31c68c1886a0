"""Parameter groups with a hole (GW719): the groups an optimizer is built over come from filters
over one module's ``named_parameters()`` (``decay = [p for n, p in named if p.dim() >= 2]``,
``no_decay = [p for n, p in named if n.endswith(".bias")]``), and no filter takes some parameter
(every LayerNorm weight: 1-D, not a bias). The loss gives it a gradient at every step, and no
optimizer holds it: it never changes.

Decided only where everything is known: each group of the optimizer is such a filter (a
comprehension, or a loop appending under ``if``/``elif``/``continue``) over the same module, whose
parameters the interpreter knows (names and shapes from the constructors it models), and every
condition is one this module evaluates (dimension tests, name tests, ``requires_grad``, membership
in a known list of names); the filters' result must agree with what the interpreter gave the
optimizer. A parameter left out is reported only when, at a training step after a backward, it has
a gradient, requires grad, and no optimizer of the program holds it, and only as a hole in a
grouping (the runtime's guard, runtime/child/groups.py): another parameter of its own module is
held by this optimizer, and a parameter of the same name in another module is held too. So a head-
only fine-tune, a frozen or separately optimized part and BitFit (only biases, on purpose) stay
silent.

Reported at the filter that owns the parameter's kind (the group whose every parameter has the
same matrix/non-matrix kind as the one left out: the no-decay filter for a 1-D weight), the line
the fix changes; when no single filter owns it, at the optimizer's construction with information
severity.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.flowfacts import line_ref, optimizer_params as _params_of
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, ObjV, State

# a filter: (the module expression's text, its call: "named_parameters" | "parameters", the
# name target, the tensor target, the conjuncts (condition, wanted truth), the node to report at)
Filter = Tuple[str, str, Optional[str], str, Tuple[Tuple[ast.expr, bool], ...], ast.AST]
_MAX_PARAMS = 4096
# torch layers: the dimensions of their `weight*` parameters (biases are vectors)
_LAYERS = {"Linear": 2, "Bilinear": 3, "Embedding": 2, "EmbeddingBag": 2, "Conv1d": 3, "Conv2d": 4, "Conv3d": 5,
           "ConvTranspose1d": 3, "ConvTranspose2d": 4, "ConvTranspose3d": 5, "RNN": 2, "LSTM": 2, "GRU": 2,
           "RNNCell": 2, "LSTMCell": 2, "GRUCell": 2, "PReLU": 1}
# normalization layers: their weight and bias are vectors (LayerNorm's have the normalized shape)
_NORMS = frozenset({"LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm"})


class GroupHoles:
    """Held by ``flow.reach`` as ``reach.groups``: per optimizer built over filtered groups, the
    parameters no filter takes and the filters that could own them."""

    def __init__(self, reach: Any) -> None:
        self.reach = reach
        self.it = reach.it
        # optimizer oid -> (holes [(name, tid, ndim)], filters [(span, selected tids, their kinds)],
        # the module's parameters [(name, tid)])
        self.records: Dict[int, Tuple[List[Tuple[str, int, int]], List[Tuple[Span, FrozenSet[int], FrozenSet[bool]]],
                                      List[Tuple[str, int]]]] = {}
        self.done: Set[int] = set()

    # ------------------------------------------------------------------ at the construction
    def note_built(self, st: State, obj: ObjV, node: ast.AST) -> None:
        if not isinstance(node, ast.Call):
            return
        tree = self.it.tree
        file = self.it.span_of(node).file
        if file is not None:
            # built in another module of the project (`engine/optim.py`'s `build_optimizer`):
            # its filters are read in that module's own tree
            fm = self.it.foreign_stack[-1][0] if self.it.foreign_stack else None
            if fm is None or str(fm.path) != file:
                return
            tree = fm.tree
        try:
            self._note(st, obj, node, tree)
        except RecursionError:
            return

    def _note(self, st: State, obj: ObjV, node: ast.Call, tree: ast.AST) -> None:
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), None)
        if arg is None:
            return
        scope = self.reach._scope_of(node, tree)
        groups = self._groups(arg, scope, node.lineno, 0)
        if not groups:
            return
        filters = [self._filter(g, scope, node.lineno) for g in groups]
        if any(f is None for f in filters):
            return
        flat = [f for fs in filters for f in fs]  # type: ignore[union-attr]
        if len(flat) < 2 or len({(f[0], f[1]) for f in flat}) != 1:
            return
        module = self._module(st, flat[0][0])
        if module is None:
            return
        params, seen = [], set()
        for name, t in self.it.modules.module_params(module, st):
            if t.tid not in seen:  # a shared (tied) parameter is listed once, under its first name, as torch does
                seen.add(t.tid)
                params.append((name, t))
        if not params or len(params) > _MAX_PARAMS:
            return
        mods = dict(self.it.modules.submodules(module, st))
        dims = {}
        for name, t in params:
            owner, slot = _split(name)
            ndim = self._ndim(st, mods.get(owner), slot, t.tid)
            if ndim is None:
                return  # a parameter whose dimension is not known: the filters cannot be evaluated
            dims[t.tid] = ndim
        out = []
        for f in flat:
            sel = set()
            for name, t in params:
                ok = self._all(st, f, name, t.tid, dims[t.tid])
                if ok is None:
                    return  # a condition this module cannot evaluate
                if ok:
                    sel.add(t.tid)
            out.append((self.it.span_of(f[5]), frozenset(sel), frozenset(dims[t] >= 2 for t in sel)))
        held = frozenset(_params_of(st, obj.oid))
        taken = frozenset().union(*(s for _, s, _ in out))
        if sum(len(sel) for _, sel, _ in out) != len(taken):
            return  # a parameter in two groups: torch raises when the optimizer is built (another finding)
        if not taken <= held or not held <= {t.tid for _, t in params}:
            # the interpreter gave the optimizer other tensors: not the filters read here (it keeps
            # an element whose condition it cannot decide, so it may hold more of the module's)
            return
        if any(_mentions(f, "requires_grad") for f in flat) and any(st.t.get(t.tid) is None or st.t[t.tid].rg is not True
                                                                   for _, t in params):
            return  # a requires_grad filter over a module with frozen parts: left out on purpose
        holes = [(name, t.tid, dims[t.tid]) for name, t in params if t.tid not in taken]
        if holes:
            self.records[obj.oid] = (holes, out, [(name, t.tid) for name, t in params])

    def _ndim(self, st: State, owner: Optional[ObjV], slot: str, tid: int) -> Optional[int]:
        """How many dimensions a parameter has: from the torch layer's constructor that made it
        (``nn.Linear``'s weight is a matrix), else from the shape the interpreter knows."""
        if owner is None:
            return None  # named through a container torch does not register (a plain list)
        ctor = self.reach.flow.mod_ctor.get(owner.oid)
        if ctor is not None:
            kind, args, kwargs = ctor
            if kind in _NORMS and slot in ("weight", "bias"):
                shape = kwargs.get("normalized_shape", args[0] if args else None)
                if kind in ("LayerNorm", "RMSNorm"):
                    return 1 if isinstance(shape, int) else len(shape) if isinstance(shape, (tuple, list)) else None
                return 1
            dims = _LAYERS.get(kind)
            if dims is not None:
                if slot.startswith("bias"):
                    return 1
                if slot.startswith("weight"):
                    return dims
            return None
        shape = self.reach.flow.shapes.get(tid)
        return len(shape) if isinstance(shape, tuple) else None

    def _groups(self, arg: ast.expr, scope: ast.AST, line: int, depth: int) -> Optional[List[ast.expr]]:
        """The expressions of each group's parameters (``[{"params": decay}, {"params": no_decay}]``)."""
        if depth > 3:
            return None
        if isinstance(arg, ast.Name):
            bound = _binding(scope, arg.id, line)
            return self._groups(bound, scope, line, depth + 1) if isinstance(bound, (ast.List, ast.Tuple)) else None
        if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts and all(isinstance(e, ast.Dict) for e in arg.elts):
            out = []
            for d in arg.elts:
                v = next((v for k, v in zip(d.keys, d.values) if isinstance(k, ast.Constant) and k.value == "params"), None)
                if v is None:
                    return None
                out.append(v)
            return out
        return None

    def _filter(self, expr: ast.expr, scope: ast.AST, line: int) -> Optional[List[Filter]]:
        """The filter(s) a group's parameters come from, else None."""
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "list" \
                and len(expr.args) == 1 and isinstance(expr.args[0], ast.GeneratorExp):
            expr = expr.args[0]
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
            f = self._comp(expr, scope, line)
            return [f] if f is not None else None
        if not isinstance(expr, ast.Name):
            return None
        bound = _binding(scope, expr.id, line)
        if _changed(scope, expr.id, line):
            return None  # a list the code also changes another way (`decay.extend(...)`)
        if isinstance(bound, (ast.ListComp, ast.GeneratorExp)) or isinstance(bound, ast.Call) and \
                isinstance(bound.func, ast.Name) and bound.func.id == "list" and bound.args and \
                isinstance(bound.args[0], ast.GeneratorExp):
            return self._filter(bound, scope, line)
        if isinstance(bound, ast.List) and not bound.elts:
            return self._loop(expr.id, scope, line)
        return None

    def _comp(self, comp: Any, scope: ast.AST, line: int) -> Optional[Filter]:
        if len(comp.generators) != 1 or comp.generators[0].is_async:
            return None
        gen = comp.generators[0]
        src = self._source(gen.iter, scope, line)
        targets = _targets(gen.target, src[1] if src else "")
        if src is None or targets is None or not (isinstance(comp.elt, ast.Name) and comp.elt.id == targets[1]):
            return None
        return src[0], src[1], targets[0], targets[1], tuple((c, True) for c in gen.ifs), comp

    def _loop(self, name: str, scope: ast.AST, line: int) -> Optional[List[Filter]]:
        """``name = []`` filled by one ``for n, p in ...:`` loop of ``if``/``elif``/``else`` and
        ``continue`` branches appending the tensor."""
        loops = [n for n in ast.walk(scope) if isinstance(n, ast.For) and n.lineno < line
                 and any(_appends(s, name) for s in ast.walk(n))]
        if len(loops) != 1:
            return None
        loop = loops[0]
        src = self._source(loop.iter, scope, line)
        targets = _targets(loop.target, src[1] if src else "")
        if src is None or targets is None:
            return None
        out: List[Filter] = []
        if not _branches(loop.body, (), name, targets[1], out, src, targets):
            return None
        return out or None

    def _source(self, it: ast.expr, scope: ast.AST, line: int) -> Optional[Tuple[str, str]]:
        """``model.named_parameters()`` (or a name bound once to its ``list(...)``): the module's
        text and the method."""
        if isinstance(it, ast.Name):
            bound = _binding(scope, it.id, line)
            if not (isinstance(bound, ast.Call) and isinstance(bound.func, ast.Name) and bound.func.id == "list"
                    and len(bound.args) == 1):
                return None  # a generator bound to a name is emptied by the first filter: another bug
            it = bound.args[0]
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords \
                and it.func.attr in ("named_parameters", "parameters") and _plain(it.func.value):
            return ast.unparse(it.func.value), it.func.attr
        return None

    def _module(self, st: State, text: str) -> Optional[ObjV]:
        parts = text.split(".")
        v = st.lookup(parts[0])
        for p in parts[1:]:
            v = st.attrs(v.oid).get(p) if isinstance(v, ObjV) else None
        return v if isinstance(v, ObjV) and self.it.modules.is_module_obj(v, st) else None

    # ------------------------------------------------------------------ conditions
    def _all(self, st: State, f: Filter, name: str, tid: int, ndim: int) -> Optional[bool]:
        result: Optional[bool] = True
        for cond, want in f[4]:
            got = self._truth(st, cond, f, name, tid, ndim)
            if got is None:
                return None
            if got is not want:
                result = False
        return result

    def _truth(self, st: State, c: ast.expr, f: Filter, name: str, tid: int, ndim: int) -> Optional[bool]:
        if isinstance(c, ast.BoolOp):
            vals = [self._truth(st, v, f, name, tid, ndim) for v in c.values]
            if any(v is None for v in vals):
                return None
            return all(vals) if isinstance(c.op, ast.And) else any(vals)  # type: ignore[arg-type]
        if isinstance(c, ast.UnaryOp) and isinstance(c.op, ast.Not):
            v = self._truth(st, c.operand, f, name, tid, ndim)
            return None if v is None else not v
        v = self._value(st, c, f, name, tid, ndim)
        return v if isinstance(v, bool) else None

    def _value(self, st: State, e: ast.expr, f: Filter, name: str, tid: int, ndim: int) -> Any:
        """The value of a condition's part for one parameter; None when not known."""
        n, p = f[2], f[3]
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, str)) and not isinstance(e.value, bool):
            return e.value
        if isinstance(e, ast.Name):
            if e.id == n:
                return name
            if e.id == p:
                return None
            return self._const(st, e.id)
        if isinstance(e, ast.Tuple) and all(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in e.elts):
            return tuple(x.value for x in e.elts)  # type: ignore[attr-defined]
        if isinstance(e, ast.Attribute) and _is(e.value, p):
            if e.attr == "ndim":
                return ndim
            if e.attr == "requires_grad":
                rg = st.t[tid].rg if tid in st.t else None
                return rg if isinstance(rg, bool) else None
            return None
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            a = self._value(st, e.left, f, name, tid, ndim)
            b = self._value(st, e.comparators[0], f, name, tid, ndim)
            if a is None or b is None:
                return None
            return _compare(e.ops[0], a, b)
        if isinstance(e, ast.Call) and not e.keywords:
            fn = e.func
            if isinstance(fn, ast.Attribute) and _is(fn.value, p) and fn.attr in ("dim", "ndimension") and not e.args:
                return ndim
            if isinstance(fn, ast.Name) and fn.id == "len" and len(e.args) == 1:
                x = e.args[0]
                if isinstance(x, ast.Attribute) and _is(x.value, p) and x.attr == "shape" or \
                        isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and _is(x.func.value, p) \
                        and x.func.attr == "size" and not x.args:
                    return ndim
                return None
            if isinstance(fn, ast.Attribute) and _is(fn.value, n) and fn.attr in ("endswith", "startswith") \
                    and len(e.args) == 1:
                arg = self._value(st, e.args[0], f, name, tid, ndim)
                if isinstance(arg, str) or isinstance(arg, tuple) and all(isinstance(x, str) for x in arg):
                    return name.endswith(arg) if fn.attr == "endswith" else name.startswith(arg)
                return None
            if isinstance(fn, ast.Name) and fn.id in ("any", "all") and len(e.args) == 1 \
                    and isinstance(e.args[0], ast.GeneratorExp):
                return self._any(st, fn.id, e.args[0], f, name, tid, ndim)
        return None

    def _any(self, st: State, which: str, g: ast.GeneratorExp, f: Filter, name: str, tid: int, ndim: int) -> Optional[bool]:
        """``any(nd in n for nd in no_decay)`` over a list of names the code fixes."""
        if len(g.generators) != 1 or g.generators[0].ifs or not isinstance(g.generators[0].target, ast.Name):
            return None
        var = g.generators[0].target.id
        items = self._value(st, g.generators[0].iter, f, name, tid, ndim)
        if not isinstance(items, tuple) or var in (f[2], f[3]):
            return None
        got = []
        for x in items:
            sub = ast.fix_missing_locations(ast.parse(ast.unparse(g.elt), mode="eval").body)
            v = self._value(st, _subst(sub, var, x), f, name, tid, ndim)
            if not isinstance(v, bool):
                return None
            got.append(v)
        return any(got) if which == "any" else all(got)

    def _const(self, st: State, var: str) -> Any:
        """A name bound to a string or to a known list/tuple/set of strings."""
        v = st.lookup(var)
        if isinstance(v, ConstV):
            if isinstance(v.value, str):
                return v.value
            if isinstance(v.value, (tuple, list, frozenset, set)) and all(isinstance(x, str) for x in v.value):
                return tuple(v.value)
            return None
        items = self.it.ev.known_items(v, st) if v is not None else None
        if items is None or not all(isinstance(x, ConstV) and isinstance(x.value, str) for x in items):
            return None
        return tuple(x.value for x in items)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ at a training step
    def at_step(self, st: State, oid: int, span: Span, site: Span, opt: str) -> None:
        rec = self.records.get(oid)
        if rec is None or oid in self.done:
            return
        holes, filters, named = rec
        mine = set(_params_of(st, oid))
        taken = frozenset().union(*(sel for _, sel, _ in filters))
        # held by another optimizer, or by this one for sure (the interpreter's own list keeps the
        # elements whose condition it could not decide: the filters read here decide them)
        held = set(taken)
        sites = self.reach.flow.opt_sites
        for other, at in sites.items():
            # one built at the same site is the same construction (on another path of the analysis,
            # or again over the same module): its filters leave the same parameters out
            if other != oid and at != sites.get(oid):
                rec2 = self.records.get(other)
                held.update(frozenset().union(*(sel for _, sel, _ in rec2[1])) if rec2 is not None
                            else _params_of(st, other))
        mine = mine & taken
        flow = self.reach.flow
        kept = [_split(nm) for nm, t in named if t in mine]
        owners_held = {owner for owner, _ in kept}
        missed = []
        for name, tid, ndim in holes:
            info = st.t.get(tid)
            if info is None or info.rg is not True or not info.leaf or not info.param or not st.grads.get(tid) \
                    or tid in held or tid in flow.manual_grads or tid in flow.fake_leaves:
                continue
            owner, leaf = _split(name)
            if owner not in owners_held:
                continue  # no other parameter of its module is held: a whole module left out (a frozen part)
            if not any(_module_split(filters, named, o, k) for o, k in kept if o != owner and k == leaf):
                # no parameter of this name is held elsewhere by a group that takes it for its kind
                # (BitFit keeps only biases, and trains the head whole)
                continue
            missed.append((name, tid, ndim))
        if not missed:
            return
        self.done.add(oid)
        by_where: Dict[Tuple[int, int], List[Tuple[str, int, int]]] = {}
        for h in missed:
            kind = h[2] >= 2
            owners = [i for i, (_, sel, kinds) in enumerate(filters) if sel and kinds == frozenset({kind})]
            key = (owners[0], 0) if len(owners) == 1 else (-1, 0)
            by_where.setdefault(key, []).append(h)
        for (i, _), hs in by_where.items():
            names = sorted(h[0] for h in hs)
            shown = ", ".join(f"`{x}`" for x in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            them = "them" if len(hs) > 1 else "it"
            kind = "matrices" if hs[0][2] >= 2 else "tensors of fewer than 2 dimensions"
            be = "are" if len(hs) > 1 else "is"
            if i >= 0:
                where, severity = filters[i][0], None
                why = f"this filter takes the other {kind} but not {them}, and no other group takes {them}, so no " \
                      f"optimizer holds {them} and {'they' if len(hs) > 1 else 'it'} never change{'' if len(hs) > 1 else 's'} (the step at " \
                      f"{line_ref(span, filters[i][0], self.it.filename)} leaves {them} as {'they' if len(hs) > 1 else 'it'} {be}); make this condition " \
                      f"take {them}"
            else:
                where, severity = site, 3
                why = f"no filter that builds the groups of `{opt}` takes {them}, so no optimizer holds {them} and " \
                      f"{'they' if len(hs) > 1 else 'it'} never change{'' if len(hs) > 1 else 's'} (the step at {line_ref(span, site, self.it.filename)} leaves {them} as " \
                      f"{'they' if len(hs) > 1 else 'it'} {be}); make the groups cover every parameter"
            if ("groups", where) in self.reach.reported:
                continue  # the same construction seen on another path of the analysis
            self.reach.reported.add(("groups", where))
            fate = f"left out of every parameter group of `{opt}` built at {line_ref(site, where, self.it.filename)}, get" \
                   f"{'' if len(hs) > 1 else 's'} a gradient that no optimizer applies"
            self.it.emit(Event("untrained_parameter", where, {
                "names": shown if len(hs) < 2 else f"{len(hs)} parameters ({shown})", "opt": opt,
                "opt_line": site.row, "why": why, "fate": fate},
                related=(Related(site, "the optimizer is given the groups here", "optimizer"),
                         Related(span, "stepped without them", "step")), severity=severity))


def _module_split(filters: Sequence[Tuple[Span, FrozenSet[int], FrozenSet[bool]]], named: Sequence[Tuple[str, int]],
                  owner: str, leaf: str) -> bool:
    """Does a filter take ``owner.leaf`` but not every parameter of ``owner`` (it chooses by kind,
    not by module)?"""
    tid = next((t for nm, t in named if _split(nm) == (owner, leaf)), None)
    same = [t for nm, t in named if _split(nm)[0] == owner]
    return any(tid in sel and not all(t in sel for t in same) for _, sel, _ in filters)


def _split(name: str) -> Tuple[str, str]:
    """``"blocks.0.ln.weight"`` -> (``"blocks.0.ln"``, ``"weight"``): the owning module and the name."""
    return (name.rsplit(".", 1)[0], name.rsplit(".", 1)[1]) if "." in name else ("", name)


def _binding(scope: ast.AST, name: str, line: int) -> Optional[ast.expr]:
    """The value of the one plain assignment to ``name`` in ``scope`` before ``line`` (None when it
    is assigned more than once or another way)."""
    found = []
    for n in ast.walk(scope):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            if len(n.targets) != 1:
                return None
            found.append((n, n.value))
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) \
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets[0].elts):
            # `decay, no_decay = [], []`
            elts = n.targets[0].elts
            if not isinstance(n.value, ast.Tuple) or len(n.value.elts) != len(elts):
                return None
            found.append((n, next(v for t, v in zip(elts, n.value.elts) if isinstance(t, ast.Name) and t.id == name)))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name) and n.target.id == name:
            return None
    if len(found) != 1 or found[0][0].lineno >= line:
        return None
    return found[0][1]


def _targets(t: ast.expr, method: str) -> Optional[Tuple[Optional[str], str]]:
    if method == "named_parameters" and isinstance(t, ast.Tuple) and len(t.elts) == 2 \
            and all(isinstance(x, ast.Name) for x in t.elts):
        return t.elts[0].id, t.elts[1].id  # type: ignore[attr-defined]
    if method == "parameters" and isinstance(t, ast.Name):
        return None, t.id
    return None


def _branches(body: Sequence[ast.stmt], path: Tuple[Tuple[ast.expr, bool], ...], name: str, p: str,
              out: List[Filter], src: Tuple[str, str], targets: Tuple[Optional[str], str]) -> bool:
    """Walk a loop body: each ``name.append(p)`` under the conditions on its path is a filter.
    False when the body does something this module does not follow."""
    for s in body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "append" and isinstance(s.value.func.value, ast.Name):
            if len(s.value.args) != 1 or not _is(s.value.args[0], p):
                return False
            if s.value.func.value.id == name:
                # shown at the last condition that chose this branch (the `elif` to change)
                shown = next((c for c, want in reversed(path) if want), s)
                out.append((src[0], src[1], targets[0], targets[1], path, shown))
            continue
        if isinstance(s, ast.If):
            if len(s.body) == 1 and isinstance(s.body[0], ast.Continue):
                path = path + ((s.test, False),)
                if s.orelse:
                    return False
                continue
            if not _branches(s.body, path + ((s.test, True),), name, p, out, src, targets):
                return False
            if not _branches(s.orelse, path + ((s.test, False),), name, p, out, src, targets):
                return False
            continue
        return False
    return True


def _changed(scope: ast.AST, name: str, line: int) -> bool:
    """Is the list ``name`` changed before ``line`` by a call other than a loop filter's
    ``name.append(...)`` (``extend``, ``insert``, ``remove``, or an append outside a ``for``)?"""
    in_loops = {id(c) for n in ast.walk(scope) if isinstance(n, ast.For) for c in ast.walk(n) if _appends(c, name)}
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
               and n.func.value.id == name and n.lineno < line and id(n) not in in_loops for n in ast.walk(scope))


def _appends(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == name


def _compare(op: ast.cmpop, a: Any, b: Any) -> Optional[bool]:
    try:
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        if isinstance(a, int) and isinstance(b, int):
            return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}.get(type(op))
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (str, tuple)):
            if isinstance(b, str) and not isinstance(a, str):
                return None
            return (a in b) is isinstance(op, ast.In)
    except TypeError:
        return None
    return None


def _mentions(f: Filter, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr for c, _ in f[4] for n in ast.walk(c))


def _is(e: ast.expr, name: Optional[str]) -> bool:
    return name is not None and isinstance(e, ast.Name) and e.id == name


def _plain(e: ast.expr) -> bool:
    return isinstance(e, ast.Name) or isinstance(e, ast.Attribute) and _plain(e.value)


def _subst(e: ast.expr, var: str, value: str) -> ast.expr:
    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Constant(value), node) if node.id == var else node
    return _Sub().visit(e)
