"""The abstract interpreter: runs a module's statements over abstract autograd state.

Path-sensitive inside a function body (an ``if`` forks the state, up to ``MAX_PATHS``
paths, then paths are joined), joined at call boundaries. Loops run twice, so that what one
iteration leaves behind (a freed graph, a hidden state) meets the next one; loops over a
known small sequence (``model.parameters()``, ``model.modules()``) run once per element.

Cost stays polynomial in the nesting depth: a block's paths run through ``if``, ``for``,
``while`` and ``try`` together (one run of the nested block for all of them, capped at
``MAX_PATHS``, instead of one per path, which multiplies at every level); a loop nested in
the second iteration of another runs once (what one of its iterations leaves to the next
was already seen in the outer loop's first iteration); nested unrolled sequences stop
unrolling past ``MAX_UNROLL_PRODUCT`` runs of a body. A per-definition budget
(engine/interp/budget.py) stops whatever still grows, with one information note.
Calls to functions, classes and ``nn.Module`` subclasses of the same file are inlined, so a
hazard is found in the context of its caller (with the caller's real arguments). Functions
that the module's own execution never reaches are analysed on their own afterwards, with
unknown arguments.

An error that PyTorch raises on the spot (a leaf written in place, a write into an
expanded tensor) ends its path: what follows it cannot run.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.autograd import AutogradMixin
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.interp.budget import Budget, BudgetExceeded
from gradwarden.engine.diagnostic import Diagnostic, Span
from gradwarden.engine.events import Event
from gradwarden.engine.checks.flow import FlowMixin
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.domain.initprobe import builds_no_container
from gradwarden.engine.state.model import (
    FALSE, NONE, TRUE, UNKNOWN, ConstV, DictV, ObjV, RefV, SeqV, State, TensorV, UnknownV, Value,
    fresh_id, join_states, ref_value,
)
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.domain.torchsem import TorchMixin

MAX_PATHS = 6
MAX_PATHS_STANDALONE = 3
MAX_CALL_DEPTH = 8
MAX_STANDALONE_DEPTH = 3  # analysing a function on its own: follow calls this deep
MAX_SAME_FUNCTION_DEPTH = 3
MAX_UNROLL = 8  # loops over a known sequence longer than this run twice, like unknown loops
# ... except walks over a model's modules or parameters (``for m in self.modules(): if
# isinstance(m, nn.ReLU): m.inplace = True``): each element is a different object to configure
MAX_UNROLL_MODULES = 64
# nested unrolled loops over known sequences: past this many runs of the innermost body,
# a nested sequence is walked like a loop of unknown length (twice)
MAX_UNROLL_PRODUCT = 128
MAX_INIT_DEPTH = 3  # nested module constructions followed; deeper submodules stay opaque


@dataclass
class ClassInfo:
    name: str
    node: ast.ClassDef
    bases: List[Value]
    methods: Dict[str, ast.FunctionDef] = field(default_factory=dict)
    class_attrs: Dict[str, ast.expr] = field(default_factory=dict)
    is_module: bool = False
    is_function: bool = False  # torch.autograd.Function subclass
    torch_base: str = ""  # e.g. "torch.nn.Module"
    parents: List["ClassInfo"] = field(default_factory=list)

    def find_method(self, name: str) -> Optional[Tuple["ClassInfo", ast.FunctionDef]]:
        if name in self.methods:
            return self, self.methods[name]
        for p in self.parents:
            found = p.find_method(name)
            if found:
                return found
        return None

    def is_subclass_of(self, other: "ClassInfo") -> bool:
        return self is other or any(p.is_subclass_of(other) for p in self.parents)


FuncNode = (ast.FunctionDef, ast.AsyncFunctionDef)
_new_object = object.__new__


class BaseInterpreter(AutogradMixin, TorchMixin):
    def __init__(self, tree: ast.Module, src: SourceText, filename: str, triggers: Any = None) -> None:
        self.tree = tree
        self.src = src
        self.filename = filename
        self.events: Dict[Tuple[str, int, int, str], Event] = {}
        self.reached: Set[int] = set()  # ids of FunctionDef nodes executed in context
        self.applied_functions: Set[str] = set()
        self.classes: Dict[int, ClassInfo] = {}  # id(ClassDef) -> info
        self.method_owner: Dict[int, ClassInfo] = {}  # id(FunctionDef) -> the class defining it
        self._spans: Dict[int, Tuple[ast.AST, Span]] = {}  # id(node) -> (node, its span)
        # node class -> the class's ex_* / stmt_* function (None: no handler), filled as met:
        # eval and exec_stmt run for every node, a name built and looked up each time costs
        self._ex_handlers: Dict[type, Any] = {}
        self._stmt_handlers: Dict[type, Any] = {}
        self.call_stack: List[Any] = []
        self.budget = Budget()
        self.work = self.budget.work  # counters of what the engine did (tests, benchmarks)
        self.revisits = 0  # enclosing loops now running their second iteration
        self.unroll_product = 1  # runs of the current body that enclosing unrolled loops make
        self.loop_counter = 0
        self.analysed_backward: Set[Tuple[int, int]] = set()
        self.init_depth = 0  # > 0 while an __init__ runs: loops then run once
        self.init_limit = MAX_INIT_DEPTH  # nested module constructions followed this deep
        self.generators: Dict[int, bool] = {}
        self.standalone = False  # True once the module's own execution is done
        # containers an analysed-alone function found (engine/interpreter._standalone): the
        # ids of lists and of dicts, as the keys of the state's dicts then
        self.prefilled_lists: Any = {}
        self.prefilled_dicts: Any = {}
        self.resolver: Any = None  # follows imports from the user's project (script mode only)
        self.foreign_stack: List[Tuple[Any, Span]] = []  # (ForeignModule, call site in this file)
        self.foreign_defs: Dict[int, Any] = {}
        self.foreign_stmts: Dict[int, Any] = {}  # statements of other project modules -> their module
        self.instances: Dict[int, Optional[Tuple[State, Value]]] = {}  # class -> instance built for standalone runs
        self.stopped_defs: Set[int] = set()  # functions whose call from the module's code ran out of work
        self.callsites: Any = None  # engine.front.callsites.CallSites, built for the first standalone run
        # engine/unitcache.UnitSession (the language server): replays the results of top-level
        # statements whose analysis cannot have changed; None (the CLI) analyses every one
        self.unit_hook: Any = None
        self.unit_log: Optional[List[Tuple[Tuple[str, int, int, str], Event]]] = None  # what the running unit emits
        from gradwarden.engine.front.triggers import Triggers

        # ``triggers``: the same facts, when the caller computed them already
        self.triggers = triggers if triggers is not None else Triggers(tree, src)
        self.interesting = self.triggers.interesting
        self._init_autograd()

    # ------------------------------------------------------------------ entry
    def run(self) -> List[Event]:
        st = State()
        st.frame()["__name__"] = ConstV("__main__")
        body = self.tree.body
        if self.triggers.script_mode(self.tree):
            from gradwarden.engine.front.imports import ImportResolver

            self.resolver = ImportResolver(self.filename)
        else:
            # A library module: bind its names, skip evaluating what it computes at import
            # time (registries, config tables) that no hazard can come from.
            body = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                      ast.AsyncFunctionDef, ast.ClassDef))
                    or "(" not in self.triggers.text(s)]
        states: List[State] = []
        with self.allotment(None):
            states = self.exec_block(body, [st])
        final = join_states(states) if states else st
        self.module_state = final
        self.finish_path(states)
        self.standalone = True
        self.analyse_unreached(final)
        return list(self.events.values())

    def analyse_unreached(self, module_state: State) -> None:
        """Functions and methods the module's execution never ran: analyse each on its own
        (each with its own allotment of work: one that runs out stops alone)."""
        hook = self.unit_hook
        for index in range(len(self.tree.body)):
            # one top-level statement at a time (the definitions in it, in source order: the
            # same order as one walk over the whole body)
            if hook is not None and hook.replay(self, index):
                continue
            if hook is not None:
                hook.begin(self, index)
            self._analyse_unreached_in(self.triggers.statement_defs[index], module_state)
            if hook is not None:
                hook.end(self, index)

    def _analyse_unreached_in(self, defs: List[Tuple[ast.AST, Any]], module_state: State) -> None:
        for node, _ in defs:
            if id(node) not in self.interesting:
                continue
            if isinstance(node, ast.ClassDef):
                info = self.classes.get(id(node))
                if info is None:
                    continue
                for name, fn in info.methods.items():
                    if id(fn) in self.reached or id(fn) not in self.interesting:
                        continue
                    if info.is_function and name in ("forward", "backward"):
                        if info.name in self.applied_functions:
                            continue
                        with self.allotment(info.node):
                            self.standalone_function_class(info, module_state)
                        break
                    with self.allotment(fn, info.name):
                        self.standalone_method(info, fn, module_state)
            elif isinstance(node, FuncNode) and id(node) not in self.reached:
                if self.is_method(node):
                    continue
                with self.allotment(node):
                    self.standalone_function(node, module_state)

    # ------------------------------------------------------------------ budget
    @contextmanager
    def allotment(self, node: Optional[ast.AST], owner: str = "", quiet: bool = False) -> Iterator[None]:
        """Analyse one definition (``node``; None: the module's top-level code) within its own
        allotment of work. Past it, that analysis stops here (what it found so far is kept)
        and one information note on the definition says so; ``quiet``: no note (code of
        another module, whose own check reports it)."""
        saved = self.budget.begin(self.definition_label(node, owner), self.header_span(node))
        try:
            yield
        except BudgetExceeded:
            if not quiet:
                self.stopped_early()
        finally:
            self.budget.end(saved)

    def stopped_early(self) -> None:
        span = self.budget.span or Span(1, 1, 1, 1)
        self.work.stopped.append((self.budget.label, span))
        self.emit(Event("analysis_stopped", span, {
            "what": self.budget.label, "limit": f"{self.budget.limit:,}"}))

    @staticmethod
    def definition_label(node: Optional[ast.AST], owner: str = "") -> str:
        if node is None:
            return "the module's top-level code"
        name = getattr(node, "name", "?")
        return f"`{owner}.{name}`" if owner else f"`{name}`"

    def header_span(self, node: Optional[ast.AST]) -> Span:
        """``def name`` / ``class Name`` of a definition (the module: its first line)."""
        if node is None or self.foreign_stack:
            return Span(1, 1, 1, 1)
        row = node.lineno
        line = self.src.line(row)
        col = self.src.char_col(row, node.col_offset)
        name = getattr(node, "name", "")
        end = line.find(name, col) if name else -1
        end = end + len(name) if end >= 0 else len(line.rstrip())
        return Span(row, col + 1, row, max(end, col) + 1)

    def is_method(self, fn: ast.AST) -> bool:
        return self.class_of_method(fn) is not None

    def class_of_method(self, fn: ast.AST) -> Optional[ClassInfo]:
        """The class of the file that defines ``fn`` as a method, if any."""
        return self.method_owner.get(id(fn))

    def standalone_function(self, fn: ast.FunctionDef, module_state: State) -> None:
        st = module_state.fork()
        st.flow = None
        args = [self.standalone_arg(st, a) for a in fn.args.args]
        self._standalone(fn, st, args, None)

    def standalone_method(self, info: ClassInfo, fn: ast.FunctionDef, module_state: State) -> None:
        if self.is_static(fn):
            st = module_state.fork()
            st.flow = None
            args = [self.standalone_arg(st, a) for a in fn.args.args]
            self._standalone(fn, st, args, None)
            return
        if fn.name == "__init__" and self.triggers.only_inplace_config(fn):
            # Nothing in it but in-place module configuration: build it once (shared with the
            # other methods) and run the containers it built; none to run when it provably
            # builds none (engine/domain/initprobe.py), and then nothing to build yet.
            if id(info) not in self.instances and builds_no_container(
                    fn, info.node, lambda name: _torch_path_of(module_state.frames[0].get(name))):
                self.reached.add(id(fn))
                return
            cached = self._instance(info, module_state)
            if cached is not None:
                self.reached.add(id(fn))
                self.probe_sequentials(cached[1], cached[0].fork())
            return
        if fn.name == "__init__":
            st = module_state.fork()
            st.flow = None
            self_v = self.instantiate(info, [], {}, st, self.span_of(info.node), run_init=False)
        else:
            cached = self._instance(info, module_state)
            if cached is None:
                return
            st, self_v = cached[0].fork(), cached[1]
        args = [self.standalone_arg(st, a) for a in fn.args.args[1:]]
        # An __init__ follows the local submodules it builds one level: their own __init__s are
        # analysed on their own, and what this one does with them needs their attributes, not
        # their submodules' (three levels cost timm a tenth of its analysis).
        self.init_limit = 1 if fn.name == "__init__" else MAX_INIT_DEPTH
        try:
            self._standalone(fn, st, args, self_v)
        finally:
            self.init_limit = MAX_INIT_DEPTH

    def standalone_arg(self, st: State, a: ast.arg) -> Value:
        """An argument of a function analysed on its own: a tensor of unknown origin, unless
        its annotation says it is something else (``src: list[Tensor]``, ``n: int``)."""
        if a.annotation is not None and _not_a_tensor(a.annotation):
            return UNKNOWN
        return self.unknown_tensor(st, a.arg)

    def _instance(self, info: ClassInfo, module_state: State) -> Optional[Tuple[State, Value]]:
        if id(info) in self.instances:
            return self.instances[id(info)]
        self.instances[id(info)] = None  # building it failed, unless replaced below
        base = module_state.fork()
        base.flow = None
        # Build only this class's own __init__: local submodules stay opaque (their own
        # methods are analysed on their own), which keeps large libraries fast.
        self.init_depth = MAX_INIT_DEPTH - 1
        try:
            with self.allotment(info.node):
                self_v = self.instantiate(info, [], {}, base, self.span_of(info.node))
                self.instances[id(info)] = (base, self_v)
        except Halt:
            pass
        finally:
            self.init_depth = 0
        return self.instances[id(info)]

    def _standalone(self, fn: ast.FunctionDef, st: State, args: List[Value], self_v: Optional[Value]) -> None:
        self.reached.add(id(fn))
        if self.callsites is None:
            from gradwarden.engine.front.callsites import CallSites

            self.callsites = CallSites(self.tree, self.src.text)
        if self.callsites.grad_mode_of(fn) is False:
            st.grad_enabled = False  # every call in this file runs it under no_grad
        # Containers that exist before an analysed-alone function starts (its object's
        # attributes, module globals) may have been filled by code that ran before it: an
        # empty one there is "unknown contents", not "no elements".
        # A field the state still shares with a fork is never written in place again (each
        # holder copies it first): its keys are those of now, without a copy of them.
        self.prefilled_lists = st.lists if "lists" in st._shared else set(st.lists)
        self.prefilled_dicts = st.dicts if "dicts" in st._shared else set(st.dicts)
        try:
            exits = self.call_function(fn, ([self_v] if self_v is not None else []) + args, {}, st,
                                       self.span_of(fn), bound_self=self_v is not None, join=False)
        except Halt:
            return
        for ex_state, ret in exits:
            # An analysed-alone function's outputs are assumed to be trained through:
            # check what their backward would meet (stale saves, custom backward bodies).
            self.implicit_backward(ret, ex_state, self.span_of(fn))
            if fn.name == "__init__" and isinstance(self_v, ObjV):
                self.probe_sequentials(self_v, ex_state)
        self.finish_path([s for s, _ in exits])

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
            if not any(isinstance(k, ObjV) and self.truth_of(st.attrs(k.oid).get("inplace", FALSE)) is True
                       for k in kids):
                continue
            probe = st.fork()
            x = self.unknown_tensor(probe, "input", rg=True)
            span = st.attrs(v.oid)["__span__"].value
            try:
                out = self.call_object(v, [x], {}, probe, _SpanNode(span))
                self.implicit_backward(out, probe, span)
            except Halt:
                continue

    def standalone_function_class(self, info: ClassInfo, module_state: State) -> None:
        st = module_state.fork()
        fwd = info.find_method("forward")
        nargs = len(fwd[1].args.args) - 1 if fwd else 1
        args = [self.unknown_tensor(st, f"arg{i}", rg=True) for i in range(max(nargs, 1))]
        try:
            out = self.apply_custom_function(info, args, {}, st, self.span_of(info.node))
            # Nobody in this file calls it: the incoming gradient can be anything a caller passes.
            self.implicit_backward(out, st, self.span_of(info.node), user_grad=True)
        except Halt:
            return

    # ------------------------------------------------------------------ helpers
    def span_of(self, node: ast.AST) -> Span:
        if self.foreign_stack:
            return self.foreign_stack[-1][1]  # code of another module: point at the call here
        hit = self._spans.get(id(node))
        if hit is not None and hit[0] is node:  # a node runs once per path and iteration
            return hit[1]
        row = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        erow = getattr(node, "end_lineno", None) or row
        ecol = getattr(node, "end_col_offset", None)
        src = self.src
        if not src.ascii:
            col = src.char_col(row, col)
            if ecol is not None:
                ecol = src.char_col(erow, ecol)
        span = Span(row, col + 1, erow, ecol + 1 if ecol is not None else col + 1)
        self._spans[id(node)] = (node, span)
        return span

    def text_of(self, node: ast.AST) -> str:
        """The source text of ``node`` (one line, shortened), from the already split lines."""
        row = getattr(node, "lineno", None)
        erow = getattr(node, "end_lineno", None)
        if row is None or erow is None:
            return "?"
        src = self.foreign_stack[-1][0].src if self.foreign_stack else self.src
        first = src.line(row)
        start = src.char_col(row, node.col_offset)
        if erow == row:
            seg = first[start:src.char_col(row, node.end_col_offset)]
        else:
            parts = [first[start:]] + [src.line(r) for r in range(row + 1, erow)]
            parts.append(src.line(erow)[:src.char_col(erow, node.end_col_offset)])
            seg = " ".join(p.strip() for p in parts)
        seg = " ".join(seg.split())
        return seg if len(seg) <= 60 else seg[:57] + "..."

    def emit(self, ev: Event) -> None:
        key = (ev.kind, ev.span.row, ev.span.column, ev.facts.get("code", ""))
        if self.unit_log is not None:
            self.unit_log.append((key, ev))  # every emit, kept or not: a replay repeats them in order
        if key not in self.events:
            self.events[key] = ev

    @staticmethod
    def is_static(fn: ast.FunctionDef) -> bool:
        return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)

    def tick(self) -> None:
        self.budget.tick()

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: Sequence[ast.stmt], states: List[State]) -> List[State]:
        work = self.work
        for stmt in stmts:
            if len(states) > work.peak_paths:
                work.peak_paths = len(states)
            group = _GROUPED.get(type(stmt)) if len(states) > 1 else None
            if group is not None:
                live = [st for st in states if st.flow is None]
                if len(live) > 1:
                    # the paths run through the nested blocks together: one run of a nested
                    # loop for all of them, not one per path (which multiplies at every level)
                    for _ in live:
                        self.tick()
                    states = self.cap([st for st in states if st.flow is not None] + getattr(self, group)(stmt, live))
                    if not states:
                        break
                    continue
            nxt: List[State] = []
            for st in states:
                if st.flow is not None:
                    nxt.append(st)
                    continue
                try:
                    nxt.extend(self.exec_stmt(stmt, st))
                except Halt:
                    continue
            # cap() keeps at least MAX_PATHS_STANDALONE paths: fewer need no call
            states = nxt if len(nxt) <= MAX_PATHS_STANDALONE else self.cap(nxt)
            if not states:
                break
        return states

    def cap(self, states: List[State]) -> List[State]:
        limit = MAX_PATHS_STANDALONE if self.standalone else MAX_PATHS
        if len(states) <= limit:
            return states
        # Keep the flow kinds apart (a returned path must not be merged with a live one).
        groups: Dict[Any, List[State]] = {}
        for s in states:
            groups.setdefault(s.flow, []).append(s)
        out: List[State] = []
        budget = max(1, limit - len(groups) + 1)
        for flow, group in groups.items():
            if len(group) > budget:
                self.work.joins += 1
                group = group[: budget - 1] + [join_states(group[budget - 1:])]
            out.extend(group)
        return out

    def exec_stmt(self, stmt: ast.stmt, st: State) -> List[State]:
        self.budget.tick()  # self.tick(), one call less for every statement
        kind = stmt.__class__
        try:
            meth = self._stmt_handlers[kind]
        except KeyError:
            meth = self._stmt_handlers[kind] = getattr(type(self), "stmt_" + kind.__name__, None)
        if meth is None:
            return [st]
        return meth(self, stmt, st)

    def stmt_Expr(self, stmt: ast.Expr, st: State) -> List[State]:
        if isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
            return self.do_yield(stmt.value, st)
        if isinstance(stmt.value, ast.Call):
            # a flag, not a reference to the statement: that would be a reference cycle,
            # keeping the statement and its call alive after the tree is dropped until the
            # collector runs (and making each collection walk them)
            stmt.value._gw_statement = True  # type: ignore[attr-defined]
        self.eval(stmt.value, st)
        return [st]

    def stmt_Pass(self, stmt: ast.Pass, st: State) -> List[State]:
        return [st]

    def stmt_Assign(self, stmt: ast.Assign, st: State) -> List[State]:
        if isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
            return self.do_yield(stmt.value, st)
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple):
            self.check_view_swap(stmt, st)
        value = self.eval(stmt.value, st)
        for target in stmt.targets:
            self.assign(target, value, st, stmt)
        return [st]

    def check_view_swap(self, stmt: ast.Assign, st: State) -> None:
        """``x[:, :d], x[:, d:] = x[:, d:], x[:, :d]``: the right-hand side holds views, not
        copies; the second copy reads what the first one already overwrote (a silent swap bug:
        the idiom works for Python lists, not for tensors)."""
        targets, values = stmt.targets[0].elts, stmt.value.elts  # type: ignore[attr-defined]
        if len(targets) != len(values) or len(targets) < 2:
            return
        if not all(isinstance(t, ast.Subscript) for t in targets) or not all(isinstance(v, ast.Subscript) for v in values):
            return
        if len({ast.dump(t.value) for t in targets} | {ast.dump(v.value) for v in values}) != 1:
            return
        if isinstance(self.eval(targets[0].value, st), TensorV):
            name = self.text_of(targets[0].value)
            self.emit(Event("overlapping_assign", self.span_of(stmt), {
                "name": name, "desc": f"the right-hand side holds views of `{name}`, not copies: the later "
                                      "assignments read values the earlier ones already overwrote (silently wrong)"},
                severity=2, fix_facts={"rhs_span": self.span_of(stmt.value), "swap": True}))

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, st: State) -> List[State]:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, st), st, stmt)
        return [st]

    def stmt_AugAssign(self, stmt: ast.AugAssign, st: State) -> List[State]:
        self.aug_assign(stmt, st)
        return [st]

    def stmt_Return(self, stmt: ast.Return, st: State) -> List[State]:
        st.retval = self.eval(stmt.value, st) if stmt.value is not None else NONE
        st.flow = "return"
        return [st]

    def stmt_Break(self, stmt: ast.Break, st: State) -> List[State]:
        st.flow = "break"
        return [st]

    def stmt_Continue(self, stmt: ast.Continue, st: State) -> List[State]:
        st.flow = "continue"
        return [st]

    def stmt_Raise(self, stmt: ast.Raise, st: State) -> List[State]:
        return []  # the path ends (an exception we do not follow)

    def stmt_Assert(self, stmt: ast.Assert, st: State) -> List[State]:
        return [st]

    def stmt_Delete(self, stmt: ast.Delete, st: State) -> List[State]:
        for t in stmt.targets:
            if isinstance(t, ast.Name):
                st.frame().pop(t.id, None)
            elif isinstance(t, ast.Subscript):
                self.delete_item(self.eval(t.value, st), t.slice, st)
        return [st]

    def delete_item(self, obj: Value, sl: ast.expr, st: State) -> None:
        """``del memory[:]`` empties a list, ``del memory[0]`` drops an item, ``del d[k]`` an
        entry (what is deleted is no longer carried anywhere)."""
        if isinstance(obj, SeqV):
            items = list(st.lists.get(obj.lid, ()))
            if isinstance(sl, ast.Slice):
                bounds = [self.eval(b, st) if b is not None else NONE for b in (sl.lower, sl.upper, sl.step)]
                if all(isinstance(b, ConstV) and (b.value is None or isinstance(b.value, int)) for b in bounds):
                    del items[slice(*[b.value for b in bounds])]
                elif sl.lower is None and sl.upper is None:
                    items = []
                else:
                    return
            else:
                idx = self.eval(sl, st)
                if isinstance(idx, ConstV) and isinstance(idx.value, int) and -len(items) <= idx.value < len(items) \
                        and obj.kind != "homogeneous":
                    del items[idx.value]
                else:
                    return
            st.own("lists")[obj.lid] = tuple(items)
        elif isinstance(obj, DictV):
            key = self.dict_key(self.eval(sl, st))
            if key[0] == "c":
                st.own("dicts")[obj.did] = tuple(e for e in st.dicts.get(obj.did, ()) if e[0] != key)

    def stmt_Global(self, stmt: ast.Global, st: State) -> List[State]:
        return [st]

    stmt_Nonlocal = stmt_Global

    def stmt_Import(self, stmt: ast.Import, st: State) -> List[State]:
        for alias in stmt.names:
            if alias.asname:
                st.frame()[alias.asname] = self.module_ref(alias.name)
            else:
                top = alias.name.split(".")[0]
                st.frame()[top] = self.module_ref(top)
        return [st]

    def stmt_ImportFrom(self, stmt: ast.ImportFrom, st: State) -> List[State]:
        mod = stmt.module or ""
        for alias in stmt.names:
            if alias.name == "*":
                continue
            value = self.module_ref(f"{mod}.{alias.name}" if mod else alias.name) if not stmt.level else UNKNOWN
            if isinstance(value, UnknownV) and self.resolver is not None and not self.standalone:
                value = self.import_from_project(mod, stmt.level, alias.name, stmt)
            st.frame()[alias.asname or alias.name] = value
        return [st]

    def import_from_project(self, mod: str, level: int, name: str, stmt: ast.AST) -> Value:
        """A function or class imported from another module of the user's project."""
        if len(self.foreign_stack) >= 2:
            return UNKNOWN
        resolver = self.resolver
        if self.foreign_stack:
            resolver = resolver.for_module(str(self.foreign_stack[-1][0].path))
        path = resolver.find(mod, level, None)
        fm = resolver.load(path) if path is not None else None
        if fm is None:
            return UNKNOWN
        if not fm.loaded:
            fm.loaded = True
            self.load_foreign(fm, self.span_of(stmt))
        value = fm.globals.get(name)
        return value if isinstance(value, RefV) and value.kind in ("func", "class") else UNKNOWN

    def load_foreign(self, fm: Any, anchor: Span) -> None:
        self.foreign_defs.update(dict.fromkeys(fm.parsed.def_ids, fm))
        self.foreign_stmts.update(dict.fromkeys(map(id, fm.parsed.statements), fm))
        body = [s for s in fm.tree.body if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                         ast.AsyncFunctionDef, ast.ClassDef, ast.Assign))]
        st = State()
        st.frame()["__name__"] = ConstV(fm.path.stem)
        self.foreign_stack.append((fm, anchor))
        try:
            with self.allotment(fm.tree, quiet=True):
                self.exec_block(body, [st])
        except Halt:
            pass
        finally:
            self.foreign_stack.pop()
        fm.globals = dict(st.frames[0])

    def module_ref(self, qual: str) -> Value:
        if qual == "torch" or qual.startswith("torch."):
            return ref_value("torch", qual)
        if qual in ("copy", "math", "random", "itertools", "functools", "collections", "sys", "os"):
            return ref_value("module", qual)
        if qual.startswith(("copy.", "math.", "itertools.", "functools.")):
            return ref_value("builtin", qual)
        return UNKNOWN

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, st: State) -> List[State]:
        st.frame()[stmt.name] = ref_value("func", stmt.name, (stmt, st.fi))
        return [st]

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, stmt: ast.ClassDef, st: State) -> List[State]:
        info = self.classes.get(id(stmt))
        if info is None:
            bases = [self.eval(b, st) for b in stmt.bases]
            info = ClassInfo(stmt.name, stmt, bases)
            for b in bases:
                if isinstance(b, RefV) and b.kind == "class":
                    info.parents.append(b.target)
                    info.is_module |= b.target.is_module
                    info.is_function |= b.target.is_function
                    info.torch_base = info.torch_base or b.target.torch_base
                elif isinstance(b, RefV) and b.kind == "torch":
                    info.torch_base = b.name
                    if b.name in ("torch.autograd.Function", "torch.autograd.function.Function"):
                        info.is_function = True
                    elif b.name.startswith("torch.nn."):
                        info.is_module = True
            for item in stmt.body:
                if isinstance(item, FuncNode):
                    info.methods[item.name] = item
                elif isinstance(item, ast.Assign):
                    for t in item.targets:
                        if isinstance(t, ast.Name):
                            info.class_attrs[t.id] = item.value
            self.classes[id(stmt)] = info
            for m in info.methods.values():
                self.method_owner.setdefault(id(m), info)  # the first class defining it, as before
            if info.is_function and not self.foreign_stack:
                self.check_function_class(info)
        st.frame()[stmt.name] = ref_value("class", stmt.name, info)
        return [st]

    def check_function_class(self, info: ClassInfo) -> None:
        """Static checks of a custom autograd.Function: the legacy (non-static) API, and a
        backward that returns fewer gradients than forward takes inputs."""
        fwd, bwd = info.methods.get("forward"), info.methods.get("backward")
        if fwd is not None and not self.is_static(fwd):
            self.emit(Event("legacy_function", self.span_of(fwd), {"fn": info.name}))
            return
        if fwd is None or bwd is None or fwd.args.vararg is not None or fwd.args.kwarg is not None:
            return
        n_inputs = len(fwd.args.posonlyargs) + len(fwd.args.args) - 1
        n_required = n_inputs - len(fwd.args.defaults)
        for node in _own_nodes(bwd):
            if isinstance(node, ast.Return) and node.value is not None:
                got = _returned_count(node.value)
                if got is not None and got < n_required:
                    self.emit(Event("backward_grad_count", self.span_of(node),
                                    {"fn": info.name, "got": got, "want": n_inputs}))

    def triggered(self, node: ast.AST) -> bool:
        # a statement of another project module is looked up in that module's own lines
        fm = self.foreign_stmts.get(id(node))
        return (fm.triggers if fm is not None else self.triggers).triggered(node)

    def stmt_If(self, stmt: ast.If, st: State) -> List[State]:
        return self.if_group(stmt, [st])

    def if_group(self, stmt: ast.If, states: List[State]) -> List[State]:
        """Each path goes to the branch its condition picks, or forks into both; then each
        branch runs once, on all the paths that took it."""
        body_in: List[State] = []
        else_in: List[State] = []
        serial: List[State] = []
        for st in states:
            try:
                cond = self.truth(stmt.test, st)
            except Halt:
                continue
            if cond is True:
                body_in.append(st)
            elif cond is False:
                else_in.append(st)
            elif self.standalone and not self.triggered(stmt):
                # Neither branch can cause a hazard or leave early: run both on one state
                # (bindings of the later branch win) instead of forking and joining.
                serial.append(st)
            else:
                other = st.fork()
                body_in.append(st)
                else_in.append(other)
        out: List[State] = []
        if body_in:
            out += self.exec_block(stmt.body, body_in)
        if else_in:
            out += self.exec_block(stmt.orelse, else_in)
        if serial:
            out += self.exec_block(stmt.orelse, self.exec_block(stmt.body, serial))
        return out

    def stmt_With(self, stmt: ast.With, st: State) -> List[State]:
        saved_mode = st.grad_enabled
        changed = False
        for item in stmt.items:
            ctx = self.eval(item.context_expr, st)
            mode = self.grad_mode_of(ctx, st)
            if mode is not None:
                st.grad_enabled = mode
                changed = True
            if item.optional_vars is not None:
                self.assign(item.optional_vars, ctx if not isinstance(ctx, ObjV) or mode is None else UNKNOWN,
                            st, stmt)
        out = self.exec_block(stmt.body, [st])
        if changed:
            for s in out:
                s.grad_enabled = saved_mode
        return out

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, stmt: ast.Try, st: State) -> List[State]:
        return self.try_group(stmt, [st])

    def try_group(self, stmt: ast.Try, states: List[State]) -> List[State]:
        out = self.exec_block(stmt.body, states)
        out = self.exec_block(stmt.orelse, out)
        return self.exec_block(stmt.finalbody, out) if stmt.finalbody else out

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt: Any, st: State) -> List[State]:
        out: List[State] = []
        for case in stmt.cases:
            out.extend(self.exec_block(case.body, [st.fork()]))
        return out or [st]

    # -- loops
    def stmt_For(self, stmt: ast.For, st: State) -> List[State]:
        return self.for_group(stmt, [st], shortcuts=False)

    def for_group(self, stmt: ast.For, states: List[State], shortcuts: bool = True) -> List[State]:
        """A ``for`` loop entered by several paths. Paths that iterate the same known
        sequence unroll it together; the others run the loop of unknown length together (each
        binding its own element). ``shortcuts``: try the loop forms a subclass runs on its own
        first (the single-path entry, ``stmt_For``, has gone through them already)."""
        out: List[State] = []
        known: Dict[Tuple[int, ...], Tuple[List[Value], List[State]]] = {}
        unknown: List[State] = []
        elems: List[Value] = []
        freeze = getattr(self, "freeze_loop", None) if shortcuts else None
        for st in states:
            try:
                if freeze is not None:
                    done = freeze(stmt, st)
                    if done is not None:
                        out.extend(done)
                        continue
                gen = self.local_generator_call(stmt.iter, st)
                if gen is not None:
                    out.extend(self.for_over_generator(stmt, gen, st))
                    continue
                it = self.eval(stmt.iter, st)
                items = self.known_items(it, st)
                if items is not None and self.unrolls(items, st):
                    # values are compared by identity: forks share them until one path rebinds
                    known.setdefault(tuple(map(id, items)), (items, []))[1].append(st)
                    continue
                elem = self.element_of(it, st)
            except Halt:
                continue
            st.origins = st.origins + ((-1, len(unknown)),)  # its element, for the second iteration
            unknown.append(st)
            elems.append(elem)
        for items, group in known.values():
            out.extend(self.unroll_items(stmt, items, group))
        if unknown:
            self.loop_counter += 1
            loop_id = self.loop_counter
            self.loop_depth[loop_id] = len(self.call_spans)
            for st in unknown:
                st.origins = st.origins[:-1] + ((loop_id, st.origins[-1][1]),)

            def bind(s: State) -> None:
                self.assign(stmt.target, self.fresh_element(elems[_origin(s, loop_id)], s), s, stmt)

            out.extend(self.loop_group(stmt, unknown, bind, loop_id))
        return self.cap(out)

    def unrolls(self, items: Sequence[Value], st: State) -> bool:
        """Is a known sequence unrolled (one run of the body per item)? Short ones, and walks
        over a model's modules; nested unrolled loops only while the runs of the innermost
        body stay under MAX_UNROLL_PRODUCT (past it, cost would multiply at every level)."""
        n = len(items)
        if not (n <= MAX_UNROLL or n <= MAX_UNROLL_MODULES and self.module_walk(items, st)):
            return False
        return self.unroll_product == 1 or self.unroll_product * max(n, 1) <= MAX_UNROLL_PRODUCT

    def unroll_items(self, stmt: ast.For, items: List[Value], states: List[State]) -> List[State]:
        self.loop_counter += 1
        loop_id = self.loop_counter
        self.loop_depth[loop_id] = len(self.call_spans)
        done: List[State] = []
        outer_product = self.unroll_product
        self.unroll_product = outer_product * max(len(items), 1)
        try:
            for k, item in enumerate(items):
                for s in states:
                    s.loop_ctx = s.loop_ctx + ((loop_id, k + 1),)
                    self.assign(stmt.target, item, s, stmt)
                states = self.exec_block(stmt.body, states)
                states, exited = self._after_iteration(states)
                done.extend(exited)
                for s in states:
                    s.loop_ctx = s.loop_ctx[:-1]
                if not states:
                    break
        finally:
            self.unroll_product = outer_product
        for s in done:
            s.loop_ctx = s.loop_ctx[:-1]
        states = self.exec_block(stmt.orelse, states) if stmt.orelse else states
        return self.cap(states + done)

    @staticmethod
    def module_walk(items: Sequence[Value], st: State) -> bool:
        """Every item is a module or a parameter (a walk over ``model.modules()`` & co.)."""
        for it in items:
            if isinstance(it, ObjV):
                if "__module__" not in st.attrs(it.oid):
                    return False
            elif isinstance(it, TensorV):
                info = st.t.get(it.tid)
                if info is None or not info.param:
                    return False
            elif isinstance(it, SeqV) and it.kind == "tuple":  # named_modules(): (name, module)
                pair = st.lists.get(it.lid, ())
                if len(pair) != 2 or not isinstance(pair[1], (ObjV, TensorV)):
                    return False
            else:
                return False
        return True

    def stmt_While(self, stmt: ast.While, st: State) -> List[State]:
        return self.while_group(stmt, [st])

    def while_group(self, stmt: ast.While, states: List[State]) -> List[State]:
        out: List[State] = []
        exits_now: List[State] = []
        live: List[State] = []
        for st in states:
            try:
                cond = self.truth(stmt.test, st)
            except Halt:
                continue
            (exits_now if cond is False else live).append(st)
        if exits_now:
            out += self.exec_block(stmt.orelse, exits_now)
        if live:
            self.loop_counter += 1
            self.loop_depth[self.loop_counter] = len(self.call_spans)
            out += self.loop_group(stmt, live, None, self.loop_counter)
        return out

    def unrolled_loop(self, stmt: Any, st: State, bind: Optional[Callable[[State], None]], loop_id: int) -> List[State]:
        return self.loop_group(stmt, [st], bind, loop_id)

    def loop_group(self, stmt: Any, states: List[State], bind: Optional[Callable[[State], None]],
                   loop_id: int) -> List[State]:
        """A loop of unknown length, entered by ``states`` together: two iterations, so that
        what one leaves behind meets the next; one inside the second iteration of an
        enclosing loop (what this loop's iterations hand each other was seen in the enclosing
        loop's first iteration, and running it twice there again doubles the cost at every
        level of a nest)."""
        done: List[State] = []
        once = self.init_depth or self.revisits or (self.standalone and not self.triggered(stmt))
        if self.revisits and len(states) > 1:
            # widening at the loop head: inside a second iteration of an enclosing loop the
            # paths enter as one (the precise per-path run happened in the first iteration)
            self.work.joins += 1
            states = [join_states(states)]
        for k in ((1,) if once else (1, 2)):
            live: List[State] = []
            for s in states:
                if isinstance(stmt, ast.While) and k > 1 and self.truth(stmt.test, s) is False:
                    done.append(s)
                    continue
                s.loop_ctx = s.loop_ctx + ((loop_id, k),)
                if bind is not None:
                    try:
                        bind(s)
                    except Halt:
                        continue
                live.append(s)
            if k > 1:
                self.revisits += 1
            try:
                states = self.exec_block(stmt.body, live)
            finally:
                if k > 1:
                    self.revisits -= 1
            states, exited = self._after_iteration(states)
            for s in states + exited:
                s.loop_ctx = s.loop_ctx[:-1]
            done.extend(exited)
            if not states:
                break
        if stmt.orelse:
            states = self.exec_block(stmt.orelse, states)
        out = self.cap(states + done)
        if bind is not None:
            for s in out:
                s.origins = tuple(o for o in s.origins if o[0] != loop_id)
        return out

    @staticmethod
    def _after_iteration(states: List[State]) -> Tuple[List[State], List[State]]:
        live, exited = [], []
        for s in states:
            if s.flow == "continue":
                s.flow = None
            if s.flow == "break":
                s.flow = None
                exited.append(s)
            elif s.flow == "return":
                exited.append(s)
            else:
                live.append(s)
        return live, exited

    # -- generators: `for x in gen(...)` runs gen's body, and the loop body at each yield
    def local_generator_call(self, node: ast.expr, st: State) -> Optional[Tuple[ast.FunctionDef, List[Value], Dict[str, Value], Optional[Value]]]:
        if not isinstance(node, ast.Call):
            return None
        fn = self.eval(node.func, st) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
        if not isinstance(fn, RefV) or fn.kind not in ("func", "method"):
            return None
        fdef = fn.target[0] if fn.kind == "func" else fn.target[1]
        if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef)):
            return None
        args, kwargs = self.eval_args(node, st)
        return fdef, args, kwargs, fn.bound

    def for_over_generator(self, stmt: ast.For, gen: Any, st: State) -> List[State]:
        fdef, args, kwargs, bound = gen
        self.loop_counter += 1
        self.loop_depth[self.loop_counter] = len(self.call_spans)
        consumer = {"stmt": stmt, "frame": st.fi, "loop_id": self.loop_counter, "count": 0}
        self.consumers.append(consumer)
        try:
            exits = self.call_function(fdef, ([bound] if bound is not None else []) + args, kwargs, st,
                                       self.span_of(stmt.iter), bound_self=bound is not None, join=False,
                                       generator=True)
        finally:
            self.consumers.pop()
        out = []
        for s, _ in exits:
            if s.flow == "consumer_return":
                s.flow = "return"
            out.append(s)
        return self.cap(out)

    def do_yield(self, node: Any, st: State) -> List[State]:
        if not self.consumers or self.consumers[-1].get("gen_frame") != st.fi:
            return [st]
        c = self.consumers[-1]
        value = self.eval(node.value, st) if node.value is not None else NONE
        if isinstance(node, ast.YieldFrom):
            value = self.element_of(value, st)
        if c["stmt"] is None:  # a generator consumed as a value: collect what it yields
            c["items"].append(value)
            return [st]
        gen_fi = st.fi
        st.fi = c["frame"]
        c["count"] += 1
        st.loop_ctx = st.loop_ctx + ((c["loop_id"], c["count"]),)
        self.assign(c["stmt"].target, value, st, c["stmt"])
        out = self.exec_block(c["stmt"].body, [st])
        res = []
        for s in out:
            s.loop_ctx = s.loop_ctx[:-1]
            s.fi = gen_fi
            if s.flow == "continue":
                s.flow = None
            elif s.flow == "break":
                s.flow = "return"  # ends the generator; the for loop then exits
            elif s.flow == "return":
                s.flow = "consumer_return"
            res.append(s)
        return res

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
                span = self.span_of(stmt)
                if held and not (moved and info.held_at is not None):
                    st.update_t(value.tid, held_at=span)
                if not st.loop_ctx:
                    return
                depth = len(self.call_spans)
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
                self.name_params(value, target.id, st)  # type: ignore[arg-type, attr-defined]
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
            obj = self.eval(target.value, st)  # type: ignore[attr-defined]
            self.store_attr(obj, target.attr, value, st, target, stmt)  # type: ignore[attr-defined]
        elif tcls is ast.Subscript:
            obj = self.eval(target.value, st)  # type: ignore[attr-defined]
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
            return [self.tensor_getitem(value, None, st, None) for _ in range(n)]
        return [UNKNOWN] * n

    def store_attr(self, obj: Value, attr: str, value: Value, st: State, target: ast.Attribute, stmt: ast.AST) -> None:
        if isinstance(obj, ObjV):
            if isinstance(value, TensorV) and "__ctx__" in st.attrs(obj.oid):
                self.note_kept(obj, [value], self.span_of(stmt), st)  # `ctx.foo = interm`
            self.module_setattr(obj, attr, value, st)
            if attr == "inplace" and self.truth_of(value) is True:
                # flipped after construction: the in-place writes it causes are this line's
                st.set_attr(obj.oid, "__inplace_at__", ConstV(self.span_of(stmt)))
            if isinstance(value, TensorV):
                info = st.t.get(value.tid)
                if info is not None and not info.name:
                    st.update_t(value.tid, name=self.text_of(target))
        elif isinstance(obj, TensorV):
            self.tensor_setattr(obj, attr, value, st, target, stmt)

    def store_item(self, obj: Value, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        if isinstance(obj, TensorV):
            self.tensor_setitem(obj, target, value, st, stmt)
        elif isinstance(obj, SeqV):
            idx = self.eval(target.slice, st)
            items = list(st.lists.get(obj.lid, ()))
            if isinstance(idx, ConstV) and isinstance(idx.value, int) and -len(items) <= idx.value < len(items):
                items[idx.value] = value
            elif items:
                items = [value] + items[1:] if obj.kind == "homogeneous" else items
            st.own("lists")[obj.lid] = tuple(items)
        elif isinstance(obj, DictV):
            key = self.eval(target.slice, st)
            self.dict_set(obj, key, value, st)

    def aug_assign(self, stmt: ast.AugAssign, st: State) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            cur = st.lookup(target.id)
        elif isinstance(target, ast.Attribute):
            cur = self.load_attr(self.eval(target.value, st), target.attr, st, target)
        elif isinstance(target, ast.Subscript):
            cur = self.eval(target, st)
        else:
            return
        rhs = self.eval(stmt.value, st)
        if isinstance(cur, TensorV):
            self.tensor_inplace_binop(cur, stmt.op, rhs, st, stmt)
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                self.note_store(cur, st, stmt, held=True)  # `self.out += model(x)`: kept with a graph now
            if isinstance(target, ast.Subscript):
                base = self.eval(target.value, st)
                if isinstance(base, SeqV):
                    self.store_item(base, target, cur, st, stmt)
            return
        result = self.binop(cur, stmt.op, rhs, st, stmt)
        if isinstance(result, TensorV) and isinstance(target, ast.Name):
            self.note_accumulation(target.id, result, rhs, st, stmt)
        self.assign(target, result, st, stmt)

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
        return BaseInterpreter.eval(self, node, st)  # eval reads names itself (the most evaluated expression)

    def ex_Attribute(self, node: ast.Attribute, st: State) -> Value:
        return self.load_attr(self.eval(node.value, st), node.attr, st, node)

    def load_attr(self, obj: Value, attr: str, st: State, node: ast.AST) -> Value:
        cls = obj.__class__  # (no subclasses of these value classes exist)
        if cls is TensorV:
            return self.tensor_getattr(obj, attr, st, node)  # type: ignore[arg-type]
        if cls is ObjV:
            return self.object_getattr(obj, attr, st, node)  # type: ignore[arg-type]
        if cls is RefV:
            if obj.kind == "super":
                return self.super_attr(obj, attr)
            if obj.kind == "torch":
                return ref_value("torch", f"{obj.name}.{attr}")
            if obj.kind == "module":
                return ref_value("builtin", f"{obj.name}.{attr}")
            if obj.kind == "class":
                found = obj.target.find_method(attr)
                if found:
                    return ref_value("method", attr, found, None)
                if attr == "apply" and obj.target.is_function:
                    return ref_value("apply", obj.name, obj.target)
                expr = obj.target.class_attrs.get(attr)
                if expr is not None and isinstance(expr, ast.Constant):
                    return ConstV(expr.value)
                return UNKNOWN
            return UNKNOWN
        if isinstance(obj, SeqV) and obj.kind == "tuple" and attr in _NAMEDTUPLE_FIELDS:
            items = st.lists.get(obj.lid, ())
            i = _NAMEDTUPLE_FIELDS[attr]
            return items[i] if i < len(items) else UNKNOWN  # torch.max(x, 1).values, eigh(...).eigenvectors
        if isinstance(obj, (SeqV, DictV)):
            return ref_value("boundseq", attr, None, obj)
        return UNKNOWN

    def object_getattr(self, obj: ObjV, attr: str, st: State, node: ast.AST) -> Value:
        attrs = st.attrs(obj.oid)
        if attr in attrs:
            return attrs[attr]
        cls = attrs.get("__class__")
        if isinstance(cls, RefV) and cls.kind == "class":
            found = cls.target.find_method(attr)
            if found:
                return ref_value("method", attr, found, obj)
            expr = cls.target.class_attrs.get(attr)
            if expr is not None and isinstance(expr, ast.Constant):
                return ConstV(expr.value)
        return self.builtin_object_attr(obj, attr, st)

    def ex_Subscript(self, node: ast.Subscript, st: State) -> Value:
        obj = self.eval(node.value, st)
        if isinstance(obj, TensorV):
            return self.tensor_getitem(obj, node, st, node)
        idx = self.eval(node.slice, st)
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
            return self.object_getitem(obj, idx, st)
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
            key = self.eval(k, st) if k is not None else UNKNOWN
            entries.append((self.dict_key(key), self.eval(v, st)))
        st.own("dicts")[d.did] = tuple(entries)
        return d

    def new_seq(self, items: List[Value], st: State, kind: str = "list") -> SeqV:
        s = SeqV(fresh_id(), kind)
        st.own("lists")[s.lid] = tuple(items)
        return s

    def dict_key(self, key: Value) -> Any:
        return ("c", key.value) if isinstance(key, ConstV) else ("?", None)

    def dict_get(self, d: DictV, key: Value, st: State) -> Value:
        k = self.dict_key(key)
        entries = st.dicts.get(d.did, ())
        for ek, ev in entries:
            if ek == k and k[0] == "c":
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
        entries = [e for e in st.dicts.get(d.did, ()) if not (e[0] == k and k[0] == "c")]
        entries.append((k, value))
        st.own("dicts")[d.did] = tuple(entries)

    def ex_BinOp(self, node: ast.BinOp, st: State) -> Value:
        left = self.eval(node.left, st)
        right = self.eval(node.right, st)
        return self.binop(left, node.op, right, st, node)

    def binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            return self.tensor_binop(left, op, right, st, node)
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
                return self.call_tensor_method(v, "neg", [], {}, st, node)
            if isinstance(node.op, ast.Invert):
                return self.call_tensor_method(v, "bitwise_not", [], {}, st, node)
            return v
        if isinstance(v, ConstV):
            try:
                return ConstV(_UNOPS[type(node.op)](v.value))
            except Exception:
                return UNKNOWN
        return UNKNOWN

    def ex_BoolOp(self, node: ast.BoolOp, st: State) -> Value:
        vals = [self.eval(v, st) for v in node.values]
        truths = [self.truth_of(v) for v in vals]
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
            return self.new_tensor(st, rg=False, node=node, dtype="bool")  # a comparison gives a bool tensor
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
        self.assign(node.target, v, st, node)
        return v

    def ex_Lambda(self, node: ast.Lambda, st: State) -> Value:
        return ref_value("lambda", "<lambda>", (node, st.fi))

    def ex_JoinedStr(self, node: ast.JoinedStr, st: State) -> Value:
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.eval(v.value, st)
        return UNKNOWN

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
                                      self.module_walk(items, st)):
                for item in items:
                    self.assign(gen.target, item, st, node)
                    if all(self.truth(c, st) is not False for c in gen.ifs):
                        results.append(self._comp_rest(node, st, elt))
                return self.new_seq(results, st)
            self.assign(gen.target, self.fresh_element(self.element_of(it, st), st), st, node)
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
            self.assign(gen.target, self.fresh_element(self.element_of(it, st), st), st, node)
        return self.eval(elt, st)

    # -- truth of conditions
    def truth(self, node: ast.expr, st: State) -> Optional[bool]:
        return self.truth_of(self.eval(node, st))

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
            if not items and it.lid in self.prefilled_lists:
                return None
            return items
        if isinstance(it, DictV):
            if not st.dicts.get(it.did) and it.did in self.prefilled_dicts:
                return None
            return [ConstV(k[1]) if k[0] == "c" else UNKNOWN for k, _ in st.dicts.get(it.did, ())]
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
            grad_fn = self.make_node(st, "unbind", info.created or Span(1, 1, 1, 1), [it], (), st.next_seq()) \
                if rg is not False else None
            return self.alias_tensor(st, it, kind="multi_view", span=info.created, rg=rg, grad_fn=grad_fn,
                                     opname="unbind")
        if isinstance(it, ObjV):
            return self.object_iter_element(it, st)
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
                if items is not None:
                    args.extend(items)
                else:
                    args.append(UNKNOWN)
            else:
                args.append(self.eval(a, st))
        kwargs: Dict[str, Value] = {}
        for kw in node.keywords:
            v = self.eval(kw.value, st)
            if kw.arg is None:
                if isinstance(v, DictV):
                    for k, val in st.dicts.get(v.did, ()):
                        if k[0] == "c" and isinstance(k[1], str):
                            kwargs[k[1]] = val
            else:
                kwargs[kw.arg] = v
        return args, kwargs

    def ex_Call(self, node: ast.Call, st: State) -> Value:
        func = self.eval(node.func, st)
        args, kwargs = self.eval_args(node, st)
        return self.call(func, args, kwargs, st, node)

    def call(self, func: Value, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if isinstance(func, RefV):
            k = func.kind
            if k == "tmethod":  # the most frequent: first
                return self.call_tensor_method(func.bound, func.name, args, kwargs, st, node)
            if k == "torch":
                return self.call_torch(func.name, args, kwargs, st, node)
            if k == "func":
                fdef, _ = func.target
                return self.call_function(fdef, args, kwargs, st, self.span_of(node), closure=func.target[1])
            if k == "lambda":
                lam, fi = func.target
                return self.call_lambda(lam, fi, args, st)
            if k == "method":
                (cls, fdef) = func.target
                if func.bound is not None and not self.is_static(fdef):
                    return self.call_function(fdef, [func.bound] + args, kwargs, st, self.span_of(node), bound_self=True)
                return self.call_function(fdef, args, kwargs, st, self.span_of(node))
            if k == "class":
                return self.instantiate(func.target, args, kwargs, st, self.span_of(node))
            if k == "apply":
                return self.apply_custom_function(func.target, args, kwargs, st, self.span_of(node))
            if k == "builtin":
                if func.name.startswith("super-torch."):
                    return self.call_super_torch(func, args, kwargs, st, node)
                if func.name == "super-noop":
                    return NONE
                return self.call_builtin(func.name, args, kwargs, st, node)
            if k == "omethod":
                return self.call_object_method(func.bound, func.name, args, kwargs, st, node)
            if k == "boundseq":
                return self.call_seq_method(func.bound, func.name, args, kwargs, st, node)
            return UNKNOWN
        if isinstance(func, ObjV):
            return self.call_object(func, args, kwargs, st, node)
        # Unknown callee: any tensor argument might be used; the result is unknown.
        return UNKNOWN

    def call_lambda(self, lam: ast.Lambda, fi: int, args: List[Value], st: State) -> Value:
        env = dict(st.frames[fi]) if fi < len(st.frames) else {}
        for a, v in zip(lam.args.args, args):
            env[a.arg] = v
        caller = st.fi
        st.push_frame(env)
        try:
            return self.eval(lam.body, st)
        finally:
            st.pop_frame(caller)

    def bind_params(self, fdef: ast.FunctionDef, args: List[Value], kwargs: Dict[str, Value], st: State) -> Dict[str, Value]:
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
                env[param.arg] = self.eval(default, st)
            else:
                env[param.arg] = UNKNOWN
        if a.vararg is not None:
            env[a.vararg.arg] = self.new_seq(args[len(positional):], st, kind="tuple")
        kw_defaults = a.kw_defaults or []
        for param, default in zip(a.kwonlyargs, kw_defaults):
            if param.arg in kwargs:
                env[param.arg] = kwargs[param.arg]
            else:
                env[param.arg] = self.eval(default, st) if default is not None else UNKNOWN
        if a.kwarg is not None:
            d = DictV(fresh_id())
            names = set(env)
            st.own("dicts")[d.did] = tuple((("c", k), v) for k, v in kwargs.items() if k not in names)
            env[a.kwarg.arg] = d
        return env

    def call_function(self, fdef: ast.FunctionDef, args: List[Value], kwargs: Dict[str, Value], st: State,
                      span: Span, bound_self: bool = False, join: bool = True, closure: Optional[int] = None,
                      generator: bool = False) -> Any:
        """Inline a call. Returns the value (join=True) or the list of (state, value) exits."""
        depth_same = sum(1 for f in self.call_stack if f is fdef)
        limit = MAX_STANDALONE_DEPTH if self.standalone else MAX_CALL_DEPTH
        if len(self.call_stack) >= limit or depth_same >= MAX_SAME_FUNCTION_DEPTH:
            return UNKNOWN if join else [(st, UNKNOWN)]
        fm = self.foreign_defs.get(id(fdef))
        if fm is not None and not (self.foreign_stack and self.foreign_stack[-1][0] is fm):
            # entering code of another module: findings inside it point at this call
            self.foreign_stack.append((fm, self.span_of(fdef) if self.foreign_stack else span))
            try:
                return self.call_function(fdef, args, kwargs, st, span, bound_self, join, closure, generator)
            finally:
                self.foreign_stack.pop()
        is_gen = self.generators.get(id(fdef))
        if is_gen is None:
            is_gen = self.generators[id(fdef)] = (fm is not None or "yield" in self.triggers.text(fdef)) and any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fdef))
        if not generator and is_gen:
            # A generator used as a value (next(gen), list(gen)): its yields are its items.
            return self._generator_items(fdef, args, kwargs, st, span, bound_self, join, closure)
        if id(fdef) in self.stopped_defs:
            return UNKNOWN if join else [(st, UNKNOWN)]  # already ran out of work once
        self.reached.add(id(fdef))
        env = self.bind_params(fdef, args, kwargs, st)
        if fm is not None:
            env["__gw_globals__"] = fm.globals  # type: ignore[assignment]
        if closure is not None and closure != 0 and closure < len(st.frames):
            merged = dict(st.frames[closure])
            merged.update(env)
            env = merged
        # a call the module's top-level code makes: if it runs out of work, only the call is
        # given up (the state goes back to before it) and the module's code goes on
        before = st.fork() if not (self.standalone or self.call_stack or self.foreign_stack) else None
        caller = st.fi
        saved_mode = st.grad_enabled
        saved_flow, saved_ret = st.flow, st.retval
        st.flow = None
        st.push_frame(env)
        mode = self.decorator_grad_mode(fdef, st)
        if mode is not None:
            st.grad_enabled = mode
        if generator and self.consumers:
            self.consumers[-1]["gen_frame"] = st.fi
        self.call_stack.append(fdef)
        self.call_spans.append(span)
        self.call_args.append(frozenset(t.tid for v in list(args) + list(kwargs.values())
                                        for t in self.slot_tensors(st, v)))
        try:
            try:
                exits = self.exec_block(fdef.body, [st])
            finally:
                self.call_stack.pop()
                self.call_spans.pop()
                self.call_args.pop()
        except BudgetExceeded:
            if before is None:
                raise
            self.give_up_call(fdef)
            st.become(before)
            return UNKNOWN if join else [(st, UNKNOWN)]
        results: List[Tuple[State, Value]] = []
        for s in exits:
            ret = s.retval if s.flow == "return" else NONE
            if s.flow == "consumer_return":
                ret = NONE
            s.pop_frame(caller)
            s.grad_enabled = saved_mode
            if s.flow not in ("consumer_return",):
                s.flow = saved_flow
            s.retval = saved_ret
            results.append((s, ret))
        if not join:
            return results
        return self.join_exits(st, results)

    def give_up_call(self, fdef: ast.FunctionDef) -> None:
        """The module's code called ``fdef`` and the call ran out of work: note it on the
        function, never run it again, and give the module's code a fresh allotment."""
        self.stopped_defs.add(id(fdef))
        saved = self.budget.begin(self.definition_label(fdef, getattr(self.class_of_method(fdef), "name", "")),
                                  self.header_span(fdef))
        self.stopped_early()
        self.budget.end(saved)
        self.budget.restart()

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
        ret = next((r for r in rets if isinstance(r, TensorV)), None) or next(
            (r for r in rets if not isinstance(r, UnknownV)), UNKNOWN)
        st.become(merged)
        return ret

    def _generator_items(self, fdef, args, kwargs, st, span, bound_self, join, closure) -> Any:
        self.loop_counter += 1
        collector = {"stmt": None, "frame": st.fi, "loop_id": self.loop_counter, "count": 0, "items": []}
        self.consumers.append(collector)
        try:
            exits = self.call_function(fdef, args, kwargs, st, span, bound_self=bound_self, join=False,
                                       closure=closure, generator=True)
        finally:
            self.consumers.pop()
        items = collector["items"]
        if not exits:
            raise Halt()
        st.become(join_states([s for s, _ in exits]) if len(exits) > 1 else exits[0][0])
        seq = self.new_seq(items[:1], st, kind="homogeneous") if items else self.new_seq([], st)
        return seq if join else [(st, seq)]

    def decorator_grad_mode(self, fdef: ast.FunctionDef, st: State) -> Optional[bool]:
        for d in fdef.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            v = self.eval(target, st)
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
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__class__", ref_value("class", info.name, info))
        st.set_attr(obj.oid, "__span__", ConstV(span))
        if info.is_module:
            st.set_attr(obj.oid, "training", TRUE)
            st.set_attr(obj.oid, "__module__", TRUE)
        init = info.find_method("__init__")
        if init and run_init:
            if self.init_depth >= self.init_limit:
                st.set_attr(obj.oid, "__opaque__", TRUE)  # too deep to follow: calls stay unknown
                return obj
            self.init_depth += 1
            try:
                self.call_function(init[1], [obj] + args, kwargs, st, span, bound_self=True)
            finally:
                self.init_depth -= 1
        elif run_init and info.is_module and _concrete_torch_module(info.torch_base):
            # ``class QuantLinear(nn.Linear)`` without an ``__init__``: nn.Linear's own builds
            # the parameters from the constructor's arguments
            self.adopt_torch_module(obj, info.torch_base, args, kwargs, st, _SpanNode(span))
        return obj


