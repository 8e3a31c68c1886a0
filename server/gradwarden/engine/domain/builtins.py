"""The Python builtins followed over the engine's values (``isinstance``, ``range``, ``list``,
``zip``, ``enumerate``, ``sum``, ``getattr``, ``copy.deepcopy`` ...), the methods of lists and
dicts, and ``super()``.
"""
from __future__ import annotations

import ast
import json
import os
from pathlib import PurePath
from typing import Any, Dict, List, Optional

from gradwarden.engine.domain.containers import container_length
from gradwarden.engine.state.model import (
    ConstV, DictV, FALSE, NONE, ObjV, PLAIN_NUMBER, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, UnknownV, Value,
    fresh_id, ref_value,
)


MAX_ZIP_KNOWN = 16  # zip of a known sequence with unknown ones: positions followed one by one
MAX_FILTER_CALLS = 32  # filter(fn, seq): fn is followed on at most this many known items

# One-shot iterators (``filter``, ``iter``, ``zip``): a value that the first consumer empties. The
# state's ``meta["oneshot"]`` maps the list id of each one to ``Oneshot``; consumers
# (``list(...)``, an optimizer's parameter groups) mark it, and an optimizer built from one that
# was already consumed gets nothing from it (domain/optimizers.py).
ONESHOT_NAMES = frozenset({"filter", "iter", "zip", "itertools.chain"})


class Oneshot:
    """Where a one-shot iterator was made, by what, and its first consumer (None: not yet)."""

    __slots__ = ("made", "what", "consumer")

    def __init__(self, made: Any, what: str, consumer: Any = None) -> None:
        self.made = made
        self.what = what
        self.consumer = consumer


def oneshot_of(v: Value, st: State) -> Optional[Oneshot]:
    if not isinstance(v, SeqV):
        return None
    return st.meta.get("oneshot", {}).get(v.lid)


def make_oneshot(v: Value, st: State, made: Any, what: str) -> None:
    """``v`` is a one-shot iterator (a generator such as ``model.parameters()``) made at ``made``."""
    if isinstance(v, SeqV):
        meta = st.own("meta")
        meta["oneshot"] = {**meta.get("oneshot", {}), v.lid: Oneshot(made, what)}


def consume(v: Value, st: State, consumer: Any) -> Optional[Oneshot]:
    """``v`` is read to its end by ``consumer`` (a span): the record as it was before (None: not
    a one-shot iterator). Its ``consumer`` was None the first time."""
    rec = oneshot_of(v, st)
    if rec is None or rec.consumer is not None:
        return rec
    meta = st.own("meta")
    table = dict(meta.get("oneshot", {}))
    table[v.lid] = Oneshot(rec.made, rec.what, consumer)  # type: ignore[union-attr]
    meta["oneshot"] = table
    return rec


# `os.path` functions of known strings (a config next to its loader: `os.path.join(os.path.dirname(
# __file__), name + ".yaml")`); `abspath` / `realpath` only of a path already absolute (else the
# answer depends on the working directory the program runs in)
MAX_JSON_ITEMS = 512  # values of one JSON document read (a config: a few dozen)
_PATH_FUNCTIONS = frozenset({"os.path.join", "os.path.dirname", "os.path.basename", "os.path.abspath",
                             "os.path.realpath", "os.path.normpath"})


def _path_function(name: str, args: List[Value], kwargs: Dict[str, Value]) -> Value:
    if kwargs or not args or not all(isinstance(a, ConstV) and isinstance(a.value, str) for a in args):
        return UNKNOWN
    parts = [a.value for a in args]  # type: ignore[attr-defined]
    fn = name.rsplit(".", 1)[1]
    if fn == "join":
        return ConstV(os.path.join(*parts))
    if len(parts) != 1:
        return UNKNOWN
    if fn in ("abspath", "realpath"):
        return ConstV(os.path.normpath(parts[0])) if os.path.isabs(parts[0]) else UNKNOWN
    return ConstV(getattr(os.path, fn)(parts[0]))


