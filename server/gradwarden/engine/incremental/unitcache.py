"""Per-definition results for the language server: after an edit, the engine runs the module as
usual but replays, instead of analysing again, each top-level statement whose analysis cannot
have changed.

A full analysis (``interpreter.run``) executes the module's code, then analyses each top-level
definition on its own, in source order (``analyse_unreached``). That second part is nearly all
of the cost, and each definition's analysis depends on:

- the code it can reach: the top-level statements it names, and what those name, transitively
  (a function it calls, a class it builds or inherits from, a class defining a method it calls
  by attribute), plus the module's imports and module-level code (given to every one);
- a few facts of the whole file or of the definitions analysed before it: whether its functions
  are worth analysing (``Triggers.interesting``), their grad mode at every call site, which of
  them an earlier definition already ran (``reached``: then they are not analysed again), the
  autograd Functions already applied, whether the inference-mode note was given, ...

All of that is the *key* of its result, with one refinement: another definition it can reach
is in the key by its *outline* (its text with each function body replaced by a marker row: names,
bases, decorators, signatures, class-level code), and the record keeps the text of every body of
those the analysis actually ran; a replay checks those bodies are unchanged. An edit inside one
method of a block class then re-analyses that class, not the model class that builds the block
without running its ``forward`` (a custom autograd Function is kept whole: the engine reads its
``backward`` without running it). When the key is unchanged, the definition's recorded
effects are replayed in its turn: every event it emitted (in order, so that "first one wins"
between definitions reporting the same site stays as it was), the events it left for the end
of the run, the functions it reached and the Functions it applied. Rows follow their lines
(``rowmove``), so lines added above a definition, or inside a body it did not run, do not make
it stale.

Only library modules go through here (module code the engine does not run in full); a script's
module code runs every definition in order, and ``incremental.py`` groups it instead. The result
equals a full analysis (``tests/lsp/test_incremental.py`` compares them over seeded random edit
sequences).
"""
from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.front.body import first_row
from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.engine.incremental.rowmove import move_one

MAX_UNITS_KEPT = 4096  # recorded results per document
EventKey = Tuple[str, int, int, str]  # as interpreter.emit keys its events
# A statement's function bodies as (first row, last row) in the statement (0-based, in order,
# not nested), and the statement's number of rows: what its "outline" leaves out.
Layout = Tuple[Tuple[Tuple[int, int], ...], int]


@dataclass
class Statement:
    """One top-level statement of the text being analysed."""

    start: int  # first row (decorators included)
    end: int
    text: str
    defines: Set[str]
    uses: Set[str]
    context: bool  # an import or module-level code: part of every key
    name: str = ""


@dataclass
class _Record:
    starts: Tuple[int, ...]  # first rows of the covered statements when it was recorded
    emitted: Tuple[Tuple[EventKey, Optional[Diagnostic]], ...]
    deferred: Tuple[Tuple[EventKey, Optional[Diagnostic]], ...]  # emitted at the end of the run
    reached: Tuple[Tuple[int, int, int], ...]  # (covered statement, row in it, column) of each def
    applied: Tuple[str, ...]
    inference_reported: bool
    # per covered statement: the rows of its function bodies left out of its key (None: its
    # whole text is in the key); and the functions of those bodies the analysis ran, each
    # with its text id: (covered statement, row in it, column, text id)
    layouts: Tuple[Optional["Layout"], ...] = ()
    bodies: Tuple[Tuple[int, int, int, int], ...] = ()


class _Replayed:
    """Stands in ``Interpreter.events`` for a replayed event (its key is what matters there)."""

    __slots__ = ("diagnostic",)

    def __init__(self, diagnostic: Optional[Diagnostic]) -> None:
        self.diagnostic = diagnostic


