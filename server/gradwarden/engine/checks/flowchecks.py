"""The checks of gradient flow at a backward: a loss whose graph was cut (``no_grad``,
``.detach()``, ``.item()``, a frozen parameter ...), a non-scalar backward, a number's
``.backward()``, ``autograd.grad`` inputs the outputs do not depend on; each reported where the
cut happened, in words (``why_no_grad``).

Each one states a check PyTorch makes (or a silent failure it lets through) over the facts the
``flow`` role records (engine/checks/flow.py), and emits an event for the rule that words it
(rules/flow.py). A check that proves torch raises ends the path (``Halt``), as torch would.
"""
from __future__ import annotations

import ast
import os
from typing import Any, List, Optional, Sequence, Tuple

from gradwarden.engine.checks.flowfacts import Cut
from gradwarden.engine.checks.zerograd import check_zero_gradient
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.events import Event
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import State, TensorV, Value, walk_nodes


API_TEXT = {"backward": "`.backward()`", "autograd.backward": "`torch.autograd.backward`",
            "autograd.grad": "`torch.autograd.grad`"}


def _halt() -> None:
    raise Halt()


def _region_text(self: Any, region: Span, loc: Optional[Span] = None) -> str:
    src = self.it.source_of(region)  # the region's own file, which the text names when it is not the finding's
    line = src.line(region.row).strip() if src is not None else ""
    at = f"line {region.row}" if loc is None or region.file == loc.file or region.file is None else \
        f"{os.path.basename(region.file)}:{region.row}"
    if line.startswith("@"):
        return f"`{line}` ({at})"
    if line.startswith(("with ", "async with ")):
        inner = line.split(None, 1)[1].rstrip(":").strip() if " " in line else line
        return f"`{inner}` ({at})" if len(inner) <= 60 else f"`torch.no_grad()` ({at})"
    return f"gradients disabled at {at}"


def _is_with(self: Any, region: Span) -> bool:
    src = self.it.source_of(region)  # the region's own file (a `with` in a helper of another module)
    if src is None:
        return True
    return src.line(region.row).lstrip().startswith(("with ", "async with "))


