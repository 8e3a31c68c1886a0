"""Gradient reachability: which parameters the backwarded losses reach, and where the paths that
would have reached the others were cut.

Two reports come out of it, both silent failures (nothing raises):

- GW719, a parameter an optimizer steps that no backwarded loss reached at any of its steps, while
  a value computed from that parameter left the graph (``.detach()``, ``.item()``/``float()``,
  ``.data``, a re-wrap as ``nn.Parameter(...)``, an op under ``no_grad``): reported at that cut,
  the line the fix changes. Decided when the run ends: a parameter some step does reach trains.
- GW722, a part of a backwarded loss that cannot contribute to its gradient: a term added to the
  loss (``loss = rec + beta * float(kld)``, ``pg_loss - c * entropy_from_no_grad_helper``) whose
  value was cut from a graph that required grad, or a value a forward hook kept as a detached
  copy of a module's output and that a backwarded loss is then computed from. Reported at the
  cut (the hook's store, the ``float()``, the call of the ``no_grad`` helper).

The analysis is exact over what the abstract graph holds and silent elsewhere: a backward whose
graph may take inputs the analysis cannot see (an opaque op, an open node, a leaf standing for a
graph it does not follow, a root of unknown origin) makes every parameter of the next step count as
trained; a parameter is reported only when a cut from it was seen.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.flowfacts import Cut, line_ref, optimizer_params as _params_of
from gradwarden.engine.checks.averaged import averaged_forward, averaged_why
from gradwarden.engine.checks.groups import GroupHoles
from gradwarden.engine.checks.unheld import UnheldParameters
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, Node, NumberV, ObjV, State, TensorV, Value, walk_nodes

# the cuts a gradient path to a parameter can end at; a non-differentiable op (argmax for an index,
# a comparison for a mask) among them: a parameter whose every used value went through one never
# trains (a hard router), while one that also reaches the loss another way is trained as usual
CUT_KINDS = frozenset({"detach", "item", "rewrap", "nograd", "data_attr", "sample", "nondiff", "none_grad"})
# ops through which a term of the loss stays a term (the sum the backward starts from)
SPINE_OPS = frozenset({"add", "sub", "__add__", "__radd__", "__sub__", "__rsub__", "__iadd__", "__isub__",
                       "neg", "__neg__", "mean", "sum", "div", "__truediv__", "mul", "__mul__", "__rmul__"})
ADDITIVE_OPS = frozenset({"add", "sub", "__add__", "__radd__", "__sub__", "__rsub__", "__iadd__", "__isub__"})


class GradientReach:
    """Held by the ``flow`` role as ``flow.reach``: the cuts and where they were used, the
    parameters each optimizer's steps reached."""

    def __init__(self, flow: Any) -> None:
        self.flow = flow
        self.it = flow.it
        # cut -> the graphs it was taken from (nodes) and the leaves requiring grad it was taken from
        self.sources: Dict[Cut, Tuple[Tuple[Node, ...], FrozenSet[int]]] = {}
        self.hook_cuts: Set[Cut] = set()  # cuts made inside a forward hook
        self.pre_hook_cuts: Set[Cut] = set()  # of those, cuts made inside a forward pre-hook (its inputs)
        self._leaves_of: Dict[Cut, FrozenSet[int]] = {}
        self._own_classes: Optional[Set[int]] = None  # ids of the analysed file's ClassDef nodes
        self._calls_at: Dict[Tuple[int, int], Optional[ast.Call]] = {}  # (row, column) -> the call there
        # node id -> (op, the cut operands it was computed from, where each was used)
        self.operand_cuts: Dict[int, Tuple[str, Tuple[Tuple[Cut, Span, bool], ...]]] = {}
        self.trained: Set[Tuple[int, int]] = set()  # (optimizer oid, param tid) reached at some step
        self.untrained: Dict[Tuple[int, int], Tuple[Cut, Span, Span, str, str]] = {}
        # (optimizer, parameter) the loss reached at earlier steps and no longer does: the model was
        # given a new tensor in its place after the optimizer was built
        self.abandoned: Set[Tuple[int, int]] = set()
        self.reported: Set[Tuple[str, Span]] = set()
        self.dead_terms: List[Cut] = []  # cuts reported as constant terms of a loss (GW722)
        self.used: Set[Cut] = set()  # cuts whose value a backwarded graph was computed from
        self.rewraps: Dict[int, Cut] = {}  # a new leaf made from a computed tensor -> that cut
        # a cut chosen by a module's flag (`w if self.learnable else w.detach()`) -> where the module was built
        self.config: Dict[Cut, Span] = {}
        self._flag_exprs: Optional[List[ast.IfExp]] = None
        self.mode_cuts: Set[Cut] = set()  # cuts an eval-mode branch took
        self.st_outputs: Dict[int, Tuple[Cut, Node]] = {}  # straight-through output -> (its cut, x's node)
        self._params_listed: Optional[bool] = None
        self.st_self_loss: Dict[Cut, Span] = {}  # a straight-through cut -> a loss of its output against x.detach()
        # parameters a backward reaches that raises (reported as the error it is): once that error is
        # fixed, this backward trains them, so the path ending there proves nothing about them
        self.reached_by_raising: Set[int] = set()
        self.groups = GroupHoles(self)  # parameter groups whose filters leave a parameter out
        self.unheld = UnheldParameters(self)  # trained parameters no optimizer holds

    # ------------------------------------------------------------------ recording
    def note_raising_backward(self, order: Sequence[Node]) -> None:
        for n in order:
            self.reached_by_raising.update(n.leaves)

    def note_cut(self, st: State, cut: Optional[Cut], sources: Sequence[TensorV], config: Optional[Span] = None) -> None:
        """A value was cut from ``sources``: remember the graphs it left (only those requiring grad).
        ``config``: the mode switch that made the code take this cut (an eval-mode ``argmax``)."""
        if cut is None or cut.kind not in CUT_KINDS and config is None:
            return
        nodes: List[Node] = []
        leaves: List[int] = []
        direct = False  # taken from a tensor that requires grad itself (not from one cut before)
        for t in sources:
            ti = st.t.get(t.tid)
            if ti is None or ti.rg is None:
                continue
            if ti.rg is False:
                # computed under no_grad from values cut there before: the same graphs
                inner = self.sources.get(self.flow.cuts.get(t.tid))  # type: ignore[arg-type]
                if inner is not None:
                    nodes.extend(n for n in inner[0] if all(n is not m for m in nodes))
                    leaves.extend(inner[1])
                continue
            direct = True
            if ti.grad_fn is not None:
                nodes.append(ti.grad_fn)
            elif ti.leaf:
                leaves.append(self.it.graph.leaf_root(st, t.tid))
        if not nodes and not leaves:
            return
        old = self.sources.get(cut)
        if old is not None:
            nodes = list(old[0]) + [n for n in nodes if all(n is not m for m in old[0])]
            leaves = list(old[1] | set(leaves))
            self._leaves_of.pop(cut, None)
        self.sources[cut] = (tuple(nodes), frozenset(leaves))
        if config is not None:
            self.config[cut] = config
            self.mode_cuts.add(cut)
        elif cut.span is not None and cut not in self.config:
            site = self._config_site(st, cut.span)
            if site is not None:
                self.config[cut] = site
        if direct and cut.kind in ("detach", "data_attr") and getattr(self.it, "hook_depth", 0):
            self.hook_cuts.add(cut)
            if getattr(self.it, "hook_kind", "") == "pre":
                self.pre_hook_cuts.add(cut)

    def note_leaf(self, tid: int, cut: Cut) -> None:
        """A new leaf requiring grad was made from a value cut at ``cut``: a backward that reaches
        it uses that cut instead of the graph it left."""
        if cut in self.sources:
            self.rewraps[tid] = cut

    def _config_site(self, st: State, span: Span) -> Optional[Span]:
        """Where the object whose flag chose this cut was built: the cut is one arm of ``a if
        self.flag else b`` and ``self`` is an instance made by a call of this file. The flag is
        configuration (a constructor argument or its default), so the call is the line to change."""
        if self._flag_exprs is None:
            # one walk of the file, and only when its text has such an expression at all
            text = self.it.src.text
            self._flag_exprs = [n for n in ast.walk(self.it.tree) if isinstance(n, ast.IfExp) and _self_flag(n.test)] \
                if " if self." in text or " if not self." in text else []
        for n in self._flag_exprs:
            if n.lineno == span.row and n.col_offset <= span.column <= (n.end_col_offset or 0):
                me = st.lookup("self")
                if isinstance(me, ObjV):
                    site = st.attrs(me.oid).get("__span__")
                    flag = st.attrs(me.oid).get(_self_flag(n.test) or "")
                    if isinstance(site, ConstV) and isinstance(flag, ConstV) and isinstance(flag.value, bool):
                        return site.value
        return None

    def note_rewrap(self, st: State, cut: Cut, src: TensorV, leaf: TensorV) -> None:
        self.note_cut(st, cut, [src])
        if cut in self.sources:
            self.rewraps[leaf.tid] = cut

    def _cut_of(self, st: State, v: Value) -> Optional[Cut]:
        if v.__class__ is NumberV:
            c = v.cut  # type: ignore[attr-defined]
        elif v.__class__ is TensorV:
            ti = st.t.get(v.tid)  # type: ignore[attr-defined]
            c = self.flow.cuts.get(v.tid) if ti is not None and ti.rg is False else None  # type: ignore[attr-defined]
        else:
            return None
        if c is not None and c.hooked is not None and c.hooked in self.hook_cuts:
            return c.hooked  # a forward hook's copy, mixed with values cut another way: the copy is the cut
        return c if c is not None and c in self.sources else None

    def note_operands(self, st: State, opname: str, slots: Sequence[Value], outs: Sequence[TensorV], seq0: int) -> None:
        """An op whose result has a graph was computed from a value cut from another graph."""
        if not self.sources or not outs:
            return
        oi = st.t.get(outs[0].tid)
        node = oi.grad_fn if oi is not None else None
        if node is None or node.seq <= seq0:
            return
        found = []
        for v in slots:
            vals = [v] if v.__class__ is TensorV or v.__class__ is NumberV else self.it.graph.slot_tensors(st, v)
            for x in vals:
                c = self._cut_of(st, x)
                if c is not None and all(c is not f[0] for f in found):
                    # a number, or a tensor known to be one (a reduced term): `x + y.detach()` of whole
                    # tensors is a shift the code may mean (a baseline, a residual of another model)
                    scalar = x.__class__ is NumberV or self.flow.shapes.get(x.tid) == ()  # type: ignore[attr-defined]
                    # a re-wrap (`torch.tensor(per_level)`) or a tensor turned into Python numbers
                    # (`.item()`, `.tolist()`, `float(t)`) is changed where it is made, in whichever
                    # function; other cuts where the current code reaches them (a no_grad helper's call)
                    used = c.span if (c.kind in ("rewrap", "item") or c.at_cut) and c.span is not None else \
                        self.flow._frame_span(c.stack, c.span) or c.span
                    found.append((c, used, scalar))
        if found:
            self.operand_cuts[node.id] = (opname, tuple(found))
            self._straight_through(st, opname, slots, outs, found, node)

    def _straight_through(self, st: State, opname: str, slots: Sequence[Value], outs: Sequence[TensorV],
                          found: Sequence[Tuple[Cut, Span, bool]], node: Node) -> None:
        """``z_q = x + (q - x).detach()`` (a straight-through output: its gradient goes to ``x``
        only), and a loss comparing ``z_q`` with ``x.detach()``: meant to train ``q`` (a codebook
        loss), it trains nothing of ``q``. That loss is where the fix goes (compute it on ``q``)."""
        tensors = [v for v in slots if v.__class__ is TensorV]
        if opname in ADDITIVE_OPS and len(tensors) == 2 and len(found) == 1:
            cut = found[0][0]
            live = [t for t in tensors if st.t.get(t.tid) is not None and st.t[t.tid].rg is True]  # type: ignore[attr-defined]
            if len(live) == 1:
                x_node = st.t[live[0].tid].grad_fn  # type: ignore[attr-defined]
                nodes, _ = self.sources[cut]
                if x_node is not None and any(m is x_node for n in nodes for m in n.inputs):
                    self.st_outputs[outs[0].tid] = (cut, x_node)
                    return
        st_out = next((self.st_outputs[t.tid] for t in tensors if t.tid in self.st_outputs), None)  # type: ignore[attr-defined]
        if st_out is None:
            return
        cut, x_node = st_out
        for c, _, _ in found:
            if c is not cut and any(n is x_node for n in self.sources[c][0]):
                self.st_self_loss.setdefault(cut, node.call_span or node.span)

    # ------------------------------------------------------------------ at a backward
    def after_backward(self, st: State, roots: Sequence[Value], order: Sequence[Node], span: Span) -> None:
        complete = bool(order)
        for r in roots:
            for t in self.it.graph.slot_tensors(st, r):
                ti = st.t.get(t.tid)
                if ti is None or ti.grad_fn is None and ti.rg is not False:
                    complete = False
        if complete:
            fake, opened = self.flow.fake_leaves, self.flow.open_nodes
            for n in order:
                if n.opaque or n.id in opened or fake and any(t in fake for t in n.leaves):
                    complete = False
                    break
        meta = st.own("meta")
        meta["reach_backwards"] = meta.get("reach_backwards", 0) + 1
        meta.setdefault("reach_first_backward", st.seq)
        if not complete:
            meta["reach_open"] = True
        if self.rewraps and order:
            for n in order:
                for t in n.leaves:
                    if t in self.rewraps:
                        self.used.add(self.rewraps[t])
        if self.operand_cuts and order:
            for n in order:
                rec = self.operand_cuts.get(n.id)
                if rec is not None:
                    self.used.update(c for c, _, _ in rec[1])
            self._check_terms(st, order, span)

    def _check_terms(self, st: State, order: Sequence[Node], span: Span) -> None:
        ran = {n.id for n in order}
        spine: Set[int] = set()
        stack = [order[0]]  # the latest node: the loss (the additive structure from it down)
        while stack:
            n = stack.pop()
            if n.id in spine or n.op not in SPINE_OPS:
                continue
            if n.op not in ADDITIVE_OPS and len(n.inputs) > 1:
                continue  # a product of two graphs (`q * step`) weighs one by the other: not a sum of terms
            spine.add(n.id)
            stack.extend(n.inputs)
        for n in order:
            rec = self.operand_cuts.get(n.id)
            if rec is None:
                continue
            op, cuts = rec
            for cut, used_at, scalar in cuts:
                if cut in self.hook_cuts:
                    self._emit_term(cut, cut.span or used_at, span, "hook")
                elif cut.kind in ("nondiff", "none_grad") and cut not in self.mode_cuts:
                    continue  # a count or an index in a loss term: a metric the code may mean to add
                elif scalar and n.id in spine and op in ADDITIVE_OPS:
                    nodes, _ = self.sources[cut]
                    if any(m.id in ran for m in nodes) and not (cut.kind == "nograd" and cut.at_region):
                        # `x - x.detach()`: the value itself is in the graph (a surrogate); not so a
                        # `@torch.no_grad()` helper's result (a metric reused as a loss term, `1 - dice(logits)`)
                        continue
                    self._emit_term(cut, used_at, span, "term")

    def _emit_term(self, cut: Cut, where: Span, bspan: Span, kind: str) -> None:
        used = where
        where = self.config.get(cut, where)
        if cut.at_region and cut.region is not None and cut not in self.config:
            where = cut.region  # the helper's `@torch.no_grad()`: dropping it is the fix
        key = (kind, where)
        if key in self.reported:
            return
        self.reported.add(key)
        self.dead_terms.append(cut)
        how = cut.what or cut.kind
        if kind == "hook":
            why = f"a forward hook keeps the module's output as a copy cut from the graph by {how}" \
                if cut not in self.pre_hook_cuts else \
                f"a forward pre-hook keeps the module's input as a copy cut from the graph by {how}"
        else:
            why = f"this value is cut from the graph by {how}, and it is added to the loss as a constant"
        if cut.at_cut:
            why = f"this gradient is taken by {how}: it is a constant, not a function of the weights it " \
                  f"depends on, and a term of the loss is computed from it"
        related = (Related(bspan, "the backward that gets no gradient through it", "backward"),)
        if where is not used and where == cut.region:
            why = f"this helper runs under {how}, which cuts what it computes from the graph (the tensor it is " \
                  f"given, or its module's parameters); its result is added to the loss as a constant"
            related = (Related(used, "its result is added to the loss here", "note"),) + related
        if cut in self.config and cut.span is not None:
            why = f"this object's configuration (a flag its constructor sets) picks, at line {cut.span.row}, a " \
                  f"value cut from the graph by {how}, and that value is then {'used' if kind == 'hook' else 'added to the loss'}"
            related = (Related(cut.span, "the flag chooses the cut here", "note"),) + related
        self.it.emit(Event("dead_term", where, {"why": why, "backward_line": bspan.row, "kind": kind},
                           related=related))

    # ------------------------------------------------------------------ at an optimizer step
    def at_step(self, st: State, oid: int, tids: Sequence[int], span: Span, site: Span, opt: str) -> None:
        meta = st.meta
        if meta.get("exhausted") and meta.get("reach_backwards") and st.loop_ctx:
            self._exhausted(st, oid, tids, span, site, opt)
        # only a training loop's steps: a single step (a snippet, a peer trained elsewhere) says
        # nothing about what the program trains over time
        if not meta.get("reach_backwards") or not st.loop_ctx:
            if meta.get("reach_backwards") and not meta.get("reach_open"):
                tids = self._detached_in_place(st, oid, tids, span, site, opt)
            for tid in tids:
                self.trained.add((oid, tid))
            return
        if meta.get("reach_open"):
            # the backward went where the analysis cannot follow: only a parameter nothing reads can be
            # known untrained
            for tid in tids:
                key = (oid, tid)
                if key in self.trained or key in self.untrained:
                    continue
                info = st.t.get(tid)
                cut = self._never_read(st, tid, strict=True) if info is not None and info.rg is True \
                    and not st.grads.get(tid) and tid not in self.flow.manual_grads else None
                if cut is None:
                    self.trained.add(key)
                else:
                    self.untrained[key] = (cut, span, site, opt, info.name or "a parameter")  # type: ignore[union-attr]
            return
        self.unheld.at_step(st, oid, span, site, opt)  # GW719: held by no optimizer (checks/unheld.py)
        if self.groups.records:
            self.groups.at_step(st, oid, span, site, opt)
        replaced: Any = False  # not looked for yet
        strays: Any = False
        in_eval: Any = None
        for tid in tids:
            key = (oid, tid)
            info = st.t.get(tid)
            if key in self.trained:
                if key in self.abandoned or st.grads.get(tid) or info is None or info.rg is not True:
                    continue
                # trained at an earlier step: abandoned only if the model was given a new tensor since
                if strays is False:
                    strays = _strays(self, st, oid, site)
                if strays is not None and strays.kind == "stray_new":
                    self.abandoned.add(key)
                    self.untrained[key] = (strays, span, site, opt, info.name or "a parameter")
                continue
            if st.grads.get(tid) or info is None or info.rg is not True or tid in self.flow.manual_grads \
                    or tid in self.flow.fake_leaves:
                self.trained.add(key)
                if key not in self.abandoned:
                    self.untrained.pop(key, None)
                continue
            first = meta.get("reach_first_backward", 0)
            if any(w.seq > first for w in st.writes.get(info.counter, ()) + st.data_writes.get(info.storage, ())):
                # written in place by the program while it trains (an EMA codebook, a manual update):
                # trained otherwise (an initialisation before the first backward is not)
                self.trained.add(key)
                self.untrained.pop(key, None)
                continue
            if key in self.untrained:
                continue
            if strays is False:
                strays = _strays(self, st, oid, site)
            cut = strays or self._cut_from(tid)
            if cut is None or cut.kind == "stray_new":
                # new tensors made inside a constructor: the instance the name now holds was built
                # after the optimizer (a rebinding of the model), which is the line to change
                if replaced is False:
                    replaced = self._replaced(st, site, tids)
                cut = replaced or cut or self._never_read(st, tid)
            if cut is not None and cut.kind in ("detach", "nograd") and in_eval is None:
                in_eval = self._kept_in_eval(st)
            if cut is None or cut.kind in ("detach", "nograd") and tid in in_eval:
                # no reason seen (unused on purpose, or reached where we cannot see), or a module the
                # program put in eval mode and whose outputs it cuts: a frozen teacher or target
                # network that happens to sit among the optimized modules, kept still on purpose
                self.trained.add(key)
                continue
            self.untrained[key] = (cut, span, site, opt, info.name or "a parameter")

    def _detached_in_place(self, st: State, oid: int, tids: Sequence[int], span: Span, site: Span, opt: str) -> List[int]:
        """A single step says nothing about what a program trains, except through a tensor detached in place
        (``index.append(docs.detach_())``) that the backwarded loss then used: the loss is computed from it, so
        the parameters it came from were meant to train, and they get no gradient. The others: as trained."""
        rest: List[int] = []
        for tid in tids:
            info = st.t.get(tid)
            cut = self._cut_from(tid) if info is not None and info.rg is True and not st.grads.get(tid) \
                and tid not in self.flow.manual_grads else None
            if cut is not None and cut.what == "`.detach_()`" and (oid, tid) not in self.trained:
                self.untrained.setdefault((oid, tid), (cut, span, site, opt, info.name or "a parameter"))  # type: ignore[union-attr]
            else:
                rest.append(tid)
        return rest

    def _kept_in_eval(self, st: State) -> Set[int]:
        """The tensors held by modules in eval mode (``.eval()`` sets every submodule's ``training``)."""
        out: Set[int] = set()
        for attrs in list(st.objs.values()):
            mode = attrs.get("training")
            if "__module__" in attrs and isinstance(mode, ConstV) and mode.value is False:
                out.update(v.tid for v in attrs.values() if isinstance(v, TensorV))
        return out

    def _exhausted(self, st: State, oid: int, tids: Sequence[int], span: Span, site: Span, opt: str) -> None:
        """An optimizer rebuilt by the code that built the first one (a learning-rate schedule that
        makes a new optimizer each epoch) from a one-shot iterator (``filter(...)``) that the first
        one consumed: the rebuilt one gets nothing from it, and what it held, reached by the loss,
        is stepped by no optimizer from then on. The line to change makes the iterator (``list(...)``)."""
        held = set(tids)
        for rec, lost in st.meta["exhausted"].get(oid, ()):
            first = rec.consumer
            if first is None or (first.row, first.column, first.file) != (site.row, site.column, site.file):
                continue  # another optimizer consumed it: it may still step them
            missed = [t for t in lost if t not in held and st.grads.get(t) and st.t.get(t) is not None
                      and st.t[t].rg is True]
            key = ("exhausted", rec.made)
            if not missed or key in self.reported:
                continue
            self.reported.add(key)
            names = sorted({st.t[t].name or "a parameter" for t in missed})
            shown = _listed(names)
            self.it.emit(Event("untrained_parameter", rec.made, {
                "names": shown if len(missed) < 2 else f"{len(missed)} parameters ({shown})",
                "opt": opt, "opt_line": site.row,
                "fate": f"which the `{opt}` built at line {site.row} is given through the `{rec.what}(...)` made here, "
                        f"are stepped only by the first one",
                "why": f"`{rec.what}(...)` returns a one-shot iterator, which the first optimizer built at line "
                       f"{site.row} consumed; the optimizer rebuilt there gets an empty group from it, so from then on "
                       f"the gradients the loss gives them are applied by no optimizer (the step at line {span.row}); "
                       f"make it a list once: `list({rec.what}(...))`"},
                related=(Related(site, "the optimizer rebuilt here gets nothing from the iterator", "optimizer"),
                         Related(span, "stepped without them", "step"))))

    def _call_at(self, site: Span) -> Optional[ast.Call]:
        """The call of the analysed file's text that starts at ``site`` (an optimizer's construction),
        looked up once per site: the checks of every step ask for it."""
        key = (site.row, site.column)
        if key not in self._calls_at:
            self._calls_at[key] = next((n for n in ast.walk(self.it.tree) if isinstance(n, ast.Call)
                                        and n.lineno == site.row and n.col_offset + 1 == site.column),
                                       None)  # spans count columns from 1
        return self._calls_at[key]

    def _replaced(self, st: State, site: Span, tids: Sequence[int]) -> Optional[Cut]:
        """The optimizer was built over ``name.parameters()`` and ``name`` was bound to a new
        instance after that: the loss trains the new one (some of its parameters got a gradient),
        the optimizer steps the old one. The rebinding is the line to change."""
        call = self._call_at(site)
        if call is None or not call.args:
            return None
        holders = {ast.unparse(n.func.value): n.func.value for n in ast.walk(call.args[0]) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and n.func.attr in ("parameters", "named_parameters")
                   and _plain_ref(n.func.value)}
        if len(holders) != 1:
            return None
        name, ref = holders.popitem()
        if isinstance(ref, ast.Name):
            now: Optional[Value] = st.lookup(name)
        elif isinstance(ref.value, ast.Name) and isinstance(st.lookup(ref.value.id), ObjV):  # type: ignore[attr-defined]
            now = st.attrs(st.lookup(ref.value.id).oid).get(ref.attr)  # type: ignore[union-attr,attr-defined]
        else:
            return None
        if not isinstance(now, ObjV):
            return None
        new = {t.tid for _, t in self.it.modules.module_params(now, st)}
        if not new or new & set(tids) or not any(st.grads.get(t) for t in new):
            return None
        scope = self._scope_of(call)
        later = sorted((n for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.lineno > site.row
                        and any(ast.unparse(t) == name for t in n.targets)
                        and isinstance(n.value, ast.Call)), key=lambda n: n.lineno)
        if not later:
            return None
        return Cut("replaced", self.it.span_of(later[0]), f"`{name} = {ast.unparse(later[0].value)[:40]}`")

    def _held(self, st: State) -> Set[int]:
        """The tensors any optimizer of the program holds."""
        return {t for other in self.flow.opt_sites for t in _params_of(st, other)}

    def _optimized_model(self, st: State, site: Span, oid: int) -> Optional[ObjV]:
        """The module whose ``.parameters()`` the optimizer built at ``site`` was given whole (built in
        another module of the project: the module its construction named, checks/flowtorch.py)."""
        call = self._call_at(site) if site.file is None else None
        if call is None or not call.args:
            return self.flow.opt_models.get(oid) if site.file is not None else None
        arg = call.args[0]
        if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters"
                and not arg.args and isinstance(arg.func.value, ast.Name)):
            return None
        now = st.lookup(arg.func.value.id)
        return now if isinstance(now, ObjV) and self.it.modules.is_module_obj(now, st) else None

    def _never_read(self, st: State, tid: int, strict: bool = False) -> Optional[Cut]:
        """A parameter a module of this file registers (``self.pos = nn.Parameter(...)``) and no
        code of its class ever reads. Reported where the attribute registered just before it is used
        (``h = self.tok(tokens)``: where the two were meant to be combined), else at ``forward``'s
        return. ``strict`` (the backward was not followed whole): no code of the file reads an
        attribute of that name, names it in a string, or lists the module's parameters other than
        for an optimizer (an L2 penalty over ``model.parameters()`` would train it)."""
        for oid, attrs in st.objs.items():
            for attr, v in attrs.items():
                if not (isinstance(v, TensorV) and v.tid == tid):
                    continue
                cls = attrs.get("__class__")
                info = getattr(cls, "target", None)
                node = getattr(info, "node", None)
                if not isinstance(node, ast.ClassDef) or not self._defined_here(node):
                    # a class of another module (reached through an import): which code reads the
                    # attribute is that module's text, and a span here would name this file's rows
                    return None
                scope = self.it.tree if strict else node
                for n in ast.walk(scope):
                    if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, ast.Load):
                        return None  # read somewhere (maybe on a path the run did not take)
                    if isinstance(n, ast.Constant) and n.value == attr:
                        return None  # getattr(self, "pos"), a state-dict key: read by name
                if strict and not self._parameters_only_for_optimizers():
                    return None
                site = self._sibling_use(node, attr)
                if site is None:
                    fwd = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
                    rets = [r for r in ast.walk(fwd) if isinstance(r, ast.Return)] if fwd is not None else []
                    if len(rets) != 1:
                        return None
                    site = rets[0]
                return Cut("unused", self.it.span_of(site), f"`self.{attr}`")
        return None

    def _defined_here(self, node: ast.ClassDef) -> bool:
        """Is ``node`` a class of the analysed file's own text (not of a module it imports)?"""
        if self._own_classes is None:
            self._own_classes = {id(n) for n in ast.walk(self.it.tree) if isinstance(n, ast.ClassDef)}
        return id(node) in self._own_classes

    def _sibling_use(self, cls: ast.ClassDef, attr: str) -> Optional[ast.stmt]:
        """The first statement outside ``__init__`` that reads the attribute ``__init__`` sets just
        before ``attr``."""
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            return None
        order = [t.attr for s in init.body if isinstance(s, ast.Assign) for t in s.targets
                 if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]
        if attr not in order or order.index(attr) == 0:
            return None
        prev = order[order.index(attr) - 1]
        for f in cls.body:
            if not isinstance(f, ast.FunctionDef) or f.name == "__init__":
                continue
            for s in ast.walk(f):
                if isinstance(s, (ast.Assign, ast.Return, ast.Expr, ast.AugAssign)) and any(
                        isinstance(n, ast.Attribute) and n.attr == prev and isinstance(n.ctx, ast.Load)
                        for n in ast.walk(s)):
                    return s
        return None

    def _parameters_only_for_optimizers(self) -> bool:
        """Every ``.parameters()``/``.named_parameters()``/``.state_dict()``/``.modules()`` call of the
        file is inside the arguments of an optimizer's construction."""
        if self._params_listed is None:
            inside: Set[int] = set()
            calls = []
            for n in ast.walk(self.it.tree):
                if isinstance(n, ast.Call):
                    f = ast.unparse(n.func)
                    if ".optim." in f or f.startswith("optim.") or f.rsplit(".", 1)[-1] in _OPTIMIZERS:
                        inside.update(id(m) for a in list(n.args) + [k.value for k in n.keywords] for m in ast.walk(a))
                    if isinstance(n.func, ast.Attribute) and n.func.attr in (
                            "parameters", "named_parameters", "state_dict", "modules", "named_modules", "children"):
                        calls.append(n)
            self._params_listed = all(id(c) in inside for c in calls)
        return self._params_listed

    def _scope_of(self, node: ast.AST, tree: Optional[ast.AST] = None) -> ast.AST:
        """The function (or module) whose body holds ``node``, in ``tree`` (the analysed file's)."""
        tree = self.it.tree if tree is None else tree
        best: ast.AST = tree
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= node.lineno <= (n.end_lineno or 0):
                if best is tree or n.lineno >= getattr(best, "lineno", 0):
                    best = n
        return best

    def _leaves(self, cut: Cut) -> FrozenSet[int]:
        nodes, leaves = self.sources.get(cut, ((), frozenset()))
        got = self._leaves_of.get(cut)
        if got is None:
            got = frozenset(t for m in walk_nodes(list(nodes)) for t in m.leaves) if nodes else frozenset()
            self._leaves_of[cut] = got
        return got | leaves

    def _told_as_term(self, cut: Cut, tids: Sequence[int]) -> bool:
        """Was a loss term computed from these parameters, under the same ``no_grad`` block as
        ``cut``, already reported as added to the loss as a constant (GW722)? Then that term is the
        one cause: the values the block computed besides it (`values = critic(obs)`) are not another."""
        if cut.kind != "nograd" or cut.region is None:
            return False
        return any(d.kind == "nograd" and d.region == cut.region and set(tids) <= self._leaves(d)
                   for d in self.dead_terms)

    def _cut_from(self, tid: int) -> Optional[Cut]:
        # a cut whose value a backwarded loss went on to use first: that is where the path ended
        for cut, (nodes, leaves) in self.sources.items():
            if cut not in self.used and cut not in self.mode_cuts:
                continue  # only a value the loss went on to use instead (or an eval-mode branch) tells why
            if tid in leaves:
                return cut
            got = self._leaves_of.get(cut)
            if got is None:
                got = frozenset(t for m in walk_nodes(list(nodes)) for t in m.leaves) if nodes else frozenset()
                self._leaves_of[cut] = got
            if tid in got:
                return cut
        return None

    def finish(self) -> None:
        by_cut: Dict[Tuple[Cut, int], List[Tuple[int, Span, Span, str, str]]] = {}
        for (oid, tid), (cut, step, site, opt, name) in self.untrained.items():
            if (oid, tid) in self.trained and (oid, tid) not in self.abandoned or tid in self.reached_by_raising:
                continue
            by_cut.setdefault((cut, oid), []).append((tid, step, site, opt, name))
        for (cut, _), params in by_cut.items():
            if self._told_as_term(cut, [p[0] for p in params]):
                continue
            _, step, site, opt, _ = params[0]
            names = sorted({p[4] for p in params})
            shown = _listed(names)
            where = self.config.get(cut) or self.st_self_loss.get(cut) or cut.span or site
            entry = self.it.filename  # a line of the analysed file, named when the finding is in another
            them = "them" if len(params) > 1 else "it"
            why = f"the only values computed from {'them' if len(params) > 1 else 'it'} that the program uses " \
                  f"were cut from the graph here by {cut.what or cut.kind}, and no backwarded loss reaches " \
                  f"{'them' if len(params) > 1 else 'it'} another way (`.grad` stays None: the step at " \
                  f"{line_ref(step, where, entry)} leaves {'them' if len(params) > 1 else 'it'} unchanged)"
            related: Tuple[Related, ...] = (Related(site, "handed to the optimizer here", "optimizer"),
                                             Related(step, "stepped here without a gradient", "step"))
            if cut in self.st_self_loss and cut.span is not None:
                why = f"this loss compares the straight-through output (line {cut.span.row}: its gradient goes to the " \
                      f"input only, never to what it looked up) with the detached input itself, so it trains none of " \
                      f"{them}; compute it on the looked-up value (the step at {line_ref(step, where, entry)} leaves {them} unchanged)"
                related = (Related(cut.span, "the straight-through estimator cuts the lookup here", "note"),) + related
            elif cut.kind == "unused" and cut.span is not None:
                why = f"the module registers {cut.what} but no code of its class reads it: this forward never " \
                      f"uses it, so no loss reaches it (the step at {line_ref(step, where, entry)} leaves it unchanged)"
            elif cut.kind == "stray":
                whose = f"the parameters of the copy made at line {cut.region.row} (a deep copy is a new set of " \
                        f"parameters; the loss never reaches them)" if cut.region is not None else \
                    "parameters the model no longer uses"
                why = f"this optimizer holds {whose}, while the loss trains {cut.what}, which no optimizer " \
                      f"holds: build it over the parameters the model uses (the step at {line_ref(step, where, entry)} moves " \
                      f"nothing the loss reaches)"
            elif cut.kind == "averaged":
                why = averaged_why(cut, site, step, where, opt)
            elif cut.kind == "stray_new" and cut.region is not None:
                why = _new_module_why(cut, site, step, where, entry)
                related = (Related(cut.region, "the new module is made here", "note"),) + related
            elif cut.kind == "stray_new":
                why = f"this gives the model a new tensor after the optimizer was built at {line_ref(site, where, entry)}: the " \
                      f"loss now trains {cut.what}, which no optimizer holds, and the tensor the optimizer holds " \
                      f"never gets a gradient again (the step at {line_ref(step, where, entry)} leaves it unchanged); update the " \
                      f"existing parameter in place instead"
            elif cut.kind == "replaced" and cut.span is not None:
                why = f"the optimizer was built over the parameters of the instance the name held then, and " \
                      f"{cut.what} at line {cut.span.row} replaced it with a new one: the loss trains the new " \
                      f"instance, which no optimizer steps, and the step at {line_ref(step, where, entry)} moves nothing it uses"
            elif cut.kind == "none_grad":
                why = f"this backward returns `None` where the forward takes {them}: autograd accepts it and gives " \
                      f"{them} no gradient, and no backwarded loss reaches {them} another way (the step at " \
                      f"{line_ref(step, where, entry)} leaves {them} unchanged); return the gradient with respect to that input"
            elif cut.kind == "nondiff" and cut not in self.mode_cuts:
                why = f"the only values computed from {them} that the program uses go through {cut.what or 'this op'} " \
                      f"here, which is not differentiable (indices or a mask: no gradient flows back through it), and " \
                      f"no backwarded loss reaches {them} another way (the step at {line_ref(step, where, entry)} leaves {them} " \
                      f"unchanged); use a differentiable relaxation (a softmax weighting, `F.gumbel_softmax(..., " \
                      f"hard=True)`, a straight-through estimator)"
            elif cut in self.mode_cuts and cut.span is not None:
                why = f"this call leaves the module in eval mode for the training step at {line_ref(step, where, entry)}, whose " \
                      f"eval-mode branch cuts {them} from the graph by {cut.what or cut.kind} at line {cut.span.row}; no " \
                      f"backwarded loss reaches {them} another way"
                related = (Related(cut.span, "the eval-mode branch cuts the gradient here", "note"),) + related
            elif cut in self.config and cut.span is not None:
                why = f"this object is built with a flag that picks, at line {cut.span.row}, a copy cut from the " \
                      f"graph by {cut.what or cut.kind}; no backwarded loss reaches {them} another way (the step at " \
                      f"{line_ref(step, where, entry)} leaves {them} unchanged)"
                related = (Related(cut.span, "the flag chooses the cut here", "note"),) + related
            fate = f"handed to `{opt}` at {line_ref(site, where, entry)}, never get a gradient"
            shown = shown if len(params) < 2 else f"{len(params)} parameters ({shown})"
            if cut.kind == "stray" and cut.region is not None:
                shown = f"the copies of {shown}"
            elif cut.kind == "stray_new":
                fate = f"handed to `{opt}` at {line_ref(site, where, entry)}, get no gradient once the model is given the new {_new_what(cut)}"
            self.it.emit(Event("untrained_parameter", where, {
                "names": shown, "opt": opt, "opt_line": site.row, "why": why, "fate": fate},
                related=related))
        self.untrained = {}