class UnitCache:
    """The recorded results of one document's top-level statements (kept between analyses)."""

    def __init__(self) -> None:
        self.records: "OrderedDict[Tuple, _Record]" = OrderedDict()
        self._text_ids: Dict[str, int] = {}
        self._requires_grad: Dict[int, bool] = {}  # text id -> gives a class its own requires_grad
        self._calls: Dict[int, Dict[str, List[Tuple[Optional[Tuple[int, int]], bool]]]] = {}  # text id -> call sites
        self.trigger_rows: Dict[int, Tuple[Tuple[int, ...], Tuple[int, ...]]] = {}  # text id -> rows (unittriggers)
        self.function_facts: Dict[Tuple[Tuple[int, int], str], Any] = {}  # ((text id, place), what) -> fact
        self.def_pairs: Dict[int, Tuple[ast.stmt, List[Tuple[ast.AST, Any]]]] = {}  # id(statement) -> its defs
        self.outlines: Dict[int, Tuple[int, Optional[Layout]]] = {}  # text id -> (outline's text id, layout)

    def text_id(self, text: str) -> int:
        found = self._text_ids.get(text)
        if found is None:
            if len(self._text_ids) > 4 * MAX_UNITS_KEPT:
                self._text_ids.clear()
                self._requires_grad.clear()
                self._calls.clear()
                self.trigger_rows.clear()
                self.function_facts.clear()
                self.outlines.clear()
                self.records.clear()  # keys hold ids: they go with them
            found = self._text_ids[text] = len(self._text_ids) + 1
        return found


