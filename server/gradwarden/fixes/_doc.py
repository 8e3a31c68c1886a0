"""One source text, parsed once with libcst, and the small toolbox every fix kind uses.

Positions: the engine's spans are 1-based rows and 1-based *character* columns (end column
exclusive); libcst's are 1-based lines and 0-based character columns. Offsets into the text
are computed with Python's own notion of a line end (``\\r\\n``, ``\\r``, ``\\n`` only, as the
tokenizer does; form feeds and other Unicode line breaks do not end a line).

Edits are produced as :class:`TextEdit` (absolute offsets, replacement text); they are
minimal (insert a line, insert ``.clone()``, replace one statement) so comments, quotes and
formatting elsewhere are untouched, and they use the file's own newline and indentation.
"""
from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst
from libcst.metadata import CodeRange

from gradwarden.engine.diagnostic import Edit, Span
from gradwarden.fixes._positions import LazyPositions

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` with ``content`` (``start == end`` inserts)."""

    start: int
    end: int
    content: str


class CannotFix(Exception):
    """Raised inside a realiser when the fix cannot be realised on this source."""


SMALL = (
    cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return, cst.Raise, cst.Assert, cst.Del,
    cst.Pass, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Import, cst.ImportFrom,
)
LOOPS = (cst.For, cst.While)
SCOPES = (cst.FunctionDef, cst.Module)
# Expressions that bind tighter than any binary operator: appending `.clone()` needs no parens.
PRIMARY = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary,
           cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple, cst.Dict,
           cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Ellipsis)


def npar(node: cst.CSTNode) -> int:
    """How many parentheses an expression has around it."""
    if not isinstance(node, cst.BaseExpression):
        return 0
    lp = getattr(node, "lpar", ())
    return len(lp) if isinstance(lp, (list, tuple)) else 0


def is_primary(node: cst.CSTNode) -> bool:
    if npar(node):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return False
    return isinstance(node, PRIMARY)


def dotted(node: Optional[cst.CSTNode]) -> Optional[str]:
    """``a``, ``a.b.c`` for Name/Attribute chains, else None."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def base_of(node: cst.CSTNode) -> cst.CSTNode:
    """Strip subscripts: ``x[0][1:]`` -> ``x``."""
    while isinstance(node, cst.Subscript):
        node = node.value
    return node


_FIELDS_OF: Dict[type, Tuple[str, ...]] = {}


def _add_parents(root: cst.CSTNode, parents: Dict[int, cst.CSTNode]) -> None:
    """Record each node's parent under ``root``, by identity (3x faster than libcst's
    ParentNodeProvider). The children are read from the node's dataclass fields:
    ``node.children`` runs a visitor per node, twice this walk's time. (Each field holds a node,
    a sequence of nodes, or a value.)"""
    fields_of = _FIELDS_OF
    CSTNode = cst.CSTNode
    stack: List[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        names = fields_of.get(node.__class__)
        if names is None:
            names = fields_of[node.__class__] = tuple(f.name for f in dataclasses.fields(node))
        for name in names:
            value = getattr(node, name)
            if isinstance(value, CSTNode):
                parents[id(value)] = node
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                for child in value:
                    if isinstance(child, CSTNode):
                        parents[id(child)] = node
                        stack.append(child)


class _Parents:
    """Each node's parent, by identity, recorded one top-level statement at a time: a fix asks
    about the statement it edits (``Doc.find`` records the statements it searches); a node from
    elsewhere has the whole module recorded first."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._map: Dict[int, cst.CSTNode] = {}
        self._done = [False] * len(module.body)
        self._all = False

    def record(self, i: int) -> None:
        if not self._done[i]:
            stmt = self._module.body[i]
            self._map[id(stmt)] = self._module
            _add_parents(stmt, self._map)
            self._done[i] = True

    def get(self, key: int) -> Optional[cst.CSTNode]:
        got = self._map.get(key)
        if got is None and not self._all and key != id(self._module):
            _add_parents(self._module, self._map)
            self._all = True
            got = self._map.get(key)
        return got


class Doc:
    """A parsed source text with positions, parents and line helpers (read-only)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts: List[int] = [0]
        for m in _LINE_END.finditer(text):
            self.line_starts.append(m.end())
        self._newline: Optional[str] = None
        self._offsets: Dict[int, Tuple[int, int]] = {}
        # The libcst tree is made on first use: the row and offset helpers alone (a fix's
        # result checked row by row) do not need it, and it costs several parses' time.
        self._parsed = False
        self._module_: Optional[cst.Module] = None
        self._pos_: Optional[LazyPositions] = None
        self._parent_: Optional[_Parents] = None
        self._error: Optional[str] = None
        # What the fixes derive from this text and reuse (a scope's data-flow index, a fix's
        # edits): a JSON report realises each fix up to five times (the safe and the unsafe
        # choice, the listed fixes, two fix runs), each time on the same text.
        self.memo: Dict[Any, Any] = {}

    def _parse(self) -> None:
        self._parsed = True
        try:
            module = cst.parse_module(self.text)
            self._parent_ = _Parents(module)
            self._pos_ = LazyPositions(module, self.text, self.line_starts, self._parent_)
            self._module_ = module
        except (cst.ParserSyntaxError, RecursionError, ValueError, MemoryError, Exception) as exc:  # noqa: BLE001
            self._error = f"{type(exc).__name__}: {exc}"

    def _tree_fact(self, attr: str) -> Any:
        """What the libcst parse made (``attr``), parsing first if need be."""
        if not self._parsed:
            self._parse()
        return getattr(self, attr)

    _module = property(lambda self: self._tree_fact("_module_"))  # Optional[cst.Module]
    _pos = property(lambda self: self._tree_fact("_pos_"))  # Optional[LazyPositions]: node -> CodeRange
    _parent = property(lambda self: self._tree_fact("_parent_"))  # Optional[_Parents]: id(node) -> parent
    error = property(lambda self: self._tree_fact("_error"), doc="Why the text does not parse (None: it does).")

    # ------------------------------------------------------------------ basics
    @property
    def ok(self) -> bool:
        return self._module is not None

    @property
    def module(self) -> cst.Module:
        assert self._module is not None
        return self._module

    @property
    def newline(self) -> str:
        if self._newline is None:
            counts = {"\r\n": 0, "\n": 0, "\r": 0}
            for m in _LINE_END.finditer(self.text):
                counts[m.group()] += 1
            best = max(counts.items(), key=lambda kv: kv[1])
            self._newline = best[0] if best[1] else "\n"
        return self._newline

    @property
    def n_rows(self) -> int:
        return len(self.line_starts)

    def row_text(self, row: int) -> str:
        """Row ``row`` (1-based) without its line end."""
        if row < 1 or row > len(self.line_starts):
            return ""
        start = self.line_starts[row - 1]
        end = self.line_starts[row] if row < len(self.line_starts) else len(self.text)
        line = self.text[start:end]
        return line.rstrip("\r\n")

    def row_start(self, row: int) -> int:
        row = max(1, min(row, len(self.line_starts)))
        return self.line_starts[row - 1]

    def next_row_start(self, row: int) -> Optional[int]:
        """Offset of the row after ``row``, or None at the last row."""
        return self.line_starts[row] if row < len(self.line_starts) else None

    def offset(self, row: int, col1: int) -> int:
        """Offset of a 1-based (row, column)."""
        start = self.row_start(row)
        return min(start + max(col1 - 1, 0), len(self.text))

    def position(self, offset: int) -> Tuple[int, int]:
        """1-based (row, column) of an offset."""
        idx = bisect.bisect_right(self.line_starts, offset) - 1
        return idx + 1, offset - self.line_starts[idx] + 1

    def span_of_offsets(self, start: int, end: int) -> Span:
        r, c = self.position(start)
        er, ec = self.position(end)
        return Span(r, c, er, ec)

    def to_edit(self, e: TextEdit) -> Edit:
        return Edit(self.span_of_offsets(e.start, e.end), e.content)

    def indent_of_row(self, row: int) -> str:
        line = self.row_text(row)
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    # ------------------------------------------------------------------ nodes
    def rng(self, node: cst.CSTNode) -> CodeRange:
        assert self._pos is not None
        return self._pos[node]

    def has_pos(self, node: cst.CSTNode) -> bool:
        return self._pos is not None and node in self._pos

    def offsets(self, node: cst.CSTNode) -> Tuple[int, int]:
        key = id(node)
        got = self._offsets.get(key)
        if got is None:
            r = self.rng(node)
            got = (self.offset(r.start.line, r.start.column + 1), self.offset(r.end.line, r.end.column + 1))
            self._offsets[key] = got
        return got

    def code(self, node: cst.CSTNode) -> str:
        """The exact source text of ``node`` (as written, parentheses included)."""
        s, e = self.offsets(node)
        text = self.text[s:e]
        # PositionProvider excludes a node's own parentheses for some nodes; keep them balanced.
        n = npar(node)
        if n:
            s, e = self.full_offsets(node)
            return self.text[s:e]
        return text

    def full_offsets(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Offsets including the node's own parentheses (when positions exclude them)."""
        s, e = self.offsets(node)
        n = npar(node)
        if n:
            i, j, k = s, e, 0
            while k < n:
                i2 = self._skip_back_ws(i)
                j2 = self._skip_fwd_ws(j)
                if i2 > 0 and self.text[i2 - 1] == "(" and j2 < len(self.text) and self.text[j2] == ")":
                    i, j = i2 - 1, j2 + 1
                    k += 1
                else:
                    break
            return i, j
        return s, e

    def _skip_back_ws(self, i: int) -> int:
        while i > 0 and self.text[i - 1] in " \t\r\n\\":
            i -= 1
        return i

    def _skip_fwd_ws(self, j: int) -> int:
        while j < len(self.text) and self.text[j] in " \t\r\n\\":
            j += 1
        return j

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        assert self._parent is not None
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        p = self.parent(node)
        while p is not None:
            yield p
            p = self.parent(p)

    def walk(self, root: Optional[cst.CSTNode] = None) -> Iterator[cst.CSTNode]:
        """Every node under ``root`` (pre-order) that has a position."""
        stack = [root if root is not None else self.module]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def find(self, span: Optional[Span], types: Union[type, Tuple[type, ...], None] = None) -> Optional[cst.CSTNode]:
        """The innermost node of ``types`` whose range is exactly ``span`` (parentheses of the
        node itself allowed), else the smallest node of ``types`` containing the span."""
        if span is None or not self.ok:
            return None
        start = self.offset(span.row, span.column)
        end = self.offset(span.end_row, span.end_column)
        exact: Optional[cst.CSTNode] = None
        best: Optional[cst.CSTNode] = None
        best_len: Optional[int] = None
        stack: List[cst.CSTNode] = []
        if self._pos.first_lines is None:
            stack.extend(self.module.children)
        else:  # a top-level statement whose text cannot hold the span is skipped, its positions unmade
            for i, top in enumerate(self.module.body):
                where = self._pos.statement_offsets(i)
                if where[0] <= start and (where[1] is None or end <= where[1]):
                    self._parent.record(i)
                    stack.append(top)
        while stack:
            node = stack.pop()
            if not self.has_pos(node):
                stack.extend(node.children)
                continue
            s, e = self.offsets(node)
            fs, fe = self.full_offsets(node)
            if not (fs <= start and end <= fe):
                continue
            if types is None or isinstance(node, types):
                if (s, e) == (start, end) or (fs, fe) == (start, end):
                    exact = node  # deeper nodes come later: innermost wins
                if best_len is None or e - s <= best_len:
                    best, best_len = node, e - s
            stack.extend(node.children)
        return exact if exact is not None else best

    def small_stmt_of(self, node: cst.CSTNode) -> Optional[cst.BaseSmallStatement]:
        if isinstance(node, cst.BaseSmallStatement):
            return node
        for a in self.ancestors(node):
            if isinstance(a, cst.BaseSmallStatement):
                return a
            if isinstance(a, (cst.BaseCompoundStatement, cst.Lambda)):
                return None
        return None

    def stmt_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement containing ``node``: a small statement, or a compound statement when
        ``node`` is in its header (``if cond:``, ``for x in it:``)."""
        if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return node
        for a in self.ancestors(node):
            if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return a
        return None

    def line_of(self, small: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The SimpleStatementLine / SimpleStatementSuite holding a small statement."""
        p = self.parent(small)
        return p if isinstance(p, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None

    def unit_of(self, stmt: cst.CSTNode) -> cst.CSTNode:
        """A statement as an element of its block: a small statement alone on its line is
        represented by that SimpleStatementLine."""
        if isinstance(stmt, cst.BaseSmallStatement):
            line = self.line_of(stmt)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                return line
        return stmt

    def block_of(self, unit: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, Sequence[cst.CSTNode], int]]:
        """(container, statements, index) of a statement unit in its block."""
        p = self.parent(unit)
        if isinstance(p, (cst.Module, cst.IndentedBlock)):
            body = p.body
            for i, s in enumerate(body):
                if s is unit:
                    return p, body, i
        if isinstance(p, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for i, s in enumerate(p.body):
                if s is unit:
                    return p, p.body, i
        return None

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return a
        return self.module

    def loops_of(self, node: cst.CSTNode, scope: Optional[cst.CSTNode] = None) -> List[cst.CSTNode]:
        """Loops enclosing ``node`` (innermost first) within its scope; ``node`` must be in the
        loop's body (a loop's own header is not "inside" it)."""
        out: List[cst.CSTNode] = []
        child = node
        for a in self.ancestors(node):
            if a is scope or isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
            if isinstance(a, LOOPS) and (child is a.body or child is getattr(a, "orelse", None)):
                out.append(a)
            child = a
        return out

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        if outer is inner:
            return True
        return any(a is outer for a in self.ancestors(inner))

    def first_row(self, node: cst.CSTNode) -> int:
        return self.rng(node).start.line

    def last_row(self, node: cst.CSTNode) -> int:
        return self.rng(node).end.line

    # ------------------------------------------------------------------ text of statements
    def stmt_rows(self, unit: cst.CSTNode) -> Tuple[int, int]:
        return self.first_row(unit), self.last_row(unit)

    def string_interior_rows(self, unit: cst.CSTNode) -> Set[int]:
        """Rows that start inside a multi-line string literal of ``unit`` (never re-indented)."""
        rows: Set[int] = set()
        for n in self.walk(unit):
            if isinstance(n, (cst.SimpleString, cst.FormattedString)) and self.has_pos(n):
                r = self.rng(n)
                rows.update(range(r.start.line + 1, r.end.line + 1))
        return rows

    def indent_unit(self, indent: str) -> str:
        """One more level of indentation, in the style of ``indent`` (or of the module)."""
        if "\t" in indent:
            return "\t"
        if indent:
            default = self.module.default_indent if self.ok else "    "
            return default if "\t" not in default else "    "
        return self.module.default_indent if self.ok else "    "

    def body_indent(self, block: cst.CSTNode) -> Optional[str]:
        """Indentation of the statements in an IndentedBlock."""
        if isinstance(block, cst.IndentedBlock) and block.body:
            return self.indent_of_row(self.first_row(block.body[0]))
        return None

    # ------------------------------------------------------------------ imports
    def torch_prefix(self) -> Tuple[str, List[TextEdit]]:
        """How to spell ``torch`` here: (name, edits adding ``import torch`` when needed)."""
        if self.ok:
            for node in self.walk():
                if isinstance(node, cst.Import):
                    for alias in node.names:
                        name = dotted(alias.name)
                        if name is None:
                            continue
                        if name == "torch" or name.startswith("torch."):
                            if alias.asname is not None:
                                if name == "torch" and isinstance(alias.asname.name, cst.Name):
                                    return alias.asname.name.value, []
                            else:
                                return "torch", []
        return "torch", [self.add_import("import torch")]

    def add_import(self, line: str) -> TextEdit:
        """Insert ``line`` after the module docstring / __future__ imports / first imports."""
        pos_row = 1
        if self.ok:
            body = self.module.body
            i = 0
            # docstring
            if body and isinstance(body[0], cst.SimpleStatementLine) and body[0].body and \
                    isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value,
                                                                         (cst.SimpleString, cst.ConcatenatedString)):
                pos_row = self.last_row(body[0]) + 1
                i = 1
            while i < len(body) and isinstance(body[i], cst.SimpleStatementLine) and body[i].body and \
                    isinstance(body[i].body[0], (cst.Import, cst.ImportFrom)):
                pos_row = self.last_row(body[i]) + 1
                i += 1
        if pos_row > len(self.line_starts):
            text = self.text
            prefix = "" if text.endswith(("\n", "\r")) or not text else self.newline
            return TextEdit(len(text), len(text), prefix + line + self.newline)
        at = self.row_start(pos_row)
        return TextEdit(at, at, line + self.newline)

    # ------------------------------------------------------------------ edit builders
    def insert_before(self, stmt: cst.CSTNode, code: str) -> TextEdit:
        """Insert statement ``code`` (one line, no newline) right before statement ``stmt``,
        at its indentation; inline (``code; stmt``) when ``stmt`` does not start its line."""
        unit = self.unit_of(stmt)
        s, _ = self.offsets(unit)
        row = self.first_row(unit)
        line_start = self.row_start(row)
        before = self.text[line_start:s]
        if before.strip() == "":
            return TextEdit(line_start, line_start, before + code + self.newline)
        return TextEdit(s, s, code + "; ")

    def insert_after(self, stmt: cst.CSTNode, code: str) -> TextEdit:
        """Insert statement ``code`` right after statement ``stmt`` (a new line at its
        indentation; inline ``stmt; code`` inside a one-line suite or a ``;`` line)."""
        unit = self.unit_of(stmt)
        if isinstance(unit, cst.BaseSmallStatement):
            _, e = self.offsets(unit)
            return TextEdit(e, e, "; " + code)
        row = self.first_row(unit)
        indent = self.indent_of_row(row)
        s, _ = self.offsets(unit)
        if self.text[self.row_start(row):s].strip():
            raise CannotFix("statement does not start its line")
        end_row = self.last_row(unit)
        nxt = self.next_row_start(end_row)
        if nxt is None:
            return TextEdit(len(self.text), len(self.text), self.newline + indent + code + self.newline)
        return TextEdit(nxt, nxt, indent + code + self.newline)

    def unit_lines(self, unit: cst.CSTNode) -> Tuple[int, int]:
        """Offsets of the whole physical lines of a statement unit (line start .. after the
        line end of its last row)."""
        first, last = self.stmt_rows(unit)
        start = self.row_start(first)
        nxt = self.next_row_start(last)
        return start, (nxt if nxt is not None else len(self.text))

    def reindented(self, unit: cst.CSTNode, new_indent: str) -> str:
        """The whole lines of ``unit`` with its indentation replaced by ``new_indent`` (lines
        inside multi-line strings untouched); ends with a newline."""
        first, last = self.stmt_rows(unit)
        old = self.indent_of_row(first)
        inner = self.string_interior_rows(unit)
        out: List[str] = []
        for row in range(first, last + 1):
            line = self.row_text(row)
            if row not in inner and line.startswith(old):
                line = new_indent + line[len(old):]
            out.append(line)
        return self.newline.join(out) + self.newline

    def starts_own_line(self, unit: cst.CSTNode) -> bool:
        s, _ = self.offsets(unit)
        return self.text[self.row_start(self.first_row(unit)):s].strip() == ""

    def append_call(self, node: cst.CSTNode, suffix: str) -> List[TextEdit]:
        """``expr`` -> ``expr.suffix`` (e.g. ``.clone()``), parenthesising when needed."""
        s, e = self.full_offsets(node)
        if is_primary(node):
            return [TextEdit(e, e, suffix)]
        return [TextEdit(s, s, "("), TextEdit(e, e, ")" + suffix)]


def apply_text_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """Apply non-overlapping edits (raises ValueError on overlap)."""
    items = sorted(edits, key=lambda e: (e.start, e.end))
    out: List[str] = []
    pos = 0
    for e in items:
        if e.start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:e.start])
        out.append(e.content)
        pos = max(pos, e.end)
    out.append(text[pos:])
    return "".join(out)


def merge_edits(edits: Sequence[TextEdit]) -> List[TextEdit]:
    """Sort and merge insertions at the same offset (in the given order)."""
    keyed = sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0]))
    out: List[TextEdit] = []
    for _, e in keyed:
        if out and out[-1].start == out[-1].end == e.start == e.end:
            out[-1] = TextEdit(e.start, e.end, out[-1].content + e.content)
        else:
            if out and e.start < out[-1].end:
                raise CannotFix("overlapping edits inside one fix")
            out.append(e)
    return out