def _self_flag(test: ast.expr) -> Optional[str]:
    """``self.flag`` or ``not self.flag``: the flag's name."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self":
        return test.attr
    return None


def _strays(self: GradientReach, st: State, oid: int, site: Span) -> Optional[Cut]:
    """The backward gave gradients to parameters that no optimizer of the program holds, while
    this one holds parameters that get none: the optimizer and the model hold different objects.
    Either the optimizer was built over the wrong ones (a ``copy.deepcopy`` of the model, a list
    of parameters taken before a module was replaced: the construction is the line to change), or
    the model was given new ones after it was built (a weight re-wrapped as a new
    ``nn.Parameter``: that re-wrap is the line to change)."""
    held = self._held(st)
    stray = sorted(t for t, g in st.grads.items() if g and t not in held and t not in self.flow.manual_grads
                   and t not in self.flow.fake_leaves and st.t.get(t) is not None and st.t[t].param
                   and st.t[t].rg is True and st.t[t].leaf)
    if not stray:
        return None
    averaged = averaged_forward(st, stray)
    if averaged is not None:
        return Cut("averaged", averaged, _listed(sorted({st.t[t].name or "a parameter" for t in stray})))
    names = sorted({st.t[t].name or "a parameter" for t in stray})
    shown = _listed(names)
    them = f"{len(stray)} parameters ({shown})" if len(stray) > 1 else shown
    built = self.flow.opt_built_id.get(oid)
    later = [t for t in stray if built is not None and t > built]
    if not later:
        copies = st.meta.get("copies", {})
        copy = next((copies[t][1] for t in _params_of(st, oid) if t in copies), None)
        return Cut("stray", site, them, region=copy)
    made = st.t[later[0]].created
    if made is None:
        return None
    return _stray_new(self.flow, later[0], oid, made, them, st.t[later[0]].loop_ctx)


def _stray_new(flow: Any, tid: int, oid: int, made: Span, them: str, loop_ctx: Any) -> Cut:
    """A parameter made after the optimizer ``oid`` was built, the one the loss trains: where it was
    made, or, when a call of the frame that built the optimizer made it once, outside the loops the
    optimizer was built outside of (a `reset_classifier(n)` after `create_optimizer(model)`, not a
    module made anew by each forward), that call, which is what moves before the construction."""
    chain, (built_in, opt_loops) = flow.param_chains.get(tid, ()), flow.opt_chains.get(oid, (None, None))
    once = built_in is not None and loop_ctx == opt_loops
    shared = _shared_prefix(chain, built_in) if once else len(chain)
    if shared < len(chain):
        return Cut("stray_new", chain[shared], them, region=made)
    return Cut("stray_new", made, them)


def _new_module_why(cut: Cut, site: Span, step: Span, where: Span, entry: str = "") -> str:
    return f"this call makes a new module for the model after the optimizer was built at {line_ref(site, where, entry)}: " \
           f"the loss now trains {cut.what}, which no optimizer holds, and the parameters the optimizer holds never " \
           f"get a gradient again (the step at {line_ref(step, where, entry)} leaves them unchanged); make this call before " \
           f"building the optimizer"


def _new_what(cut: Cut) -> str:
    """What a ``stray_new`` cut gave the model: a new module (made by a call) or a new tensor."""
    return "module" if cut.region is not None else "tensor"


def _shared_prefix(a: Sequence[Span], b: Sequence[Span]) -> int:
    """How many leading call sites two call chains share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _plain_ref(node: ast.expr) -> bool:
    """``model`` or ``self.model``: a name, or an attribute of one."""
    return isinstance(node, ast.Name) or isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)


# optimizer classes a construction can name without the `optim.` prefix (`from torch.optim import Adam`)
_OPTIMIZERS = frozenset({"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                         "ASGD", "LBFGS", "Rprop", "SparseAdam", "Adafactor"})


def _listed(names: Sequence[str]) -> str:
    """The first three names of a message, quoted, and how many more there are."""
    return ", ".join(f"`{n}`" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