class UnitSession:
    """The hook ``Interpreter.unit_hook`` calls around each top-level statement (one analysis)."""

    def __init__(self, cache: UnitCache, tree: ast.Module, statements: Sequence[Statement], filename: str) -> None:
        self.cache = cache
        self.tree = tree
        self.statements = list(statements)
        self.filename = filename
        self.ids = [cache.text_id(s.text) for s in self.statements]
        self.context = [i for i, s in enumerate(self.statements) if s.context]
        self._graph: Optional[List[List[int]]] = None
        self._keys: Dict[int, Optional[Tuple]] = {}
        self._covered: Dict[int, List[int]] = {}
        self._node_refs: Optional[Dict[int, Tuple[int, int, int]]] = None
        self._nodes: Dict[Tuple[int, int, int], ast.AST] = {}
        self._defs: Dict[int, List[ast.AST]] = {}
        self._call_sites: Optional[StatementCallSites] = None
        self._open: Optional[Tuple[int, Set[int], Set[str], int]] = None
        self._recorded: List[Tuple[int, List[Tuple[EventKey, Any]], List[Tuple[EventKey, Any]],
                                   Optional[Tuple[Tuple[int, int, int], ...]], Tuple[str, ...], bool]] = []
        self.deferred: List[Tuple[EventKey, Any]] = []  # (key, Event or _Replayed), in run order
        self.analysed: List[str] = []
        self.reused: List[str] = []

    # ------------------------------------------------------------------ what a statement reads
    def graph(self) -> List[List[int]]:
        if self._graph is None:
            # Only names: the engine reaches another statement's code through a name it binds
            # (a call, a class built or inherited from, a decorator), never by looking up a
            # method name across the module's classes (``obj.step()`` runs the ``step`` of the
            # class ``obj`` was built from, and building it named that class). A statement's
            # analysis starts from the module state alone (arguments are unknown), so what it
            # can reach is the closure of the names it uses.
            definers: Dict[str, List[int]] = {}
            for i, s in enumerate(self.statements):
                for name in s.defines:
                    definers.setdefault(name, []).append(i)
            self._graph = []
            for i, s in enumerate(self.statements):
                out: Set[int] = set()
                for name in s.uses:
                    out.update(definers.get(name, ()))
                out.discard(i)
                self._graph.append(sorted(out))
        return self._graph

    def covered(self, index: int) -> List[int]:
        """The statements ``index``'s analysis can read: what it names, transitively, and the
        context statements (and what they name), in source order."""
        found = self._covered.get(index)
        if found is None:
            graph = self.graph()
            seen = {index, *self.context}
            todo = list(seen)
            while todo:
                for j in graph[todo.pop()]:
                    if j not in seen:
                        seen.add(j)
                        todo.append(j)
            found = self._covered[index] = sorted(seen)
        return found

    def own_requires_grad(self) -> bool:
        """``training._defines_requires_grad`` for the whole module, from per-statement
        answers kept by text (the engine's own walk covers the whole tree on every run)."""
        from gradwarden.engine.checks.training import _defines_requires_grad

        answer = False
        for stmt, info, tid in zip(self.tree.body, self.statements, self.ids):
            known = self.cache._requires_grad.get(tid)
            if known is None:
                # all three of its cases name `requires_grad` in the statement's text
                known = self.cache._requires_grad[tid] = "requires_grad" in info.text and bool(
                    _defines_requires_grad(_Probe(ast.Module(body=[stmt], type_ignores=[]))))
            answer = answer or known
        return answer

    def key(self, interp: Any, index: int) -> Optional[Tuple]:
        if index in self._keys:
            return self._keys[index]

        key: Optional[Tuple] = None
        stopped = self._refs(interp.stopped_defs, None)
        if interp.flow.global_nograd is None and stopped is not None:
            if interp.callsites is None:
                interp.callsites = self.call_sites()
            flags = []
            for node in self.defs(index):
                nid = id(node)
                mode = interp.callsites.grad_mode_of(node) if not isinstance(node, ast.ClassDef) else None
                flags.append((nid in interp.interesting, nid in interp.reached, mode))
            cov = self.covered(index)
            # Another definition the analysis can reach is in the key by its outline (its text
            # without its function bodies) and which of its functions are worth analysing; the
            # bodies the analysis ran are checked on replay (``_Record.bodies``).
            texts = tuple(self.ids[j] if self._whole(j, index) else self.outline(j)[0] for j in cov)
            others = tuple(id(node) in interp.interesting for j in cov if not self._whole(j, index)
                           for node in self.defs(j))
            key = (self.filename, texts, cov.index(index), tuple(flags), others,
                   tuple(sorted(interp.applied_functions)), interp.flow.inference_reported, interp.flow.mentions_inference,
                   interp.flow.own_requires_grad, stopped)
        self._keys[index] = key
        return key

    def _whole(self, j: int, index: int) -> bool:
        """Is statement ``j`` in ``index``'s key by its whole text? The statement itself,
        context (imports, module code), and custom autograd Functions (whose backward the
        engine reads without running it)."""
        return j == index or self.outline(j)[1] is None

    def outline(self, j: int) -> Tuple[int, Optional[Layout]]:
        """Statement ``j``'s outline: its text with each function body (the rows after the
        ``def`` line and its signature) replaced by one marker row, as a text id, and where the
        bodies were; (its text id, None) when it is kept whole."""
        tid = self.ids[j]
        found = self.cache.outlines.get(tid)
        if found is None:
            found = self.cache.outlines[tid] = self._outline(j)
        return found

    def _outline(self, j: int) -> Tuple[int, Optional[Layout]]:
        info, stmt = self.statements[j], self.tree.body[j]
        if info.context or not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return self.ids[j], None
        bodies: List[Tuple[int, int]] = []
        for node in self.defs(j):
            if isinstance(node, ast.ClassDef):
                if any(isinstance(b, ast.Attribute) and b.attr == "Function" or isinstance(b, ast.Name)
                       and b.id == "Function" for b in node.bases):
                    return self.ids[j], None
                continue
            first, last = node.body[0].lineno - info.start, (node.end_lineno or node.lineno) - info.start
            if node.body[0].lineno <= node.lineno or (bodies and first <= bodies[-1][1]):
                continue  # a body on the def's own row (kept whole), or inside a body left out
            bodies.append((first, last))
        lines = info.text.splitlines(True)
        if not bodies or len(lines) != info.end - info.start + 1:
            return self.ids[j], None
        out: List[str] = []
        row = 0
        for first, last in bodies:
            out += lines[row:first]
            out.append("\0\n")
            row = last + 1
        out += lines[row:]
        return self.cache.text_id("\0outline\n" + "".join(out)), (tuple(bodies), len(lines))

    def _function_text(self, j: int, node: ast.AST) -> int:
        """The text id of function ``node`` of statement ``j`` (its decorators to its last row)."""
        start = self.statements[j].start
        first = first_row(node) - start
        lines = self.statements[j].text.splitlines(True)
        return self.cache.text_id("\0function\n" + "".join(lines[first:(node.end_lineno or node.lineno) - start + 1]))

    def _row_map(self, index: int, cov: List[int], record: "_Record") -> Optional[Dict[int, int]]:
        """Old row -> new row for the covered statements (a row in a body whose number of rows
        changed is left out: nothing recorded should point there). None: no row moved."""
        layouts = record.layouts or tuple(None for _ in cov)
        now = tuple(None if self._whole(j, index) else self.outline(j)[1] for j in cov)
        if record.starts == tuple(self.statements[j].start for j in cov) and now == layouts:
            return None
        rows: Dict[int, int] = {}
        for old_start, j, old_layout, new_layout in zip(record.starts, cov, layouts, now):
            new_start = self.statements[j].start
            if old_layout is None or new_layout is None:
                for k in range(self.statements[j].end - new_start + 1):
                    rows[old_start + k] = new_start + k
                continue
            old_row, new_row = 0, 0
            for (of, ol), (nf, nl) in zip(old_layout[0] + ((old_layout[1], old_layout[1] - 1),),
                                          new_layout[0] + ((new_layout[1], new_layout[1] - 1),)):
                for k in range(of - old_row):  # the rows before the body, then the body
                    rows[old_start + old_row + k] = new_start + new_row + k
                if ol - of == nl - nf:
                    for k in range(ol - of + 1):
                        rows[old_start + of + k] = new_start + nf + k
                old_row, new_row = ol + 1, nl + 1
        return rows

    def defs(self, index: int) -> List[ast.AST]:
        """The functions and classes of statement ``index`` (``triggers._defs``)."""
        found = self._defs.get(index)
        if found is None:
            found = self._defs[index] = [node for node, _ in self.def_pairs(index)]
        return found

    def def_pairs(self, index: int) -> List[Tuple[ast.AST, Any]]:
        """``triggers._defs`` of statement ``index``, kept by its node (``reparse`` gives an
        unchanged statement the same node)."""
        stmt = self.tree.body[index]
        kept = self.cache.def_pairs.get(id(stmt))
        if kept is None or kept[0] is not stmt:
            from gradwarden.engine.front.triggers import _defs

            kept = self.cache.def_pairs[id(stmt)] = (stmt, list(_defs([stmt], None)))
            if len(self.cache.def_pairs) > 2 * MAX_UNITS_KEPT:
                self.cache.def_pairs.clear()
        return kept[1]

    def triggers(self, src: Any) -> Any:
        """The module's ``Triggers``, from per-statement parts kept by text."""
        from gradwarden.engine.incremental.unittriggers import StatementTriggers

        return StatementTriggers(self.tree, src, self)

    def call_sites(self) -> "StatementCallSites":
        """``CallSites`` of the module, from per-statement walks kept by text."""
        if self._call_sites is None:
            self._call_sites = StatementCallSites(self)
        return self._call_sites

    # ------------------------------------------------------------------ hook
    def replay(self, interp: Any, index: int) -> bool:
        """Replay ``index``'s recorded effects when its key is unchanged; False: analyse it."""
        key = self.key(interp, index)
        record = self.cache.records.get(key) if key is not None else None
        if record is None:
            return False
        cov = self.covered(index)
        rows = self._row_map(index, cov, record)
        if rows is None:
            emitted, deferred, refs, bodies = list(record.emitted), list(record.deferred), record.reached, record.bodies
        else:
            try:
                emitted = [_moved(k, d, rows) for k, d in record.emitted]
                deferred = [_moved(k, d, rows) for k, d in record.deferred]
                refs = tuple(self._moved_ref(cov, record.starts, ref, rows) for ref in record.reached)
                bodies = tuple(self._moved_ref(cov, record.starts, ref[:3], rows) + ref[3:] for ref in record.bodies)
            except KeyError:  # a row the covered statements do not hold: analyse it again
                return False
        for pos, row, col, text in bodies:  # the other definitions' code it ran: unchanged?
            node = self._node(cov, (pos, row, col))
            if node is None or self._function_text(cov[pos], node) != text:
                return False
        reached = [self._node(cov, ref) for ref in refs]
        if any(node is None for node in reached):
            return False
        self.cache.records.move_to_end(key)
        events = interp.events
        for k, d in emitted:
            if k not in events:
                events[k] = _Replayed(d)
        self.deferred.extend((k, _Replayed(d)) for k, d in deferred)
        interp.reached.update(id(node) for node in reached)
        interp.applied_functions.update(record.applied)
        interp.flow.inference_reported = record.inference_reported
        self.reused.append(self.statements[index].name)
        return True

    def begin(self, interp: Any, index: int) -> None:
        self.key(interp, index)  # with the state before the statement's analysis
        # Every function its analysis runs, not only the ones no earlier statement ran: a
        # replay must mark them all (the earlier statement may be analysed differently next
        # time, and leave them to this one).
        if not isinstance(interp.reached, _LoggingSet):
            interp.reached = _LoggingSet(interp.reached)
        interp.reached.log = set()
        self._open = (index, set(), set(interp.applied_functions), len(interp.flow.pending_accum))
        interp.unit_log = []

    def end(self, interp: Any, index: int) -> None:
        assert self._open is not None and self._open[0] == index
        _, _, applied_before, pending_at = self._open
        self._open = None
        log, interp.unit_log = interp.unit_log or [], None
        # What it left for the end of the run (``FlowFacts.finish``): decided now (the loops it
        # names are its own), emitted after every statement, in statement order.
        left = interp.flow.pending_accum[pending_at:]
        del interp.flow.pending_accum[pending_at:]
        deferred = [(_key(ev), ev) for lid, ev in left if lid is None or lid not in interp.flow.zeroed_loops]
        self.deferred.extend(deferred)
        refs = self._refs(interp.reached.log, self.covered(index))
        interp.reached.log = None
        self._recorded.append((index, log, deferred, refs, tuple(sorted(interp.applied_functions - applied_before)),
                               interp.flow.inference_reported))
        self.analysed.append(self.statements[index].name)

    def finish(self, interp: Any, src: Any, completed: bool) -> List[Diagnostic]:
        """The diagnostics of the run (as ``events_to_diagnostics`` gives them), and the
        analysed statements' records kept. ``completed``: the run was not cut short."""
        from gradwarden.rules.dispatch import events_to_diagnostics

        if completed:
            for k, ev in self.deferred:
                if isinstance(ev, _Replayed):
                    interp.events.setdefault(k, ev)
                else:
                    interp.emit(ev)
        converted: Dict[int, Optional[Diagnostic]] = {}

        def diagnostic(ev: Any) -> Optional[Diagnostic]:
            if isinstance(ev, _Replayed):
                return ev.diagnostic
            if id(ev) not in converted:
                found = events_to_diagnostics([ev], self.filename, src)
                converted[id(ev)] = found[0] if found else None
            return converted[id(ev)]

        out: Dict[Tuple[str, int, int], Diagnostic] = {}
        for ev in interp.events.values():
            d = diagnostic(ev)
            if d is not None:
                out.setdefault((d.code, d.span.row, d.span.column), d)
        if completed:
            records = self.cache.records
            for index, log, deferred, refs, applied, inference in self._recorded:
                key = self._keys.get(index)
                if key is None or refs is None:
                    continue
                cov = self.covered(index)
                layouts = tuple(None if self._whole(j, index) else self.outline(j)[1] for j in cov)
                bodies = tuple((pos, row, col, self._function_text(cov[pos], self._node(cov, (pos, row, col))))
                               for pos, row, col in refs if layouts[pos] is not None)
                records[key] = _Record(
                    tuple(self.statements[j].start for j in cov),
                    tuple((k, diagnostic(ev)) for k, ev in log), tuple((k, diagnostic(ev)) for k, ev in deferred),
                    refs, applied, inference, layouts, bodies)
                records.move_to_end(key)
            while len(records) > MAX_UNITS_KEPT:
                records.popitem(last=False)
        return sorted(out.values(), key=lambda d: d.sort_key())

    # ------------------------------------------------------------------ definitions by place
    def _refs(self, node_ids: Set[int], cov: Optional[List[int]]) -> Optional[Tuple[Tuple[int, int, int], ...]]:
        """Definitions (by ``id``) as (statement, row in it, column): the statement's position
        in ``cov`` (None: in the module). None: one is not a definition of this module."""
        if not node_ids:
            return ()
        if self._node_refs is None:
            self._node_refs = {}
            for j in range(len(self.tree.body)):
                start = self.statements[j].start
                for node in self.defs(j):
                    self._node_refs[id(node)] = (j, node.lineno - start, node.col_offset)
        out = []
        for nid in node_ids:
            ref = self._node_refs.get(nid)
            if ref is None:
                return None
            j, row, col = ref
            if cov is not None:
                if j not in cov:
                    return None
                j = cov.index(j)
            out.append((j, row, col))
        return tuple(sorted(out))

    def _moved_ref(self, cov: List[int], starts: Tuple[int, ...], ref: Tuple[int, ...],
                   rows: Dict[int, int]) -> Tuple[int, int, int]:
        """A recorded (covered statement, row in it, column), at the statement's rows now."""
        pos, row, col = ref[:3]
        return pos, rows[starts[pos] + row] - self.statements[cov[pos]].start, col

    def _node(self, cov: List[int], ref: Tuple[int, int, int]) -> Optional[ast.AST]:
        pos, row, col = ref
        j = cov[pos]
        found = self._nodes.get((j, row, col))
        if found is None:
            start = self.statements[j].start
            for node in self.defs(j):
                self._nodes[(j, node.lineno - start, node.col_offset)] = node
            found = self._nodes.get((j, row, col))
        return found


