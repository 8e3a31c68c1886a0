"""A very large module analysed in parts, so that its whole syntax tree is never held at once.

CPython's syntax tree costs about 150 bytes of memory per byte of source (each node carries a
dict): a 5 MB generated module is a 765 MB tree before any analysis. A text longer than
``source.PARTS_ABOVE_CHARS`` (three times the largest of the 5,818 files of transformers 5.23.0,
diffusers 0.42.1, timm 1.0.31, lightning, peft, torchrl, torchvision, accelerate, ultralytics
and stable-baselines3: diffusers' ``loaders/lora_pipeline.py``, 327 kB; transformers' largest
is 279 kB, timm's 234 kB) is therefore analysed part by part:

1. *Chunks.* A row at column 0 that can start a statement (not blank, not a comment, not a
   closing bracket, not ``else``/``elif``/``except``/``finally``) starts a candidate chunk.
   Each chunk is checked with the symbol table builder (C speed, no Python tree): a chunk that
   does not compile on its own was cut inside a string, a bracket, a decorated definition or a
   block, and is merged with the chunks after it (1, 2, 4, ... of them) until it compiles.
   Why this is exact: the chunks before it compiled, so the text before it ends with every
   string, bracket and block closed -- exactly the state the tokenizer of the whole text is in
   at that row. A chunk whose error is not at its end is a real syntax error: the text is
   parsed once more, padded with blank rows to the chunk's place, to give the very GW001 (row,
   column, message) that parsing the whole text gives.
2. *Names.* The symbol table also says which top-level names each chunk binds and which
   module-level names it reads (in its own code and in the functions and classes it defines).
3. *Parts.* Consecutive chunks are grouped into parts of about ``PART_CHARS`` characters. Each
   part is analysed with the chunks it depends on: those that bind a name it reads, and
   theirs in turn (a ``__main__`` block at the end still sees the classes and functions it
   uses), plus ``from __future__`` and star imports and module code that sets the grad mode
   (``torch.set_grad_enabled(False)``); then the module-level code that reads
   an object one of those chunks binds (``X.requires_grad_(True)`` far from ``X = ...``), and
   what that code reads; at most ``DEPENDENCIES_PER_PART`` times the part's own size of them.
   The part's text is the original text with every other row blank: rows and columns, and so
   every row quoted in a message, are those of the file. Its tree is freed before the next
   part is parsed.
4. *Merge.* A hazard found in several parts (a definition analysed where it is defined and
   where it is used) is reported once: as the run of the module's code found it, if some part
   ran it from there, else as the definition's own analysis found it; a definition that some
   part's module code reached is not also reported from its analysis on its own, as in a whole
   file. One information note (GW002, on row 1) says the file was analysed in parts: a hazard
   whose steps lie in parts that no name links (torch's other global settings changed by module
   code in another part; dependencies past the limit) may be missed, or seen differently.
"""
from __future__ import annotations

import ast
import re
import warnings
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.front import source
from gradwarden.engine.diagnostic import Diagnostic, Severity, Span

PART_CHARS = 256_000  # about this much of the file's own code per part (a 40 MB tree at most)
DEPENDENCIES_PER_PART = 4  # a part's dependencies: at most this many times its own size

# Rows as Python counts them (str.splitlines would also split at form feeds and U+2028).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # a column-0 row that ends no statement
# A chunk that starts with one of these defines or imports (its other rows are its body)
_DEFINITION = re.compile(r"\s*(?:@|def\b|async\s+def\b|class\b|import\b|from\b)")
_ALWAYS = re.compile(r"^from[ \t]+__future__\b|\bimport[ \t]*\*", re.M)  # in every part
_GLOBAL_MODE = re.compile(r"[\w.]*set_grad_enabled\s*\(")  # module code that turns grad off for all that follows: in every part
# An error the cut itself can cause (the rest of the construct is in the next chunk).
_CUT_ERRORS = re.compile(r"never closed|unterminated triple-quoted|unexpected EOF")


