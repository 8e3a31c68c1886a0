"""Functions the module's own execution never ran, analysed on their own afterwards (each with
its own allotment of work): with arguments of unknown origin, on an instance of their class
built once, custom autograd Functions nobody in the file applies, and the ``nn.Sequential``
containers an ``__init__`` builds with an in-place module in them.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.domain.initprobe import builds_no_container
from gradwarden.engine.interp.annotations import not_a_tensor, not_tensor_default, numbers_annotation
from gradwarden.engine.interp.interpreter import ClassInfo, FuncNode, MAX_INIT_DEPTH, _SpanNode
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import ConstV, FALSE, ObjV, PLAIN_NUMBER, RefV, SeqV, State, UNKNOWN, Value


def _torch_path_of(v: Optional[Value]) -> Optional[str]:
    """The torch API path a module-level value names (``nn`` -> ``torch.nn``), if it names one."""
    return v.name if isinstance(v, RefV) and v.kind == "torch" else None


class Unreached:
    """The ``unreached`` role: analysis of the definitions the module's code did not run."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.instances: Dict[int, Optional[Tuple[State, Value]]] = {}  # class -> instance built for standalone runs

    def analyse_unreached(self, module_state: State) -> None:
        """Functions and methods the module's execution never ran: analyse each on its own
        (each with its own allotment of work: one that runs out stops alone)."""
        hook = self.it.unit_hook
        for index in range(len(self.it.tree.body)):
            # one top-level statement at a time (the definitions in it, in source order: the
            # same order as one walk over the whole body)
            if hook is not None and hook.replay(self.it, index):
                continue
            if hook is not None:
                hook.begin(self.it, index)
            self._analyse_unreached_in(self.it.triggers.statement_defs[index], module_state)
            if hook is not None:
                hook.end(self.it, index)

    def _analyse_unreached_in(self, defs: List[Tuple[ast.AST, Any]], module_state: State) -> None:
        for node, _ in defs:
            if id(node) not in self.it.interesting:
                continue
            if isinstance(node, ast.ClassDef):
                info = self.it.classes.get(id(node))
                if info is None:
                    continue
                for name, fn in info.methods.items():
                    if id(fn) in self.it.reached or id(fn) not in self.it.interesting:
                        continue
                    if info.is_function and name in ("forward", "backward"):
                        if info.name in self.it.applied_functions:
                            continue
                        self.it.analyse_alone(info.node, "", lambda: self.standalone_function_class(info, module_state))
                        break
                    self.it.analyse_alone(fn, info.name,
                                          lambda: self.standalone_method(info, fn, module_state))  # noqa: B023
            elif isinstance(node, FuncNode) and id(node) not in self.it.reached:
                if self.it.is_method(node):
                    continue
                self.it.analyse_alone(node, "", lambda: self.standalone_function(node, module_state))  # noqa: B023

    def standalone_function(self, fn: ast.FunctionDef, module_state: State) -> None:
        st = module_state.fork()
        st.flow = None
        args = self.standalone_args(st, fn)
        self._standalone(fn, st, args, None)

    def standalone_method(self, info: ClassInfo, fn: ast.FunctionDef, module_state: State) -> None:
        if self.it.is_static(fn):
            st = module_state.fork()
            st.flow = None
            args = self.standalone_args(st, fn)
            self._standalone(fn, st, args, None)
            return
        if fn.name == "__init__" and self.it.triggers.only_inplace_config(fn):
            # Nothing in it but in-place module configuration: build it once (shared with the
            # other methods) and run the containers it built; none to run when it provably
            # builds none (engine/domain/initprobe.py), and then nothing to build yet.
            if id(info) not in self.instances and builds_no_container(
                    fn, info.node, lambda name: _torch_path_of(module_state.frames[0].get(name))):
                self.it.reached.add(id(fn))
                return
            cached = self._instance(info, module_state)
            if cached is not None:
                self.it.reached.add(id(fn))
                self.probe_sequentials(cached[1], cached[0].fork())
            return
        if fn.name == "__init__":
            st = module_state.fork()
            st.flow = None
            self_v = self.it.calls.instantiate(info, [], {}, st, self.it.span_of(info.node), run_init=False)
        else:
            cached = self._instance(info, module_state)
            if cached is None:
                return
            st, self_v = cached[0].fork(), cached[1]
        args = self.standalone_args(st, fn)[1:]
        # An __init__ follows the local submodules it builds one level: their own __init__s are
        # analysed on their own, and what this one does with them needs their attributes, not
        # their submodules' (three levels cost timm a tenth of its analysis).
        self.it.init_limit = 1 if fn.name == "__init__" else MAX_INIT_DEPTH
        try:
            self._standalone(fn, st, args, self_v)
        finally:
            self.it.init_limit = MAX_INIT_DEPTH

    def standalone_args(self, st: State, fn: ast.FunctionDef) -> List[Value]:
        """The positional arguments of ``fn`` analysed on its own, each with its default."""
        params = list(fn.args.posonlyargs) + list(fn.args.args)
        defaults: List[Optional[ast.expr]] = [None] * (len(params) - len(fn.args.defaults)) + list(fn.args.defaults)
        return [self.standalone_arg(st, a, d) for a, d in zip(params, defaults)][-len(fn.args.args):] \
            if fn.args.args else []

    def standalone_arg(self, st: State, a: ast.arg, default: Optional[ast.expr] = None) -> Value:
        """An argument of a function analysed on its own: a tensor of unknown origin, unless
        its annotation or its default says it is something else (``src: list[Tensor]``,
        ``n: int``, ``stats=collections.Counter()``, ``scale=1.0``). An argument annotated as a
        number, or as a tuple or list of numbers (``size: tuple[int, int]``), is a number: an
        op with it saves no tensor for it (``x / size[0]``)."""
        if a.annotation is not None:
            numbers = numbers_annotation(a.annotation)
            if numbers == "number":
                return PLAIN_NUMBER
            if numbers == "numbers":
                return self.it.ev.new_seq([PLAIN_NUMBER], st, kind="homogeneous")
            if not_a_tensor(a.annotation):
                return UNKNOWN
        if default is not None and a.annotation is None:
            if isinstance(default, ast.Constant) and isinstance(default.value, (int, float)):
                return PLAIN_NUMBER  # `eps=1e-6`, `dim=-1`: a number
            if not_tensor_default(default, self.it.tree):
                return UNKNOWN
        return self.it.graph.unknown_tensor(st, a.arg)

    def _instance(self, info: ClassInfo, module_state: State) -> Optional[Tuple[State, Value]]:
        if id(info) in self.instances:
            return self.instances[id(info)]
        self.instances[id(info)] = None  # building it failed, unless replaced below
        base = module_state.fork()
        base.flow = None
        # Build only this class's own __init__: local submodules stay opaque (their own
        # methods are analysed on their own), which keeps large libraries fast.
        self.it.init_depth = MAX_INIT_DEPTH - 1
        try:
            with self.it.allotment(info.node):
                self_v = self.it.calls.instantiate(info, [], {}, base, self.it.span_of(info.node))
                self.instances[id(info)] = (base, self_v)
        except Halt:
            pass
        finally:
            self.it.init_depth = 0
        return self.instances[id(info)]

    def _standalone(self, fn: ast.FunctionDef, st: State, args: List[Value], self_v: Optional[Value]) -> None:
        self.it.reached.add(id(fn))
        if self.it.callsites is None:
            from gradwarden.engine.front.callsites import CallSites

            self.it.callsites = CallSites(self.it.tree, self.it.src.text)
        if self.it.callsites.grad_mode_of(fn) is False:
            st.grad_enabled = False  # every call in this file runs it under no_grad
        # Containers that exist before an analysed-alone function starts (its object's
        # attributes, module globals) may have been filled by code that ran before it: an
        # empty one there is "unknown contents", not "no elements".
        # A field the state still shares with a fork is never written in place again (each
        # holder copies it first): its keys are those of now, without a copy of them.
        self.it.prefilled_lists = st.lists if "lists" in st._shared else set(st.lists)
        self.it.prefilled_dicts = st.dicts if "dicts" in st._shared else set(st.dicts)
        try:
            exits = self.it.calls.call_function(fn, ([self_v] if self_v is not None else []) + args, {}, st,
                                                self.it.span_of(fn), bound_self=self_v is not None, join=False)
        except Halt:
            return
        for ex_state, ret in exits:
            # An analysed-alone function's outputs are assumed to be trained through:
            # check what their backward would meet (stale saves, custom backward bodies).
            self.it.backward.implicit_backward(ret, ex_state, self.it.span_of(fn))
            if fn.name == "__init__" and isinstance(self_v, ObjV):
                self.probe_sequentials(self_v, ex_state)
        self.it.backward.finish_path([s for s, _ in exits])

    def probe_sequentials(self, obj: ObjV, st: State) -> None:
        """Run each nn.Sequential that __init__ built with an in-place module in it, on a
        tensor that requires grad: in-place chains (LeakyReLU(inplace) then Dropout(inplace))
        break inside the container, where no forward of this file shows it."""
        for name, v in list(st.attrs(obj.oid).items()):
            if not isinstance(v, ObjV) or st.attrs(v.oid).get("__torch__") != ConstV("torch.nn.Sequential"):
                q = st.attrs(v.oid).get("__torch__") if isinstance(v, ObjV) else None
                if not (isinstance(q, ConstV) and q.value == "torch.nn.Sequential"):
                    continue
            children = st.attrs(v.oid).get("__children__")
            kids = st.lists.get(children.lid, ()) if isinstance(children, SeqV) else ()
            if not any(isinstance(k, ObjV) and self.it.ev.truth_of(st.attrs(k.oid).get("inplace", FALSE)) is True
                       for k in kids):
                continue
            probe = st.fork()
            x = self.it.graph.unknown_tensor(probe, "input", rg=True)
            span = st.attrs(v.oid)["__span__"].value
            try:
                out = self.it.modules.call_object(v, [x], {}, probe, _SpanNode(span))
                self.it.backward.implicit_backward(out, probe, span)
            except Halt:
                continue

    def standalone_function_class(self, info: ClassInfo, module_state: State) -> None:
        st = module_state.fork()
        fwd = info.find_method("forward")
        nargs = len(fwd[1].args.args) - 1 if fwd else 1
        args = [self.it.graph.unknown_tensor(st, f"arg{i}", rg=True) for i in range(max(nargs, 1))]
        try:
            out = self.it.functions.apply_custom_function(info, args, {}, st, self.it.span_of(info.node))
            # Nobody in this file calls it: the incoming gradient can be anything a caller passes.
            self.it.backward.implicit_backward(out, st, self.it.span_of(info.node), user_grad=True)
        except Halt:
            return