class _SpanNode(ast.AST):
    """A synthetic node carrying a span (for calls the analysis makes on its own)."""

    _fields = ()

    def __init__(self, span: Span) -> None:
        super().__init__()
        self.lineno, self.end_lineno = span.row, span.end_row
        self.col_offset, self.end_col_offset = span.column - 1, span.end_column - 1
        self.args = []


def _concrete_torch_module(qual: str) -> bool:
    """A torch module class with parameters or settings of its own (not a container)."""
    return qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1] not in ("Module", "ModuleList", "ModuleDict",
                                                                             "Sequential", "ParameterList",
                                                                             "ParameterDict")


def _returned_count(v: ast.expr) -> Optional[int]:
    """How many values a return statement returns, when the syntax says (else None)."""
    if isinstance(v, ast.Tuple):
        return None if any(isinstance(e, ast.Starred) for e in v.elts) else len(v.elts)
    if isinstance(v, (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Constant)):
        return 1
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute):
        return 1  # a tensor method: grad.clone(), grad_output.neg() ...
    return None


_NON_TENSOR_TYPES = frozenset({"list", "List", "tuple", "Tuple", "dict", "Dict", "Sequence", "Iterable", "Mapping",
                               "set", "Set", "int", "float", "bool", "str", "bytes", "Callable", "Iterator",
                               "MutableMapping", "MutableSequence", "OrderedDict", "ModuleList", "Module"})


