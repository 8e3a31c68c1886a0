"""Calls of the module's own code: functions and methods inlined with the caller's arguments
(``call_function``: depth limits, the code of other project modules, a call of the module's
top-level code that runs out of work given up), lambdas, generators used as values, and class
instantiation.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.interp.annotations import numbers_annotation
from gradwarden.engine.interp.budget import RETRY_SHARE, BudgetExceeded, StopPoint
from gradwarden.engine.interp.classes import enum_member
from gradwarden.engine.interp.projects import small_user_function
from gradwarden.engine.interp.records import init_dataclass
from gradwarden.engine.interp.interpreter import (
    ClassInfo, MAX_CALL_DEPTH, MAX_SAME_FUNCTION_DEPTH, MAX_STANDALONE_DEPTH, _SpanNode,
)
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    ConstV, DictV, NONE, ObjV, PLAIN_NUMBER, RefV, State, TRUE, TensorV, UNKNOWN, UnknownV, Value, fresh_id,
    join_states, ref_value,
)


def _concrete_torch_module(qual: str) -> bool:
    """A torch module class with parameters or settings of its own (not a container)."""
    return qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1] not in ("Module", "ModuleList", "ModuleDict",
                                                                             "Sequential", "ParameterList",
                                                                             "ParameterDict")


def _reaches_freed(st: State, t: TensorV, limit: int = 400) -> bool:
    """Whether ``t``'s graph (its first ``limit`` nodes) goes through a node a backward freed."""
    fn = st.t[t.tid].grad_fn
    stack, seen = [fn] if fn is not None else [], set()
    while stack and len(seen) < limit:
        n = stack.pop()
        if n.id in seen:
            continue
        if n.id in st.freed:
            return True
        seen.add(n.id)
        stack.extend(n.inputs)
    return False