def why_no_grad(self: Any, cut: Cut, loc: Optional[Span]) -> str:
    """Why a tensor with this cut does not require grad, in words."""
    line = loc.row if loc is not None else (cut.span.row if cut.span is not None else 0)
    k = cut.kind
    if k == "nograd":
        region = _region_text(self, cut.region, loc) if cut.region is not None else "with gradients disabled"
        return f"it is computed under {region}"
    if k == "detach":
        return f"{cut.what} at line {line} cuts it from the graph"
    if k == "rewrap":
        origin = cut.origin
        if origin is not None and origin.kind in ("item",) and origin.span is not None:
            return (f"{origin.what} (line {origin.span.row}) turns it into a Python number and {cut.what} "
                    f"at line {line} builds a new tensor without a graph")
        if origin is not None and origin.kind not in ("data",) and origin.span is not None:
            return (f"{cut.what} at line {line} copies values whose graph was cut by {origin.what} "
                    f"(line {origin.span.row}) into a new tensor without a graph")
        return f"{cut.what} at line {line} copies its values into a new tensor without a graph"
    if k == "data_attr":
        return f"`.data` at line {line} takes its values without the graph"
    if k == "nondiff":
        return f"{cut.what} at line {line} is not differentiable (its result never requires grad)"
    if k == "marked":
        return f"{cut.what} at line {line} marks the custom Function's output it is computed from as non-differentiable"
    if k == "frozen":
        return f"every parameter it depends on is frozen ({cut.what} at line {line})"
    if k == "checkpoint":
        return f"reentrant `checkpoint` at line {line} returns no graph: none of its inputs requires grad"
    if k == "item":
        return f"{cut.what} at line {line} turns it into a Python number"
    return "nothing it is computed from requires grad"


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "?"
    parts = ["..." if d is ... else ("?" if d is None else str(d)) for d in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _line_text(self: Any, span: Span) -> str:
    return self.it.src.line(span.row).strip()


def _missed_unfreeze(self: Any, st: State, cut: Cut) -> Optional[Span]:
    """For a loss whose parameters are all frozen: the ``module.requires_grad = True`` meant
    to unfreeze some of them (it set a plain attribute), if their parameters are still frozen."""
    if cut.kind != "frozen" or not self.flow.attr_unfreeze:
        return None
    for tid, at in self.flow.attr_unfreeze.items():
        info = st.t.get(tid)
        if info is not None and info.rg is False:
            return at
    return None


def _frozen_for_training(self: Any, st: State, freeze: Cut) -> bool:
    """Does an optimizer hold a tensor this freeze froze?"""
    frozen = self.flow.frozen_tids.get(freeze, set())
    held = {t for tids in st.meta.get("optimizers", {}).values() for t in tids}
    return bool(frozen & held)


def _made_by_helper_called_here(self: Any, n: Any) -> bool:
    """Was node ``n`` recorded by a function of this file that the running frame called directly?"""
    depth = len(self.it.call_spans)
    at = n.call_span or n.span
    if at is None or self.it.foreign_stack or len(n.stack) != depth + 1 or \
            tuple(n.stack[:depth]) != tuple(self.it.call_spans) or getattr(at, "file", None) is not None or \
            getattr(n.stack[depth], "file", None) is not None:
        return False
    # a loss helper, not a model: a module's `forward` that returns per-sample values is called
    # for its output, and the caller's backward is where the reduction is missing
    fn = _innermost_def(self.it.tree, at.row)
    return fn is not None and fn.name not in ("forward", "__call__")


def _innermost_def(tree: ast.AST, row: int) -> Optional[ast.AST]:
    best = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= row <= (n.end_lineno or n.lineno):
            if best is None or n.lineno >= best.lineno:
                best = n
    return best


def _in_callee(self: Any, cut: Cut) -> bool:
    """Was the gradient path cut inside a function the current frame called?"""
    return len(cut.stack) > len(self.it.call_spans)


def _cut_site(self: Any, st: State, root: TensorV, cut: Cut) -> Optional[Span]:
    """The line a fix changes for a loss whose gradient path was cut.

    A cut made right here is that line. A cut inside a helper this frame called is the line
    in the helper (the `.item()`, `torch.tensor(...)`, `.detach()` to remove) — except a
    non-differentiable op (a comparison, `argmax`, `round`): a helper that returns one
    (thresholded predictions, indices) is rarely wrong; the mistake is the loss built from
    it here, so the loss's own line (when it is made in this frame) is the one to change."""
    if cut.span is None or not _in_callee(self, cut) or cut.kind == "frozen" and cut.flag_arg:
        # a helper freezing with the flag its caller passed (`set_requires_grad(net, False)`): that call is the fix
        return self.flow._frame_span(cut.stack, cut.span)
    if cut.kind == "nondiff":
        made = st.t[root.tid].created if root.tid in st.t else None
        if made is not None and self.it.graph.in_current_function(made):
            return made
        return self.flow._frame_span(cut.stack, cut.span)
    return cut.span


def _region_kind(self: Any, region: Optional[Span]) -> str:
    if region is None or self.it.foreign_stack:
        return ""
    line = self.it.src.line(region.row).lstrip()
    return "decorator" if line.startswith("@") else "with" if line.startswith(("with ", "async with ")) else "call"


def _build_if_index(tree: ast.AST) -> List[Tuple[str, Tuple[int, int], Tuple[int, int], int]]:
    out: List[Tuple[str, Tuple[int, int], Tuple[int, int], int]] = []

    def visit(node: ast.AST, fn: int) -> None:
        for child in ast.iter_child_nodes(node):
            f = id(child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            if isinstance(child, ast.If) and child.body:
                test = child.test
                key = ("not " + ast.dump(test.operand)) if isinstance(test, ast.UnaryOp) and \
                    isinstance(test.op, ast.Not) else ast.dump(test)
                body = (child.body[0].lineno, child.body[-1].end_lineno or child.body[-1].lineno)
                orelse = (child.orelse[0].lineno, child.orelse[-1].end_lineno or child.orelse[-1].lineno) \
                    if child.orelse else (0, -1)
                out.append((key, body, orelse, f))
            visit(child, f)

    visit(tree, 0)
    return out


class LossChecks:
    """The ``losses`` role: checks at ``backward()`` / ``autograd.grad`` of the gradient flow."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # --------------------------------------------------------------------------- GW701 / GW702
    def check_backward(self: Any, st: State, roots: Sequence[TensorV], span: Span, given: bool, api: str) -> None:
        """``backward()`` / ``autograd.backward`` / ``autograd.grad`` on ``roots``: each must
        require grad, and without a gradient argument each must hold exactly one element."""
        for i, r in enumerate(roots):
            info = st.t.get(r.tid)
            if info is None:
                continue
            if info.rg is False and info.grad_fn is None:
                cut = self.flow.cuts.get(r.tid)
                if cut is not None:
                    self.report_no_grad(st, r, cut, span, i, api)
                return
            if info.rg is True and info.grad_fn is None and r.tid in self.flow.rewrapped and api != "autograd.grad":
                cut = self.flow.rewrapped[r.tid]
                call = self.flow._frame_span(cut.stack, cut.span) or span
                if call != span and self.branch_conflict(call, span):
                    return
                # the new leaf is made (and the fix goes) where `torch.tensor(...)` is, in whichever
                # function: a helper returning it is reached through the call
                loc = cut.span if cut.span is not None and cut.span.file == span.file else call
                related = [Related(span, "this backward computes a gradient for that new leaf only", "backward")]
                if call not in (loc, span):
                    related.append(Related(call, "reached through this call", "note"))
                self.it.emit(Event("no_grad_backward", loc, {
                    "name": info.name or "tensor", "state": "is a new leaf made to require grad",
                    "why": why_no_grad(self, cut if cut.kind != "rewrap" else cut, loc),
                    "outcome": f"{API_TEXT.get(api, api)} at line {span.row} runs but reaches no parameter (their "
                               "gradients stay unchanged)"},
                    related=tuple(related),
                    fix_facts={"cut_kind": "rewrap_rg", "backward_span": span}, severity=2))
        check_zero_gradient(self, st, roots, span)
        if given:
            return
        for r in roots:
            info = st.t.get(r.tid)
            if info is None or info.rg is False:
                continue
            shape = self.flow.shapes.get(r.tid)
            sure = fs.is_nonscalar(shape)
            if not sure and not fs.maybe_nonscalar(shape):
                continue
            made = self.flow._node_frame_span(info)
            related = [Related(span, "raises here: a non-scalar needs `gradient=`", "backward")]
            where = span
            if made is not None and made != span:
                n = info.grad_fn
                if api == "backward" and n is not None and tuple(n.stack) == tuple(self.it.call_spans) and \
                        made.row != span.row and not self.it.foreign_stack:
                    # a loss computed by the code that backwards it: reducing it there is the fix
                    # (`autograd.grad` of a vector is fixed at the call, with `grad_outputs`)
                    where = made
                    related[0] = Related(span, f"{API_TEXT.get(api, api)} raises here: a non-scalar needs `gradient=`",
                                         "backward")
                elif api == "backward" and n is not None and _made_by_helper_called_here(self, n):
                    # a per-sample loss a helper this frame called computed and returned as is
                    # (`return recon + kld`): its last op is where the reduction belongs
                    where = n.call_span or n.span
                    related[0] = Related(span, f"{API_TEXT.get(api, api)} raises here: a non-scalar needs `gradient=`",
                                         "backward")
                    related.append(Related(made, f"`{info.name or 'it'}` is returned by this call with shape "
                                                 f"{_shape_text(shape)}", "call"))
                else:
                    related.insert(0, Related(made, f"`{info.name or 'it'}` is computed here with shape "
                                                    f"{_shape_text(shape)}", "created"))
            self.it.emit(Event("nonscalar_backward", where, {
                "name": info.name or "tensor", "shape": _shape_text(shape), "api": API_TEXT.get(api, api),
                "at": f" at line {span.row}" if where is not span else "",
                "cond": ("" if info.rg is True else " (if it requires grad; otherwise it has no graph at all)") +
                        ("" if sure else " (unless its unknown dimensions are all 1, e.g. a batch of one)")},
                related=tuple(related), fix_facts={"backward_span": span, "api": api},
                severity=None if info.rg is True and sure else 3))
            if info.rg is True and sure:
                _halt()
            return

    def report_no_grad(self: Any, st: State, root: TensorV, cut: Cut, span: Span, index: int, api: str) -> None:
        info = st.t[root.tid]
        if cut.kind in ("detach", "data") and cut.freeze is not None and cut.freeze.sure and cut.sure and \
                _frozen_for_training(self, st, cut.freeze):
            # computed from parameters an optimizer trains, frozen, and from detached inputs or plain
            # data: those parameters would carry a gradient whatever the input, so the freeze is what
            # leaves the loss without a graph (a GAN's discriminator step with the discriminator frozen);
            # a frozen feature extractor no optimizer holds is meant to stay frozen: the cut input is the fault
            cut = cut.freeze
        if cut.kind == "data" and not cut.sure:
            return  # no cut to point at, and something unknown may bring a graph: say nothing
        if cut.kind == "data":
            loc = span
        else:
            loc = _cut_site(self, st, root, cut) or span
            if cut.kind == "nograd" and cut.region is not None and (
                    not st.grad_enabled and self.flow._region(st) == cut.region or not _is_with(self, cut.region)
                    or _in_callee(self, cut)):
                # the whole computation, backward included, runs without grad; or grad was turned
                # off by a decorator / set_grad_enabled(False), or by a `with` inside a helper this
                # frame calls: that line is the one to change
                loc = cut.region
        unfreeze = _missed_unfreeze(self, st, cut)
        if unfreeze is not None:
            loc = unfreeze  # the line meant to unfreeze them is the one the fix changes
        if loc != span and self.branch_conflict(loc, span):
            return  # the cut and the backward sit in opposite branches of the same condition
        related: List[Related] = []
        if unfreeze is not None and cut.span is not None and cut.span != loc:
            related.append(Related(cut.span, "the parameters are frozen here", "note"))
        if loc != span:
            related.append(Related(span, f"{API_TEXT.get(api, api)} raises here", "backward"))
        if cut.kind == "nograd" and cut.region is not None and cut.region != loc:
            related.append(Related(cut.region, "gradients are disabled here", "note"))
        if cut.kind == "nograd" and cut.region == loc:
            at = self.flow._frame_span(cut.stack, cut.span)
            if at is not None and at != loc and at != span:
                related.append(Related(at, "computed here, without grad", "note"))
        if _in_callee(self, cut):
            call = self.flow._frame_span(cut.stack, cut.span)
            if call is not None and call not in (loc, span) and all(r.span != call for r in related):
                related.append(Related(call, "reached through this call", "note"))
            if cut.kind == "nondiff" and cut.span is not None and cut.span != loc:
                related.append(Related(cut.span, f"{cut.what} here is not differentiable", "note"))
        if cut.kind == "rewrap" and cut.origin is not None and cut.origin.span is not None:
            o = self.flow._frame_span(cut.origin.stack, cut.origin.span)
            if o is not None and o != loc:
                related.append(Related(o, f"{cut.origin.what} leaves autograd here", "note"))
        element = f"element {index} of tensors does not require grad" if api != "autograd.grad" or True else ""
        self.it.emit(Event("no_grad_backward", loc, {
            "name": info.name or "tensor", "state": "does not require grad",
            "why": why_no_grad(self, cut, cut.span if cut.kind == "nondiff" and _in_callee(self, cut) or unfreeze
                               else loc) + (f"; `{_line_text(self, unfreeze)}` only sets a Python attribute on the "
                                            "module, its parameters stay frozen" if unfreeze is not None else ""),
            "outcome": f"{API_TEXT.get(api, api)} at line {span.row} raises ({element})"
            if cut.sure else f"unless something this analysis cannot see adds a graph, {API_TEXT.get(api, api)} "
                             f"at line {span.row} raises ({element})"},
            related=tuple(related), fix_facts={"cut_kind": cut.kind, "backward_span": span, "cut_span": loc,
                                                "region": _region_kind(self, cut.region) if cut.region == loc else ""},
            severity=None if cut.sure else 3))
        if cut.sure:
            _halt()

    def report_number_backward(self: Any, st: State, num: Any, node: ast.AST) -> None:
        span = self.it.span_of(node)
        cut: Cut = num.cut
        loc = self.flow._frame_span(cut.stack, cut.span) or span
        if loc != span and self.branch_conflict(loc, span):
            return
        self.it.emit(Event("no_grad_backward", loc, {
            "name": self.it.text_of(node.value) if isinstance(node, ast.Attribute) else "value",
            "state": "is a Python number",
            "why": why_no_grad(self, cut, loc) if cut.kind == "item" else f"it holds values taken by {cut.what}",
            "outcome": f"`.backward()` at line {span.row} raises AttributeError (a number has no `backward`)"},
            related=(Related(span, "raises here", "backward"),) if loc != span else (),
            fix_facts={"cut_kind": "number", "backward_span": span, "cut_span": loc}))
        _halt()

    # --------------------------------------------------------------------------- GW703
    def check_grad_inputs(self: Any, st: State, roots: Sequence[TensorV], inputs: Value, allow: Any, span: Span) -> None:
        """``torch.autograd.grad(outputs, inputs)``: every input must require grad, and (unless
        ``allow_unused=True``) be reached by the outputs' graph."""
        ins = self.it.graph.slot_tensors(st, inputs)
        if not ins:
            return
        for i, x in enumerate(ins):
            xi = st.t.get(x.tid)
            if xi is None or xi.rg is not False:
                continue
            cut = self.flow.cuts.get(x.tid)
            if cut is None or not cut.sure:
                continue
            made = self.flow._frame_span(cut.stack, cut.span) if cut.kind != "data" else xi.created
            if made is not None and made != span and self.branch_conflict(made, span):
                continue
            # reported where the input is made: that is where `requires_grad_()` (or no detach) belongs
            where = made or span
            self.it.emit(Event("grad_input_unused", where, {
                "name": xi.name or f"inputs[{i}]", "index": i,
                "problem": f"does not require grad (\"One of the differentiated Tensors does not require grad\" at line "
                           f"{span.row})"},
                related=(Related(span, "`torch.autograd.grad` raises here", "backward"),) if where != span else (),
                fix_facts={"reason": "no_grad", "call_span": span}))
            _halt()
        if allow is True:
            return
        nodes = []
        for r in roots:
            ri = st.t.get(r.tid)
            if ri is not None and ri.grad_fn is not None:
                nodes.append(ri.grad_fn)
        if not nodes or len(nodes) != len(roots):
            return
        walk = walk_nodes(nodes)
        if any(n.id in self.flow.open_nodes for n in walk):
            return
        leaves = {t for n in walk for t in n.leaves}
        ids = {n.id for n in walk}
        for i, x in enumerate(ins):
            xi = st.t.get(x.tid)
            if xi is None or xi.rg is not True or x.tid in self.flow.fake_leaves:
                continue
            if xi.grad_fn is None:
                if not xi.leaf:
                    continue
                used = x.tid in leaves or self.it.graph.leaf_root(st, x.tid) in leaves
            else:
                used = xi.grad_fn.id in ids
            if used:
                continue
            made = self.flow._node_frame_span(xi)
            related = (Related(made, f"`{xi.name or 'it'}` is made here; the outputs are not computed from it",
                               "created"),) if made is not None and made != span else ()
            self.it.emit(Event("grad_input_unused", span, {
                "name": xi.name or f"inputs[{i}]", "index": i,
                "problem": "is not used in the graph of the outputs (\"appears to not have been used in the graph\")"},
                related=related, fix_facts={"reason": "unused", "call_span": span}))
            _halt()

    # --------------------------------------------------------------------------- branch feasibility
    def branch_conflict(self: Any, a: Span, b: Span) -> bool:
        """True when ``a`` and ``b`` lie in opposite branches of ``if`` statements with the same
        test in the same function (``if train: ... else: <no_grad>`` ... ``if train: backward``):
        no single run executes both."""
        if self.it.foreign_stack or a.file is not None or b.file is not None:
            return False
        index = self.flow._if_index
        if index is None:
            index = self.flow._if_index = _build_if_index(self.it.tree)
        ina = [(test, fn, side) for test, body, orelse, fn in index for side, rng in (("b", body), ("o", orelse))
               if rng[0] <= a.row <= rng[1]]
        if not ina:
            return False
        inb = [(test, fn, side) for test, body, orelse, fn in index for side, rng in (("b", body), ("o", orelse))
               if rng[0] <= b.row <= rng[1]]
        for ta, fa, sa in ina:
            for tb, fb, sb in inb:
                if fa != fb:
                    continue
                if ta == tb and sa != sb:
                    return True
                if (ta == "not " + tb or tb == "not " + ta) and sa == sb:
                    return True
        return False