class StatementCallSites:
    """``callsites.CallSites`` of the whole module (same answers), from a walk of each
    statement kept by its text: an edit walks only the statements it changed."""

    def __init__(self, session: UnitSession) -> None:
        from gradwarden.engine.front.callsites import GRAD_OFF_CONTEXTS

        self.session = session
        self.starts = [st.start for st in session.statements]
        self.calls: Dict[str, List[Tuple[int, Optional[Tuple[int, int]], bool]]] = {}
        text_has_no_grad = any(w in st.text for st in session.statements for w in GRAD_OFF_CONTEXTS + ("set_grad_enabled",))
        if not text_has_no_grad:
            return  # as CallSites: no call is under no_grad, every answer is None
        known = session.cache._calls
        for j, (stmt, tid) in enumerate(zip(session.tree.body, session.ids)):
            found = known.get(tid)
            if found is None:
                found = known[tid] = _statement_calls(stmt, session.statements[j].start)
            for name, sites in found.items():
                self.calls.setdefault(name, []).extend((j, where, ng) for where, ng in sites)

    def grad_mode_of(self, fn: ast.AST) -> Optional[bool]:
        import bisect

        row = first_row(fn)
        j = bisect.bisect_right(self.starts, row) - 1
        me = (j, (fn.lineno - self.starts[j], fn.col_offset)) if j >= 0 else None  # type: ignore[attr-defined]
        sites = [ng for k, where, ng in self.calls.get(getattr(fn, "name", ""), ()) if (k, where) != me]
        if sites and not any(s is False for s in sites):
            return False
        return None


