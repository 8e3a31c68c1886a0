"""A cheap pre-pass: which functions and classes could hold an autograd hazard.

Every hazard needs an in-place write (``+=``, ``x[i] = ...``, ``.add_()``, ``inplace=True``,
``out=``, ``.data``, ``nn.init``), a backward, an optimizer step, or a custom autograd
Function. Code that has none of these, and calls no local code that has, cannot be the
place a hazard is caused, so the interpreter does not analyse it on its own (it still runs
it when a caller that matters calls it); inside a function, a loop or an ``if`` without
them is not unrolled or forked.

The test is textual (a regular expression over the statement's source lines), which runs at
C speed: walking the AST of every statement in Python costs more than the analysis it saves
on large model libraries. A trigger inside a comment or string only costs a little time.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_right
from itertools import accumulate, repeat
from operator import add
from typing import Any, Dict, List, Set, Tuple, Union

from gradwarden.engine.front.source import SourceText

FuncDef = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class _OutKeyword:
    """``[(,]\\s*out\\s*=(?!=)`` (an ``out=`` keyword argument), with the matches that pattern's
    ``finditer`` yields, found faster: that pattern starts with ``(`` or ``,``, which are on
    most lines, and the regex engine tries it at each of them (a third of the pre-pass's
    scans over a library). ``out`` is rarer: each ``out\\s*=(?!=)`` is looked up, then the
    pattern itself is matched at the ``(`` or ``,`` right before the whitespace before it (the
    only place a match ending there can start). The same Match objects, in the same order
    (tests/test_trigger_scans.py compares them with the pattern's own on random texts)."""

    pattern = r"[(,]\s*out\s*=(?!=)"

    def __init__(self) -> None:
        self._full = re.compile(self.pattern)
        self._tail = re.compile(r"out\s*=(?!=)")

    def finditer(self, text: str):
        full = self._full
        for m in self._tail.finditer(text):
            j = m.start()
            while j > 0 and text[j - 1].isspace():  # str.isspace: what \s matches in a str pattern
                j -= 1
            if j > 0:
                got = full.match(text, j - 1)
                if got is not None:
                    yield got


# Each pattern starts with a literal or a small character class, which Python's regex engine
# scans for quickly; one big alternation is several times slower.
_TRIGGERS = tuple(re.compile(p) if isinstance(p, str) else p for p in (
    r"[-+*/%&|^@]=",  # augmented assignment (and ==, <=, >=, != : filtered below)
    r"\]\s*=(?!=)",  # index / slice assignment
    r"_\s*\(",  # x.add_( : in-place method call (checked below)
    r"\.data\b", r"inplace", _OutKeyword(), r"autograd", r"\.backward\b", r"\.step\s*\(", r"retain_graph",
    r"save_for_backward", r"saved_tensors", r"mark_dirty", r"grad_tensors", r"fused\s*=", r"\.grad\b",
    r"requires_grad\s*=",
))
# The first two (augmented and index assignment) are also what model-building code does to
# plain lists, dicts and counters: a match of theirs inside a function counts only when
# engine/front/plainwrites.py cannot show that it writes a plain local.
_WEAK_TRIGGERS, _STRONG_TRIGGERS = _TRIGGERS[:2], _TRIGGERS[2:]
_FLOWS = tuple(re.compile(p) for p in (r"return\b", r"break\b", r"continue\b", r"raise\b", r"yield\b"))

# Calls are found in the text read backwards: there each pattern starts with the literal "(",
# which the regex engine scans for at C speed, where a pattern that starts with a name (and a
# look-behind) is tried at every character: a tenth of the time over timm. Each reversed
# pattern finds exactly the matches of its forward twin (tests/test_triggers_calls.py):
# - NAME( , NAME not after a word character or ".", nor right after "def " or "class "
#   (a def or class header is not a call): (?<![\w.])(?<!def )(?<!class )([A-Za-z_]\w*)\s*\(
_REV_CALL = re.compile(r"\(\s*+(\w++)(?![\w.])(?! fed)(?! ssalc)")
# - Cls.name( : a method of a local class called through it (Base.__init__(self, ...)):
#   (?<![\w.])([A-Z]\w*)\.([A-Za-z_]\w*)\s*\(
_REV_QUAL_CALL = re.compile(r"\(\s*+(\w++)\.(\w++)(?![\w.])")
# - name.apply( : a custom autograd.Function applied (any name before it, dotted or not)
_REV_APPLY = re.compile(r"\(\s*+ylppa\.(\w++)")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# super().name( / super(Cls, self).name( : the same-named method of a local base class
_SUPER_CALL = re.compile(r"super\([^()]*\)\.([A-Za-z_]\w*+)\s*+\(")
# a literal start is scanned for at C speed (a leading \b is not): _calls_in drops the matches
# inside a longer name ("myself.f(") or an attribute ("x.self.f(")
_SELF_CALL = re.compile(r"self\.([A-Za-z_]\w*+)\s*+\(")


def called_names(text: str) -> List[str]:
    """The names called as ``NAME(`` in ``text`` (not ``x.NAME(``, nor a def or class header),
    last first."""
    return [n[::-1] for n in _REV_CALL.findall(text[::-1]) if n[-1] in _NAME_START]


def qualified_calls(text: str) -> List[Tuple[str, str]]:
    """``(Cls, name)`` of each ``Cls.name(`` in ``text`` (a capitalised name not after a dot),
    last first."""
    return [(c[::-1], m[::-1]) for m, c in _REV_QUAL_CALL.findall(text[::-1])
            if c[-1] in _UPPER and m[-1] in _NAME_START]


def applied_names(text: str) -> List[str]:
    """The ``NAME`` of each ``NAME.apply(`` in ``text``, last first."""
    if ".apply" not in text:
        return []
    return [n[::-1] for n in _REV_APPLY.findall(text[::-1]) if n[-1] in _NAME_START]


class Triggers:
    """Trigger facts for one module, computed from its source lines."""

    def __init__(self, tree: ast.Module, src: SourceText) -> None:
        self.src = src
        self._tree = tree
        self._trig, self._flow = self._row_sums()
        self._func_ids_by_name: Dict[str, List[int]] = {}
        # each top-level statement's definitions, walked once (the interpreter reads them too)
        self.statement_defs = self._statement_defs(tree)
        self.interesting: Set[int] = self._interesting(tree)

    def _row_sums(self) -> Tuple[List[int], List[int]]:
        """One pass over the whole text: which lines hold a trigger / a control-flow exit;
        prefix sums then answer "any in rows a..b" in O(1)."""
        # (itertools: C speed; a file analysed in parts has many blank rows, engine/incremental/parts.py)
        starts = list(accumulate(map(add, map(len, self.src.lines), repeat(1)), initial=0))
        trig, loose = self.trigger_flags(self.src.text, starts, self._tree.body, 0)
        self._module_writes(trig, loose)
        return self._sums(trig), self._prefix(_FLOWS, self.src.text, starts, _check_word)

    @classmethod
    def trigger_flags(cls, text: str, starts: List[int], body: List[ast.stmt],
                      row_offset: int) -> Tuple[bytearray, Dict[int, int]]:
        """Rows of ``text`` (1-based, ``starts``: where each begins) holding a trigger; ``body``:
        the statements of that text, whose rows are ``row_offset`` more than the text's.
        Augmented and index assignments outside functions are left out, returned as
        {row: matches} for ``_module_writes`` (they depend on the whole module's names)."""
        flags = cls._flags(_STRONG_TRIGGERS, text, starts, _check_trigger)
        weak = cls._counts(_WEAK_TRIGGERS, text, starts, _check_trigger)
        loose: Dict[int, int] = {}
        if weak:
            from gradwarden.engine.front.plainwrites import (
                any_between, plain_write_rows, unfollowed_at, unfollowed_matches,
            )

            weak_rows = sorted(weak)
            unfollowed = [row + row_offset for row in sorted({bisect_right(starts, m.start())
                                                              for m in unfollowed_matches(text)
                                                              if unfollowed_at(text, m)})]
            plain, functions = plain_write_rows(
                body, lambda a, b: any_between(weak_rows, a - row_offset, b - row_offset), unfollowed)
            inside = _covering(functions)
            for row, n in weak.items():
                at = row + row_offset
                if n <= plain.get(at, 0):
                    continue
                if inside(at):
                    flags[row] = 1
                else:
                    loose[row] = n
        return flags, loose

    def _module_writes(self, flags: bytearray, loose: Dict[int, int]) -> None:
        """Flag the rows of ``loose`` (augmented and index assignments outside functions, by
        row of the module) except plain writes of the module's own code."""
        if not loose:
            return
        from gradwarden.engine.front.plainwrites import plain_module_rows

        plain = plain_module_rows(self._tree.body, self.src.text)
        for row, n in loose.items():
            if n > plain.get(row, 0):
                flags[row] = 1

    @staticmethod
    def _flags(patterns, text: str, starts: List[int], check) -> bytearray:
        flags = bytearray(len(starts) + 1)
        for pattern in patterns:
            for m in pattern.finditer(text):
                if check(text, m):
                    flags[bisect_right(starts, m.start())] = 1
        return flags

    @staticmethod
    def _counts(patterns, text: str, starts: List[int], check) -> Dict[int, int]:
        counts: Dict[int, int] = {}
        for pattern in patterns:
            for m in pattern.finditer(text):
                if check(text, m):
                    row = bisect_right(starts, m.start())
                    counts[row] = counts.get(row, 0) + 1
        return counts

    @staticmethod
    def _sums(flags: bytearray) -> List[int]:
        return list(accumulate(flags))

    @classmethod
    def _prefix(cls, patterns, text: str, starts: List[int], check) -> List[int]:
        return cls._sums(cls._flags(patterns, text, starts, check))

    @staticmethod
    def _rows(node: ast.AST) -> Tuple[int, int]:
        row = getattr(node, "lineno", 1)
        return row, getattr(node, "end_lineno", None) or row

    def text(self, node: ast.AST) -> str:
        row, end = self._rows(node)
        return "\n".join(self.src.lines[row - 1:end])

    def _any(self, prefix: List[int], node: ast.AST) -> bool:
        row, end = self._rows(node)
        if row < 1 or row > len(prefix) - 1:
            # not a node of this file (never expected): say "maybe", so that it is analysed in
            # full rather than the whole file lost to an exception
            return row >= 1
        end = min(end, len(prefix) - 1)
        return prefix[end] - prefix[row - 1] > 0

    def has_trigger(self, node: ast.AST) -> bool:
        return self._any(self._trig, node)

    def only_inplace_config(self, node: ast.AST) -> bool:
        """True when the node's only triggers are `inplace` keywords (module construction): each
        of its trigger rows holds one and no other trigger (plain writes are not triggers)."""
        row, end = self._rows(node)
        prefix = self._trig
        if row < 1 or end > len(prefix) - 1:
            return False
        for r in range(row, end + 1):
            if prefix[r] == prefix[r - 1]:
                continue
            line = self.src.lines[r - 1]
            for p in _TRIGGERS:
                found = any(_check_trigger(line, m) for m in p.finditer(line))
                if found != (p.pattern == "inplace"):
                    return False
        return True

    def script_mode(self, tree: ast.Module) -> bool:
        """Does module-level code (outside defs) do anything worth running in full?"""
        for stmt in tree.body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring: running it does nothing, whatever code its text shows
            if self.has_trigger(stmt):
                return True
            text = self.text(stmt)
            for name in called_names(text):
                for fid in self._func_ids_by_name.get(name, ()):
                    if fid in self.interesting:
                        return True
        return False

    def triggered(self, node: ast.AST) -> bool:
        """A trigger, or control flow that leaves the statement (return/break/...)."""
        return self._any(self._trig, node) or self._any(self._flow, node)

    # What ``_interesting`` reads of each definition (the language server keeps them per
    # statement text: engine/incremental/unittriggers.py)
    def _statement_defs(self, tree: ast.Module) -> List[List[Tuple[ast.AST, Any]]]:
        """The definitions in each top-level statement (``_defs`` of it)."""
        return [_defs([stmt], None) for stmt in tree.body]

    def _applied_in(self, f: FuncDef) -> List[str]:
        return applied_names(self.text(f))

    def _calls_in(self, f: FuncDef) -> Set[Tuple[str, str]]:
        t = self.text(f)
        found = {("func", n) for n in called_names(t)}
        found.update(("self", m.group(1)) for m in _SELF_CALL.finditer(t)
                     if m.start() == 0 or not (t[m.start() - 1].isalnum() or t[m.start() - 1] in "_."))
        if "super" in t:
            found.update(("super", n) for n in _SUPER_CALL.findall(t))
        found.update(("qual", f"{c}.{n}") for c, n in qualified_calls(t))
        return found

    def _interesting(self, tree: ast.Module) -> Set[int]:
        funcs: Dict[str, List[FuncDef]] = {}
        owner: Dict[int, Dict[str, List[FuncDef]]] = {}
        classes: List[Tuple[ast.ClassDef, List[FuncDef], bool]] = []
        all_funcs: List[FuncDef] = []
        class_named: Dict[str, List[Tuple[ast.ClassDef, Dict[str, List[FuncDef]]]]] = {}
        class_of: Dict[int, ast.ClassDef] = {}  # id(method) -> its class
        for node, cls_methods in (pair for pairs in self.statement_defs for pair in pairs):
            if isinstance(node, ast.ClassDef):
                methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
                by_name: Dict[str, List[FuncDef]] = {}
                for m in methods:
                    by_name.setdefault(m.name, []).append(m)
                    owner[id(m)] = by_name
                    class_of[id(m)] = node
                is_fn = any(isinstance(b, ast.Attribute) and b.attr == "Function" or
                            isinstance(b, ast.Name) and b.id == "Function" for b in node.bases)
                classes.append((node, methods, is_fn))
                class_named.setdefault(node.name, []).append((node, by_name))
            else:
                funcs.setdefault(node.name, []).append(node)
                all_funcs.append(node)
                self._func_ids_by_name.setdefault(node.name, []).append(id(node))
        interesting: Set[int] = {id(f) for f in all_funcs if self.has_trigger(f)}
        fn_classes = {cls.name for cls, _, is_fn in classes if is_fn}
        if fn_classes:  # code that applies a local autograd.Function
            for f in all_funcs:
                if id(f) not in interesting and any(n in fn_classes for n in self._applied_in(f)):
                    interesting.add(id(f))
        calls: Dict[int, Set[Tuple[str, str]]] = {}
        for f in all_funcs:
            if id(f) not in interesting:
                calls[id(f)] = self._calls_in(f)
        # Propagate through calls we can resolve by name: a function is interesting when a
        # function it calls is. A worklist over the call edges reversed by name (the same
        # fixpoint as re-scanning every function until nothing changes). Edges are kept per
        # name, not per target: in a large file every `def forward(` names all the file's
        # `forward` methods, and an edge per pair would be quadratic in time and memory.
        by_name: Dict[str, List[int]] = {}  # name -> functions calling name(...)
        by_self_name: Dict[Tuple[int, str], List[int]] = {}  # (class's methods, name) -> callers of self.name(...)
        by_id: Dict[int, List[int]] = {}  # a method -> callers that reach it through its class

        def base_methods(method: FuncDef, name: str) -> List[FuncDef]:
            cls = class_of.get(id(method))
            if cls is None:
                return []
            found: List[FuncDef] = []
            for b in cls.bases:
                if isinstance(b, ast.Name):
                    found += _methods_of(class_named, b.id, name, {cls.name})
            return found

        for f in all_funcs:
            if id(f) in interesting:
                continue
            me = id(f)
            for kind, name in calls[me]:
                if kind == "func":
                    by_name.setdefault(name, []).append(me)
                    if name in class_named:
                        # a local class built here: its __init__ runs, and the object made
                        # can have any method called on it (``Net()(x)``, ``m = Net(); m(x)``)
                        for cls_methods in _all_methods(class_named, name, set()):
                            by_id.setdefault(id(cls_methods), []).append(me)
                elif kind == "self":
                    if me in owner:
                        by_self_name.setdefault((id(owner[me]), name), []).append(me)
                elif kind == "super":
                    for m in base_methods(f, name):
                        by_id.setdefault(id(m), []).append(me)
                elif kind == "qual":
                    cls_name, _, meth = name.partition(".")
                    for m in _methods_of(class_named, cls_name, meth, set()):
                        by_id.setdefault(id(m), []).append(me)
        node_of = {id(f): f for f in all_funcs}
        todo = list(interesting)
        while todo:
            fn = node_of[todo.pop()]
            waiting = by_name.pop(fn.name, [])  # once a name's callers are in, they stay in
            waiting += by_id.pop(id(fn), [])
            if id(fn) in owner:
                waiting += by_self_name.pop((id(owner[id(fn)]), fn.name), [])
            for caller in waiting:
                if caller not in interesting:
                    interesting.add(caller)
                    todo.append(caller)
        for cls, methods, is_fn in classes:
            if is_fn:  # an autograd.Function: forward and backward go together
                interesting.add(id(cls))
                interesting.update(id(m) for m in methods)
            elif any(id(m) in interesting for m in methods):
                interesting.add(id(cls))
                self._func_ids_by_name.setdefault(cls.name, []).append(id(cls))
        return interesting



def _covering(ranges):
    """``inside(row)``: is ``row`` in one of the (first, last) row ranges? (Bisection over their
    union: a scan of every range per row was quadratic on a file of many functions.)"""
    merged: List[List[int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    firsts = [a for a, _ in merged]

    def inside(row: int) -> bool:
        i = bisect_right(firsts, row) - 1
        return i >= 0 and row <= merged[i][1]

    return inside


_FUNCTION_CLASS = re.compile(r"\bFunction\b")


def nothing_to_analyse(text: str) -> bool:
    """No trigger anywhere in the module's text, no ``.apply(`` and no ``Function`` base: then no
    definition is interesting, module-level code runs as a library's (no calls evaluated), and
    the interpreter cannot emit anything. The caller skips it, and never imports it (a 2-line
    script checked from pre-commit pays for the interpreter's import otherwise). Stops at the
    first trigger, so on code that has one it costs a fraction of ``Triggers``' own pass."""
    for pattern in _TRIGGERS:
        for m in pattern.finditer(text):
            if _check_trigger(text, m):
                return False
    return not applied_names(text) and _FUNCTION_CLASS.search(text) is None

_SUBSCRIPT_TARGET = re.compile(r"[\w.]+\s*\[")


def _check_trigger(text: str, m: "re.Match[str]") -> bool:
    frag = m.group()
    i = m.start()
    if frag.startswith("]"):
        # x[i] = ... : the statement starts with a subscripted target (not an annotation
        # such as `betas: Tuple[float, float] = (0.9, 0.99)`)
        line_start = text.rfind("\n", 0, i) + 1
        return bool(_SUBSCRIPT_TARGET.match(text, line_start + len(text[line_start:i]) - len(text[line_start:i].lstrip())))
    if frag[-1] == "=" and frag[0] in "-+*/%&|^@" and len(frag) == 2:
        nxt = text[i + 2:i + 3]
        return nxt != "="
    if frag.startswith("_") and frag.rstrip().endswith("("):
        # identifier ending in a single "_" right after a dot: x.add_(  (not foo__( nor _( )
        j = i
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        name = text[j:i + 1]
        return j > 0 and text[j - 1] == "." and len(name) > 1 and not name.endswith("__")
    if frag.startswith(("inplace", "autograd", "retain_graph", "fused", "save_for", "saved_", "mark_",
                        "grad_tensors", "requires_grad")):
        end = m.end()
        if frag.isalnum() or frag.replace("_", "").isalnum():  # a bare word: whole words only
            if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                return False
        return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
    return True


def _check_word(text: str, m: "re.Match[str]") -> bool:
    i = m.start()
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


def _defs(body: List[ast.stmt], cls: object) -> List[Tuple[ast.AST, Any]]:
    """Function and class definitions, found by descending statement bodies only (in source
    order: a definition, then the ones inside it). A list built by plain recursion: nested
    generators cost a frame switch per level for every item."""
    out: List[Tuple[ast.AST, Any]] = []
    _collect_defs(body, cls, out)
    return out


# the statements with statement bodies besides definitions (the others have none to descend)
_COMPOUND = tuple(getattr(ast, n) for n in ("If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try",
                                            "TryStar", "Match") if hasattr(ast, n))


def _collect_defs(body: List[ast.stmt], cls: object, out: List[Tuple[ast.AST, Any]]) -> None:
    kinds = _STATEMENT_KIND
    for stmt in body:
        kind = kinds.get(stmt.__class__)
        if kind is None:
            continue  # a simple statement (most of them): no definition inside
        if kind == 1:
            out.append((stmt, cls))
            _collect_defs(stmt.body, None, out)  # type: ignore[attr-defined]
        elif kind == 2:
            out.append((stmt, None))
            _collect_defs(stmt.body, stmt, out)  # type: ignore[attr-defined]
        else:
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, field, None)
                if sub:
                    _collect_defs(sub, cls, out)
            for handler in getattr(stmt, "handlers", None) or ():
                _collect_defs(handler.body, cls, out)
            if kind == 4:
                for case in stmt.cases:  # type: ignore[attr-defined]
                    _collect_defs(case.body, cls, out)


# a statement's kind for _collect_defs: 1 a function, 2 a class, 3 a compound statement, 4 match
_STATEMENT_KIND: Dict[type, int] = {ast.FunctionDef: 1, ast.AsyncFunctionDef: 1, ast.ClassDef: 2,
                                    **{c: 3 for c in _COMPOUND}}
if hasattr(ast, "Match"):
    _STATEMENT_KIND[ast.Match] = 4


def _methods_of(class_named: Dict[str, List[Tuple[ast.ClassDef, Dict[str, List[FuncDef]]]]], cls_name: str,
                name: str, seen: Set[str]) -> List[FuncDef]:
    """Method ``name`` of the local classes called ``cls_name``, else of their local bases (as
    Python looks it up; all same-named classes together). A module-level function: a nested
    recursive one would be a reference cycle holding the tree until the collector runs."""
    if cls_name in seen:
        return []
    seen.add(cls_name)
    found: List[FuncDef] = []
    for cls, by in class_named.get(cls_name, ()):
        if name in by:
            found += by[name]
        else:
            for b in cls.bases:
                if isinstance(b, ast.Name):
                    found += _methods_of(class_named, b.id, name, seen)
    return found


def _all_methods(class_named: Dict[str, List[Tuple[ast.ClassDef, Dict[str, List[FuncDef]]]]], cls_name: str,
                 seen: Set[str]) -> List[FuncDef]:
    """Every method of the local classes called ``cls_name`` and of their local bases."""
    if cls_name in seen:
        return []
    seen.add(cls_name)
    found: List[FuncDef] = []
    for cls, by in class_named.get(cls_name, ()):
        for ms in by.values():
            found += ms
        for b in cls.bases:
            if isinstance(b, ast.Name):
                found += _all_methods(class_named, b.id, seen)
    return found
