"""The interpreter of one module: the run (``Interpreter.run``) and the state it shares with its
roles (events, the call stack, the budget, the code of other project modules).

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
unknown arguments (engine/interp/unreached.py).

An error that PyTorch raises on the spot (a leaf written in place, a write into an
expanded tensor) ends its path: what follows it cannot run.

The work is done by roles, objects the interpreter holds as attributes and builds from the
classes ``engine.assembly`` chooses: the Python semantics (``stmts``, ``stores``, ``ev``,
``calls``, ``unreached``: this package), the torch domain (``torch``, ``tensors``, ``modules``,
``optim``, ``functions``, ``builtins``: engine/domain/) and the checks (``graph``, ``writes``,
``backward``, ``flow``, ``losses``, ``training``, ``viewchecks``: engine/checks/). A role reaches
another through the interpreter (``self.it.tensors.call_tensor_method(...)``), never by import.
"""
from __future__ import annotations

import ast
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.interp.budget import RETRY_SHARE, Budget, BudgetExceeded, StopPoint
from gradwarden.engine.state.model import ConstV, State, Value, join_states


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
# type -> whether a role's attribute of that type is one of the engine's tables (release cuts
# their links back to the interpreter): asked for every attribute of every role at the end of
# every run, project modules' included
_TABLE_TYPES: Dict[type, bool] = {}


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
    dict_base: bool = False  # a subclass of ``dict`` (an attribute-style config): instances hold items
    enum_base: bool = False  # a subclass of ``enum.Enum``: members read as their values
    oid: int = 0  # the key of what the class body bound as shared containers, in a path's state (``classes``)
    # ``@dataclass``: its fields in order, each (name, "value"/"factory"/"required"/"unknown", default)
    dataclass_fields: Optional[List[Tuple[str, str, Any]]] = None

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


class _SpanNode(ast.AST):
    """A synthetic node carrying a span (for calls the analysis makes on its own)."""

    _fields = ()

    def __init__(self, span: Span) -> None:
        super().__init__()
        self.lineno, self.end_lineno = span.row, span.end_row
        self.col_offset, self.end_col_offset = span.column - 1, span.end_column - 1
        self.args = []


