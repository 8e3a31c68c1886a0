"""Just enough data flow, on the source, for the fixes to decide *where* an edit goes.

Names are dotted texts (``h``, ``self.hidden``). Within one scope (a function body or the
module body, nested functions and classes excluded) the index lists every read and every
binding in text order, with the statement it belongs to. On top of it: the latest binding
before a point, "is it read after this statement" (with loops), view-alias chains
(``diag = K.diagonal()`` makes ``diag`` an alias of ``K``) and statement dependencies.

All of this is an approximation of Python's semantics (no types, no calls followed); the
fixes use it to place edits and to refuse when an assumption does not hold, and every
applied fix is then checked by re-running the analysis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from gradwarden.fixes._doc import Doc, base_of, dotted

# Methods and functions whose result shares memory (and the version counter) with their input.
VIEW_METHODS = {
    "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "expand", "expand_as",
    "squeeze", "unsqueeze", "narrow", "select", "diagonal", "detach", "flatten", "unflatten", "unfold",
    "as_strided", "contiguous", "movedim", "moveaxis", "swapaxes", "swapdims", "split", "chunk",
    "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "real", "imag", "view_as_real", "view_as_complex",
    "to", "type_as", "squeeze_", "unsqueeze_", "t_", "transpose_", "detach_", "requires_grad_",
    "align_as", "rename", "refine_names",
}
VIEW_ATTRS = {"T", "mT", "H", "mH", "data"}
TORCH_VIEW_FUNCS = {"transpose", "permute", "narrow", "select", "diagonal", "squeeze", "unsqueeze", "flatten",
                    "reshape", "split", "chunk", "unbind", "movedim", "swapaxes", "swapdims", "t", "detach",
                    "tensor_split", "as_strided", "view_as_real", "view_as_complex"}


@dataclass
class Ev:
    start: int
    end: int
    name: str
    kind: str  # read | bind | aug (read + in-place rebinding) | mutate (x[...] = v: a use of x)
    stmt: cst.CSTNode  # innermost statement (small statement, or compound statement for headers)
    node: cst.CSTNode


@dataclass
class Binding:
    stmt: cst.CSTNode  # the small statement / compound statement that binds
    value: Optional[cst.CSTNode]  # the assigned expression (None: for-targets, with-as, imports...)
    index: Optional[int]  # position in a tuple target, None for a plain target
    kind: str  # assign | aug | ann | for | with | import | def | other


def scope_index(doc: Doc, scope: cst.CSTNode) -> "ScopeIndex":
    """The index of ``scope`` in ``doc``, made once per document (it is read-only)."""
    key = ("scope_index", id(scope))
    held = doc.memo.get(key)
    if held is None or held[0] is not scope:
        held = doc.memo[key] = (scope, ScopeIndex(doc, scope))
    return held[1]


class ScopeIndex:
    """Reads and bindings of one scope (made through ``scope_index``, which reuses it)."""

    def __init__(self, doc: Doc, scope: cst.CSTNode) -> None:
        self.doc = doc
        self.scope = scope
        self.events: List[Ev] = []
        self.bindings: Dict[int, Binding] = {}  # id(event node) -> binding details
        self._collect()
        self.events.sort(key=lambda ev: (ev.start, 0 if ev.kind == "read" else 1))

    # ------------------------------------------------------------------ collection
    def _collect(self) -> None:
        body = self.scope.body if not isinstance(self.scope, cst.Module) else self.scope
        if isinstance(self.scope, cst.FunctionDef):
            # parameters are bound at the top of the scope
            for p in _params(self.scope.params):
                self._add(p.name, "bind", self.scope, Binding(self.scope, None, None, "param"))
        self._visit(body, None)

    def _add(self, node: cst.CSTNode, kind: str, stmt: cst.CSTNode, binding: Optional[Binding] = None) -> None:
        name = dotted(node)
        if name is None or not self.doc.has_pos(node):
            return
        s, e = self.doc.offsets(node)
        ev = Ev(s, e, name, kind, stmt, node)
        self.events.append(ev)
        if binding is not None:
            self.bindings[id(node)] = binding
        if kind in ("read", "aug", "mutate") and isinstance(node, cst.Attribute):
            # `self.hidden` also reads `self`
            v = node.value
            while isinstance(v, cst.Attribute):
                if self.doc.has_pos(v):
                    vs, ve = self.doc.offsets(v)
                    self.events.append(Ev(vs, ve, dotted(v) or "", "read", stmt, v))
                v = v.value
            if isinstance(v, cst.Name) and self.doc.has_pos(v):
                vs, ve = self.doc.offsets(v)
                self.events.append(Ev(vs, ve, v.value, "read", stmt, v))
        if kind == "bind" and isinstance(node, cst.Attribute):
            self._reads(node.value, stmt)

    def _visit(self, node: cst.CSTNode, stmt: Optional[cst.CSTNode]) -> None:
        if isinstance(node, (cst.ClassDef,)):
            self._add(node.name, "bind", node, Binding(node, None, None, "def"))
            for d in node.decorators:
                self._reads(d.decorator, node)
            for a in node.bases:
                self._reads(a.value, node)
            return
        if isinstance(node, cst.FunctionDef):
            self._add(node.name, "bind", node, Binding(node, None, None, "def"))
            for d in node.decorators:
                self._reads(d.decorator, node)
            return
        if isinstance(node, cst.Assign):
            self._reads(node.value, node)
            for t in node.targets:
                self._targets(t.target, node, node.value)
            return
        if isinstance(node, cst.AugAssign):
            self._reads(node.value, node)
            tgt = node.target
            if isinstance(tgt, (cst.Name, cst.Attribute)):
                self._add(tgt, "aug", node, Binding(node, node.value, None, "aug"))
            else:
                self._mutation(tgt, node)
            return
        if isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self._reads(node.value, node)
                self._targets(node.target, node, node.value, kind="ann")
            return
        if isinstance(node, cst.For):
            self._reads(node.iter, node)
            self._targets(node.target, node, None, kind="for")
            self._visit(node.body, node)
            if node.orelse is not None:
                self._visit(node.orelse, node)
            return
        if isinstance(node, cst.With):
            for item in node.items:
                self._reads(item.item, node)
                if item.asname is not None:
                    self._targets(item.asname.name, node, None, kind="with")
            self._visit(node.body, node)
            return
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            names = node.names if not isinstance(node.names, cst.ImportStar) else ()
            for alias in names:
                target = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(node, cst.Import) and alias.asname is None:
                    first = alias.name
                    while isinstance(first, cst.Attribute):
                        first = first.value
                    target = first
                self._add(target, "bind", node, Binding(node, None, None, "import"))
            return
        if isinstance(node, (cst.If, cst.While)):
            self._reads(node.test, node)
            self._visit(node.body, node)
            if node.orelse is not None:
                self._visit(node.orelse, node)
            return
        if isinstance(node, cst.Else):
            self._visit(node.body, stmt)
            return
        if isinstance(node, cst.Try) or isinstance(node, getattr(cst, "TryStar", cst.Try)):
            self._visit(node.body, node)
            for h in node.handlers:
                if h.type is not None:
                    self._reads(h.type, node)
                if h.name is not None:
                    self._targets(h.name.name, node, None, kind="other")
                self._visit(h.body, node)
            if node.orelse is not None:
                self._visit(node.orelse, node)
            if node.finalbody is not None:
                self._visit(node.finalbody.body, node)
            return
        if isinstance(node, (cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine, cst.Module)):
            for child in node.body:
                self._visit(child, stmt)
            return
        if isinstance(node, cst.BaseSmallStatement):
            for child in node.children:
                self._reads(child, node)
            return
        if isinstance(node, cst.BaseCompoundStatement):  # match, async ... : reads only
            for child in node.children:
                if isinstance(child, (cst.BaseSuite,)):
                    self._visit(child, node)
                else:
                    self._reads(child, node)
            return

    def _targets(self, t: cst.CSTNode, stmt: cst.CSTNode, value: Optional[cst.CSTNode], *, kind: str = "assign",
                 index: Optional[int] = None) -> None:
        if isinstance(t, (cst.Tuple, cst.List)):
            for i, el in enumerate(t.elements):
                inner = el.value
                if isinstance(inner, cst.StarredElement):
                    inner = inner.value
                self._targets(inner, stmt, value, kind=kind, index=i)
            return
        if isinstance(t, cst.StarredElement):
            self._targets(t.value, stmt, value, kind=kind, index=index)
            return
        if isinstance(t, (cst.Name, cst.Attribute)):
            self._add(t, "bind", stmt, Binding(stmt, value, index, kind))
            return
        self._mutation(t, stmt)

    def _mutation(self, t: cst.CSTNode, stmt: cst.CSTNode) -> None:
        if isinstance(t, cst.Subscript):
            base = base_of(t)
            self._reads_subscript(t, stmt)
            if isinstance(base, (cst.Name, cst.Attribute)):
                self._add(base, "mutate", stmt)
            else:
                self._reads(base, stmt)
        else:
            self._reads(t, stmt)

    def _reads_subscript(self, t: cst.CSTNode, stmt: cst.CSTNode) -> None:
        while isinstance(t, cst.Subscript):
            for el in t.slice:
                self._reads(el, stmt)
            t = t.value

    def _reads(self, node: cst.CSTNode, stmt: cst.CSTNode) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) is not None:
                self._add(n, "read", stmt)
                continue
            if isinstance(n, cst.Lambda):
                continue
            if isinstance(n, cst.NamedExpr):
                stack.append(n.value)
                if isinstance(n.target, cst.Name):
                    self._add(n.target, "bind", stmt, Binding(stmt, n.value, None, "assign"))
                continue
            if isinstance(n, cst.Attribute):  # attribute of a non-name: read its value
                stack.append(n.value)
                continue
            stack.extend(n.children)

    # ------------------------------------------------------------------ queries
    def events_of(self, name: str) -> List[Ev]:
        return [ev for ev in self.events if ev.name == name]

    def binding_before(self, name: str, offset: int) -> Optional[Ev]:
        """The latest binding of ``name`` whose statement ends before ``offset``."""
        best: Optional[Ev] = None
        for ev in self.events:
            if ev.name != name or ev.kind not in ("bind", "aug"):
                continue
            stmt_end = self._stmt_end(ev)
            if stmt_end <= offset and (best is None or stmt_end >= self._stmt_end(best)):
                best = ev
        return best

    def _stmt_end(self, ev: Ev) -> int:
        st = ev.stmt
        if isinstance(st, (cst.FunctionDef,)) and st is self.scope:
            return self.doc.offsets(st.body)[0]
        if isinstance(st, (cst.For, cst.With)):
            # a for-target / with-as is bound at the header
            return self.doc.offsets(st.body)[0]
        return self.doc.offsets(st)[1]

    def binding(self, ev: Ev) -> Optional[Binding]:
        return self.bindings.get(id(ev.node))

    def read_after(self, name: str, stmt: cst.CSTNode) -> bool:
        """Is ``name`` (its current value) read after ``stmt`` runs? Straight-line text after the
        statement, and for each enclosing loop the next iteration."""
        doc = self.doc
        s0, e0 = doc.offsets(stmt)
        evs = self.events_of(name)
        if any(ev.stmt is stmt and ev.kind == "bind" for ev in evs):
            return False  # the statement rebinds the name: later reads see the new value
        blocks = self._uncond_blocks(stmt)
        for ev in evs:
            if ev.start < e0:
                continue
            if ev.kind in ("read", "aug", "mutate"):
                return True
            if ev.kind == "bind" and self._unconditional(ev.stmt, blocks):
                break
        for loop in doc.loops_of(stmt, self.scope):
            ls, le = doc.offsets(loop)
            body_s = doc.offsets(loop.body)[0]
            # the loop test of a while runs every iteration
            if isinstance(loop, cst.While):
                for ev in evs:
                    if ls <= ev.start < body_s and ev.kind == "read":
                        return True
            for ev in evs:
                if not (body_s <= ev.start < e0):
                    continue  # the whole body up to (and including) the statement runs again
                if ev.kind in ("read", "aug", "mutate"):
                    return True
                if ev.kind == "bind" and self._unconditional(ev.stmt, self._uncond_blocks(stmt, upto=loop)):
                    break
        return False

    def _uncond_blocks(self, stmt: cst.CSTNode, upto: Optional[cst.CSTNode] = None) -> List[cst.CSTNode]:
        """Blocks that contain ``stmt`` and whose statements run whenever ``stmt``'s do
        (its own block and its enclosing blocks, up to ``upto`` or the scope)."""
        out: List[cst.CSTNode] = []
        for a in self.doc.ancestors(stmt):
            if isinstance(a, (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)):
                out.append(a)
            if a is upto or a is self.scope:
                break
        return out

    def _unconditional(self, stmt: cst.CSTNode, blocks: Sequence[cst.CSTNode]) -> bool:
        unit = self.doc.unit_of(stmt)
        p = self.doc.parent(unit)
        if isinstance(p, cst.SimpleStatementLine):
            p = self.doc.parent(p)
        return any(p is b for b in blocks)

    def first_read_after(self, name: str, offset: int) -> Optional[Ev]:
        for ev in self.events:
            if ev.name == name and ev.start >= offset and ev.kind in ("read", "aug", "mutate"):
                return ev
        return None

    def reads_in(self, node: cst.CSTNode) -> Set[str]:
        s, e = self.doc.offsets(node)
        return {ev.name for ev in self.events if s <= ev.start < e and ev.kind in ("read", "aug", "mutate")}

    def binds_in(self, node: cst.CSTNode) -> Set[str]:
        s, e = self.doc.offsets(node)
        return {ev.name for ev in self.events if s <= ev.start < e and ev.kind in ("bind", "aug")}

    def names_read_by(self, stmt: cst.CSTNode) -> Set[str]:
        return {ev.name for ev in self.events if ev.stmt is stmt and ev.kind in ("read", "aug", "mutate")}

    def names_bound_by(self, stmt: cst.CSTNode) -> Set[str]:
        return {ev.name for ev in self.events if ev.stmt is stmt and ev.kind in ("bind", "aug")}

    # ------------------------------------------------------------------ aliases
    def alias_source(self, name: str, before: int) -> Optional[Tuple[str, cst.CSTNode, cst.CSTNode]]:
        """When ``name`` (as bound before ``before``) is a view / alias of another named tensor:
        (that name, the binding statement, the view expression)."""
        ev = self.binding_before(name, before)
        if ev is None:
            return None
        b = self.binding(ev)
        if b is None or b.value is None or b.kind not in ("assign", "ann"):
            return None
        src = view_source(b.value, tuple_index=b.index)
        if src is None:
            return None
        return src, ev.stmt, b.value

    def alias_chain(self, name: str, before: int, limit: int = 6) -> List[Tuple[str, Optional[cst.CSTNode]]]:
        """[(name, None), (source, stmt making name its view), (source's source, ...), ...]."""
        chain: List[Tuple[str, Optional[cst.CSTNode]]] = [(name, None)]
        cur, at = name, before
        seen: Set[Tuple[str, int]] = set()
        for _ in range(limit):
            got = self.alias_source(cur, at)
            if got is None:
                break
            src, stmt, _ = got
            at = self.doc.offsets(stmt)[0]
            if (src, at) in seen:
                break
            seen.add((src, at))
            chain.append((src, stmt))
            cur = src
        return chain


def _params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def param_names(fn: cst.FunctionDef) -> List[str]:
    return [p.name.value for p in _params(fn.params)]


def view_source(expr: cst.CSTNode, tuple_index: Optional[int] = None) -> Optional[str]:
    """The dotted name ``expr`` is a view or alias of (``x``, ``x.t()``, ``x[0]``, ``x.view(..)``,
    ``torch.narrow(x, ..)``, ``x.split(2)`` when unpacked), else None."""
    node = expr
    for _ in range(12):
        name = dotted(node)
        if name is not None:
            if isinstance(node, cst.Attribute) and node.attr.value in VIEW_ATTRS:
                node = node.value
                continue
            return name
        if isinstance(node, cst.Subscript):
            if tuple_index is None and not _basic_index(node):
                return None
            node = node.value
            continue
        if isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value in VIEW_METHODS:
                if dotted(f.value) in ("torch", "torch.Tensor") and f.attr.value in TORCH_VIEW_FUNCS and node.args:
                    node = node.args[0].value
                    continue
                node = f.value
                continue
            return None
        if isinstance(node, cst.Attribute) and node.attr.value in VIEW_ATTRS:
            node = node.value
            continue
        return None
    return None


def _basic_index(sub: cst.Subscript) -> bool:
    """x[0], x[1:3], x[:, None], x[..., i]: basic indexing (a view). Lists, tensors (names of
    unknown type count as ints), comparisons and calls are advanced indexing (a copy)."""
    for el in sub.slice:
        s = el.slice
        if isinstance(s, cst.Slice):
            continue
        v = s.value
        if isinstance(v, (cst.Integer, cst.Ellipsis)) or (isinstance(v, cst.Name) and v.value in ("None", "Ellipsis")):
            continue
        if isinstance(v, cst.UnaryOperation) and isinstance(v.expression, cst.Integer):
            continue
        if isinstance(v, cst.Name):
            continue
        if isinstance(v, cst.BinaryOperation) and not isinstance(v.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            continue  # i + 1, c // 3
        return False
    return True


def operands(doc: Doc, expr: cst.CSTNode) -> List[cst.CSTNode]:
    """The value operands of an expression: names, attribute chains and subscripts of names,
    including the receivers of method calls (``logits`` in ``logits.view(-1)``) but not called
    functions (``self.lstm`` in ``self.lstm(x)``)."""
    out: List[cst.CSTNode] = []
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call):
            f = n.func
            if isinstance(f, cst.Attribute):
                stack.append(f.value)
            elif not isinstance(f, cst.Name):
                stack.append(f)
            for a in n.args:
                stack.append(a.value)
            continue
        if isinstance(n, cst.Subscript):
            if dotted(n.value) is not None:
                out.append(n)
            else:
                stack.append(n.value)
            for el in n.slice:
                stack.extend(el.children)
            continue
        if dotted(n) is not None:
            name = dotted(n)
            if name not in ("None", "True", "False"):
                out.append(n)
            continue
        if isinstance(n, cst.Lambda):
            continue
        stack.extend(n.children)
    out.sort(key=lambda n: doc.offsets(n)[0])
    return out


def references(names: Set[str], target: str) -> bool:
    """Does a set of dotted names use ``target`` (``model`` also matches ``model.fc``)?"""
    return any(n == target or n.startswith(target + ".") for n in names)


def deps_closure(doc: Doc, idx: ScopeIndex, names: Set[str], before: int, stop: int = 0,
                 limit: int = 60) -> List[cst.CSTNode]:
    """The statements (after ``stop``) that bind what ``names`` are, as read at ``before``,
    transitively; in text order."""
    seen: Dict[int, cst.CSTNode] = {}
    work: List[Tuple[str, int]] = [(n, before) for n in names]
    while work and len(seen) < limit:
        name, at = work.pop()
        ev = idx.binding_before(name, at)
        if ev is None:
            continue
        st = ev.stmt
        b = idx.binding(ev)
        if b is None or b.kind in ("param", "import", "def"):
            continue
        if isinstance(st, (cst.For, cst.With, cst.FunctionDef)):
            continue
        if doc.offsets(st)[0] < stop or id(st) in seen:
            continue
        seen[id(st)] = st
        start = doc.offsets(st)[0]
        for r in idx.names_read_by(st):
            work.append((r, start))
    return sorted(seen.values(), key=lambda s: doc.offsets(s)[0])
