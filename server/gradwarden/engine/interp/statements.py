"""Statements: each ``stmt_*`` runs one statement kind on a path's state and returns the states
after it (none: the path ended; several: it forked). Blocks run all their paths together
(``exec_block``), loops run twice or once per known element, generators run the consuming
loop's body at each ``yield``, and class definitions are recorded (``ClassInfo``).
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.events import Event
from gradwarden.engine.interp.budget import BudgetExceeded, StopPoint
from gradwarden.engine.interp.classes import build_class_info, class_created
from gradwarden.engine.interp.records import note_dataclass
from gradwarden.engine.interp.interpreter import (
    ClassInfo, FuncNode, MAX_PATHS, MAX_PATHS_STANDALONE, MAX_UNROLL, MAX_UNROLL_MODULES, MAX_UNROLL_PRODUCT,
)
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    NONE, ObjV, RefV, SeqV, State, TensorV, UNKNOWN, UnknownV, Value, join_states, ref_value,
)


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


class Statements:
    """The ``stmts`` role: blocks, compound statements, loops and generators. The handler of a
statement kind is looked up once per kind (``stmt_`` + its class name)."""

    def __init__(self, it: Any) -> None:
        self.it = it
        # node class -> the class's stmt_* function (None: no handler), filled as met: exec_stmt
        # runs for every statement, a name built and looked up each time costs
        self._stmt_handlers: Dict[type, Any] = {}
        self.revisits = 0  # enclosing loops now running their second iteration
        self.unroll_product = 1  # runs of the current body that enclosing unrolled loops make

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts: Sequence[ast.stmt], states: List[State]) -> List[State]:
        try:
            return self._exec_block(stmts, states)
        except BudgetExceeded as exc:
            if exc.at is None:  # the innermost block: where the analysis ran out (GW002 names it)
                stmt = getattr(exc, "_stmt", None)
                st0 = states[0] if states else None
                if isinstance(stmt, ast.stmt):
                    it = self.it
                    module = str(getattr(it.foreign_stack[-1][0], "path", "")) if it.foreign_stack else ""
                    exc.at = StopPoint(it.span_of(stmt), module, len(states),
                                       len(st0.loop_ctx) if st0 is not None else 0,
                                       tuple(getattr(f, "name", "?") for f in it.call_stack))
            raise

    def _exec_block(self, stmts: Sequence[ast.stmt], states: List[State]) -> List[State]:
        work = self.it.work
        for stmt in stmts:
            if len(states) > work.peak_paths:
                work.peak_paths = len(states)
            group = _GROUPED.get(type(stmt)) if len(states) > 1 else None
            if group is not None:
                live = [st for st in states if st.flow is None]
                if len(live) > 1:
                    # the paths run through the nested blocks together: one run of a nested
                    # loop for all of them, not one per path (which multiplies at every level)
                    try:
                        for _ in live:
                            self.it.tick()
                    except BudgetExceeded as exc:
                        exc._stmt = stmt  # type: ignore[attr-defined]
                        raise
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
            states = nxt if len(nxt) <= MAX_PATHS_STANDALONE and not self.it.coarse else self.cap(nxt)
            if not states:
                break
        return states

    def cap(self, states: List[State]) -> List[State]:
        limit = 1 if self.it.coarse else MAX_PATHS_STANDALONE if self.it.standalone else MAX_PATHS
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
                self.it.work.joins += 1
                group = group[: budget - 1] + [join_states(group[budget - 1:])]
            out.extend(group)
        return out

    def exec_stmt(self, stmt: ast.stmt, st: State) -> List[State]:
        try:
            self.it.budget.tick()  # self.tick(), one call less for every statement
        except BudgetExceeded as exc:
            exc._stmt = stmt  # type: ignore[attr-defined]  # (exec_block makes the StopPoint)
            raise
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
        self.it.ev.eval(stmt.value, st)
        return [st]

    def stmt_Pass(self, stmt: ast.Pass, st: State) -> List[State]:
        return [st]

    def stmt_Assign(self, stmt: ast.Assign, st: State) -> List[State]:
        if isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
            return self.do_yield(stmt.value, st)
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple):
            self.check_view_swap(stmt, st)
        value = self.it.ev.eval(stmt.value, st)
        kept = self.wrapped_in_place(stmt, value, st) if value.__class__ is UnknownV else None
        for target in stmt.targets:
            self.it.stores.assign(target, value, st, stmt)
        if kept:
            st.frame().update(kept)
        return [st]

    def wrapped_in_place(self, stmt: ast.Assign, value: Value, st: State) -> Optional[Dict[str, Value]]:
        """``netD, optD, loader = engine.make_private(module=netD, optimizer=optD, ...)``,
        ``model, opt = accelerator.prepare(model, opt)``: a call the analysis cannot see that
        takes objects and gives back their wrappers under the same names. A wrapper runs the
        module (steps the optimizer) it wraps: the names keep standing for the objects known
        here, instead of becoming unknown (which hid every hazard of the code after it)."""
        call = stmt.value
        if not isinstance(call, ast.Call):
            return None
        passed = {a.id for a in call.args if isinstance(a, ast.Name)}
        passed |= {k.value.id for k in call.keywords if isinstance(k.value, ast.Name)}
        if not passed:
            return None
        names = [e.id for t in stmt.targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
                 if isinstance(e, ast.Name)]
        kept: Dict[str, Value] = {}
        for name in names:
            if name in passed:
                old = st.lookup(name)
                if isinstance(old, ObjV):
                    kept[name] = old
        return kept

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
        if isinstance(self.it.ev.eval(targets[0].value, st), TensorV):
            name = self.it.text_of(targets[0].value)
            self.it.emit(Event("overlapping_assign", self.it.span_of(stmt), {
                "name": name, "desc": f"the right-hand side holds views of `{name}`, not copies: the later "
                                      "assignments read values the earlier ones already overwrote (silently wrong)"},
                severity=2, fix_facts={"rhs_span": self.it.span_of(stmt.value), "swap": True}))

    def stmt_AnnAssign(self, stmt: ast.AnnAssign, st: State) -> List[State]:
        if stmt.value is not None:
            self.it.stores.assign(stmt.target, self.it.ev.eval(stmt.value, st), st, stmt)
        return [st]

    def stmt_AugAssign(self, stmt: ast.AugAssign, st: State) -> List[State]:
        self.it.stores.aug_assign(stmt, st)
        return [st]

    def stmt_Return(self, stmt: ast.Return, st: State) -> List[State]:
        st.retval = self.it.ev.eval(stmt.value, st) if stmt.value is not None else NONE
        st.flow = "return"
        if stmt.value.__class__ is ast.Name and self.it.call_args and st.retval.__class__ in (TensorV, SeqV):
            self.note_passed_through(stmt, st.retval, st)
        return [st]

    def note_passed_through(self, stmt: ast.Return, value: Value, st: State) -> None:
        """A helper that detaches what it is given (``repackage_hidden``: ``.detach()`` on some
        path) returns an argument as it came (an LSTM's ``(h, c)`` tuple its ``isinstance`` tests
        did not expect): a graph carried on from there is kept by this return, the line to fix."""
        fdef = self.it.call_stack[-1]
        detaches = getattr(fdef, "_gw_detaches", None)
        if detaches is None:
            # kept on the definition's node, not per run: a project module's tree is parsed once
            # per run and its helpers are called again by every analysis that imports them; no
            # walk where the text of the module defining it never says `detach`
            fm = self.it.foreign_defs.get(id(fdef))
            text = fm.src.text if fm is not None else self.it.src.text if self.it.defined_here(fdef) else None
            detaches = fdef._gw_detaches = (text is None or "detach" in text) and any(
                isinstance(n, ast.Attribute) and n.attr in ("detach", "detach_") for n in ast.walk(fdef))
        if not detaches:
            return
        passed = self.it.call_args[-1]
        tids = [t.tid for t in self.it.graph.slot_tensors(st, value)]
        if tids and all(t in passed for t in tids):
            span = self.it.span_of(stmt)
            for t in tids:
                info = st.t.get(t)
                if info is not None and info.grad_fn is not None:
                    self.it.passed_through[t] = span

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
                self.it.stores.delete_item(self.it.ev.eval(t.value, st), t.slice, st)
        return [st]

    def stmt_Global(self, stmt: ast.Global, st: State) -> List[State]:
        return [st]

    stmt_Nonlocal = stmt_Global

    def stmt_Import(self, stmt: ast.Import, st: State) -> List[State]:
        for alias in stmt.names:
            if alias.asname:
                value = self.module_ref(alias.name)
                if isinstance(value, UnknownV):
                    value = self.it.projects.module(alias.name)  # a module of the user's project
                    if not isinstance(value, UnknownV):
                        self.it.projects.run_imported(alias.name, stmt, st)
                st.frame()[alias.asname] = value
            else:
                top = alias.name.split(".")[0]
                value = self.module_ref(top)
                if isinstance(value, UnknownV):
                    value = self.it.projects.module(top)
                    if not isinstance(value, UnknownV):
                        self.it.projects.run_imported(alias.name, stmt, st)
                st.frame()[top] = value
        return [st]

    def stmt_ImportFrom(self, stmt: ast.ImportFrom, st: State) -> List[State]:
        mod = stmt.module or ""
        for alias in stmt.names:
            if alias.name == "*":
                # a module of the project: its public names (its ``__all__`` when it spells it out)
                st.frame().update(self.it.projects.star_names(mod, stmt.level, stmt, st))
                continue
            value = self.module_ref(f"{mod}.{alias.name}" if mod else alias.name) if not stmt.level else UNKNOWN
            if isinstance(value, UnknownV):
                value = self.it.projects.name_from(mod, stmt.level, alias.name, stmt, st)
            st.frame()[alias.asname or alias.name] = value
        return [st]

    def module_ref(self, qual: str) -> Value:
        if qual == "torch" or qual.startswith("torch."):
            return ref_value("torch", qual)
        if qual in ("copy", "math", "random", "itertools", "functools", "collections", "sys", "os", "dataclasses",
                    "importlib", "runpy", "argparse", "importlib.util", "enum", "types", "os.path", "json", "pathlib"):
            return ref_value("module", qual)
        if qual.startswith(("copy.", "math.", "itertools.", "functools.", "os.path.")) or qual in (
                "dataclasses.replace", "dataclasses.dataclass", "dataclasses.field", "importlib.import_module", "runpy.run_path", "runpy.run_module",
                "argparse.ArgumentParser", "collections.deque", "collections.namedtuple", "collections.OrderedDict",
                "importlib.util.spec_from_file_location", "importlib.util.module_from_spec", "enum.Enum", "enum.IntEnum",
                "enum.StrEnum", "types.SimpleNamespace", "argparse.Namespace", "json.load", "json.loads", "pathlib.Path",
                "pathlib.PurePath", "pathlib.PosixPath"):
            return ref_value("builtin", qual)
        return UNKNOWN

    def stmt_FunctionDef(self, stmt: ast.FunctionDef, st: State) -> List[State]:
        # a def inside a function closes over that call's frame: kept with the frame's index, so that
        # a closure returned and called later (`make_hook(name)` -> `hook`) still sees `self`, `name`
        frame = st.frame()
        fn = frame[stmt.name] = ref_value("func", stmt.name, (stmt, st.fi if st.fi == 0 else (st.fi, frame)))
        if stmt.decorator_list and st.fi == 0 and self.it.projects.user_decorated(stmt, st):
            # a module-level function's decorators run when it is made, as a class's do: a
            # registering decorator (`@register(0.1)` storing `LOSSES[fn] = 0.1`) fills its table
            # for the code that iterates it; the name stays bound to the function (a wrapper is
            # called through at each call: interp/calls.py)
            self.it.projects.class_decorators(stmt, fn, st)
        return [st]

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_ClassDef(self, stmt: ast.ClassDef, st: State) -> List[State]:
        info = self.it.classes.get(id(stmt))
        if info is None:
            info = build_class_info(self.it, stmt, st)
            self.it.classes[id(stmt)] = info
            for m in info.methods.values():
                self.it.method_owner.setdefault(id(m), info)  # the first class defining it, as before
            if info.is_function and not self.it.foreign_stack:
                self.it.functions.check_function_class(info)
        st.frame()[stmt.name] = ref_value("class", stmt.name, info)
        class_created(self.it, stmt, info, st.frame()[stmt.name], st)
        if stmt.decorator_list:
            note_dataclass(self.it, stmt, info, st)
            self.it.projects.class_decorators(stmt, st.frame()[stmt.name], st)
        return [st]

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
                cond = self.it.ev.truth(stmt.test, st)
            except Halt:
                continue
            if cond is True:
                body_in.append(st)
            elif cond is False:
                else_in.append(st)
            elif self.it.standalone and not self.it.triggered(stmt):
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
        around = self.it.calls.with_context_generator(stmt, st)  # `with helper():` of a @contextmanager
        if around is not None:
            return around
        saved_mode = st.grad_enabled
        changed = False
        for item in stmt.items:
            ctx = self.it.ev.eval(item.context_expr, st)
            mode = self.it.torch.grad_mode_of(ctx, st)
            if mode is not None:
                st.grad_enabled = mode
                changed = True
            if item.optional_vars is not None:
                self.it.stores.assign(item.optional_vars, ctx if not isinstance(ctx, ObjV) or mode is None else UNKNOWN,
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
        firsts: List[Optional[Value]] = []  # the first element where it is known (`range(0, n)`)
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
                it = self.it.ev.eval(stmt.iter, st)
                items = self.it.ev.known_items(it, st)
                if items is not None and self.unrolls(items, st):
                    # values are compared by identity: forks share them until one path rebinds
                    known.setdefault(tuple(map(id, items)), (items, []))[1].append(st)
                    continue
                elem = self.it.ev.element_of(it, st)
            except Halt:
                continue
            st.origins = st.origins + ((-1, len(unknown)),)  # its element, for the second iteration
            unknown.append(st)
            elems.append(elem)
            firsts.append(self.it.range_starts.get(it.lid) if it.__class__ is SeqV else None)
        for items, group in known.values():
            out.extend(self.unroll_items(stmt, items, group))
        if unknown:
            self.it.loop_counter += 1
            loop_id = self.it.loop_counter
            self.it.loop_depth[loop_id] = len(self.it.call_spans)
            for st in unknown:
                st.origins = st.origins[:-1] + ((loop_id, st.origins[-1][1]),)

            def bind(s: State) -> None:
                k = _origin(s, loop_id)
                # the first iteration binds the known first element when a second one follows
                # with an unknown one (a loop run once stays unknown: it stands for all iterations)
                first = firsts[k] if s.loop_ctx and s.loop_ctx[-1] == (loop_id, 1) and not self.runs_once(stmt) \
                    else None
                self.it.stores.assign(stmt.target, first if first is not None else
                                      self.it.ev.fresh_element(elems[k], s), s, stmt)

            out.extend(self.loop_group(stmt, unknown, bind, loop_id))
        return self.cap(out)

    def unrolls(self, items: Sequence[Value], st: State) -> bool:
        """Is a known sequence unrolled (one run of the body per item)? Short ones, and walks
        over a model's modules; nested unrolled loops only while the runs of the innermost
        body stay under MAX_UNROLL_PRODUCT (past it, cost would multiply at every level)."""
        n = len(items)
        if self.it.coarse and n > 1:
            return False  # a coarse retry (budget.py) runs a known sequence as a loop of unknown length
        if not (n <= MAX_UNROLL or n <= MAX_UNROLL_MODULES and self.module_walk(items, st)):
            return False
        return self.unroll_product == 1 or self.unroll_product * max(n, 1) <= MAX_UNROLL_PRODUCT

    def unroll_items(self, stmt: ast.For, items: List[Value], states: List[State]) -> List[State]:
        self.it.loop_counter += 1
        loop_id = self.it.loop_counter
        self.it.loop_depth[loop_id] = len(self.it.call_spans)
        done: List[State] = []
        outer_product = self.unroll_product
        self.unroll_product = outer_product * max(len(items), 1)
        try:
            for k, item in enumerate(items):
                for s in states:
                    s.loop_ctx = s.loop_ctx + ((loop_id, k + 1),)
                    self.it.stores.assign(stmt.target, item, s, stmt)
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
                cond = self.it.ev.truth(stmt.test, st)
            except Halt:
                continue
            (exits_now if cond is False else live).append(st)
        if exits_now:
            out += self.exec_block(stmt.orelse, exits_now)
        if live:
            self.it.loop_counter += 1
            self.it.loop_depth[self.it.loop_counter] = len(self.it.call_spans)
            out += self.loop_group(stmt, live, None, self.it.loop_counter)
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
        once = self.runs_once(stmt)
        if self.revisits and len(states) > 1:
            # widening at the loop head: inside a second iteration of an enclosing loop the
            # paths enter as one (the precise per-path run happened in the first iteration)
            self.it.work.joins += 1
            states = [join_states(states)]
        for k in ((1,) if once else (1, 2)):
            live: List[State] = []
            for s in states:
                if isinstance(stmt, ast.While) and k > 1 and self.it.ev.truth(stmt.test, s) is False:
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

    def runs_once(self, stmt: Any) -> bool:
        return bool(self.it.init_depth or self.revisits or (self.it.standalone and not self.it.triggered(stmt)))

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
        fn = self.it.ev.eval(node.func, st) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
        if not isinstance(fn, RefV) or fn.kind not in ("func", "method"):
            return None
        fdef = fn.target[0] if fn.kind == "func" else fn.target[1]
        if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef)):
            return None
        args, kwargs = self.it.ev.eval_args(node, st)
        return fdef, args, kwargs, fn.bound

    def for_over_generator(self, stmt: ast.For, gen: Any, st: State) -> List[State]:
        fdef, args, kwargs, bound = gen
        self.it.loop_counter += 1
        self.it.loop_depth[self.it.loop_counter] = len(self.it.call_spans)
        consumer = {"stmt": stmt, "frame": st.fi, "loop_id": self.it.loop_counter, "count": 0, "stacks": self.it.stacks()}
        self.it.consumers.append(consumer)
        try:
            exits = self.it.calls.call_function(fdef, ([bound] if bound is not None else []) + args, kwargs, st,
                                                self.it.span_of(stmt.iter), bound_self=bound is not None, join=False,
                                                generator=True)
        finally:
            self.it.consumers.pop()
        out = []
        for s, _ in exits:
            if s.flow == "consumer_return":
                s.flow = "return"
            out.append(s)
        return self.cap(out)

    def do_yield(self, node: Any, st: State) -> List[State]:
        if not self.it.consumers or self.it.consumers[-1].get("gen_frame") != st.fi:
            return [st]
        c = self.it.consumers[-1]
        value = self.it.ev.eval(node.value, st) if node.value is not None else NONE
        if isinstance(node, ast.YieldFrom):
            value = self.it.ev.element_of(value, st)
        if c["stmt"] is None:  # a generator consumed as a value: collect what it yields
            c["items"].append(value)
            return [st]
        gen_fi = st.fi
        st.fi = c["frame"]
        c["count"] += 1
        st.loop_ctx = st.loop_ctx + ((c["loop_id"], c["count"]),)
        self.it.stores.assign(c["stmt"].target, value, st, c["stmt"])
        with self.it.in_consumer(c.get("stacks")):
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