class Interpreter:
    """One analysis of a module: what its roles share, and the run."""

    def __init__(self, tree: ast.Module, src: SourceText, filename: str, triggers: Any = None,
                 roles: Optional[Dict[str, Callable[["Interpreter"], Any]]] = None) -> None:
        self.tree = tree
        self.src = src
        self.filename = filename
        self.events: Dict[Tuple[Any, ...], Event] = {}
        self.reached: Set[int] = set()  # ids of FunctionDef nodes executed in context
        self.applied_functions: Set[str] = set()
        self.classes: Dict[int, ClassInfo] = {}  # id(ClassDef) -> info
        self.method_owner: Dict[int, ClassInfo] = {}  # id(FunctionDef) -> the class defining it
        self._spans: Dict[int, Tuple[ast.AST, Span]] = {}  # id(node) -> (node, its span)
        self.call_stack: List[Any] = []
        self.call_spans: List[Span] = []
        self.call_args: List[FrozenSet[int]] = []  # the tensors passed to each running call
        self.consumers: List[Dict[str, Any]] = []  # the loops consuming the generators now running
        self.loop_depth: Dict[int, int] = {}  # loop id -> the call depth it runs at
        self.budget = Budget()
        self.work = self.budget.work  # counters of what the engine did (tests, benchmarks)
        self.loop_counter = 0
        self.analysed_backward: Set[Tuple[int, int]] = set()
        self.init_depth = 0  # > 0 while an __init__ runs: loops then run once
        self.init_limit = MAX_INIT_DEPTH  # nested module constructions followed this deep
        self.standalone = False  # True once the module's own execution is done
        # a retry after the budget ran out: paths joined at every statement, no unrolling
        # (engine/interp/budget.py)
        self.coarse = False
        # containers an analysed-alone function found (engine/interp/unreached._standalone):
        # the ids of lists and of dicts, as the keys of the state's dicts then
        self.prefilled_lists: Any = {}
        self.prefilled_dicts: Any = {}
        # tuples made by a `collections.namedtuple` class: list id -> its field names
        self.namedtuple_fields: Dict[int, Tuple[str, ...]] = {}
        # a call whose `*arg` is a sequence of unknown length (`zip(*random.sample(memory, n))`):
        # call node id -> that sequence (the transposition of a replay memory's transitions)
        self.starred_rest: Dict[int, Any] = {}
        self.resolver: Any = None  # follows imports from the user's project (script mode only)
        self.foreign_stack: List[Tuple[Any, Span]] = []  # (ForeignModule, call site in this file)
        self.foreign_defs: Dict[int, Any] = {}
        self.foreign_stmts: Dict[int, Any] = {}  # statements of other project modules -> their module
        self._own_defs: Optional[Set[int]] = None  # ids of this file's own definitions (defined_here)
        self.stopped_defs: Set[int] = set()  # functions whose call from the module's code ran out of work
        # functions whose precise run, called from the module's code, ran out (where it stopped):
        # later calls run coarsely at once (engine/interp/calls.py)
        self.coarse_defs: Dict[int, Optional[StopPoint]] = {}
        # tensor id -> the `return arg` of a detaching helper that handed it back with its graph
        self.passed_through: Dict[int, Span] = {}
        self.range_starts: Dict[int, Value] = {}  # list id of a `range(a, n)` of unknown n -> a, its first item
        self.callsites: Any = None  # engine.front.callsites.CallSites, built for the first standalone run
        # engine/incremental/unitcache.UnitSession (the language server): replays the results of
        # top-level statements whose analysis cannot have changed; None (the CLI) analyses every one
        self.unit_hook: Any = None
        self.unit_log: Optional[List[Tuple[Tuple[str, int, int, str], Event]]] = None  # what the running unit emits
        self.module_state: Optional[State] = None
        from gradwarden.engine.front.triggers import Triggers

        # ``triggers``: the same facts, when the caller computed them already
        self.triggers = triggers if triggers is not None else Triggers(tree, src)
        self.interesting = self.triggers.interesting
        # the roles, each built with this interpreter (engine/assembly.py says which class plays
        # which); a role with a ``finish()`` is called at the end of the run, in this order
        self.finishers: List[Callable[[], None]] = []
        self.roles: Tuple[str, ...] = tuple(roles or ())
        for name, make in (roles or {}).items():
            role = make(self)
            setattr(self, name, role)
            finish = getattr(role, "finish", None)
            if finish is not None:
                self.finishers.append(finish)

    def release(self) -> None:
        """Cut the roles' links back to this interpreter (the run has ended). The interpreter
        holds its roles and each role holds it: a cycle that only the cyclic collector frees,
        which an analysis keeps mostly off (engine/entry.py: fewer_collections), so everything
        the run built would outlive it and make each collection walk it. What the roles found
        stays readable; they cannot run again. The tables a role keeps as attributes and that
        hold the interpreter too (the ``flow`` role's ``reach``, ``modes``, ``hooks``, ``zeros``)
        are cut the same way, and the tables those tables keep (``zeros.pairs``): one such link
        left kept the whole run (tree, states, records) alive until a collection, as a cycle,
        after every file."""
        for name in self.roles:
            role = getattr(self, name)
            role.it = None
            self._cut_tables(role, 2)

    def _cut_tables(self, owner: Any, depth: int) -> None:
        """Cut the links back to this interpreter of the engine's tables ``owner`` keeps as
        attributes, and of theirs, ``depth`` levels down."""
        for held in list(vars(owner).values()):
            kind = held.__class__
            table = _TABLE_TYPES.get(kind)
            if table is None:
                table = _TABLE_TYPES[kind] = kind.__module__.startswith("gradwarden.engine") and \
                    hasattr(held, "__dict__")
            if not table:
                continue
            if getattr(held, "it", None) is self:
                held.it = None
            if depth > 1:
                self._cut_tables(held, depth - 1)

    # ------------------------------------------------------------------ entry
    def run(self) -> List[Event]:
        try:
            return self._run()
        finally:
            self.release()

    def _run(self) -> List[Event]:
        st = State()
        st.frame()["__name__"] = ConstV("__main__")
        if self.filename:
            st.frame()["__file__"] = ConstV(os.path.abspath(self.filename))
        body = self.tree.body
        from gradwarden.engine.front.imports import (ImportResolver, calls_project_code, imported_top_level_calls,
                                                     runs_project_code)

        if self.triggers.script_mode(self.tree):
            self.resolver = ImportResolver(self.filename, tree=self.tree)
        elif self.filename and "__main__" in self.src.text and \
                runs_project_code(self.tree, resolver := ImportResolver(self.filename, tree=self.tree)):
            self.resolver = resolver  # a script whose hazards lie in the modules it imports
        elif self.filename and (calls := imported_top_level_calls(self.tree, self.filename)) and \
                calls_project_code(calls, resolver := ImportResolver(self.filename, tree=self.tree)):
            self.resolver = resolver  # no main block (a notebook export): its module-level calls into the project
        else:
            # A library module: bind its names, skip evaluating what it computes at import
            # time (registries, config tables) that no hazard can come from.
            body = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                      ast.AsyncFunctionDef, ast.ClassDef))
                    or "(" not in self.triggers.text(s)]
        states: List[State] = []
        with self.allotment(None):
            states = self.stmts.exec_block(body, [st])
        final = join_states(states) if states else st
        self.module_state = final
        self.backward.finish_path(states)
        self.standalone = True
        self.unreached.analyse_unreached(final)
        for finish in self.finishers:
            finish()
        return list(self.events.values())

    # ------------------------------------------------------------------ generators' consumers
    def stacks(self) -> Tuple[Any, ...]:
        """The running calls, as a consumer of a generator (a ``for`` loop, a ``with`` block) sees them."""
        return (list(self.call_stack), list(self.call_spans), list(self.call_args), list(self.foreign_stack))

    @contextmanager
    def in_consumer(self, stacks: Optional[Tuple[Any, ...]]) -> Iterator[None]:
        """The body of a ``for`` loop over a generator (or of a ``with`` over a ``@contextmanager``) runs
        at each ``yield``, but as the code around it: in its own file, under the calls that run it,
        not under the generator's (whose module may be another file)."""
        if stacks is None:
            yield
            return
        saved = (self.call_stack, self.call_spans, self.call_args, self.foreign_stack)
        self.call_stack, self.call_spans, self.call_args, self.foreign_stack = (list(x) for x in stacks)
        try:
            yield
        finally:
            self.call_stack, self.call_spans, self.call_args, self.foreign_stack = saved

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
        except BudgetExceeded as exc:
            if not quiet:
                self.stopped_early(exc.at)
        finally:
            self.budget.end(saved)

    def analyse_alone(self, node: ast.AST, owner: str, run: Callable[[], None]) -> None:
        """Analyse one definition on its own (``run``) within its own allotment of work, like
        ``allotment``; if it runs out, once more coarsely (every block's paths joined at each
        statement, known sequences looped over as of unknown length), within a third of an
        allotment (as a call of the module's code is retried:
        engine/interp/calls.py, ``coarse_retry``). The note only if that runs out too, naming
        where the precise run stopped. Each run starts from a fork of the module's state."""
        saved = self.budget.begin(self.definition_label(node, owner), self.header_span(node))
        try:
            try:
                run()
                return
            except BudgetExceeded as exc:
                first = exc.at
            limit = self.budget.limit
            self.budget.restart()
            self.budget.limit = max(1, limit // RETRY_SHARE)
            self.coarse = True
            try:
                run()
            except BudgetExceeded:
                self.budget.limit = limit  # the note names the whole allotment
                self.stopped_early(first)
            finally:
                self.coarse = False
                self.budget.limit = limit
        finally:
            self.budget.end(saved)

    def stopped_early(self, at: Optional[StopPoint] = None) -> None:
        span = self.budget.span or Span(1, 1, 1, 1)
        self.work.stopped.append((self.budget.label, span))
        where, growth, related = "", "", ()
        if at is not None:
            # the line it stopped at (in this file: a call into another module's code is named
            # by its call here) and what had grown there, so that the user sees which loop,
            # branch or call to simplify (or to move into a function of its own)
            stop = at.span
            inlined = list(at.calls[1:]) if at.calls and self.definition_label(None) != self.budget.label else \
                list(at.calls)
            parts = []
            if at.paths > 1:
                parts.append(f"{at.paths} paths at once (branches whose conditions the analysis cannot decide)")
            if at.loops:
                parts.append(f"{at.loops} enclosing loop{'s' if at.loops > 1 else ''}")
            if inlined:
                parts.append(f"{len(inlined)} inlined call{'s' if len(inlined) > 1 else ''} deep "
                             f"({' -> '.join(f'`{c}`' for c in inlined)})")
            where = f" at line {stop.row}" + (f" (inside `{os.path.basename(at.module)}`, reached from this line)"
                                              if at.module else "")
            growth = "; there: " + ", ".join(parts) if parts else ""
            if stop.row != span.row:
                related = (Related(stop, "the analysis stopped here", "note"),)
        self.emit(Event("analysis_stopped", span, {
            "what": self.budget.label, "limit": f"{self.budget.limit:,}", "where": where, "growth": growth},
            related=related))

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

    def defined_here(self, fdef: ast.AST) -> bool:
        """Is ``fdef`` a definition of the analysed file itself (not of a followed module)?"""
        if self._own_defs is None:
            from gradwarden.engine.front.triggers import _defs

            self._own_defs = {id(node) for node, _ in _defs(self.tree.body, None)}
        return id(fdef) in self._own_defs

    def file_of(self, fdef: ast.AST) -> Optional[str]:
        """The file of a definition as its spans name it: None for the analysed file."""
        fm = self.foreign_defs.get(id(fdef))
        return str(fm.path) if fm is not None else None

    def is_method(self, fn: ast.AST) -> bool:
        return self.class_of_method(fn) is not None

    def class_of_method(self, fn: ast.AST) -> Optional[ClassInfo]:
        """The class of the file that defines ``fn`` as a method, if any."""
        return self.method_owner.get(id(fn))

    # ------------------------------------------------------------------ helpers
    def span_of(self, node: ast.AST) -> Span:
        hit = self._spans.get(id(node))
        if hit is not None and hit[0] is node:  # a node runs once per path and iteration
            return hit[1]
        row = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        erow = getattr(node, "end_lineno", None) or row
        ecol = getattr(node, "end_col_offset", None)
        src, file = self.src, None
        if self.foreign_stack:
            # code of another module of the project: a span in that module's file, which the
            # finding names (rules.dispatch), the calls that led there in its related places
            fm = self.foreign_stack[-1][0]
            src, file = fm.src, str(fm.path)
        if not src.ascii:
            col = src.char_col(row, col)
            if ecol is not None:
                ecol = src.char_col(erow, ecol)
        span = Span(row, col + 1, erow, ecol + 1 if ecol is not None else col + 1, file)
        self._spans[id(node)] = (node, span)
        return span

    def source_of(self, span: Span) -> Any:
        """The source a span's line is read from: this file's, or the followed module's it names (None: not known)."""
        if span.file is None:
            return self.src
        for fm in set(self.foreign_defs.values()):
            if str(fm.path) == span.file:
                return fm.src
        return None

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
        if ev.span.file is not None and self.foreign_stack and not any(r.kind == "call" for r in ev.related):
            ev.related = tuple(ev.related) + self.call_chain()
        key = self.event_key(ev.kind, ev.span, ev.facts.get("code", ""))
        if self.unit_log is not None:
            self.unit_log.append((key, ev))  # every emit, kept or not: a replay repeats them in order
        if key not in self.events:
            self.events[key] = ev

    @staticmethod
    def event_key(kind: str, span: Span, code: str = "") -> Tuple[Any, ...]:
        """What makes two events the same finding (once per kind and place)."""
        if span.file is None:
            return (kind, span.row, span.column, code)
        return (kind, span.row, span.column, code, span.file)

    def call_chain(self) -> Tuple[Related, ...]:
        """The calls, from the analysed file's code, that entered the other modules now running
        (each in the file that makes it): the related places of a finding made there."""
        out = []
        for fm, call in self.foreign_stack:
            name = os.path.basename(str(fm.path))
            out.append(Related(call, f"called from here, into `{name}`", "call"))
        return tuple(out)

    @staticmethod
    def is_static(fn: ast.FunctionDef) -> bool:
        return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in fn.decorator_list)

    def tick(self) -> None:
        self.budget.tick()

    def triggered(self, node: ast.AST) -> bool:
        # a statement of another project module is looked up in that module's own lines
        fm = self.foreign_stmts.get(id(node))
        return (fm.triggers if fm is not None else self.triggers).triggered(node)