@dataclass
class Chunk:
    """Consecutive top-level statements (rows ``start``..``end``, 1-based, inclusive) that
    compile on their own."""

    start: int
    end: int
    chars: int
    binds: Set[str] = field(default_factory=set)  # top-level names it binds
    loads: Set[str] = field(default_factory=set)  # module-level names its code reads
    always: bool = False  # a __future__ or star import, torch.set_grad_enabled(...): part of every part
    assigns: Set[str] = field(default_factory=set)  # of ``binds``: those bound to an object (not def/class/import)
    code: bool = False  # module-level code (not a definition or an import): it may change objects it reads


@dataclass
class Split:
    """The chunks of a text, or the syntax error that parsing the whole text reports."""

    chunks: List[Chunk]
    error: Optional[SyntaxError] = None


@dataclass
class PartsReport:
    """What the analysis in parts did (tests count these; the benchmark prints them)."""

    chunks: int = 0
    parts: int = 0
    part_rows: List[Tuple[int, int]] = field(default_factory=list)  # (own rows, rows of dependencies) per part


def analyze_in_parts(text: str, filename: str, part_chars: Optional[int] = None,
                     on_tree: Optional[Callable[[int, ast.Module], None]] = None,
                     report: Optional[PartsReport] = None) -> Optional[List[Diagnostic]]:
    """The diagnostics of ``text`` analysed in parts; None when it cannot be split (one
    statement longer than the whole limit, a NUL byte, rows Python counts differently): the
    caller then analyses it whole. ``on_tree(k, tree)`` sees each part's tree (tests)."""
    from gradwarden.engine.entry import fewer_collections as _fewer_collections
    from gradwarden.engine.entry import parse_error as _parse_error

    part_chars = PART_CHARS if part_chars is None else part_chars
    lines = _LINES.findall(text)
    split = split_chunks(text, lines, filename)
    if split is None:
        return None
    if split.error is not None:
        exc = split.error
        return [_parse_error(filename, exc.lineno or 1, exc.offset or 1, f"syntax error: {exc.msg}")]
    from gradwarden.engine.front.triggers import nothing_to_analyse

    if nothing_to_analyse(text):
        return []  # as for any file: the syntax is checked (above), nothing can be found
    parts = group_parts(split.chunks, part_chars)
    if len(parts) < 2:
        return None
    report = report if report is not None else PartsReport()
    report.chunks, report.parts = len(split.chunks), len(parts)
    found = _Found()
    index = index_of(split.chunks)
    for k, own in enumerate(parts):
        keep = with_dependencies(index, own, DEPENDENCIES_PER_PART * part_chars)
        own_rows = sum(c.end - c.start + 1 for c in own)
        report.part_rows.append((own_rows, sum(c.end - c.start + 1 for c in keep) - own_rows))
        part_text = blank_except(lines, keep)
        if nothing_to_analyse(part_text):
            continue  # the interpreter could emit nothing on it: not even parsed
        try:
            with _fewer_collections():
                tree = ast.parse(part_text, filename=filename, type_comments=False)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # cannot happen for chunks that compiled; the whole-text path decides
        if on_tree is not None:
            on_tree(k, tree)
        with _fewer_collections():
            _analyse_part(tree, part_text, filename, k, found)
        del tree  # before the next part is parsed: one part's tree at a time
    return found.diagnostics(filename, len(text), len(parts))


