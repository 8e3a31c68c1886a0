"""Expressions: ``eval`` gives the value of an expression on a path's state (names, attributes,
subscripts, containers, operators, comparisons, comprehensions, calls). Python values are
followed here; a tensor, a torch object or a torch call is handed to the domain's roles.
"""
from __future__ import annotations

import ast
import operator as _op
from pathlib import PurePath
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.interp.interpreter import MAX_UNROLL, MAX_UNROLL_MODULES
from gradwarden.engine.interp.classes import class_value
from gradwarden.engine.state.model import (
    ConstV, DictV, FALSE, NONE, NumberV, ObjV, RefV, SeqV, State, TensorV, UNKNOWN, UnknownV, Value, fresh_id,
    ref_value,
)


_new_object = object.__new__


def _target_names(target: ast.expr) -> List[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


_PYOPS = {ast.Add: _op.add, ast.Sub: _op.sub, ast.Mult: _op.mul, ast.Div: _op.truediv,
          ast.FloorDiv: _op.floordiv, ast.Mod: _op.mod, ast.Pow: lambda a, b: a ** b if abs(b) < 64 else None,
          ast.BitAnd: _op.and_, ast.BitOr: _op.or_, ast.BitXor: _op.xor, ast.LShift: _op.lshift,
          ast.RShift: _op.rshift}
_UNOPS = {ast.USub: _op.neg, ast.UAdd: _op.pos, ast.Invert: _op.invert}
_CMPOPS = {ast.Eq: _op.eq, ast.NotEq: _op.ne, ast.Lt: _op.lt, ast.LtE: _op.le, ast.Gt: _op.gt,
           ast.GtE: _op.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}

# fields of the named tuples torch ops return (max/min/sort/topk/mode/median, eigh, svd, qr, slogdet, ...)
_NAMEDTUPLE_FIELDS = {"values": 0, "indices": 1, "eigenvalues": 0, "eigenvectors": 1, "U": 0, "S": 1, "V": 2,
                      "Vh": 2, "Q": 0, "R": 1, "sign": 0, "logabsdet": 1, "L": 0, "solution": 0, "output": 0}

# the methods of a dict subclass's items (``super().__init__(d)`` fills the empty dict as ``update`` does)
_DICT_METHODS = {"__init__": "update", "update": "update", "get": "get", "pop": "pop", "setdefault": "setdefault",
                 "items": "items", "keys": "keys", "values": "values", "__getitem__": "get", "copy": "copy"}

BUILTINS = frozenset("""
len range enumerate zip list tuple dict set isinstance issubclass next iter sum min max abs float int
bool str print getattr setattr hasattr super sorted reversed map filter any all round type id callable
repr format vars globals open compile exec
""".split())



def _is_classmethod(fdef: ast.AST) -> bool:
    return isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(d, ast.Name) and d.id == "classmethod" for d in fdef.decorator_list)


def _property_kind(fdef: ast.AST) -> Optional[str]:
    """``"get"`` for a method decorated ``@property`` / ``@functools.cached_property``, ``"other"``
    for a property's ``@x.setter`` / ``@x.deleter`` (the getter it replaced in the class body is
    not kept), None for a plain method."""
    for d in getattr(fdef, "decorator_list", ()):
        name = d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else None
        if name in ("property", "cached_property"):
            return "get"
        if name in ("setter", "deleter") and isinstance(d, ast.Attribute):
            return "other"
    return None

def _key_value(k: Any) -> Value:
    """The value a dict entry's key stands for (``Expressions.dict_key``'s inverse): a constant,
    a function or class, else unknown."""
    if k[0] == "c":
        return ConstV(k[1])
    return k[1].ref if k[0] == "r" else UNKNOWN


# kinds of reference usable as a dict key by identity (a registry keyed by the function itself)
_REF_KEY_KINDS = frozenset(("func", "class", "lambda"))


class RefKey:
    """A function or class as a dict key: equal to another key for the same definition (two
    evaluations of one name give two references to it), holding the reference for ``keys()``."""

    __slots__ = ("ref", "ident")

    def __init__(self, ref: RefV) -> None:
        self.ref = ref
        self.ident = (ref.kind, ref.name, id(ref.target))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RefKey) and other.ident == self.ident

    def __hash__(self) -> int:
        return hash(self.ident)