class Builtins:
    """The ``builtins`` role: Python builtins and container methods."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ================================================================== builtins & containers
    def call_builtin(self, name: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        mark = fresh_id()  # ids grow: a sequence made by this call has a larger one
        out = self._call_builtin(name, args, kwargs, st, node)
        if name in ONESHOT_NAMES and isinstance(out, SeqV) and out.lid > mark and args:
            meta = st.own("meta")
            table = dict(meta.get("oneshot", {}))
            table[out.lid] = Oneshot(self.it.span_of(node), name)
            meta["oneshot"] = table
        elif name in ("list", "tuple", "sorted", "reversed", "set") and args:
            consume(args[0], st, self.it.span_of(node))
        return out

    def _filter(self, args: List[Value], st: State, node: ast.AST) -> Value:
        """``filter(fn, seq)``: the known items ``fn`` does not reject (an item whose test the
        analysis cannot decide is kept), as a new sequence (marked one-shot by the caller)."""
        items = self.it.ev.known_items(args[1], st) if len(args) == 2 else None
        if items is None:
            return UNKNOWN
        fn = args[0]
        if len(items) > MAX_FILTER_CALLS or not isinstance(fn, RefV) or fn.kind not in ("func", "lambda"):
            keep = items
        else:
            keep = [x for x in items if self.it.ev.truth_of(self.it.ev.call(fn, [x], {}, st, node)) is not False]
        return self.it.ev.new_seq(keep, st)

    def _call_builtin(self, name: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if name == "collections.OrderedDict":
            name = "dict"  # ordered as every dict is (`nn.Sequential(OrderedDict(pairs))` names its children)
        if name == "filter":
            return self._filter(args, st, node)
        if name == "itertools.chain":
            # the items of each iterable in turn (CycleGAN's optimizer over both generators'
            # parameters); an iterable of unknown items makes the whole chain unknown
            parts = [self.it.ev.known_items(a, st) for a in args]
            if any(p is None for p in parts) or kwargs:
                return UNKNOWN
            return self.it.ev.new_seq([x for p in parts for x in p], st)
        if name == "isinstance" and len(args) == 2:
            return self.builtin_isinstance(args[0], args[1], st)
        if name == "argparse.ArgumentParser":
            return self.new_parser(kwargs.get("parents"), st)
        if name in _PATH_FUNCTIONS:
            return _path_function(name, args, kwargs)
        if name in ("types.SimpleNamespace", "argparse.Namespace") and not args:
            ns = ObjV(fresh_id())  # `SimpleNamespace(head="smooth", lr=0.05)`: a config object of its keywords
            st.set_attr(ns.oid, "__namespace__", TRUE)
            for k, v in kwargs.items():
                st.set_attr(ns.oid, k, v)
            return ns
        if name == "importlib.import_module" and args and isinstance(args[0], ConstV):
            return self.it.projects.import_by_name(args[0].value, node, st)
        if name == "runpy.run_path" and args and isinstance(args[0], ConstV):
            return self.it.projects.run_by_path(args[0].value, node, st)
        if name in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"):
            # a path of known strings, computed as pathlib does (joined with `/`, its `.parent`)
            parts = [a.value for a in args if isinstance(a, ConstV) and isinstance(a.value, (str, PurePath))]
            return ConstV(PurePath(*parts)) if parts and len(parts) == len(args) and not kwargs else UNKNOWN
        if name in ("json.load", "json.loads") and len(args) == 1 and not kwargs:
            return self._json_value(args[0], st)
        if name == "open" and args and isinstance(args[0], ConstV) and isinstance(args[0].value, PurePath):
            args = [ConstV(str(args[0].value))] + list(args[1:])
        if name == "open" and args and isinstance(args[0], ConstV) and isinstance(args[0].value, str):
            if args[0].value.endswith(".py"):
                return self.it.projects.source_file(args[0].value)
            mode = args[1] if len(args) > 1 else kwargs.get("mode", ConstV("r"))
            return self.it.projects.text_file(args[0].value, st) if isinstance(mode, ConstV) and \
                mode.value in ("r", "rt") else UNKNOWN
        if name == "compile" and args and isinstance(args[0], RefV) and args[0].kind == "srcfile":
            return args[0]  # compile(f.read(), path, "exec"): the same file's code
        if name == "exec" and len(args) >= 2 and isinstance(args[0], RefV) and args[0].kind == "srcfile":
            return self.it.projects.exec_source(args[0], args[1], node, st)
        if name == "importlib.util.spec_from_file_location" and len(args) >= 2 and isinstance(args[1], ConstV):
            return self.it.projects.spec_by_path(args[1].value)
        if name == "importlib.util.module_from_spec" and args:
            return self.it.projects.module_from_spec(args[0])
        if name == "range":
            vals = [a.value for a in args if isinstance(a, ConstV)]
            if len(vals) == len(args) and all(isinstance(v, int) for v in vals):
                r = range(*vals)
                if len(r) <= 8:
                    return self.it.ev.new_seq([ConstV(i) for i in r], st)
            seq = self.it.ev.new_seq([PLAIN_NUMBER], st, kind="homogeneous")  # integers, of unknown value
            if len(args) >= 2 and isinstance(args[0], ConstV) and isinstance(args[0].value, int) and (
                    len(args) == 2 or isinstance(args[2], ConstV) and isinstance(args[2].value, int) and args[2].value > 0):
                # range(0, n, k) of an unknown n: its first iteration, if any, is the start (a loop
                # over truncated-BPTT chunks resets its state when `j == 0` and carries it after)
                self.it.range_starts[seq.lid] = args[0]
            return seq
        if name == "collections.deque":
            # a replay memory or a queue: a list that drops its oldest items past `maxlen`. A known
            # small `maxlen` is not modelled (what it keeps depends on the count); a capacity from a
            # config (unknown) is a memory's size, which keeps the previous step's items
            maxlen = kwargs.get("maxlen", args[1] if len(args) > 1 else NONE)
            if isinstance(maxlen, ConstV) and maxlen.value is not None and (
                    not isinstance(maxlen.value, int) or maxlen.value < 16):
                return UNKNOWN
            name = "list"
        if name in ("list", "tuple", "sorted", "reversed", "set", "iter"):
            if not args:
                return self.it.ev.new_seq([], st)
            src = args[0]
            if isinstance(src, SeqV):
                items = list(st.lists.get(src.lid, ()))
                if name == "reversed":
                    items.reverse()
                return self.it.ev.new_seq(items, st, kind="homogeneous" if src.kind == "homogeneous" else
                                          ("tuple" if name == "tuple" else "list"))
            if isinstance(src, DictV):
                return self.it.ev.new_seq([self.it.ev.key_value(k) for k, _ in st.dicts.get(src.did, ())], st)
            if isinstance(src, ObjV):
                children = st.attrs(src.oid).get("__children__")
                if isinstance(children, SeqV):
                    return children
            return src if isinstance(src, TensorV) else UNKNOWN
        if name in ("random.sample", "random.choices", "random.choice") and args and isinstance(args[0], SeqV):
            # sampling a replay memory: any stored item may come back, the oldest included
            items = list(st.lists.get(args[0].lid, ()))
            if name == "random.choice":
                return items[0] if items else UNKNOWN
            return self.it.ev.new_seq(items[:16], st, kind="homogeneous") if items else self.it.ev.new_seq([], st)
        if name == "functools.partial" and args:
            # the callable with some arguments bound (a model or optimizer factory: calling it
            # calls the callable with the bound arguments first, the call's own after)
            return ref_value("partial", "functools.partial", (args[0], tuple(args[1:]), tuple(kwargs.items())))
        if name == "random.shuffle":
            return NONE
        if name == "next" and args:
            src = args[0]
            if isinstance(src, SeqV):
                items = st.lists.get(src.lid, ())
                return items[0] if items else UNKNOWN
            return UNKNOWN
        if name == "enumerate" and args:
            items = self.it.ev.known_items(args[0], st)
            if items is not None:
                return self.it.ev.new_seq([self.it.ev.new_seq([ConstV(i), x], st, kind="tuple") for i, x in enumerate(items)], st)
            return self.it.ev.new_seq([self.it.ev.new_seq([UNKNOWN, self.it.ev.element_of(args[0], st)], st, kind="tuple")], st,
                                      kind="homogeneous")
        if name == "collections.namedtuple" and len(args) >= 2 and isinstance(args[0], ConstV):
            spec = args[1]
            if isinstance(spec, ConstV) and isinstance(spec.value, str):
                names = spec.value.replace(",", " ").split()
            else:
                got = self.it.ev.known_items(spec, st)
                names = [x.value for x in got] if got is not None and all(
                    isinstance(x, ConstV) and isinstance(x.value, str) for x in got) else []  # type: ignore[union-attr]
            if names and all(n.isidentifier() for n in names) and len(set(names)) == len(names) and not kwargs:
                return ref_value("namedtuple", str(args[0].value), tuple(names))
            return UNKNOWN
        if name == "zip" and len(args) == 1 and args[0] is UNKNOWN and id(node) in self.it.starred_rest:
            # zip(*transitions): a sequence of unknown length of equal-length tuples, transposed into
            # one sequence per field (each of unknown length, holding that field of every tuple)
            src = self.it.starred_rest[id(node)]
            rows = [self.it.ev.known_items(r, st) if isinstance(r, SeqV) and r.kind == "tuple" else None
                    for r in st.lists.get(src.lid, ())]
            if rows and all(r is not None for r in rows) and len({len(r) for r in rows}) == 1:  # type: ignore[arg-type]
                width = len(rows[0])  # type: ignore[arg-type]
                cols = [self.it.ev.new_seq([r[i] for r in rows], st, kind="homogeneous")  # type: ignore[index]
                        for i in range(width)]
                return self.it.ev.new_seq(cols, st)
            return UNKNOWN
        if name == "zip" and args:
            lists = [self.it.ev.known_items(a, st) for a in args]
            if all(x is not None for x in lists):
                n = min(len(x) for x in lists)  # type: ignore[arg-type]
                return self.it.ev.new_seq([self.it.ev.new_seq([x[i] for x in lists], st, kind="tuple") for i in range(n)], st)
            known = [x for x in lists if x is not None]
            if known and len(min(known, key=len)) <= MAX_ZIP_KNOWN:
                # zip(weights, self.ops): the known side decides the length; the others give
                # their representative element at every position
                n = min(len(x) for x in known)
                reps = [self.it.ev.element_of(a, st) if x is None else None for a, x in zip(args, lists)]
                return self.it.ev.new_seq([self.it.ev.new_seq([x[i] if x is not None else rep for x, rep in zip(lists, reps)],
                                                              st, kind="tuple") for i in range(n)], st)
            return self.it.ev.new_seq([self.it.ev.new_seq([self.it.ev.element_of(a, st) for a in args], st, kind="tuple")], st,
                                      kind="homogeneous")
        if name == "sum" and args:
            items = self.it.ev.known_items(args[0], st)
            tensors = [x for x in (items or [self.it.ev.element_of(args[0], st)]) if isinstance(x, TensorV)]
            if tensors:
                return self.it.graph.apply_op(st, None, tensors, self.it.span_of(node), "sum")[0]
            return UNKNOWN
        if name in ("len", "abs", "min", "max", "float", "int", "round", "bool", "str"):
            vals = [a for a in args if isinstance(a, ConstV)]
            if len(vals) == len(args) and args and not kwargs:
                try:
                    return ConstV(__builtins__[name](*[v.value for v in vals]) if isinstance(__builtins__, dict)
                                  else getattr(__builtins__, name)(*[v.value for v in vals]))
                except Exception:
                    return UNKNOWN
            if name == "len" and args and isinstance(args[0], SeqV) and args[0].kind != "homogeneous":
                return ConstV(len(st.lists.get(args[0].lid, ())))
            if name == "len" and len(args) == 1 and isinstance(args[0], ObjV):
                n = container_length(args[0], st)
                return ConstV(n) if n is not None else UNKNOWN
            return UNKNOWN
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], ConstV) and isinstance(args[1].value, str):
            if len(args) > 2 and self.it.modules.surely_lacks(args[0], args[1].value, st):
                return args[2]  # `getattr(model, "backbone", model)` on a model with no `backbone`
            v = self.it.ev.load_attr(args[0], args[1].value, st, node)
            if isinstance(v, UnknownV) and len(args) > 2:
                return args[2]
            return v
        if name == "setattr" and len(args) == 3 and isinstance(args[1], ConstV) and isinstance(args[1].value, str):
            if isinstance(args[0], ObjV):
                self.it.modules.module_setattr(args[0], args[1].value, args[2], st)
            return NONE
        if name == "super":
            return self.super_proxy(args, st)
        if name in ("copy.deepcopy", "copy.copy") and args:
            return self.deepcopy(args[0], st, {}, node)
        if name == "globals" and not args:
            # the running module's names (``globals()[name](**kw)``: a model zoo's factory); a
            # function of another project module reads that module's
            frame = st.frames[st.fi]
            names = frame.get("__gw_globals__") if st.fi != 0 else None
            names = names if isinstance(names, dict) else st.frames[0]
            d = DictV(fresh_id())
            st.own("dicts")[d.did] = tuple((("c", k), v) for k, v in names.items()
                                           if isinstance(k, str) and not k.startswith("__"))
            return d
        if name == "dataclasses.replace" and args and isinstance(args[0], ObjV) and not args[1:]:
            # a new instance with the same fields, the keywords changed (values are shared, not
            # copied): what the options object says stays known (`replace(inputs, q=1).best`)
            new = ObjV(fresh_id())
            st.own("objs")[new.oid] = {**st.attrs(args[0].oid), **kwargs}
            return new
        if name == "dict":
            d = DictV(fresh_id())
            entries = []
            pairs = self.it.ev.known_items(args[0], st) if args and isinstance(args[0], SeqV) else None
            for pair in pairs or ():
                kv = self.it.ev.known_items(pair, st) if isinstance(pair, SeqV) else None
                if kv and len(kv) == 2:
                    entries.append((self.it.ev.dict_key(kv[0]), kv[1]))
            src = self.it.ev.mapping(args[0], st) if args else None
            if src is not None:
                entries.extend(st.dicts.get(src.did, ()))
            entries.extend((("c", k), v) for k, v in kwargs.items())
            st.own("dicts")[d.did] = tuple(entries)
            return d
        if name == "print":
            return NONE
        return UNKNOWN

    def _json_value(self, src: Value, st: State) -> Value:
        """``json.load(f)`` of a project file opened by the code (its lines: ``open``), or
        ``json.loads(text)`` of a known string: the document as the program reads it (dicts,
        lists, numbers, strings, booleans); anything else, or a document too large: unknown."""
        if isinstance(src, ConstV) and isinstance(src.value, str):
            text = src.value
        else:
            lines = self.it.ev.known_items(src, st) if isinstance(src, SeqV) else None
            if lines is None or not all(isinstance(x, ConstV) and isinstance(x.value, str) for x in lines):
                return UNKNOWN
            text = "".join(x.value for x in lines)  # type: ignore[attr-defined]
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return UNKNOWN
        budget = [MAX_JSON_ITEMS]
        return self._json_to_value(doc, st, budget)

    def _json_to_value(self, doc: Any, st: State, budget: List[int]) -> Value:
        budget[0] -= 1
        if budget[0] < 0:
            return UNKNOWN
        if isinstance(doc, dict):
            d = DictV(fresh_id())
            st.own("dicts")[d.did] = tuple((("c", k), self._json_to_value(v, st, budget)) for k, v in doc.items())
            return d
        if isinstance(doc, list):
            return self.it.ev.new_seq([self._json_to_value(v, st, budget) for v in doc], st)
        return ConstV(doc)

    def builtin_isinstance(self, v: Value, typ: Value, st: State) -> Value:
        types = self.it.ev.known_items(typ, st) if isinstance(typ, SeqV) else [typ]
        if types is None:
            return UNKNOWN
        result: Optional[bool] = False
        for t in types:
            r = self._isinstance1(v, t, st)
            if r is True:
                return TRUE
            if r is None:
                result = None
        return UNKNOWN if result is None else FALSE

    def _isinstance1(self, v: Value, t: Value, st: State) -> Optional[bool]:
        if isinstance(t, RefV) and t.kind == "torch":
            if t.name in ("torch.Tensor", "torch.nn.Parameter"):
                if isinstance(v, TensorV):
                    return True if t.name == "torch.Tensor" else st.t[v.tid].param
                if isinstance(v, (SeqV, DictV, ConstV)):
                    return False
                if isinstance(v, ObjV):
                    return False
                return None
            if isinstance(v, ObjV):
                q = st.attrs(v.oid).get("__torch__")
                if isinstance(q, ConstV):
                    return q.value == t.name or (t.name == "torch.nn.Module")
                if t.name == "torch.nn.Module":
                    return "__module__" in st.attrs(v.oid)
                cls = st.attrs(v.oid).get("__class__")
                if isinstance(cls, RefV) and cls.kind == "class":
                    return cls.target.torch_base == t.name or False
                return None
            if isinstance(v, (TensorV, SeqV, DictV, ConstV)):
                return False
            return None
        if isinstance(t, RefV) and t.kind == "class" and isinstance(v, ObjV):
            cls = st.attrs(v.oid).get("__class__")
            if isinstance(cls, RefV) and cls.kind == "class":
                return cls.target.is_subclass_of(t.target)
            return False
        if isinstance(t, RefV) and t.kind == "builtin":
            py = {"tuple": (SeqV,), "list": (SeqV,), "dict": (DictV,)}.get(t.name)
            if py is not None:
                if isinstance(v, SeqV):
                    return (t.name == "tuple") == (v.kind == "tuple") if t.name in ("tuple", "list") else False
                if isinstance(v, (TensorV, ObjV)):
                    return False
            if t.name in ("int", "float", "bool", "str") and isinstance(v, ConstV):
                return type(v.value).__name__ == t.name
            if isinstance(v, TensorV):
                return False
        return None

    def deepcopy(self, v: Value, st: State, memo: Dict[int, Value], node: Optional[ast.AST] = None) -> Value:
        if isinstance(v, TensorV):
            info = st.t[v.tid]
            out = self.it.graph.new_tensor(st, rg=info.rg if info.leaf else False, param=info.param, name=info.name,
                                           node=node)
            if node is not None and info.param:
                # a parameter's copy carries the original's name: messages say whose copy it is
                meta = st.own("meta")
                meta["copies"] = {**meta.get("copies", {}), out.tid: (v.tid, self.it.span_of(node))}
            return out
        if isinstance(v, ObjV):
            if v.oid in memo:
                return memo[v.oid]
            new = ObjV(fresh_id())
            memo[v.oid] = new
            for k, x in st.attrs(v.oid).items():
                st.set_attr(new.oid, k, self.deepcopy(x, st, memo, node))
            return new
        if isinstance(v, SeqV):
            return self.it.ev.new_seq([self.deepcopy(x, st, memo, node) for x in st.lists.get(v.lid, ())], st, kind=v.kind)
        return v

    def call_seq_method(self, seq: Value, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                        node: ast.AST) -> Value:
        if isinstance(seq, SeqV):
            items = list(st.lists.get(seq.lid, ()))
            if name in ("append", "extend", "insert") and args:
                self.it.stores.note_store(args[-1], st, node, held=True)
            if name == "append" and args:
                items.append(args[0])
            elif name == "extend" and args:
                more = self.it.ev.known_items(args[0], st)
                items.extend(more if more is not None else [self.it.ev.element_of(args[0], st)])
            elif name == "insert" and len(args) == 2:
                items.insert(0, args[1])
            elif name == "pop":
                if not items:
                    return UNKNOWN
                v = items.pop()
                st.own("lists")[seq.lid] = tuple(items)
                return v
            elif name in ("copy",):
                return self.it.ev.new_seq(items, st, kind=seq.kind)
            elif name in ("clear",):
                items = []
            else:
                return UNKNOWN
            if len(items) > 16:
                items = items[:1] + items[-15:]
            st.own("lists")[seq.lid] = tuple(items)
            return NONE
        if isinstance(seq, DictV):
            entries = st.dicts.get(seq.did, ())
            if name == "get" and args:
                v = self.it.ev.dict_get(seq, args[0], st)
                if isinstance(v, UnknownV) and not any(k == self.it.ev.dict_key(args[0]) for k, _ in entries):
                    return args[1] if len(args) > 1 else NONE
                return v
            if name == "__setitem__" and len(args) == 2:  # `acts.__setitem__(k, v)` (a lambda's store)
                self.it.stores.note_store(args[1], st, node, held=True)
                self.it.ev.dict_set(seq, args[0], args[1], st)
                return NONE
            if name == "__getitem__" and len(args) == 1:
                return self.it.ev.dict_get(seq, args[0], st)
            if name == "setdefault" and args:
                key = self.it.ev.dict_key(args[0])
                for k, v in entries:
                    if k == key and key[0] != "?":
                        return v
                default = args[1] if len(args) > 1 else NONE
                self.it.ev.dict_set(seq, args[0], default, st)
                return default
            if name == "values":
                return self.it.ev.new_seq([v for _, v in entries], st)
            if name == "copy":  # `args = cfg.copy()`: a new dict with the same items
                d = DictV(fresh_id())
                st.own("dicts")[d.did] = tuple(entries)
                return d
            if name == "keys":
                return self.it.ev.new_seq([self.it.ev.key_value(k) for k, _ in entries], st)
            if name == "items":
                return self.it.ev.new_seq([self.it.ev.new_seq([self.it.ev.key_value(k), v], st, kind="tuple")
                                           for k, v in entries], st)
            if name == "update" and (args or kwargs):
                src = self.it.ev.mapping(args[0], st) if args else None
                if args and src is None:
                    return UNKNOWN
                for k, v in st.dicts.get(src.did, ()) if src is not None else ():
                    self.it.ev.dict_set(seq, self.it.ev.key_value(k), v, st)
                for k, v in kwargs.items():
                    self.it.ev.dict_set(seq, ConstV(k), v, st)
                return NONE
            if name == "clear" and not args:  # `store.clear()`: what was stored before is gone
                st.own("dicts")[seq.did] = ()
                return NONE
            if name == "pop" and args:
                v = self.it.ev.dict_get(seq, args[0], st)
                key = self.it.ev.dict_key(args[0])
                if key[0] != "?" and any(k == key for k, _ in entries):
                    st.own("dicts")[seq.did] = tuple(e for e in entries if e[0] != key)  # `cfg.pop("type")`
                elif isinstance(v, UnknownV) and len(args) > 1:
                    return args[1]
                return v
        return UNKNOWN

    # ================================================================== argparse
    def new_parser(self, parents: Optional[Value], st: State) -> Value:
        """``argparse.ArgumentParser(...)``: an object holding each option's default (the values
        ``python script.py`` runs with), its ``parents``' included."""
        parser = ObjV(fresh_id())
        defaults = DictV(fresh_id())
        entries: List[Any] = []
        for p in self.it.ev.known_items(parents, st) or () if parents is not None else ():
            got = st.attrs(p.oid).get("__argparser__") if isinstance(p, ObjV) else None
            if isinstance(got, DictV):
                entries.extend(st.dicts.get(got.did, ()))
        st.own("dicts")[defaults.did] = tuple(entries)
        st.set_attr(parser.oid, "__argparser__", defaults)
        return parser

    def parser_method(self, parser: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State) -> Value:
        defaults = st.attrs(parser.oid)["__argparser__"]
        if name in ("add_argument_group", "add_mutually_exclusive_group"):
            return parser  # its options are the parser's
        if name == "set_defaults":
            for k, v in kwargs.items():
                self.it.ev.dict_set(defaults, ConstV(k), v, st)
            return NONE
        if name == "add_argument":
            flags = [a.value for a in args if isinstance(a, ConstV) and isinstance(a.value, str)]
            if not flags or len(flags) != len(args):
                return UNKNOWN
            longs = [f for f in flags if f.startswith("--")]
            dest_v = kwargs.get("dest")
            dest = dest_v.value if isinstance(dest_v, ConstV) and isinstance(dest_v.value, str) else \
                (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
            self.it.ev.dict_set(defaults, ConstV(dest), self._option_default(flags, kwargs), st)
            return UNKNOWN
        if name in ("parse_args", "parse_known_args"):
            given = args[0] if args else kwargs.get("args", NONE)
            if not (isinstance(given, ConstV) and given.value is None or
                    isinstance(given, SeqV) and given.kind != "homogeneous" and not st.lists.get(given.lid)):
                return UNKNOWN  # arguments the code passes: not the defaults
            ns = ObjV(fresh_id())
            st.set_attr(ns.oid, "__namespace__", TRUE)
            for k, v in st.dicts.get(defaults.did, ()):
                if k[0] == "c" and isinstance(k[1], str):
                    st.set_attr(ns.oid, k[1], v)
            if name == "parse_known_args":
                return self.it.ev.new_seq([ns, self.it.ev.new_seq([], st)], st, kind="tuple")
            return ns
        return UNKNOWN

    @staticmethod
    def _option_default(flags: List[str], kwargs: Dict[str, Value]) -> Value:
        """What ``parse_args()`` gives an option nobody passes: its default (a string converted by
        ``type`` as argparse does), ``store_true``'s False; a required or positional one: unknown."""
        action = kwargs.get("action")
        act = action.value if isinstance(action, ConstV) else None if action is None else "?"
        required = kwargs.get("required")
        nargs = kwargs.get("nargs")
        if not flags[0].startswith("-") and not (isinstance(nargs, ConstV) and nargs.value in ("?", "*")) or \
                not (required is None or isinstance(required, ConstV) and not required.value):
            return UNKNOWN
        if "default" in kwargs:
            value = kwargs["default"]
            kind = kwargs.get("type")
            if isinstance(value, ConstV) and isinstance(value.value, str) and isinstance(kind, RefV) and \
                    kind.kind == "builtin" and kind.name in ("int", "float"):
                try:
                    return ConstV((int if kind.name == "int" else float)(value.value))
                except ValueError:
                    return UNKNOWN
            return value
        if act == "store_true":
            return FALSE
        if act == "store_false":
            return TRUE
        if act in (None, "store", "append", "count", "extend"):
            return NONE
        return UNKNOWN

    # ================================================================== super()
    def super_proxy(self, args: List[Value], st: State) -> Value:
        """``super()`` / ``super(Cls, self)`` inside a method: a proxy that looks attributes up
        after the defining class (its user-defined parents, then the torch base class)."""
        if len(args) == 2 and isinstance(args[0], RefV) and args[0].kind == "class":
            return ref_value("super", args[0].name, args[0].target, args[1])
        fdef = self.it.call_stack[-1] if self.it.call_stack else None
        if fdef is None:
            return UNKNOWN
        owner = self.it.class_of_method(fdef)
        params = list(fdef.args.posonlyargs) + list(fdef.args.args)
        if owner is None or not params:
            return UNKNOWN
        return ref_value("super", owner.name, owner, st.lookup(params[0].arg))