# --------------------------------------------------------------------------- chunks
def split_chunks(text: str, lines: Sequence[str], filename: str) -> Optional[Split]:
    """The text's chunks (see the module docstring), or its syntax error; None: not splittable."""
    if "".join(lines) != text or "\0" in text:
        return None
    starts = [i for i, line in enumerate(lines) if i == 0 or _starts_statement(line)]
    starts.append(len(lines))
    chunks: List[Chunk] = []
    i = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the parse of each part warns, at the file's rows
        while i < len(starts) - 1:
            take = 1
            while True:
                j = min(i + take, len(starts) - 1)
                a, b = starts[i], starts[j]
                piece = "".join(lines[a:b])
                try:
                    chunks.append(_chunk(piece, a, b))
                    break
                except SyntaxError as exc:
                    if j < len(starts) - 1 and _cut_here(exc, piece):
                        take *= 2
                        continue
                    try:
                        error = _whole_text_error(lines, a, b, filename)
                        if error is None:  # only the symbol table objects (no parse error)
                            chunks.append(_chunk_from_tree(piece, a, b))
                            break
                    except (ValueError, RecursionError, MemoryError):
                        return None  # the whole-text path words these
                    return Split(chunks, error)
                except (ValueError, RecursionError, MemoryError):
                    return None
            i = j
    return Split(chunks)


def _starts_statement(line: str) -> bool:
    return bool(line) and line[0] not in " \t\r\n\f#)]}" and not _CONTINUES.match(line)


def _cut_here(exc: SyntaxError, piece: str) -> bool:
    """May this error come from cutting the text here (rather than from the code)?"""
    if _CUT_ERRORS.search(exc.msg or ""):
        return True
    rows = piece.rstrip().count("\n") + 1  # the chunk's last row that holds anything
    return exc.lineno is None or exc.lineno >= rows


def _whole_text_error(lines: Sequence[str], a: int, b: int, filename: str) -> Optional[SyntaxError]:
    """The error parsing the whole text reports, when the chunk at rows a+1..b holds the
    first one: the chunks before it parse, so it is the chunk's own error at its own rows.
    (A bracket or string never closed makes the chunk the rest of the file: its failing parse
    then costs what the whole text's would, once.)"""
    padded = "\n" * a + "".join(lines[a:b])
    try:
        ast.parse(padded, filename=filename, type_comments=False)
    except SyntaxError as exc:
        return exc
    return None


def _chunk(piece: str, a: int, b: int) -> Chunk:
    import _symtable

    top = _symtable.symtable(piece, "<chunk>", "exec")
    binds = {name for name, flags in top.symbols.items()
             if flags & (_symtable.DEF_LOCAL | _symtable.DEF_IMPORT | _symtable.DEF_GLOBAL)}
    loads = {name for name, flags in top.symbols.items() if flags & _symtable.USE}
    globals_ = (_symtable.GLOBAL_IMPLICIT, _symtable.GLOBAL_EXPLICIT)
    stack = list(top.children)
    while stack:  # functions, classes, lambdas, comprehensions: the module names they read
        table = stack.pop()
        stack.extend(table.children)
        for name, flags in table.symbols.items():
            scope = (flags >> _symtable.SCOPE_OFF) & _symtable.SCOPE_MASK
            if scope in globals_:
                if flags & _symtable.USE:
                    loads.add(name)
                if scope == _symtable.GLOBAL_EXPLICIT and flags & _symtable.DEF_LOCAL:
                    binds.add(name)  # `global x` then `x = ...` in a function
    defined = {t.name for t in top.children if t.type in (_symtable.TYPE_FUNCTION, _symtable.TYPE_CLASS)}
    assigns = {name for name, flags in top.symbols.items()
               if flags & _symtable.DEF_LOCAL and not flags & _symtable.DEF_IMPORT} - defined
    code = not _DEFINITION.match(piece)
    always = bool(("import" in piece and _ALWAYS.search(piece)) or (code and _GLOBAL_MODE.match(piece)))  # "in": C speed
    return Chunk(a + 1, b, len(piece), binds, loads, always, assigns, code)


