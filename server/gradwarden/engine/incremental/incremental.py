"""Incremental analysis for the language server: after an edit, re-analyse only the top-level
statements the edit can change, and reuse the diagnostics of the rest.

The text is parsed again only around the edit (``reparse.py``). Then:

- a library module (module-level code that only defines things: the engine analyses each
  top-level definition on its own) goes through the engine's own run, in which every statement
  whose analysis cannot have changed is replayed from its record (``unitcache.py``: keyed by
  the code it can reach by name and the order-dependent facts it reads);
- a script (module code the engine runs in full) is split into *groups*: imports are context,
  given to every group; two statements are in one group when one uses a name the other defines
  (a top-level name, or a method of a class: ``self.step()`` links to every ``def step``); all
  module-level code is one group (it runs in order, each statement on the state the previous
  ones left). The groups to analyse are analysed as one module holding the imports and their
  statements at their own rows (everything else blanked; unlinked groups do not influence each
  other), and each group's diagnostics are kept under the group's text.

Either way, what merely moved (lines added above it) has its diagnostics moved with it
(``rowmove.py``). ``last_stats`` says what was re-analysed (tests count it; never a duration).

The result equals a full analysis of the module (``tests/lsp/test_incremental.py`` checks this
over seeded random edit sequences); a text that does not parse is analysed in full.
"""
from __future__ import annotations

import ast
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.front.body import first_row
from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.engine.incremental.rowmove import move_diagnostics
from gradwarden.engine.incremental.unitcache import Statement, UnitCache, UnitSession

MAX_GROUPS_KEPT = 4096  # cached group results per analyzer (a few documents' worth)


@dataclass
class Segment:
    """One top-level statement (with its decorators), or statements sharing rows."""

    start: int  # 1-based first row
    end: int  # last row, inclusive
    names: List[str] = field(default_factory=list)  # what it is called (for the stats)
    defines: Set[str] = field(default_factory=set)  # top-level names it binds
    members: Set[str] = field(default_factory=set)  # methods of a class (``obj.name`` may reach them)
    uses: Set[str] = field(default_factory=set)
    is_import: bool = False
    is_definition: bool = True  # def/class (else module-level code)
    nodes: List[ast.stmt] = field(default_factory=list)  # the statements, as parsed


@dataclass
class Stats:
    groups: int = 0
    analysed_groups: int = 0
    reused_groups: int = 0
    analysed: List[str] = field(default_factory=list)  # names of the re-analysed statements
    reused: List[str] = field(default_factory=list)
    full: bool = False  # no grouping: the whole text was analysed
    parse_s: float = 0.0  # parsing and grouping (CPU seconds of this call, for the benchmark)
    analysis_s: float = 0.0  # analysing the groups (reused ones cost nothing)


