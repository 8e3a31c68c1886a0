"""The store side of the interpreter: what an assignment, an augmented assignment and ``del`` do
to the state (names, attributes, items, unpacking), and where a tensor with a graph is kept
(``note_store``: hazards carried into the next iteration are reported there).
"""
from __future__ import annotations

import ast
from typing import Any, List

from gradwarden.engine.state.model import ConstV, DictV, NONE, ObjV, SeqV, State, TensorV, UNKNOWN, Value


class Stores:
    """The ``stores`` role: assignment targets."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ------------------------------------------------------------------ assignment
    def note_store(self, value: Value, st: State, stmt: ast.AST, held: bool = False, moved: bool = False) -> None:
        """Remember where a tensor with a graph was last stored (hazards carried to the next
        iteration are reported there): any store inside a loop, and (``held``) a store into an
        attribute, a container or a buffer, where the value outlives the code that made it.
        ``moved``: the tensor is reached through a container stored again (``memory.extend(
        episode)``): where it was first kept stays the place that keeps it."""
        if isinstance(value, TensorV):
            info = st.t.get(value.tid)
            if info is not None and info.grad_fn is not None:
                span = self.it.span_of(stmt)
                if held and not (moved and info.held_at is not None):
                    st.update_t(value.tid, held_at=span)
                if not st.loop_ctx:
                    return
                depth = len(self.it.call_spans)
                if info.stored_at is not None and depth > info.stored_depth:
                    return  # a callee unpacking its argument (`w1, b2 = params`) is not where the caller keeps it
                st.update_t(value.tid, stored_at=span, stored_depth=depth)
        elif isinstance(value, SeqV):
            for x in st.lists.get(value.lid, ())[:8]:
                if isinstance(x, (TensorV, SeqV)):
                    self.note_store(x, st, stmt, held, moved=True)

    def assign(self, target: ast.expr, value: Value, st: State, stmt: ast.AST) -> None:
        # by class identity (no subclasses of these node and value classes exist): the most
        # run method after eval
        tcls, vcls = target.__class__, value.__class__
        if (vcls is TensorV or vcls is SeqV) and tcls is not ast.Tuple and tcls is not ast.List:
            held = tcls is ast.Attribute or tcls is ast.Subscript
            if held or st.loop_ctx:
                self.note_store(value, st, stmt, held)
        if tcls is ast.Name:
            st.frame()[target.id] = value  # type: ignore[attr-defined]
            if vcls is ObjV:
                self.it.modules.name_params(value, target.id, st)  # type: ignore[arg-type, attr-defined]
            elif vcls is TensorV:
                info = st.t.get(value.tid)  # type: ignore[attr-defined]
                if info is not None and not info.name:
                    st.update_t(value.tid, name=target.id)  # type: ignore[attr-defined]
                if info is not None and info.grad_fn is not None and not info.grad_fn.label:
                    info.grad_fn.label = target.id  # type: ignore[attr-defined]
        elif tcls is ast.Tuple or tcls is ast.List:
            items = self.unpack(value, len(target.elts), st)
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            if star is not None:
                for i, e in enumerate(target.elts):
                    if isinstance(e, ast.Starred):
                        self.assign(e.value, UNKNOWN, st, stmt)
                    else:
                        self.assign(e, items[i] if i < len(items) else UNKNOWN, st, stmt)
                return
            for e, v in zip(target.elts, items):
                self.assign(e, v, st, stmt)
        elif tcls is ast.Attribute:
            obj = self.it.ev.eval(target.value, st)
            self.store_attr(obj, target.attr, value, st, target, stmt)  # type: ignore[attr-defined]
        elif tcls is ast.Subscript:
            obj = self.it.ev.eval(target.value, st)
            self.store_item(obj, target, value, st, stmt)
            if isinstance(obj, TensorV) and isinstance(target.value, ast.Attribute):  # type: ignore[attr-defined]
                self.note_store(obj, st, stmt, held=True)  # `self.queue[:, i] = keys.T`: now kept with a graph
        elif tcls is ast.Starred:
            self.assign(target.value, value, st, stmt)

    def unpack(self, value: Value, n: int, st: State) -> List[Value]:
        if isinstance(value, SeqV):
            items = list(st.lists.get(value.lid, ()))
            if len(items) == n:
                return items
            if value.kind == "homogeneous" and items:
                return [items[0]] * n
            if len(items) > n:
                return items[:n]
        if isinstance(value, TensorV):
            return [self.it.tensors.tensor_getitem(value, None, st, None) for _ in range(n)]
        return [UNKNOWN] * n

    def store_attr(self, obj: Value, attr: str, value: Value, st: State, target: ast.Attribute, stmt: ast.AST) -> None:
        if isinstance(obj, ObjV):
            if isinstance(value, TensorV) and "__ctx__" in st.attrs(obj.oid):
                self.it.functions.note_kept(obj, [value], self.it.span_of(stmt), st)  # `ctx.foo = interm`
            self.it.modules.module_setattr(obj, attr, value, st)
            if attr == "inplace" and self.it.ev.truth_of(value) is True:
                # flipped after construction: the in-place writes it causes are this line's
                st.set_attr(obj.oid, "__inplace_at__", ConstV(self.it.span_of(stmt)))
            if isinstance(value, TensorV):
                info = st.t.get(value.tid)
                if info is not None and not info.name:
                    st.update_t(value.tid, name=self.it.text_of(target))
        elif isinstance(obj, TensorV):
            self.it.tensors.tensor_setattr(obj, attr, value, st, target, stmt)

    def store_item(self, obj: Value, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        if isinstance(obj, TensorV):
            self.it.tensors.tensor_setitem(obj, target, value, st, stmt)
        elif isinstance(obj, SeqV):
            idx = self.it.ev.eval(target.slice, st)
            items = list(st.lists.get(obj.lid, ()))
            if isinstance(idx, ConstV) and isinstance(idx.value, int) and -len(items) <= idx.value < len(items):
                items[idx.value] = value
            elif items:
                items = [value] + items[1:] if obj.kind == "homogeneous" else items
            st.own("lists")[obj.lid] = tuple(items)
        elif isinstance(obj, (DictV, ObjV)):
            items = self.it.ev.mapping(obj, st)
            if items is not None:
                self.it.ev.dict_set(items, self.it.ev.eval(target.slice, st), value, st)

    def aug_assign(self, stmt: ast.AugAssign, st: State) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            cur = st.lookup(target.id)
        elif isinstance(target, ast.Attribute):
            cur = self.it.ev.load_attr(self.it.ev.eval(target.value, st), target.attr, st, target)
        elif isinstance(target, ast.Subscript):
            cur = self.it.ev.eval(target, st)
        else:
            return
        rhs = self.it.ev.eval(stmt.value, st)
        if isinstance(cur, TensorV):
            self.it.tensors.tensor_inplace_binop(cur, stmt.op, rhs, st, stmt)
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                self.note_store(cur, st, stmt, held=True)  # `self.out += model(x)`: kept with a graph now
            if isinstance(target, ast.Subscript):
                base = self.it.ev.eval(target.value, st)
                if isinstance(base, SeqV):
                    self.store_item(base, target, cur, st, stmt)
            return
        result = self.it.ev.binop(cur, stmt.op, rhs, st, stmt)
        if isinstance(result, TensorV) and isinstance(target, ast.Name):
            self.it.backward.note_accumulation(target.id, result, rhs, st, stmt)
        self.assign(target, result, st, stmt)

    def delete_item(self, obj: Value, sl: ast.expr, st: State) -> None:
        """``del memory[:]`` empties a list, ``del memory[0]`` drops an item, ``del d[k]`` an
        entry (what is deleted is no longer carried anywhere)."""
        if isinstance(obj, SeqV):
            items = list(st.lists.get(obj.lid, ()))
            if isinstance(sl, ast.Slice):
                bounds = [self.it.ev.eval(b, st) if b is not None else NONE for b in (sl.lower, sl.upper, sl.step)]
                if all(isinstance(b, ConstV) and (b.value is None or isinstance(b.value, int)) for b in bounds):
                    del items[slice(*[b.value for b in bounds])]
                elif sl.lower is None and sl.upper is None:
                    items = []
                else:
                    return
            else:
                idx = self.it.ev.eval(sl, st)
                if isinstance(idx, ConstV) and isinstance(idx.value, int) and -len(items) <= idx.value < len(items) \
                        and obj.kind != "homogeneous":
                    del items[idx.value]
                else:
                    return
            st.own("lists")[obj.lid] = tuple(items)
        elif isinstance(obj, DictV):
            key = self.it.ev.dict_key(self.it.ev.eval(sl, st))
            if key[0] != "?":
                st.own("dicts")[obj.did] = tuple(e for e in st.dicts.get(obj.did, ()) if e[0] != key)