class Calls:
    """The ``calls`` role: inlined calls and instantiation."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.generators: Dict[int, bool] = {}  # id(FunctionDef) -> is a generator
        self.annotation_kinds: Dict[int, Optional[str]] = {}  # id(annotation) -> numbers_annotation's answer
        self.unwrapping: set = set()  # ids of decorated functions whose wrapper is running: called as written
        self.plain_decorated: set = set()  # ids of functions whose decorators return them unchanged

    def call_lambda(self, lam: ast.Lambda, fi: Any, args: List[Value], st: State, span: Optional[Span] = None) -> Value:
        if isinstance(fi, tuple) and fi[0] == "module":
            return self._call_module_lambda(lam, fi[1], args, st, span)
        if isinstance(fi, tuple):
            # (frame index, that call's frame): the live frame while that call runs, else what it held
            fi, captured = fi
            live = st.frames[fi] if fi < len(st.frames) else None
            env = dict(live if live is captured else captured)
        else:
            env = dict(st.frames[fi]) if fi < len(st.frames) else {}
        for a, v in zip(lam.args.args, args):
            env[a.arg] = v
        caller = st.fi
        st.push_frame(env)
        try:
            return self.it.ev.eval(lam.body, st)
        finally:
            st.pop_frame(caller)

    def _call_module_lambda(self, lam: ast.Lambda, fm: Any, args: List[Value], st: State, span: Optional[Span]) -> Value:
        """A lambda of another module's top level: its free names are that module's globals (read
        at the call, as Python does), and its spans name that module's file."""
        env: Dict[str, Value] = {"__gw_globals__": fm.globals}  # type: ignore[dict-item]
        for a, v in zip(lam.args.args, args):
            env[a.arg] = v
        caller = st.fi
        entered = not (self.it.foreign_stack and self.it.foreign_stack[-1][0] is fm)
        if entered:
            self.it.foreign_stack.append((fm, span if span is not None else Span(1, 1, 1, 1)))
        st.push_frame(env)
        try:
            return self.it.ev.eval(lam.body, st)
        finally:
            st.pop_frame(caller)
            if entered:
                self.it.foreign_stack.pop()

    def bind_params(self, fdef: ast.FunctionDef, args: List[Value], kwargs: Dict[str, Value], st: State,
                    home: Optional[Dict[str, Value]] = None) -> Dict[str, Value]:
        """The call's frame. ``home``: the globals of the function's own module when it is another
        project module's function (its defaults name that module's globals: ``act_kwargs=ACT_KWARGS``
        imported there, not where the call is)."""
        env: Dict[str, Value] = {}
        a = fdef.args
        positional = list(a.posonlyargs) + list(a.args)
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for i, (param, default) in enumerate(zip(positional, defaults)):
            if i < len(args):
                env[param.arg] = args[i]
            elif param.arg in kwargs:
                env[param.arg] = kwargs[param.arg]
            elif default is not None:
                env[param.arg] = self.it.ev.eval(default, st) if home is None else \
                    self._eval_at_home(default, home, st)
            else:
                env[param.arg] = self.unpassed_arg(param, st)
        if a.vararg is not None:
            env[a.vararg.arg] = self.it.ev.new_seq(args[len(positional):], st, kind="tuple")
        kw_defaults = a.kw_defaults or []
        for param, default in zip(a.kwonlyargs, kw_defaults):
            if param.arg in kwargs:
                env[param.arg] = kwargs[param.arg]
            else:
                if default is None:
                    env[param.arg] = self.unpassed_arg(param, st)
                else:
                    env[param.arg] = self.it.ev.eval(default, st) if home is None else \
                        self._eval_at_home(default, home, st)
        for param in positional + list(a.kwonlyargs):
            if env.get(param.arg).__class__ is UnknownV and param.annotation is not None:
                env[param.arg] = self.unpassed_arg(param, st)  # an unknown value annotated `int`: a number
        if a.kwarg is not None:
            d = DictV(fresh_id())
            names = set(env)
            st.own("dicts")[d.did] = tuple((("c", k), v) for k, v in kwargs.items() if k not in names)
            env[a.kwarg.arg] = d
        return env

    def _eval_at_home(self, node: ast.expr, home: Dict[str, Value], st: State) -> Value:
        if node.__class__ is ast.Constant:
            return self.it.ev.eval(node, st)
        caller = st.fi
        st.push_frame({"__gw_globals__": home})  # type: ignore[dict-item]
        try:
            return self.it.ev.eval(node, st)
        finally:
            st.pop_frame(caller)

    def unpassed_arg(self, param: ast.arg, st: State) -> Value:
        """An argument no caller in view passes (an object built without its constructor's
        arguments, to analyse its methods): unknown, or a number (numbers) if annotated so."""
        if param.annotation is None:
            return UNKNOWN
        cache = self.annotation_kinds  # per analysis: asked at every call
        kind = cache.get(id(param.annotation), "?")
        if kind == "?":
            kind = cache[id(param.annotation)] = numbers_annotation(param.annotation)
        if kind == "number":
            return PLAIN_NUMBER
        if kind == "numbers":
            return self.it.ev.new_seq([PLAIN_NUMBER], st, kind="homogeneous")
        return UNKNOWN

    def call_function(self, fdef: ast.FunctionDef, args: List[Value], kwargs: Dict[str, Value], st: State,
                      span: Span, bound_self: bool = False, join: bool = True, closure: Any = None,
                      generator: bool = False) -> Any:
        """Inline a call. Returns the value (join=True) or the list of (state, value) exits."""
        depth_same = sum(1 for f in self.it.call_stack if f is fdef)
        limit = MAX_STANDALONE_DEPTH if self.it.standalone else MAX_CALL_DEPTH
        if len(self.it.call_stack) >= limit or depth_same >= MAX_SAME_FUNCTION_DEPTH:
            # not run, but its arguments were: work the budget counts (the next statement
            # checks it), else a call tree as wide as it is deep (six calls a line) spends
            # most of its time in calls too deep to follow, the statement count blind to it
            self.it.budget.work.statements += 1
            return UNKNOWN if join else [(st, UNKNOWN)]
        fm = self.it.foreign_defs.get(id(fdef))
        if fm is not None and not (self.it.foreign_stack and self.it.foreign_stack[-1][0] is fm):
            # entering code of another module: its spans name that module's file, and the call
            # (``span``, in the caller's file) joins the chain a finding there shows
            self.it.foreign_stack.append((fm, span))
            try:
                return self.call_function(fdef, args, kwargs, st, span, bound_self, join, closure, generator)
            finally:
                self.it.foreign_stack.pop()
        if fm is None and self.it.foreign_stack and self.it.defined_here(fdef):
            # back in the analysed file's own code (a method of its model called by a trainer
            # of another module): its spans are this file's again
            outer, self.it.foreign_stack = self.it.foreign_stack, []
            try:
                return self.call_function(fdef, args, kwargs, st, span, bound_self, join, closure, generator)
            finally:
                self.it.foreign_stack = outer
        if fdef.decorator_list and not generator and id(fdef) not in self.unwrapping and \
                id(fdef) not in self.plain_decorated:
            wrapped = self.through_decorators(fdef, fm, args, kwargs, st, span, closure)
            if wrapped is not None:
                return wrapped if join else [(st, wrapped)]
        is_gen = self.generators.get(id(fdef))
        if is_gen is None:
            is_gen = self.generators[id(fdef)] = (fm is not None or "yield" in self.it.triggers.text(fdef)) and any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fdef))
        if not generator and is_gen:
            # A generator used as a value (next(gen), list(gen)): its yields are its items.
            return self._generator_items(fdef, args, kwargs, st, span, bound_self, join, closure)
        if id(fdef) in self.it.stopped_defs:
            return UNKNOWN if join else [(st, UNKNOWN)]  # already ran out of work once
        if id(fdef) in self.it.coarse_defs and not (self.it.coarse or self.it.standalone or self.it.call_stack
                                                    or self.it.foreign_stack):
            # the module's code called it before and its precise run ran out: coarsely at once
            # (a notebook calling its training function once per cell paid the precise run's
            # whole allotment again at each call)
            return self._coarse_or_give_up(fdef, self.it.coarse_defs[id(fdef)], st.fork(), args, kwargs, st, span,
                                           bound_self, join, closure, generator)
        self.it.reached.add(id(fdef))
        env = self.bind_params(fdef, args, kwargs, st, fm.globals if fm is not None and closure in (None, 0) else None)
        if fm is not None:
            env["__gw_globals__"] = fm.globals  # type: ignore[assignment]
        if isinstance(closure, tuple):
            # (frame index, that call's frame): the live frame while that call runs, else what it held
            fi, captured = closure
            live = st.frames[fi] if fi < len(st.frames) else None
            mine = live.get(fdef.name) if live is not None else None  # the def binds its name in its frame
            outer = live if live is not None and (live is captured or getattr(mine, "target", (None,))[0] is fdef) \
                else captured
            merged = dict(outer)
            merged.update(env)
            env = merged
        elif closure is not None and closure != 0 and closure < len(st.frames):
            merged = dict(st.frames[closure])
            merged.update(env)
            env = merged
        # a call the module's top-level code makes: if it runs out of work, only the call is
        # given up (the state goes back to before it) and the module's code goes on
        before = st.fork() if not (self.it.standalone or self.it.call_stack or self.it.foreign_stack) else None
        caller = st.fi
        saved_mode = st.grad_enabled
        saved_flow, saved_ret = st.flow, st.retval
        st.flow = None
        st.push_frame(env)
        mode = self.decorator_grad_mode(fdef, st)
        if mode is not None:
            st.grad_enabled = mode
        if generator and self.it.consumers:
            self.it.consumers[-1]["gen_frame"] = st.fi
        self.it.call_stack.append(fdef)
        self.it.call_spans.append(span)
        self.it.call_args.append(frozenset(t.tid for v in list(args) + list(kwargs.values())
                                           for t in self.it.graph.slot_tensors(st, v)))
        try:
            try:
                exits = self.it.stmts.exec_block(fdef.body, [st])
            finally:
                self.it.call_stack.pop()
                self.it.call_spans.pop()
                self.it.call_args.pop()
        except BudgetExceeded as exc:
            if before is None or self.it.coarse:
                raise  # (a coarse retry that ran out too: the first attempt's handler below notes it)
            st.become(before)
            return self._coarse_or_give_up(fdef, exc.at, before, args, kwargs, st, span, bound_self, join, closure,
                                           generator)
        results: List[Tuple[State, Value]] = []
        for s in exits:
            ret = s.retval if s.flow == "return" else NONE
            if s.flow == "consumer_return":
                ret = NONE
            s.pop_frame(caller)
            if mode is not None or s.grad_enabled is not False or not _sets_grad_mode(fdef):
                # a decorator's mode ends with the call; a `torch.set_grad_enabled(False)` statement
                # in the body does not: grad mode is global, and the caller runs on without grad
                s.grad_enabled = saved_mode
            if s.flow not in ("consumer_return",):
                s.flow = saved_flow
            s.retval = saved_ret
            results.append((s, ret))
        if not join:
            return results
        return self.join_exits(st, results)

    def _coarse_or_give_up(self, fdef: ast.FunctionDef, at: Optional[StopPoint], before: State, args: List[Value],
                           kwargs: Dict[str, Value], st: State, span: Span, bound_self: bool, join: bool,
                           closure: Optional[int], generator: bool) -> Any:
        """A call of the module's code whose precise run ran out (stopped at ``at``; ``st`` is
        ``before`` it): its coarse run, else the note and no more runs of it."""
        self.it.coarse_defs[id(fdef)] = at
        try:
            return self.coarse_retry(fdef, args, kwargs, st, span, bound_self, join, closure, generator)
        except BudgetExceeded:
            st.become(before)
        self.give_up_call(fdef, at)  # where the precise run stopped: what grew there
        return UNKNOWN if join else [(st, UNKNOWN)]

    def coarse_retry(self, fdef: ast.FunctionDef, args: List[Value], kwargs: Dict[str, Value], st: State,
                     span: Span, bound_self: bool, join: bool, closure: Optional[int], generator: bool) -> Any:
        """The module's code called ``fdef`` and the call ran out of work: run it once more
        coarsely (``it.coarse``: every block's paths joined at each statement, a known sequence
        looped over as one of unknown length), within a third of an allotment. What made the
        precise run explode is paths multiplied by loops, unrolled walks over a model's modules
        and inlined calls (a training loop calling a library's step several calls deep); one
        path through the same code is a small fraction of that work, and a hazard on every path
        is still met (a join keeps what each path holds). Raises BudgetExceeded if even that
        runs out."""
        budget = self.it.budget
        limit = budget.limit
        budget.restart()
        budget.limit = max(1, limit // RETRY_SHARE)
        self.it.coarse = True
        try:
            return self.call_function(fdef, args, kwargs, st, span, bound_self, join, closure, generator)
        finally:
            self.it.coarse = False
            budget.limit = limit

    def give_up_call(self, fdef: ast.FunctionDef, at: Optional[StopPoint] = None) -> None:
        """The module's code called ``fdef`` and the call ran out of work: note it on the
        function, never run it again, and give the module's code a fresh allotment."""
        self.it.stopped_defs.add(id(fdef))
        saved = self.it.budget.begin(self.it.definition_label(fdef, getattr(self.it.class_of_method(fdef), "name", "")),
                                     self.it.header_span(fdef))
        self.it.stopped_early(at)
        self.it.budget.end(saved)
        self.it.budget.restart()

    @staticmethod
    def join_exits(st: State, results: List[Tuple[State, Value]]) -> Value:
        """Make ``st`` the join of a call's exit states; the call's value (a tensor if any exit
        returns one). Raises Halt when no exit is left (every path raised)."""
        if not results:
            raise Halt()
        if len(results) == 1:
            s, ret = results[0]
            if s is not st:
                st.become(s)
            return ret
        merged = join_states([s for s, _ in results])
        rets = [r for _, r in results]
        # A tensor that carries a graph on one of the paths stands for the call's value: a
        # branch the analysis cannot decide (`if input.is_cuda and self.ngpu > 1:` around an
        # op it does not know) must not hide what the other path shows; of several, one whose
        # graph goes through a graph a backward already freed (`if not bptt: reset the state`,
        # else the state carried from the previous chunk): the path that raises
        graphed = [r for r in rets if isinstance(r, TensorV) and r.tid in merged.t and merged.t[r.tid].rg is True]
        if len(graphed) > 1 and merged.freed:
            graphed.sort(key=lambda r: not _reaches_freed(merged, r))
        ret = (graphed[0] if graphed else None) or next((r for r in rets if isinstance(r, TensorV)), None) or next(
            (r for r in rets if not isinstance(r, UnknownV)), UNKNOWN)
        st.become(merged)
        return ret

    def _generator_items(self, fdef, args, kwargs, st, span, bound_self, join, closure) -> Any:
        self.it.loop_counter += 1
        collector = {"stmt": None, "frame": st.fi, "loop_id": self.it.loop_counter, "count": 0, "items": []}
        self.it.consumers.append(collector)
        try:
            exits = self.call_function(fdef, args, kwargs, st, span, bound_self=bound_self, join=False,
                                       closure=closure, generator=True)
        finally:
            self.it.consumers.pop()
        items = collector["items"]
        if not exits:
            raise Halt()
        st.become(join_states([s for s, _ in exits]) if len(exits) > 1 else exits[0][0])
        seq = self.it.ev.new_seq(items[:1], st, kind="homogeneous") if items else self.it.ev.new_seq([], st)
        return seq if join else [(st, seq)]

    def through_decorators(self, fdef: ast.FunctionDef, fm: Any, args: List[Value], kwargs: Dict[str, Value],
                           st: State, span: Span, closure: Any) -> Optional[Value]:
        """A call of a function (a method) decorated by small functions of the user's code
        (``@normalized(dim=-1)`` whose ``functools.wraps`` wrapper post-processes ``fn(self, *args)``):
        the decorators run on the function, read in its own module, and the call goes to what
        they return, as Python does. None: no such decorator, or one returning the function
        itself (a registration: remembered, never run again) or something unknown; the function
        is then called as written, as before."""
        user = []
        for dec in fdef.decorator_list:
            callee = self._eval_at_home(dec.func if isinstance(dec, ast.Call) else dec,
                                        fm.globals if fm is not None else st.frames[0], st)
            if small_user_function(callee):
                user.append(dec)
            elif _decorator_name(dec) not in _PLAIN_DECORATORS:
                return None  # a decorator this analysis cannot run stands between: as before
        if not user:
            self.plain_decorated.add(id(fdef))
            return None
        self.unwrapping.add(id(fdef))
        try:
            fn: Value = ref_value("func", fdef.name, (fdef, closure))
            for dec in reversed(user):
                factory = self._eval_at_home(dec, fm.globals if fm is not None else st.frames[0], st)
                fn = self.it.ev.call(factory, [fn], {}, st, dec)
            if not isinstance(fn, RefV) or fn.kind not in ("func", "lambda", "partial"):
                return None
            if fn.kind == "func" and fn.target[0] is fdef:
                self.plain_decorated.add(id(fdef))
                return None
            return self.it.ev.call(fn, args, kwargs, st, _SpanNode(span))
        finally:
            self.unwrapping.discard(id(fdef))

    def with_context_generator(self, stmt: ast.With, st: State) -> Optional[List[State]]:
        """``with helper(model) as m:`` where ``helper`` is a generator of the user's code made a
        context manager (``@contextmanager``): the block runs where the generator yields, in the
        state the generator left there (a ``with torch.no_grad():`` around its ``yield`` holds for
        the block, a ``model.eval()`` before it too), bound to what it yields; the code after the
        ``yield`` (a ``finally:`` restoring the mode) runs after the block. None: not that form
        (one item; a block that breaks out of an outer loop is left to the plain ``with``)."""
        if len(stmt.items) != 1 or any(isinstance(n, (ast.Break, ast.Continue)) for b in stmt.body
                                       for n in ast.walk(b)):
            return None
        gen = self.it.stmts.local_generator_call(stmt.items[0].context_expr, st)
        if gen is None or not any(_decorator_name(d) == "contextmanager" for d in gen[0].decorator_list):
            return None
        target = stmt.items[0].optional_vars or ast.Name(id="_gw_with_value", ctx=ast.Store())
        loop = ast.For(target=target, iter=stmt.items[0].context_expr, body=stmt.body, orelse=[])
        ast.copy_location(loop, stmt)
        return self.it.stmts.for_over_generator(loop, gen, st)

    def decorator_grad_mode(self, fdef: ast.FunctionDef, st: State) -> Optional[bool]:
        for d in fdef.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            v = self.it.ev.eval(target, st)
            if isinstance(v, RefV) and v.kind == "torch":
                name = v.name
                if name.endswith(("no_grad", "inference_mode")):
                    return False
                if name.endswith("enable_grad"):
                    return True
        return None

    # ------------------------------------------------------------------ classes
    def instantiate(self, info: ClassInfo, args: List[Value], kwargs: Dict[str, Value], st: State, span: Span,
                    run_init: bool = True) -> Value:
        if info.enum_base:
            return enum_member(info, args)  # `Arch("mlp")`: the member, read as its value
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__class__", ref_value("class", info.name, info))
        st.set_attr(obj.oid, "__span__", ConstV(span))
        if info.is_module:
            st.set_attr(obj.oid, "training", TRUE)
            st.set_attr(obj.oid, "__module__", TRUE)
        elif info.dict_base:  # its items: `super().__init__(defaults)`, `self[k]`, `self.update(...)`
            items = DictV(fresh_id())
            st.own("dicts")[items.did] = ()
            st.set_attr(obj.oid, "__items__", items)
        init = info.find_method("__init__")
        if init and run_init:
            if self.it.init_depth >= self.it.init_limit:
                st.set_attr(obj.oid, "__opaque__", TRUE)  # too deep to follow: calls stay unknown
                return obj
            self.it.init_depth += 1
            try:
                self.call_function(init[1], [obj] + args, kwargs, st, span, bound_self=True)
            finally:
                self.it.init_depth -= 1
        elif run_init and init_dataclass(self.it, info, obj, args, kwargs, st, span, _SpanNode(span)):
            pass  # ``@dataclass``: the generated ``__init__`` binds the fields
        elif run_init and info.is_module and _concrete_torch_module(info.torch_base):
            # ``class QuantLinear(nn.Linear)`` without an ``__init__``: nn.Linear's own builds
            # the parameters from the constructor's arguments
            self.it.modules.adopt_torch_module(obj, info.torch_base, args, kwargs, st, _SpanNode(span))
        elif run_init and info.dict_base:  # ``class Config(dict)`` without an ``__init__``: dict's
            items = st.attrs(obj.oid).get("__items__")
            self.it.builtins.call_seq_method(items, "update", args, kwargs, st, _SpanNode(span))
        return obj


# decorators that leave the call as written (what this analysis already reads of them elsewhere)
_PLAIN_DECORATORS = frozenset({"property", "cached_property", "setter", "deleter", "getter", "staticmethod",
                               "classmethod", "abstractmethod", "no_grad", "enable_grad", "inference_mode",
                               "overload", "override", "final", "wraps"})


def _decorator_name(d: ast.expr) -> Optional[str]:
    """``contextmanager`` of ``@contextmanager`` / ``@contextlib.contextmanager`` / ``@wraps(f)``."""
    d = d.func if isinstance(d, ast.Call) else d
    return d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else None


def _sets_grad_mode(fdef: ast.FunctionDef) -> bool:
    """Whether the function's own body (not a nested def) calls `set_grad_enabled(...)` as a statement."""
    for node in _own_nodes(fdef):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            f = node.value.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name == "set_grad_enabled":
                return True
    return False
