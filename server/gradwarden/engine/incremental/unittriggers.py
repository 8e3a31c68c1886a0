"""``Triggers`` (engine/front/triggers.py) for the language server's incremental analysis: the same
facts, with what each top-level statement contributes kept by its text, so that an edit scans
only the statements it changed.

- The rows holding a trigger or a control-flow exit: found per statement (its text alone gives
  the same matches as the whole text: statements start at column 0, and what lies between them
  is blank lines and comments, which the facts are never asked about). Only for texts whose
  lines all end in ``\\n`` (the whole-text scan counts one character per line ending).
- The definitions of each statement (kept by the statement's node, which ``reparse`` reuses
  while its text does not change), and the calls and ``.apply`` uses inside each function (kept
  by the statement's text and the function's place in it).

``interesting`` is then computed exactly as ``Triggers`` does, from these parts.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Set, Tuple

from gradwarden.engine.front.source import SourceText
from gradwarden.engine.front.triggers import _FLOWS, FuncDef, Triggers, _check_word

# what str.splitlines (SourceText.lines) splits at besides "\n"
_OTHER_LINE_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


class StatementTriggers(Triggers):
    def __init__(self, tree: ast.Module, src: SourceText, session: Any) -> None:
        self._session = session
        self._where: Dict[int, Tuple[int, int]] = {}  # id(function) -> (text id, place in its statement)
        super().__init__(tree, src)

    def _row_sums(self) -> Tuple[List[int], List[int]]:
        session = self._session
        if _OTHER_LINE_BREAKS.search(self.src.text):
            return super()._row_sums()
        known = session.cache.trigger_rows
        trig = bytearray(len(self.src.lines) + 2)
        flow = bytearray(len(self.src.lines) + 2)
        loose: Dict[int, int] = {}
        for st, tid, node in zip(session.statements, session.ids, self._tree.body):
            rows = known.get(tid)
            if rows is None:
                starts = [0]
                for line in st.text.splitlines():
                    starts.append(starts[-1] + len(line) + 1)
                flags, outside = self.trigger_flags(st.text, starts, [node], st.start - 1)
                rows = known[tid] = (tuple(i for i, f in enumerate(flags) if f),
                                     tuple(i for i, f in enumerate(self._flags(_FLOWS, st.text, starts, _check_word)) if f),
                                     tuple(outside.items()))
            base = st.start - 1
            for i in rows[0]:
                trig[base + i] = 1
            for i in rows[1]:
                flow[base + i] = 1
            for i, n in rows[2]:
                loose[base + i] = n
        self._module_writes(trig, loose)
        return self._sums(trig), self._sums(flow)

    def _statement_defs(self, tree: ast.Module) -> List[List[Tuple[ast.AST, Any]]]:
        session = self._session
        out = []
        for j in range(len(tree.body)):
            pairs = session.def_pairs(j)
            tid = session.ids[j]
            for place, (node, _) in enumerate(pairs):
                self._where[id(node)] = (tid, place)
            out.append(pairs)
        return out

    def _applied_in(self, f: FuncDef) -> List[str]:
        return self._kept(f, "apply", super()._applied_in)

    def _calls_in(self, f: FuncDef) -> Set[Tuple[str, str]]:
        return self._kept(f, "calls", super()._calls_in)

    def _kept(self, f: FuncDef, what: str, compute) -> Any:
        where = self._where.get(id(f))
        if where is None:
            return compute(f)
        kept = self._session.cache.function_facts
        key = (where, what)
        found = kept.get(key)
        if found is None:
            found = kept[key] = compute(f)
        return found
