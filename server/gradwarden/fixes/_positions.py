"""libcst's syntactic positions (``PositionProvider``'s ranges), made one top-level statement
at a time, when a fix first asks for a node there.

``MetadataWrapper.resolve(PositionProvider)`` generates the code of the whole module to
count lines and columns, and visits every node once more beforehand: on a 500-line file that
is more than twice the parse. A fix touches one function, so that work is mostly wasted.

A top-level statement's positions depend only on the line where its code starts (at column
0, with no indentation around it). That line is read off ``ast``: the first line of the
statement (of its first decorator) minus the comment and blank lines libcst attaches in front
of it. Each statement's generated code is checked against the text at that line before its
ranges are used; on any mismatch, or on a node outside the statements (the module itself, its
header and footer lines), the whole module is generated once, as ``PositionProvider`` does.
"""
from __future__ import annotations

import ast
import warnings
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst
from libcst.metadata import CodeRange

try:  # the codegen state PositionProvider uses (libcst >= 0.4); without it: the provider itself
    from libcst.metadata.position_provider import PositionProvidingCodegenState
except ImportError:  # pragma: no cover - an older or reorganised libcst
    PositionProvidingCodegenState = None  # type: ignore[assignment,misc]


def _first_lines(module: cst.Module, text: str) -> Optional[List[int]]:
    """The line where each top-level statement's code starts (its leading lines included),
    or None when ``ast`` does not read the text the same way."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: List[int] = []
    k = 0
    for stmt in module.body:
        if k >= len(body):
            return None
        node = body[k]
        first = node.lineno
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            first = decorators[0].lineno
        leading = len(stmt.leading_lines)
        lib_decorators = getattr(stmt, "decorators", ())
        if lib_decorators:
            leading += len(lib_decorators[0].leading_lines)
        out.append(first - leading)
        # a line of small statements (``a; b``) is one libcst statement and several ast ones
        k += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    return out if k == len(body) else None


class LazyPositions:
    """A read-only mapping node -> CodeRange, equal to ``PositionProvider``'s."""

    def __init__(self, module: cst.Module, text: str, line_starts: List[int],
                 parents: Any) -> None:  # id(node) -> parent, by .get
        self._module = module
        self._text = text
        self._line_starts = line_starts
        self._parents = parents
        self._ranges: Dict[cst.CSTNode, CodeRange] = {}
        self._index = {id(s): i for i, s in enumerate(module.body)}
        self._done = [False] * len(module.body)
        self._extents: Dict[int, Tuple[int, int]] = {}  # statement -> offsets of its text, once verified
        self._all = False
        self.first_lines = _first_lines(module, text) if PositionProvidingCodegenState is not None else None
        # where each top-level statement's text starts (offsets of first_lines): its end is the
        # next one's start, or the end of the text
        self.starts: Optional[List[int]] = (
            None if self.first_lines is None else [self._offset_of_line(line) for line in self.first_lines])
        self.statements_made = 0  # how many top-level statements were generated one by one
        self.whole_made = 0  # how many times the whole module was (0 or 1)

    # ------------------------------------------------------------------ mapping
    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        got = self._ranges.get(node)
        if got is None:
            self._make_for(node)
            got = self._ranges[node]
        return got

    def __contains__(self, node: object) -> bool:
        if node in self._ranges:
            return True
        if not isinstance(node, cst.CSTNode):
            return False
        self._make_for(node)
        return node in self._ranges

    def statement_offsets(self, i: int) -> Optional[tuple]:
        """Offsets ``[start, end)`` of the text of top-level statement ``i`` (its leading lines
        included; the end is the next statement's start, or None for the last), or None when
        unknown. Lets a search skip statements without generating them."""
        if self.starts is None:
            return None
        return self.starts[i], (self.starts[i + 1] if i + 1 < len(self.starts) else None)

    def extent(self, i: int) -> Optional[Tuple[int, int]]:
        """Offsets ``[start, end)`` of the text of top-level statement ``i`` (its leading comment
        and blank lines included), as its generated code matched it; None when the statement
        could not be made on its own."""
        if i not in self._extents and not self._all and self.first_lines is not None and not self._done[i]:
            if not self._make_statement(i):
                self._make_all()
        return self._extents.get(i)

    # ------------------------------------------------------------------ making
    def _offset_of_line(self, line: int) -> int:
        if line <= len(self._line_starts):
            return self._line_starts[max(line, 1) - 1]
        return len(self._text)

    def _top_index(self, node: cst.CSTNode) -> Optional[int]:
        parents = self._parents
        child, parent = node, parents.get(id(node))
        while parent is not None and parent is not self._module:
            child, parent = parent, parents.get(id(parent))
        if parent is None:
            return None  # the module itself, or a node from another tree
        return self._index.get(id(child))  # None: a header or footer line

    def _make_for(self, node: cst.CSTNode) -> None:
        if self._all:
            return
        i = self._top_index(node)
        if i is None or self.first_lines is None:
            if node is self._module or self._parents.get(id(node)) is not None:
                self._make_all()
            return
        if not self._done[i] and not self._make_statement(i):
            self._make_all()

    def _make_statement(self, i: int) -> bool:
        assert self.first_lines is not None
        stmt = self._module.body[i]
        line = self.first_lines[i]
        holder = SimpleNamespace(_computed={})
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent, default_newline=self._module.default_newline,
            provider=holder, line=line, column=0)
        try:
            stmt._codegen(state)
        except Exception:  # noqa: BLE001 - libcst internals differ: generate the whole module
            return False
        code = "".join(state.tokens)
        start = self._offset_of_line(line)
        found = self._text[start:start + len(code)]
        if found != code:
            last = i == len(self._module.body) - 1
            # a file without a final newline: libcst drops the last one only at the module's end
            if not (last and not self._module.has_trailing_newline and not self._module.footer
                    and code.endswith(state.default_newline)
                    and found == code[:-len(state.default_newline)] and start + len(found) == len(self._text)):
                return False
        self._ranges.update(holder._computed)
        self._extents[i] = (start, start + len(found))
        self._done[i] = True
        self.statements_made += 1
        return True

    def _make_all(self) -> None:
        from libcst.metadata import MetadataWrapper, PositionProvider

        wrapper = MetadataWrapper(self._module, unsafe_skip_copy=True)
        self._ranges = dict(wrapper.resolve(PositionProvider))
        self._all = True
        self.whole_made += 1