def _chunk_from_tree(piece: str, a: int, b: int) -> Chunk:
    """Names from the tree, for a chunk that parses but that the symbol table rejects (the
    whole-text analysis does not reject it either)."""
    binds: Set[str] = set()
    loads: Set[str] = set()
    tree = ast.parse(piece)
    defined = {(s.name if hasattr(s, "name") else "") for s in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            binds.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            defined.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return Chunk(a + 1, b, len(piece), binds, loads, bool(_ALWAYS.search(piece)), binds - defined,
                 not _DEFINITION.match(piece))


# --------------------------------------------------------------------------- parts
def group_parts(chunks: Sequence[Chunk], part_chars: int) -> List[List[Chunk]]:
    parts: List[List[Chunk]] = []
    size = part_chars
    for chunk in chunks:
        if size >= part_chars:
            parts.append([])
            size = 0
        parts[-1].append(chunk)
        size += chunk.chars
    return parts


@dataclass
class Index:
    """Which chunks bind each top-level name, and which module-level code reads each object."""

    definers: Dict[str, List[Chunk]]
    users: Dict[str, List[Chunk]]  # name bound to an object -> the module code chunks reading it
    always: List[Chunk]


def index_of(chunks: Sequence[Chunk]) -> Index:
    definers: Dict[str, List[Chunk]] = {}
    objects: Set[str] = set()
    for chunk in chunks:
        for name in chunk.binds:
            definers.setdefault(name, []).append(chunk)
        objects |= chunk.assigns
    users: Dict[str, List[Chunk]] = {}
    for chunk in chunks:
        if chunk.code:
            for name in chunk.loads & objects:
                users.setdefault(name, []).append(chunk)
    return Index(definers, users, [c for c in chunks if c.always])


def with_dependencies(index: Index, own: Sequence[Chunk], budget: int) -> List[Chunk]:
    """``own``, with (in row order):

    - ``always`` and the chunks binding the names it reads, transitively: what it runs;
    - then the module code that reads an object one of those chunks binds, and what that code
      reads (``X.requires_grad_(True)`` far from ``X = torch.randn(3)``: without it, a use of
      ``X`` would be analysed on an object the file never has);

    in the order names are met, up to ``budget`` characters of other parts' chunks."""
    keep: Dict[int, Chunk] = {c.start: c for c in own}
    keep.update((c.start, c) for c in index.always)
    names = deque(sorted({n for c in list(own) + index.always for n in c.loads}))
    objects = deque(sorted({n for c in own for n in c.assigns}))
    seen_names: Set[str] = set()
    seen_objects: Set[str] = set()
    added = 0
    while (names or objects) and added < budget:
        if names:  # what the kept code runs comes first
            name = names.popleft()
            if name in seen_names:
                continue
            seen_names.add(name)
            found = index.definers.get(name, ())
        else:
            name = objects.popleft()
            if name in seen_objects:
                continue
            seen_objects.add(name)
            found = index.users.get(name, ())
        for chunk in found:
            if chunk.start not in keep and added < budget:
                keep[chunk.start] = chunk
                added += chunk.chars
                names.extend(sorted(chunk.loads - seen_names))
                objects.extend(sorted(chunk.assigns - seen_objects))
    return [keep[start] for start in sorted(keep)]


def blank_except(lines: Sequence[str], keep: Iterable[Chunk]) -> str:
    """The text with every row outside ``keep`` blank (same rows, columns unchanged), up to
    the last kept row."""
    out: List[str] = []
    row = 0  # rows written so far
    for chunk in keep:
        out.append("\n" * (chunk.start - 1 - row))
        out.extend(lines[chunk.start - 1:chunk.end])
        row = chunk.end
    return "".join(out)


# --------------------------------------------------------------------------- analysis
Where = Tuple[int, int]  # (row, column) of a definition


class _Found:
    """Diagnostics of every part, ranked as the whole-file analysis would pick them."""

    def __init__(self) -> None:
        # (code, row, column) -> (rank, diagnostic); rank: (0, part) module code, (1, part) alone
        self.best: Dict[Tuple[str, int, int], Tuple[Tuple[int, int], Diagnostic]] = {}
        self.alone: Dict[Where, List[Diagnostic]] = {}  # definition -> what its own analysis found
        self.reached: Set[Where] = set()  # definitions some part's module code ran

    def add(self, diag: Diagnostic, rank: Tuple[int, int]) -> None:
        key = (diag.code, diag.span.row, diag.span.column)
        held = self.best.get(key)
        if held is None or rank < held[0]:
            self.best[key] = (rank, diag)

    def diagnostics(self, filename: str, chars: int, parts: int) -> List[Diagnostic]:
        dropped = {id(d) for where in self.reached for d in self.alone.get(where, ())}
        out = [d for _, d in self.best.values() if id(d) not in dropped]
        out.append(parts_note(filename, chars, parts))
        return sorted(out, key=lambda d: d.sort_key())


def parts_note(filename: str, chars: int, parts: int) -> Diagnostic:
    from gradwarden.rules.parse import AnalysisStopped

    return Diagnostic(
        code=AnalysisStopped.code,
        message=(f"analysed in parts: this file has {chars / 1e6:.1f} M characters (over "
                 f"{source.PARTS_ABOVE_CHARS / 1e6:g} M), so its top-level statements were analysed in "
                 f"{parts} parts, each with the imports and definitions it uses; a hazard whose "
                 "steps lie in parts that share no names may not be reported"),
        severity=Severity.INFORMATION,
        filename=filename,
        span=Span(1, 1, 1, 1),
        rule=AnalysisStopped.name,
    )


def _analyse_part(tree: ast.Module, text: str, filename: str, k: int, found: _Found) -> None:
    from gradwarden.engine.front.source import SourceText
    from gradwarden.rules.dispatch import events_to_diagnostics

    from gradwarden.engine.assembly import new_interpreter

    src = SourceText(text)
    interp = new_interpreter(tree, src, filename, roles={"unreached": _unreached_class()})
    try:
        interp.run()
    except RecursionError:  # as analyze_module: what was found so far
        pass
    unreached = interp.unreached
    alone_keys = {key for keys in unreached.alone.values() for key in keys}
    module_events = [ev for key, ev in interp.events.items() if key not in alone_keys]
    for d in events_to_diagnostics(module_events, filename, src):
        found.add(d, (0, k))
    for where, keys in unreached.alone.items():
        events = [interp.events[key] for key in keys]
        diags = events_to_diagnostics(events, filename, src)
        found.alone.setdefault(where, []).extend(diags)
        for d in diags:
            found.add(d, (1, k))
    found.reached |= unreached.reached_by_module


@lru_cache(maxsize=None)
def _unreached_class():
    """Made on first use: the interpreter is imported late (keeps this module light)."""
    from gradwarden.engine.interp.unreached import Unreached

    class PartUnreached(Unreached):
        """The analysis of unreached definitions, noting which definitions the module's code
        ran and which events each definition's own analysis (when not run) emitted."""

        def __init__(self, it) -> None:
            super().__init__(it)
            self.alone: Dict[Where, List[Tuple]] = {}
            self.reached_by_module: Set[Where] = set()

        def analyse_unreached(self, module_state) -> None:
            reached = self.it.reached
            for pairs in (self.it.triggers.statement_defs if reached else ()):
                for node, _ in pairs:
                    if id(node) in reached:
                        self.reached_by_module.add((node.lineno, node.col_offset))
            super().analyse_unreached(module_state)

        def _alone(self, fn: ast.AST, run: Callable[[], None]) -> None:
            events = self.it.events
            before = set(events)
            try:
                run()
            finally:
                where = (getattr(fn, "lineno", 0), getattr(fn, "col_offset", 0))
                self.alone.setdefault(where, []).extend(k for k in events if k not in before)

        def standalone_function(self, fn, module_state) -> None:
            self._alone(fn, lambda: super(PartUnreached, self).standalone_function(fn, module_state))

        def standalone_method(self, info, fn, module_state) -> None:
            self._alone(fn, lambda: super(PartUnreached, self).standalone_method(info, fn, module_state))

        def standalone_function_class(self, info, module_state) -> None:
            self._alone(info.node, lambda: super(PartUnreached, self).standalone_function_class(info, module_state))

    return PartUnreached