class IncrementalAnalyzer:
    """Keeps per-group diagnostics between calls (one per document, in a worker)."""

    def __init__(self) -> None:
        self._cache: "OrderedDict[Tuple, Tuple[Tuple[int, ...], Tuple[Diagnostic, ...]]]" = OrderedDict()
        self.last_stats = Stats()
        # what a statement defines and uses, by its text (an edit walks only what it changed)
        self._names: "OrderedDict[Tuple[int, str], Tuple[Set[str], Set[str], Set[str]]]" = OrderedDict()
        # library modules: per-statement records (engine/incremental/unitcache.py)

        self._units = UnitCache()
        from gradwarden.engine.incremental.reparse import Reparser

        self._reparser = Reparser()

    def analyze(self, text: str, filename: str) -> List[Diagnostic]:
        from gradwarden.engine.analyze import analyze_source

        started = time.perf_counter()
        from gradwarden.engine.front.source import analysed_in_parts

        if analysed_in_parts(text):
            # A very large (generated) text: analysed in parts, one part's tree at a time
            # (engine/incremental/parts.py); no tree of it is kept between edits, and the last one is let go.
            from gradwarden.engine.incremental.reparse import Reparser

            self._reparser = Reparser()
            self.last_stats = Stats(full=True)
            out = list(analyze_source(text, filename))
            self.last_stats.analysis_s = time.perf_counter() - started
            return out
        lines = _LINES.findall(text)
        try:
            # only the statements an edit touched are parsed again (engine/incremental/reparse.py)
            tree = self._reparser.parse(text, lines, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.last_stats = Stats(full=True)
            out = list(analyze_source(text, filename))
            self.last_stats.analysis_s = time.perf_counter() - started
            return out
        if not tree.body:
            self.last_stats = Stats(full=True)
            return list(analyze_source(text, filename))
        # the engine's own test (it runs module code in full only in a script)
        statements = [self._statement(stmt, lines) for stmt in tree.body]
        session = UnitSession(self._units, tree, statements, filename)
        src, triggers = _triggers(text, tree, session)
        script = triggers is None or bool(triggers.script_mode(tree))
        if not script:
            return self._analyze_library(session, src, triggers, filename, started)
        segments = split(tree, lines, self._names)
        # Context, given to every group: imports; and in a library module (no module code the
        # engine runs in full: it skips module-level statements that call anything) the
        # module-level code too (constants, loggers).
        imports = [s for s in segments if s.is_import or (not script and not s.is_definition)]
        others = [s for s in segments if s not in imports]
        groups = group(others, script)
        import_text = tuple(_text(lines, s) for s in imports)
        stats = Stats(groups=len(groups), parse_s=time.perf_counter() - started)
        started = time.perf_counter()
        out: List[Diagnostic] = []
        pending: List[Tuple[Tuple, Tuple[int, ...], List[Segment], List[str]]] = []
        for members in groups:
            key = (filename, script, import_text, tuple(_text(lines, s) for s in members))
            starts = tuple(s.start for s in imports) + tuple(s.start for s in members)
            names = [n for s in members for n in s.names]
            cached = self._cache.get(key)
            if cached is not None:
                old_starts, diags = cached
                moved = move_diagnostics(diags, _row_map(old_starts, starts, imports + members))
                if moved is not None:
                    self._cache.move_to_end(key)
                    stats.reused_groups += 1
                    stats.reused += names
                    out.extend(moved)
                    continue
            pending.append((key, starts, members, names))
        if pending:
            # The groups to analyse, in one module: unlinked groups do not influence each other,
            # so this is their separate analyses at once (one pass, not one per group: a file
            # of a thousand functions costs one analysis, not a thousand scans of its text).
            # Each diagnostic goes to the group holding its row (one in shared context rows
            # goes to each, as each group's own analysis would give it).
            keep = imports + [seg for _, _, members, _ in pending for seg in members]
            owner: Dict[int, int] = {}
            for n, (_, _, members, _) in enumerate(pending):
                for seg in members:
                    for row in range(seg.start, seg.end + 1):
                        owner[row] = n
            buckets: List[List[Diagnostic]] = [[] for _ in pending]
            for d in _analyze_group(lines, keep, filename):
                n = owner.get(d.span.row)
                for bucket in (buckets if n is None else [buckets[n]]):
                    bucket.append(d)
            for (key, starts, _, names), bucket in zip(pending, buckets):
                self._cache[key] = (starts, tuple(bucket))
                stats.analysed_groups += 1
                stats.analysed += names
                out.extend(bucket)
            while len(self._cache) > MAX_GROUPS_KEPT:
                self._cache.popitem(last=False)
        stats.analysis_s = time.perf_counter() - started
        self.last_stats = stats
        return sorted(_unique(out), key=sort_key)


    def _analyze_library(self, session, src, triggers, filename: str, started: float) -> List[Diagnostic]:
        """A library module: the engine's own run over the whole tree, each top-level statement
        whose analysis cannot have changed replayed from its record (``unitcache.py``)."""
        from gradwarden.engine.entry import fewer_collections as _fewer_collections
        from gradwarden.engine.assembly import new_interpreter

        tree = session.tree
        stats = Stats(groups=len(session.statements), parse_s=time.perf_counter() - started)
        started = time.perf_counter()
        with _fewer_collections():
            interp = new_interpreter(tree, src, filename, triggers=triggers)
            interp.unit_hook = session
            interp.flow.own_requires_grad = session.own_requires_grad()
            try:
                interp.run()
                completed = True
            except RecursionError:  # as analyze_module: what was found so far
                completed = False
            out = session.finish(interp, src, completed)
        stats.analysed, stats.reused = session.analysed, session.reused
        stats.analysed_groups, stats.reused_groups = len(session.analysed), len(session.reused)
        stats.analysis_s = time.perf_counter() - started
        self.last_stats = stats
        return out

    def _statement(self, stmt: ast.stmt, lines: Sequence[str]) -> Statement:
        start = first_row(stmt)
        end = getattr(stmt, "end_lineno", None) or stmt.lineno
        text = "".join(lines[start - 1:end])
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = {(a.asname or a.name).split(".")[0] for a in stmt.names}
            return Statement(start, end, text, names, set(), True, f"<import, line {start}>")
        key = (stmt.col_offset, text)
        found = self._names.get(key)
        if found is None:
            found = self._names[key] = _names_of(stmt)
            while len(self._names) > MAX_GROUPS_KEPT:
                self._names.popitem(last=False)
        defines, _, uses = found
        definition = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        name = stmt.name if definition else f"<module code, line {start}>"  # type: ignore[attr-defined]
        return Statement(start, end, text, defines, uses, not definition, name)


def sort_key(d: Diagnostic) -> Tuple:
    return (d.span.row, d.span.column, d.code, d.message)


def _unique(diags: Iterable[Diagnostic]) -> List[Diagnostic]:
    seen: Set[Tuple] = set()
    out: List[Diagnostic] = []
    for d in diags:
        k = (d.code, d.span, d.message)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out


# --------------------------------------------------------------------------- splitting
def split(tree: ast.Module, lines: Optional[Sequence[str]] = None,
          known: Optional["OrderedDict[Tuple[int, str], Tuple[Set[str], Set[str], Set[str]]]"] = None
          ) -> List[Segment]:
    """The top-level statements as segments. ``known``: names found earlier, by statement text
    and column (an unchanged statement is not walked again)."""
    segments: List[Segment] = []
    for stmt in tree.body:
        start = first_row(stmt)
        end = getattr(stmt, "end_lineno", None) or stmt.lineno
        seg = Segment(start, end, nodes=[stmt])
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            seg.is_import = True
            for alias in stmt.names:
                seg.defines.add((alias.asname or alias.name).split(".")[0])
        else:
            key = (stmt.col_offset, "".join(lines[start - 1:end])) if lines is not None and known is not None else None
            found = known.get(key) if key is not None else None  # type: ignore[union-attr]
            if found is None:
                found = _names_of(stmt)
                if key is not None:
                    known[key] = found  # type: ignore[index]
                    while len(known) > MAX_GROUPS_KEPT:  # type: ignore[arg-type]
                        known.popitem(last=False)  # type: ignore[union-attr]
            defines, members, uses = found
            seg.defines, seg.members, seg.uses = set(defines), set(members), set(uses)
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                seg.names.append(stmt.name)
            else:
                seg.is_definition = False
                seg.names.append(f"<module code, line {start}>")
        if segments and seg.start <= segments[-1].end:  # statements sharing a row (a; b)
            last = segments[-1]
            last.end = max(last.end, seg.end)
            last.names += seg.names
            last.defines |= seg.defines
            last.members |= seg.members
            last.nodes += seg.nodes
            last.uses |= seg.uses
            last.is_import = last.is_import and seg.is_import
            last.is_definition = last.is_definition and seg.is_definition
            continue
        segments.append(seg)
    return segments


def _names_of(stmt: ast.stmt) -> Tuple[Set[str], Set[str], Set[str]]:
    """(top-level names it binds, methods it defines, names it uses) of a non-import statement."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        members: Set[str] = set()
        if isinstance(stmt, ast.ClassDef):
            members = {item.name for item in stmt.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return {stmt.name}, members, _uses(stmt)
    return _assigned(stmt), set(), _uses(stmt)


def _uses(node: ast.AST) -> Set[str]:
    names: Set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute) and not (sub.attr.startswith("__") and sub.attr.endswith("__")):
            # ``x.step()`` may be any class's ``step`` (the engine matches calls by name); a
            # dunder is reached through a base class or an instance, both named elsewhere
            names.add(sub.attr)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            names.update(sub.names)
    return names


def _assigned(node: ast.AST) -> Set[str]:
    names: Set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    return names


def group(segments: Sequence[Segment], script: bool) -> List[List[Segment]]:
    """Connected groups (see the module docstring), each in source order."""
    parent = list(range(len(segments)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    definers: Dict[str, List[int]] = {}
    owners: Dict[str, List[int]] = {}
    for i, seg in enumerate(segments):
        for name in seg.defines:
            definers.setdefault(name, []).append(i)
        for name in seg.members:
            owners.setdefault(name, []).append(i)
    for i, seg in enumerate(segments):
        for name in seg.uses:
            for j in definers.get(name, ()):
                union(i, j)
            for j in owners.get(name, ()):
                if j != i:
                    union(i, j)
        for j in definers_of(seg.defines, definers):
            union(i, j)  # two statements binding the same name (a redefinition)
    if script:
        code = [i for i, seg in enumerate(segments) if not seg.is_definition]
        for i in code[1:]:
            union(code[0], i)
    out: Dict[int, List[Segment]] = {}
    for i, seg in enumerate(segments):
        out.setdefault(find(i), []).append(seg)
    return [out[k] for k in sorted(out)]


def definers_of(names: Iterable[str], definers: Dict[str, List[int]]) -> List[int]:
    found: List[int] = []
    for name in names:
        found += definers.get(name, ())
    return found


def _triggers(text: str, tree: ast.Module, session):
    """The source and the engine's trigger facts of the whole text (None: they cannot be
    computed; then all module code is treated as one group, which is safe)."""
    from gradwarden.engine.front.source import SourceText

    src = SourceText(text)
    try:
        return src, session.triggers(src)
    except Exception:  # noqa: BLE001
        return src, None


# --------------------------------------------------------------------------- texts and rows
def _text(lines: Sequence[str], seg: Segment) -> str:
    return "".join(lines[seg.start - 1:seg.end])


# Rows as Python counts them (str.splitlines would also split at form feeds and U+2028).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _analyze_group(lines: Sequence[str], keep: Sequence[Segment], filename: str) -> List[Diagnostic]:
    """Analyse the module made of ``keep``'s statements only: their nodes as parsed from the
    whole text (no second parse), and a text in which every other row is blank (rows and
    columns unchanged, and scanning it costs little)."""
    from gradwarden.engine.entry import fewer_collections as _fewer_collections
    from gradwarden.engine.assembly import analyze_module
    from gradwarden.engine.front.source import SourceText

    ordered = sorted(keep, key=lambda s: s.start)
    wanted = bytearray(len(lines) + 2)
    for seg in ordered:
        wanted[seg.start:seg.end + 1] = b"\x01" * (seg.end - seg.start + 1)
    text = "".join(line if wanted[i] else _eol(line) for i, line in enumerate(lines, 1))
    tree = ast.Module(body=[node for seg in ordered for node in seg.nodes], type_ignores=[])
    with _fewer_collections():
        return analyze_module(tree, SourceText(text), filename)


def _eol(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return line[-1] if line.endswith(("\n", "\r")) else ""


def _row_map(old_starts: Sequence[int], new_starts: Sequence[int], segs: Sequence[Segment]
             ) -> Dict[int, int]:
    rows: Dict[int, int] = {}
    for old, new, seg in zip(old_starts, new_starts, segs):
        for k in range(seg.end - seg.start + 1):
            rows[old + k] = new + k
    return rows
