"""What a GW501/GW502 fix needs to know about ``opt.step()`` and the later backward: which
statements build the later loss, which of them ran the stepped model before the step. Used by
``recompute`` (move the computation after the step) and ``detach`` (detach what is stale)."""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from gradwarden.fixes.registry import FixContext
from gradwarden.fixes._common import backward_roots, find_call_at, optimizer_model
from gradwarden.fixes._doc import CannotFix, dotted
from gradwarden.fixes._flow import scope_index, deps_closure, references


class StepPlan:
    """What a GW501/GW502 fix needs to know about ``opt.step()`` and the later backward."""

    def __init__(self, ctx: FixContext) -> None:
        doc = ctx.doc
        self.doc = doc
        node = doc.find(ctx.diag.span)
        step = doc.small_stmt_of(node) if node is not None else None
        if step is None:
            raise CannotFix("no step statement")
        self.step = step
        call = doc.find(ctx.diag.span, cst.Call)
        opt = ctx.param("opt")
        if not opt and isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
            opt = dotted(call.func.value) or ""
        self.opt = opt
        self.model = optimizer_model(doc, opt) if opt else None
        bspan = ctx.span_param("backward_span") or ctx.related("backward")
        bcall = find_call_at(doc, bspan) if bspan is not None else None
        if bcall is None:
            raise CannotFix("no later backward")
        self.bcall = bcall
        self.bstmt = doc.small_stmt_of(bcall)
        if self.bstmt is None:
            raise CannotFix("backward inside an expression")
        self.scope = doc.scope_of(step)
        if doc.scope_of(self.bstmt) is not self.scope:
            raise CannotFix("step and backward in different functions")
        self.idx = scope_index(doc, self.scope)
        self.roots = set(backward_roots(doc, bcall))
        if not self.roots:
            raise CannotFix("cannot tell what is backwarded")
        self.step_start, self.step_end = doc.offsets(step)
        self.b_start, self.b_end = doc.offsets(self.bstmt)
        self.loop_carried = self.b_start < self.step_start
        self.later_model = self._later_model()

    def _later_model(self) -> Optional[str]:
        doc = self.doc
        for node in doc.walk(self.scope):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                    node.func.attr.value == "step" and doc.has_pos(node):
                s = doc.offsets(node)[0]
                name = dotted(node.func.value)
                if s > self.b_end and name and name != self.opt:
                    return optimizer_model(doc, name)
        return None

    # ---- the later loss built after the step from values computed before it
    def chain(self) -> List[cst.CSTNode]:
        return deps_closure(self.doc, self.idx, set(self.roots), self.b_start)

    def before_step(self) -> List[cst.CSTNode]:
        return [s for s in self.chain() if self.doc.offsets(s)[1] <= self.step_start]

    def after_step_deps(self) -> List[cst.CSTNode]:
        out = [s for s in self.chain() if self.doc.offsets(s)[0] >= self.step_end]
        return out

    def stale_statements(self) -> List[cst.CSTNode]:
        """Statements before the step, in the later loss's dependencies, that run the stepped
        model (or use what such a statement computed)."""
        if self.model is None:
            raise CannotFix("cannot tell which model the optimizer trains")
        stale: List[cst.CSTNode] = []
        bound: Set[str] = set()
        for s in self.before_step():
            reads = self.idx.names_read_by(s)
            if references(reads, self.model) or reads & bound:
                stale.append(s)
                bound |= self.idx.names_bound_by(s)
        return stale

    def stale_names_used_after_step(self) -> Set[str]:
        names: Set[str] = set()
        for s in self.stale_statements():
            names |= self.idx.names_bound_by(s)
        used: Set[str] = set()
        for s in self.after_step_deps():
            used |= self.idx.names_read_by(s) & names
        return used

    def reaches_later_model(self, names: Set[str]) -> bool:
        """Do these values depend on the model that the later loss trains?"""
        if self.later_model is None:
            return True
        if self.later_model == self.model:
            return True
        closure = deps_closure(self.doc, self.idx, names, self.step_start)
        for s in closure:
            if references(self.idx.names_read_by(s), self.later_model):
                return True
        return False