class Expressions:
    """The ``ev`` role: expressions. The handler of an expression kind is looked up once per kind
(``ex_`` + its class name); names are read inline (a third of all expressions)."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # node class -> the class's ex_* function (None: no handler), filled as met: eval runs
        # for every node, a name built and looked up each time costs
        self._ex_handlers: Dict[type, Any] = {}
        self._getattr_running: set = set()  # (object, attribute) a user `__getattr__` is looking up

    # ------------------------------------------------------------------ expressions
    def eval(self, node: Optional[ast.expr], st: State) -> Value:
        if node is None:
            return NONE
        kind = node.__class__
        if kind is ast.Name:  # State.lookup, inlined here: a third of the expressions evaluated are names
            name = node.id  # type: ignore[attr-defined]
            frame = st.frames[st.fi]
            v = frame.get(name)
            if v is None and st.fi != 0:
                foreign = frame.get("__gw_globals__")  # a function of another project module
                v = foreign.get(name) if foreign is not None else st.frames[0].get(name)  # type: ignore[union-attr]
            if v is not None:
                return v
            return ref_value("builtin", name) if name in BUILTINS else UNKNOWN
        try:
            meth = self._ex_handlers[kind]
        except KeyError:
            meth = self._ex_handlers[kind] = getattr(type(self), "ex_" + kind.__name__, None)
        if meth is None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child, st)
            return UNKNOWN
        return meth(self, node, st)

    def ex_Constant(self, node: ast.Constant, st: State) -> Value:
        # ConstV(node.value) without the frozen dataclass's __init__ (one of the most made values)
        value = _new_object(ConstV)
        value.__dict__["value"] = node.value
        return value

    def ex_Name(self, node: ast.Name, st: State) -> Value:
        return Expressions.eval(self, node, st)  # eval reads names itself (the most evaluated expression)

    def ex_Attribute(self, node: ast.Attribute, st: State) -> Value:
        return self.load_attr(self.eval(node.value, st), node.attr, st, node)

    def load_attr(self, obj: Value, attr: str, st: State, node: ast.AST) -> Value:
        cls = obj.__class__  # (no subclasses of these value classes exist)
        if cls is TensorV:
            return self.it.tensors.tensor_getattr(obj, attr, st, node)  # type: ignore[arg-type]
        if cls is ObjV:
            return self.object_getattr(obj, attr, st, node)  # type: ignore[arg-type]
        if cls is RefV:
            if obj.kind == "super":
                if obj.target.dict_base and isinstance(obj.bound, ObjV) and not any(
                        p.find_method(attr) for p in obj.target.parents):
                    items = st.attrs(obj.bound.oid).get("__items__")
                    if isinstance(items, DictV) and attr in _DICT_METHODS:  # dict.__init__ fills an empty dict
                        return ref_value("boundseq", _DICT_METHODS[attr], None, items)
                return self.it.modules.super_attr(obj, attr)
            if obj.kind == "torch":
                return ref_value("torch", f"{obj.name}.{attr}")
            if obj.kind == "module":
                if f"{obj.name}.{attr}" in ("importlib.util", "os.path"):  # `import importlib.util` binds `importlib`
                    return ref_value("module", f"{obj.name}.{attr}")
                return ref_value("builtin", f"{obj.name}.{attr}")
            if obj.kind == "project":
                return self.it.projects.attr(obj, attr, st, node)
            if obj.kind == "srcfile":  # `open("configs/x.py").read()`: the file's text, same value
                return obj if attr in ("read", "__enter__") else UNKNOWN
            if obj.kind == "class":
                if attr == "__name__":
                    return ConstV(obj.name)
                found = obj.target.find_method(attr)
                if found:
                    return ref_value("method", attr, found, obj if _is_classmethod(found[1]) else None)
                if attr == "apply" and obj.target.is_function:
                    return ref_value("apply", obj.name, obj.target)
                expr = obj.target.class_attrs.get(attr)
                if expr is not None and isinstance(expr, ast.Constant):
                    return ConstV(expr.value)
                return class_value(obj.target, attr, st) or UNKNOWN  # `Base.registry`: a shared dict
            return UNKNOWN
        if isinstance(obj, SeqV) and obj.kind == "tuple" and obj.lid in self.it.namedtuple_fields:
            fields = self.it.namedtuple_fields[obj.lid]
            items = st.lists.get(obj.lid, ())
            if attr in fields and fields.index(attr) < len(items):
                return items[fields.index(attr)]  # batch.state of a Transition(*zip(*transitions))
            return UNKNOWN
        if isinstance(obj, SeqV) and obj.kind == "tuple" and attr in _NAMEDTUPLE_FIELDS:
            items = st.lists.get(obj.lid, ())
            i = _NAMEDTUPLE_FIELDS[attr]
            return items[i] if i < len(items) else UNKNOWN  # torch.max(x, 1).values, eigh(...).eigenvectors
        if isinstance(obj, (SeqV, DictV)):
            return ref_value("boundseq", attr, None, obj)
        if cls is ConstV and isinstance(obj.value, str) and attr in _STR_METHODS:  # type: ignore[attr-defined]
            return ref_value("strmethod", attr, None, obj)
        if cls is ConstV and isinstance(obj.value, PurePath) and attr in _PATH_ATTRS:  # type: ignore[attr-defined]
            # `Path(__file__).parent / "cfg.json"`: a known path's parts (`/` joins as Python does)
            v = getattr(obj.value, attr)  # type: ignore[attr-defined]
            return ConstV(tuple(v) if attr == "parents" else v)
        return UNKNOWN

    def object_getattr(self, obj: ObjV, attr: str, st: State, node: ast.AST) -> Value:
        attrs = st.attrs(obj.oid)
        if attr in attrs:
            return attrs[attr]
        if "__namespace__" in attrs:
            return UNKNOWN  # an option the parser does not define (or set later)
        cls = attrs.get("__class__")
        if isinstance(cls, RefV) and cls.kind == "class":
            found = cls.target.find_method(attr)
            if found:
                kind = _property_kind(found[1])
                if kind is None:
                    return ref_value("method", attr, found, obj)
                return self.read_property(obj, attr, found, st, node) if kind == "get" else UNKNOWN
            expr = cls.target.class_attrs.get(attr)
            if expr is not None and isinstance(expr, ast.Constant):
                return ConstV(expr.value)
            if "__module__" not in attrs and not attr.startswith("__"):
                missing = self.missing_attr(obj, cls.target, attr, attrs, st, node)
                if missing is not None:
                    return missing
        return self.it.modules.builtin_object_attr(obj, attr, st)

    def read_property(self, obj: ObjV, attr: str, found: Any, st: State, node: ast.AST) -> Value:
        """``self.head`` of an ``@property``: its getter runs on the object (``return
        self.heads[self.task]``), as Python does on every read."""
        key = (obj.oid, "@" + attr)
        if key in self._getattr_running:
            return UNKNOWN  # a getter reading itself: unknown, not a loop
        self._getattr_running.add(key)
        try:
            return self.call(ref_value("method", attr, found, obj), [], {}, st, node)
        finally:
            self._getattr_running.discard(key)

    def missing_attr(self, obj: ObjV, cls: Any, attr: str, attrs: Dict[str, Value], st: State,
                     node: ast.AST) -> Optional[Value]:
        """An attribute a plain object of the user's class does not hold: a ``dict`` subclass's
        methods (``cfg.update``), its items when its ``__dict__`` is itself (``AttrDict``), and the
        class's own ``__getattr__`` (``cfg.OPTIMIZER`` of a config returning ``self[name]``)."""
        items = attrs.get("__items__")
        if isinstance(items, DictV):
            if attr in _DICT_METHODS:
                return ref_value("boundseq", _DICT_METHODS[attr], None, items)
            me = attrs.get("__dict__")
            if isinstance(me, ObjV) and me.oid == obj.oid:
                return self.dict_get(items, ConstV(attr), st)
        hook = cls.find_method("__getattr__")
        if hook is None:
            return None
        key = (obj.oid, attr)
        if key in self._getattr_running:
            return UNKNOWN  # `__getattr__` asking for what it is looking up: unknown, not a loop
        self._getattr_running.add(key)
        try:
            return self.call(ref_value("method", "__getattr__", hook, obj), [ConstV(attr)], {}, st, node)
        finally:
            self._getattr_running.discard(key)

    def mapping(self, v: Value, st: State) -> Optional[DictV]:
        """The items of a dict, or of an instance of a ``dict`` subclass."""
        if isinstance(v, DictV):
            return v
        if isinstance(v, ObjV):
            items = st.attrs(v.oid).get("__items__")
            if isinstance(items, DictV):
                return items
        return None

    def ex_Subscript(self, node: ast.Subscript, st: State) -> Value:
        if isinstance(node.slice, ast.Name) and node.slice.id == "__name__" and \
                isinstance(node.value, ast.Attribute) and node.value.attr == "modules":
            # `sys.modules[__name__]`: the running module itself (a loss package reading its own
            # functions by name with `getattr`)
            base = self.eval(node.value.value, st)
            if isinstance(base, RefV) and base.kind == "module" and base.name == "sys":
                return self.it.projects.running_module()
        obj = self.eval(node.value, st)
        if isinstance(obj, TensorV):
            return self.it.tensors.tensor_getitem(obj, node, st, node)
        idx = self.eval(node.slice, st)
        if isinstance(obj, NumberV):
            return obj  # a part of a shape, of `.tolist()`: numbers too (never a tensor)
        if isinstance(obj, SeqV):
            items = st.lists.get(obj.lid, ())
            if isinstance(node.slice, ast.Slice):
                if obj.kind == "homogeneous":
                    return self.new_seq(list(items), st, kind="homogeneous")
                bounds = [self.eval(b, st) if b is not None else NONE for b in
                          (node.slice.lower, node.slice.upper, node.slice.step)]
                if all(isinstance(b, ConstV) and (b.value is None or isinstance(b.value, int)) for b in bounds):
                    return self.new_seq(list(items)[slice(*[b.value for b in bounds])], st)
                return self.new_seq(list(items), st, kind="homogeneous" if items else "list")
            if isinstance(idx, ConstV) and isinstance(idx.value, int) and -len(items) <= idx.value < len(items):
                return items[idx.value]
            if items and (obj.kind == "homogeneous" or len(set(map(id, items))) == 1 or self.same_class(items, st)):
                return items[0]
            return items[0] if len(items) == 1 else UNKNOWN
        if isinstance(obj, DictV):
            return self.dict_get(obj, idx, st)
        if isinstance(obj, ObjV):
            if isinstance(node.slice, ast.Slice):
                return self.slice_container(obj, node.slice, st)
            items = self.mapping(obj, st)
            if items is not None:
                return self.dict_get(items, idx, st)
            return self.it.modules.object_getitem(obj, idx, st)
        return UNKNOWN

    def slice_container(self, obj: ObjV, sl: ast.Slice, st: State) -> Value:
        """``model.classifier[:-1]``: a new container of the same kind holding the same
        modules (an nn.Sequential slice runs them in order)."""
        attrs = st.attrs(obj.oid)
        children, keys_v = attrs.get("__children__"), attrs.get("__keys__")
        if not isinstance(children, SeqV) or children.kind == "homogeneous":
            return UNKNOWN
        bounds = [self.eval(b, st) if b is not None else NONE for b in (sl.lower, sl.upper, sl.step)]
        if not all(isinstance(b, ConstV) and (b.value is None or isinstance(b.value, int)) for b in bounds):
            return UNKNOWN
        cut = slice(*[b.value for b in bounds])
        new = ObjV(fresh_id())
        for k in ("__torch__", "__module__", "training", "__span__"):
            if k in attrs:
                st.set_attr(new.oid, k, attrs[k])
        st.set_attr(new.oid, "__children__", self.new_seq(list(st.lists.get(children.lid, ()))[cut], st))
        keys = list(st.lists.get(keys_v.lid, ())) if isinstance(keys_v, SeqV) else []
        st.set_attr(new.oid, "__keys__", self.new_seq(keys[cut], st))
        return new

    def same_class(self, items: Sequence[Value], st: State) -> bool:
        classes = set()
        for it in items:
            if not isinstance(it, ObjV):
                return False
            c = st.attrs(it.oid).get("__class__")
            classes.add(c.name if isinstance(c, RefV) else None)
        return len(classes) == 1

    def ex_Slice(self, node: ast.Slice, st: State) -> Value:
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.eval(part, st)
        return UNKNOWN

    def ex_Tuple(self, node: ast.Tuple, st: State) -> Value:
        return self.new_seq(self.eval_elts(node.elts, st), st, kind="tuple")

    def ex_List(self, node: ast.List, st: State) -> Value:
        return self.new_seq(self.eval_elts(node.elts, st), st)

    ex_Set = ex_List

    def eval_elts(self, elts: Sequence[ast.expr], st: State) -> List[Value]:
        out: List[Value] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, st)
                items = self.known_items(v, st)
                out.extend(items if items is not None else [])
            else:
                out.append(self.eval(e, st))
        return out

    def ex_Dict(self, node: ast.Dict, st: State) -> Value:
        d = DictV(fresh_id())
        entries = []
        for k, v in zip(node.keys, node.values):
            if k is None:  # `{**other}`: the other mapping's items
                val = self.eval(v, st)
                src = self.mapping(val, st)
                entries.extend(st.dicts.get(src.did, ()) if src is not None else [(("?", None), UNKNOWN)])
                continue
            entries.append((self.dict_key(self.eval(k, st)), self.eval(v, st)))
        st.own("dicts")[d.did] = tuple(entries)
        return d

    def new_seq(self, items: List[Value], st: State, kind: str = "list") -> SeqV:
        s = SeqV(fresh_id(), kind)
        st.own("lists")[s.lid] = tuple(items)
        return s

    def dict_key(self, key: Value) -> Any:
        if isinstance(key, ConstV):
            return ("c", key.value)
        if isinstance(key, RefV) and key.kind in _REF_KEY_KINDS and key.bound is None:
            # a function or class as a key (`LOSSES[fn] = weight` by a registering decorator):
            # hashed by identity in Python, so the definition it names is the key
            return ("r", RefKey(key))
        return ("?", None)

    key_value = staticmethod(lambda k: _key_value(k))

    def dict_get(self, d: DictV, key: Value, st: State) -> Value:
        k = self.dict_key(key)
        entries = st.dicts.get(d.did, ())
        for ek, ev in entries:
            if ek == k and k[0] != "?":
                return ev
        vals = [ev for _, ev in entries]
        if len(vals) == 1:
            return vals[0]
        if vals and k[0] == "?" and all(isinstance(v, TensorV) and st.t.get(v.tid) is not None and st.t[v.tid].param
                                        for v in vals):
            return vals[0]  # a parameter table looked up by a name we cannot compute: any one of them
        return UNKNOWN

    def dict_set(self, d: DictV, key: Value, value: Value, st: State) -> None:
        k = self.dict_key(key)
        entries = [e for e in st.dicts.get(d.did, ()) if not (e[0] == k and k[0] != "?")]
        entries.append((k, value))
        st.own("dicts")[d.did] = tuple(entries)

    def ex_BinOp(self, node: ast.BinOp, st: State) -> Value:
        left = self.eval(node.left, st)
        right = self.eval(node.right, st)
        return self.binop(left, node.op, right, st, node)

    def binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            return self.it.tensors.tensor_binop(left, op, right, st, node)
        if isinstance(left, ConstV) and isinstance(right, ConstV):
            try:
                return ConstV(_PYOPS[type(op)](left.value, right.value))
            except Exception:
                return UNKNOWN
        if isinstance(left, SeqV) and isinstance(right, SeqV) and isinstance(op, ast.Add):
            return self.new_seq(list(st.lists.get(left.lid, ())) + list(st.lists.get(right.lid, ())), st)
        return UNKNOWN

    def ex_UnaryOp(self, node: ast.UnaryOp, st: State) -> Value:
        v = self.eval(node.operand, st)
        if isinstance(node.op, ast.Not):
            t = self.truth_of(v)
            return UNKNOWN if t is None else ConstV(not t)
        if isinstance(v, TensorV):
            if isinstance(node.op, ast.USub):
                return self.it.tensors.call_tensor_method(v, "neg", [], {}, st, node)
            if isinstance(node.op, ast.Invert):
                return self.it.tensors.call_tensor_method(v, "bitwise_not", [], {}, st, node)
            return v
        if isinstance(v, ConstV):
            try:
                return ConstV(_UNOPS[type(node.op)](v.value))
            except Exception:
                return UNKNOWN
        return UNKNOWN

    def ex_BoolOp(self, node: ast.BoolOp, st: State) -> Value:
        vals = [self.eval(v, st) for v in node.values]
        # a container's truth is its items' count where they are known (`act_kwargs or {}` with a
        # dict of options handed in, `layers or [default]`), as `if d:` reads it (``truth``)
        truths = [self.container_truth(v, st) for v in vals]
        if isinstance(node.op, ast.And):
            if any(t is False for t in truths):
                return FALSE
            if all(t is True for t in truths):
                return vals[-1]
        else:
            if any(t is True for t in truths):
                return next(v for v, t in zip(vals, truths) if t is True)
            if all(t is False for t in truths):
                return vals[-1]
        return UNKNOWN

    def ex_Compare(self, node: ast.Compare, st: State) -> Value:
        left = self.eval(node.left, st)
        result: Optional[bool] = True
        tensor_cmp = isinstance(left, TensorV)
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, st)
            tensor_cmp |= isinstance(right, TensorV)
            r = self.compare(left, op, right, st)
            if r is None:
                result = None
            elif r is False and result is not None:
                result = False
            left = right
        if tensor_cmp and not any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in node.ops):
            return self.it.graph.new_tensor(st, rg=False, node=node, dtype="bool")  # a comparison gives a bool tensor
        return UNKNOWN if result is None else ConstV(result)

    def compare(self, a: Value, op: ast.cmpop, b: Value, st: State) -> Optional[bool]:
        if isinstance(op, (ast.Is, ast.IsNot)):
            if isinstance(b, ConstV) and b.value is None:
                if isinstance(a, ConstV):
                    r = a.value is None
                elif isinstance(a, (TensorV, ObjV, SeqV, DictV)) or (isinstance(a, RefV) and a.kind != "builtin"):
                    r = False
                else:
                    return None
                return r if isinstance(op, ast.Is) else not r
            return None
        if isinstance(a, ConstV) and isinstance(b, ConstV):
            try:
                return bool(_CMPOPS[type(op)](a.value, b.value))
            except Exception:
                return None
        return None

    def ex_IfExp(self, node: ast.IfExp, st: State) -> Value:
        t = self.truth(node.test, st)
        if t is True:
            return self.eval(node.body, st)
        if t is False:
            return self.eval(node.orelse, st)
        a = self.eval(node.body, st)
        b = self.eval(node.orelse, st)
        return a if not isinstance(a, UnknownV) else b

    def ex_NamedExpr(self, node: Any, st: State) -> Value:
        v = self.eval(node.value, st)
        self.it.stores.assign(node.target, v, st, node)
        return v

    def ex_Lambda(self, node: ast.Lambda, st: State) -> Value:
        # inside a call, the frame it closes over is kept with its index: a lambda returned by a
        # builder (`return lambda pred, y: sum(w * fn(pred, y) for fn, w in fns)`) still sees `fns`
        if st.fi == 0 and self.it.foreign_stack:
            # at the module level of another project module (`model_dict = {"resnet8": lambda: resnet8()}`
            # in `models/__init__.py`): its names are that module's globals, wherever it is called
            return ref_value("lambda", "<lambda>", (node, ("module", self.it.foreign_stack[-1][0])))
        return ref_value("lambda", "<lambda>", (node, st.fi if st.fi == 0 else (st.fi, st.frame())))

    def _str_seq_method(self, recv: Value, name: str, args: List[Value], kwargs: Dict[str, Value], st: State) -> Value:
        """``".".join(parts)`` of known strings (a module path, a registry key built from parts)
        is that string; ``name.split(".")`` / ``rsplit(".", 1)`` of a known string is the list of
        its parts (``cfg["type"].rsplit(".", 1)`` naming a module and a class)."""
        if kwargs:
            return UNKNOWN
        if name == "join":
            items = self.known_items(args[0], st) if len(args) == 1 else None
            if items is None or not all(isinstance(x, ConstV) and isinstance(x.value, str) for x in items):
                return UNKNOWN
            return ConstV(recv.value.join(x.value for x in items))  # type: ignore[attr-defined,union-attr]
        if not all(isinstance(a, ConstV) and (a.value is None or isinstance(a.value, (str, int))) and
                   not isinstance(a.value, bool) for a in args):
            return UNKNOWN
        try:
            parts = getattr(recv.value, name)(*[a.value for a in args])  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            return UNKNOWN
        return self.new_seq([ConstV(p) for p in parts], st) if len(parts) <= MAX_UNROLL else UNKNOWN

    def ex_JoinedStr(self, node: ast.JoinedStr, st: State) -> Value:
        """An f-string whose parts are all known (``f"models.{name}"`` with ``name`` an argparse
        default, ``f"layer{i}"`` in a loop over ``range(3)``, ``f"{i:02d}"``) is that string, as
        Python formats it; an unknown part, or a conversion other than ``!s``, leaves it unknown."""
        parts: Optional[List[str]] = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                x = self.eval(v.value, st)
                spec = self.eval(v.format_spec, st) if v.format_spec is not None else ConstV("")
                if parts is not None and v.conversion in (-1, ord("s")) and isinstance(spec, ConstV) and \
                        isinstance(x, ConstV) and type(x.value) in (str, int, float, bool):
                    try:
                        parts.append(format(str(x.value) if v.conversion != -1 else x.value, spec.value))
                    except (TypeError, ValueError):
                        parts = None
                else:
                    parts = None
            elif parts is not None and isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            else:
                parts = None
        return ConstV("".join(parts)) if parts is not None else UNKNOWN

    def ex_Starred(self, node: ast.Starred, st: State) -> Value:
        return self.eval(node.value, st)

    def ex_Await(self, node: ast.Await, st: State) -> Value:
        return self.eval(node.value, st)

    def ex_ListComp(self, node: Any, st: State) -> Value:
        return self.comprehension(node, st, node.elt)

    ex_SetComp = ex_ListComp

    ex_GeneratorExp = ex_ListComp

    def ex_DictComp(self, node: ast.DictComp, st: State) -> Value:
        # evaluate `(key, value)` pairs like a list comprehension, then make the dict of them
        pairs = self.comprehension(node, st, ast.Tuple(elts=[node.key, node.value], ctx=ast.Load()))
        d = DictV(fresh_id())
        entries = []
        for pair in st.lists.get(pairs.lid, ()) if isinstance(pairs, SeqV) else ():
            kv = st.lists.get(pair.lid, ()) if isinstance(pair, SeqV) else ()
            if len(kv) == 2:
                key = kv[0] if pairs.kind != "homogeneous" else UNKNOWN
                entries.append((self.dict_key(key), kv[1]))
        st.own("dicts")[d.did] = tuple(entries)
        return d

    def comprehension(self, node: Any, st: State, elt: ast.expr) -> Value:
        """Evaluate a comprehension: once per element of a known sequence, else once."""
        gen = node.generators[0]
        it = self.eval(gen.iter, st)
        items = self.known_items(it, st)
        results: List[Value] = []
        frame = st.frame()
        saved = {n: frame.get(n) for n in _target_names(gen.target)}
        try:
            if items is not None and (len(items) <= MAX_UNROLL or len(items) <= MAX_UNROLL_MODULES and
                                      self.it.stmts.module_walk(items, st)):
                for item in items:
                    self.it.stores.assign(gen.target, item, st, node)
                    if all(self.truth(c, st) is not False for c in gen.ifs):
                        results.append(self._comp_rest(node, st, elt))
                return self.new_seq(results, st)
            self.it.stores.assign(gen.target, self.fresh_element(self.element_of(it, st), st), st, node)
            results.append(self._comp_rest(node, st, elt))
            return self.new_seq(results, st, kind="homogeneous")
        finally:
            for n, v in saved.items():
                if v is None:
                    frame.pop(n, None)
                else:
                    frame[n] = v

    def _comp_rest(self, node: Any, st: State, elt: ast.expr) -> Value:
        for gen in node.generators[1:]:
            it = self.eval(gen.iter, st)
            self.it.stores.assign(gen.target, self.fresh_element(self.element_of(it, st), st), st, node)
        return self.eval(elt, st)

    # -- truth of conditions
    def truth(self, node: ast.expr, st: State) -> Optional[bool]:
        return self.container_truth(self.eval(node, st), st)

    def container_truth(self, v: Value, st: State) -> Optional[bool]:
        if v.__class__ is DictV and st.dicts.get(v.did):  # type: ignore[attr-defined]
            return True  # a dict holding items (`if self.state:` once the state is set)
        if v.__class__ is SeqV and v.kind != "homogeneous" and st.lists.get(v.lid):  # type: ignore[attr-defined]
            return True
        return self.truth_of(v)

    @staticmethod
    def truth_of(v: Value) -> Optional[bool]:
        if isinstance(v, ConstV):
            try:
                return bool(v.value)
            except Exception:
                return None
        if isinstance(v, (ObjV, RefV)) and not (isinstance(v, RefV) and v.kind == "torch"):
            return True
        return None

    # -- iteration helpers
    def known_items(self, it: Value, st: State) -> Optional[List[Value]]:
        if isinstance(it, SeqV) and it.kind != "homogeneous":
            items = list(st.lists.get(it.lid, ()))
            if not items and it.lid in self.it.prefilled_lists:
                return None
            return items
        if isinstance(it, DictV):
            if not st.dicts.get(it.did) and it.did in self.it.prefilled_dicts:
                return None
            return [self.key_value(k) for k, _ in st.dicts.get(it.did, ())]
        if isinstance(it, ConstV) and isinstance(it.value, (tuple, list, str)) and len(it.value) <= MAX_UNROLL:
            return [ConstV(x) for x in it.value]
        if isinstance(it, ObjV):  # nn.ModuleList / nn.Sequential of known children
            children = st.attrs(it.oid).get("__children__")
            if isinstance(children, SeqV) and children.kind != "homogeneous":
                return list(st.lists.get(children.lid, ()))
        return None

    def element_of(self, it: Value, st: State) -> Value:
        if isinstance(it, SeqV):
            items = st.lists.get(it.lid, ())
            if not items:
                return UNKNOWN
            if len(items) == 1 or it.kind == "homogeneous":
                return items[0]
            return items[-1]
        if isinstance(it, TensorV):
            # iterating a tensor unbinds it: each row is one of several views
            info = st.t[it.tid]
            rg = info.rg if st.grad_enabled else False
            grad_fn = self.it.graph.make_node(st, "unbind", info.created or Span(1, 1, 1, 1), [it], (), st.next_seq()) \
                if rg is not False else None
            return self.it.graph.alias_tensor(st, it, kind="multi_view", span=info.created, rg=rg, grad_fn=grad_fn,
                                              opname="unbind")
        if isinstance(it, ObjV):
            return self.it.modules.object_iter_element(it, st)
        return UNKNOWN

    def fresh_element(self, elem: Value, st: State) -> Value:
        return elem

    # ------------------------------------------------------------------ calls
    def eval_args(self, node: ast.Call, st: State) -> Tuple[List[Value], Dict[str, Value]]:
        args: List[Value] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, st)
                items = self.known_items(v, st)
                self.it.starred_rest.pop(id(node), None)  # not the sequence of an earlier visit
                if items is not None:
                    args.extend(items)
                else:
                    if isinstance(v, SeqV) and len(node.args) == 1:
                        self.it.starred_rest[id(node)] = v
                    args.append(UNKNOWN)
            else:
                args.append(self.eval(a, st))
        kwargs: Dict[str, Value] = {}
        for kw in node.keywords:
            v = self.eval(kw.value, st)
            if kw.arg is None:
                v = self.mapping(v, st) or v
                if isinstance(v, DictV):
                    for k, val in st.dicts.get(v.did, ()):
                        if k[0] == "c" and isinstance(k[1], str):
                            kwargs[k[1]] = val
            else:
                kwargs[kw.arg] = v
        return args, kwargs

    def _make_namedtuple(self, fields: Tuple[str, ...], args: List[Value], kwargs: Dict[str, Value],
                         st: State) -> Value:
        """An instance of a ``collections.namedtuple`` class: a tuple whose fields are read by name."""
        items = list(args) + [kwargs[f] for f in fields[len(args):] if f in kwargs]
        if len(items) != len(fields) or len(args) + len(kwargs) != len(fields) or \
                any(a is UNKNOWN for a in args):
            return UNKNOWN
        seq = self.new_seq(items, st, kind="tuple")
        self.it.namedtuple_fields[seq.lid] = fields
        return seq

    def ex_Call(self, node: ast.Call, st: State) -> Value:
        func = self.eval(node.func, st)
        args, kwargs = self.eval_args(node, st)
        return self.call(func, args, kwargs, st, node)

    def call(self, func: Value, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if isinstance(func, RefV):
            k = func.kind
            if k == "tmethod":  # the most frequent: first
                return self.it.tensors.call_tensor_method(func.bound, func.name, args, kwargs, st, node)
            if k == "torch":
                return self.it.torch.call_torch(func.name, args, kwargs, st, node)
            if k == "func":
                fdef, _ = func.target
                return self.it.calls.call_function(fdef, args, kwargs, st, self.it.span_of(node), closure=func.target[1])
            if k == "lambda":
                lam, fi = func.target
                return self.it.calls.call_lambda(lam, fi, args, st, self.it.span_of(node))
            if k == "method":
                (cls, fdef) = func.target
                if _is_classmethod(fdef):
                    # `Factory.from_config(cfg)` / `self.from_config(cfg)`: `cls` is the class
                    # looked up on (or the instance's class), else the class defining it
                    owner = func.bound if isinstance(func.bound, RefV) and func.bound.kind == "class" else \
                        st.attrs(func.bound.oid).get("__class__") if isinstance(func.bound, ObjV) else None
                    if not (isinstance(owner, RefV) and owner.kind == "class"):
                        owner = ref_value("class", cls.name, cls)
                    return self.it.calls.call_function(fdef, [owner] + args, kwargs, st, self.it.span_of(node))
                if func.bound is not None and not self.it.is_static(fdef):
                    return self.it.calls.call_function(fdef, [func.bound] + args, kwargs, st, self.it.span_of(node),
                                                       bound_self=True)
                return self.it.calls.call_function(fdef, args, kwargs, st, self.it.span_of(node))
            if k == "class":
                return self.it.calls.instantiate(func.target, args, kwargs, st, self.it.span_of(node))
            if k == "apply":
                return self.it.functions.apply_custom_function(func.target, args, kwargs, st, self.it.span_of(node))
            if k == "builtin":
                if func.name.startswith("super-torch."):
                    return self.it.modules.call_super_torch(func, args, kwargs, st, node)
                if func.name == "super-noop":
                    return NONE
                return self.it.builtins.call_builtin(func.name, args, kwargs, st, node)
            if k == "omethod":
                return self.it.modules.call_object_method(func.bound, func.name, args, kwargs, st, node)
            if k == "boundseq":
                return self.it.builtins.call_seq_method(func.bound, func.name, args, kwargs, st, node)
            if k == "namedtuple":
                return self._make_namedtuple(func.target, args, kwargs, st)
            if k == "strmethod":
                if func.name in _STR_SEQ_METHODS:
                    return self._str_seq_method(func.bound, func.name, args, kwargs, st)
                return _str_method(func.bound, func.name, args, kwargs)
            if k == "srcfile":
                return func
            if k == "partial":  # functools.partial(f, *bound, **bound_kw)(*args, **kwargs)
                inner, bound, bound_kw = func.target
                return self.call(inner, list(bound) + list(args), dict(bound_kw, **kwargs), st, node)
            return UNKNOWN
        if isinstance(func, ObjV):
            return self.it.modules.call_object(func, args, kwargs, st, node)
        # Unknown callee: any tensor argument might be used; the result is unknown.
        return UNKNOWN


# attributes of a known path (pathlib.PurePath) that are known paths or strings
_PATH_ATTRS = frozenset({"parent", "parents", "name", "stem", "suffix"})
# methods of a known string that return a known string or truth value (a model class looked up by
# `name.lower() == opt.model.replace("_", "") + "model"`, a config key normalized with `.upper()`)
_STR_METHODS = frozenset({"lower", "upper", "casefold", "capitalize", "title", "strip", "lstrip", "rstrip",
                          "replace", "startswith", "endswith", "removeprefix", "removesuffix", "isdigit",
                          "isidentifier", "zfill", "join", "split", "rsplit"})
# of those, the ones that read or make a sequence (Expressions._str_seq_method)
_STR_SEQ_METHODS = frozenset({"join", "split", "rsplit"})


def _str_method(recv: Value, name: str, args: List[Value], kwargs: Dict[str, Value]) -> Value:
    """The method applied to constant arguments (strings, integers, tuples of strings); anything
    else: unknown."""
    if kwargs or not all(isinstance(a, ConstV) and isinstance(a.value, (str, int)) and not isinstance(a.value, bool)
                         for a in args):
        return UNKNOWN
    try:
        return ConstV(getattr(recv.value, name)(*[a.value for a in args]))  # type: ignore[attr-defined]
    except (TypeError, ValueError, AttributeError):
        return UNKNOWN