def _statement_calls(stmt: ast.stmt, start: int) -> Dict[str, List[Tuple[Optional[Tuple[int, int]], bool]]]:
    """``CallSites`` of one statement: name -> (enclosing function as (row in the statement,
    column), or None; under no_grad)."""
    from gradwarden.engine.front.callsites import CallSites

    walked = CallSites(ast.Module(body=[stmt], type_ignores=[]))
    return {name: [((where.lineno - start, where.col_offset) if where is not None else None, ng)
                   for where, ng in sites] for name, sites in walked.calls.items()}


class _LoggingSet(set):
    """``Interpreter.reached`` while a statement is analysed: also keeps what is added."""

    log: Optional[Set[int]] = None

    def add(self, item: int) -> None:
        if self.log is not None:
            self.log.add(item)
        set.add(self, item)


class _Probe:
    """What ``training._defines_requires_grad`` reads of the checks it is handed: the
    interpreter's tree and the answer cached on its flow facts."""

    def __init__(self, tree: ast.Module) -> None:
        self.it = self  # the interpreter, as far as that function looks
        self.flow = self  # its flow facts
        self.tree = tree
        self.own_requires_grad: Optional[bool] = None


def _key(ev: Any) -> EventKey:
    return (ev.kind, ev.span.row, ev.span.column, ev.facts.get("code", ""))


def _moved(key: EventKey, d: Optional[Diagnostic], rows: Dict[int, int]) -> Tuple[EventKey, Optional[Diagnostic]]:
    return (key[0], rows[key[1]], key[2], key[3]), (move_one(d, rows) if d is not None else None)