def _not_a_tensor(ann: ast.expr) -> bool:
    """Does an annotation say the value is not a tensor (``list[Tensor]``, ``Optional[dict]``,
    ``int | None``)? ``Tensor``, ``Optional[Tensor]`` and anything unknown: no."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # X | None
        parts = [p for p in (ann.left, ann.right) if not (isinstance(p, ast.Constant) and p.value is None)]
        return bool(parts) and all(_not_a_tensor(p) for p in parts)
    if isinstance(ann, ast.Subscript):
        head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        if head in ("Optional", "Union"):
            inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            inner = [p for p in inner if not (isinstance(p, ast.Constant) and p.value is None)]
            return bool(inner) and all(_not_a_tensor(p) for p in inner)
        return head in _NON_TENSOR_TYPES
    name = ann.attr if isinstance(ann, ast.Attribute) else getattr(ann, "id", "")
    return name in _NON_TENSOR_TYPES


def _origin(st: State, loop_id: int) -> int:
    """Which of the paths that entered loop ``loop_id`` this state descends from."""
    for lid, i in reversed(st.origins):
        if lid == loop_id:
            return i
    return 0


# compound statements that run all the paths of a block together (see exec_block)
_GROUPED: Dict[type, str] = {ast.If: "if_group", ast.For: "for_group", ast.While: "while_group",
                             ast.Try: "try_group"}
if hasattr(ast, "TryStar"):
    _GROUPED[ast.TryStar] = "try_group"


def _target_names(target: ast.expr) -> List[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


import operator as _op  # noqa: E402

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

def _torch_path_of(v: Optional[Value]) -> Optional[str]:
    """The torch API path a module-level value names (``nn`` -> ``torch.nn``), if it names one."""
    return v.name if isinstance(v, RefV) and v.kind == "torch" else None


BUILTINS = frozenset("""
len range enumerate zip list tuple dict set isinstance issubclass next iter sum min max abs float int
bool str print getattr setattr hasattr super sorted reversed map filter any all round type id callable
repr format vars
""".split())


class Interpreter(FlowMixin, BaseInterpreter):
    """The interpreter, with the gradient-flow facts and checks (engine/checks/flow.py) in front of
    its autograd and torch semantics."""


def analyze_module(tree: ast.Module, src: SourceText, filename: str) -> List[Diagnostic]:
    from gradwarden.rules.dispatch import events_to_diagnostics

    interp = Interpreter(tree, src, filename)
    try:
        events = interp.run()
    except RecursionError:
        events = list(interp.events.values())
    return events_to_diagnostics(events, filename, src)
