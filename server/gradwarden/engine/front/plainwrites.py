"""Which augmented and index assignments cannot write a tensor.

The trigger pre-pass (engine/front/triggers.py) marks every ``+=`` and ``x[i] = ...`` line as a
possible in-place write, by text. Model-building code is full of them on plain Python values:
``blocks += [Block(...)]``, ``kwargs['act'] = 'gelu'``, ``stage_idx += 1``. Such a line makes
its function "interesting", and every caller of it, so each is analysed on its own; at module
level it makes a library module run as a script, imports followed (a fifth of the statements
the engine ran over timm came from lines like these alone).

A write is plain when its target is a name of the scope (a function, or the module's own
code) whose every binding there is one of:

- a list, dict or set display or comprehension (``xs = []``, ``d = {k: v for ...}``; at module
  level also ``dict(...)``, ``list(...)``, ``set(...)`` unless the module binds those names),
  and the writes are ``xs += ...``, ``xs |= ...`` or ``d[k] = v`` (on the name itself, not on
  an element: ``xs[i] += t`` may add into a tensor held in the list);
- a number literal, and the writes are ``n += 1`` (``+``, ``-``, ``*`` of a number literal:
  ``total = 0; total += loss`` makes a tensor, never plain);
- a string (a literal or an f-string): ``text += anything`` stays a string or raises.

Whatever the target, ``x += [...]`` (a list, tuple, dict or set display, a string) and
``x['key'] = ...``, ``x['key'] += ...`` (a string index) are plain too: on a tensor they raise TypeError or
IndexError, they never write one.

Any other binding of the name in the scope (a parameter, ``for``/``with``/``except`` targets,
unpacking, ``del``, ``import``, a nested ``def``/``class``) makes its writes count as before.
In a scope whose rows hold the words ``global``, ``nonlocal``, ``match`` or a ``:=`` (names bound
from elsewhere or inside expressions: not worth following) only the writes plain by their
syntax alone (below) are; the module's own code has none when a ``global`` statement occurs
anywhere. Only statements are walked,
never expressions: that is what keeps this cheaper than the analysis it saves.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections import Counter
from typing import Callable, Dict, Iterator, List, Set, Tuple

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = _FUNCS + (ast.ClassDef,)
_CONTAINER_VALUES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_CONTAINER_CALLS = ("dict", "list", "set")
_CONTAINER_OPS = (ast.Add, ast.BitOr)  # list += iterable, set |= set (dict |= mapping)
_BODIES = ("body", "orelse", "finalbody")

_PLAIN_CONTAINER = "container"
_PLAIN_NUMBER = "number"
_PLAIN_TEXT = "text"
_OTHER = "other"

# what makes a scope's names bound from elsewhere or inside expressions (whole words are
# checked on each match: a leading \b would make the scan several times slower)
UNFOLLOWED = re.compile(r":=|global|nonlocal|match")
# The same matches, found by one scan per word: each starts with a literal, which the regex
# engine looks for at C speed, where the alternation is tried at every character (four
# scans cost half of one). No alternative can start inside another's match (no word holds
# another, nor ":="), so the matches of the four are exactly the alternation's, in another
# order (tests/test_trigger_scans.py).
_UNFOLLOWED_WORDS = tuple(re.compile(re.escape(w)) for w in UNFOLLOWED.pattern.split("|"))


def unfollowed_matches(text: str) -> Iterator["re.Match[str]"]:
    """The matches of ``UNFOLLOWED`` in ``text``, word by word (not in text order)."""
    for word in _UNFOLLOWED_WORDS:
        yield from word.finditer(text)


def unfollowed_at(text: str, m: "re.Match[str]") -> bool:
    return m.group() == ":=" or _whole_word(text, m.start(), m.end())


def _whole_word(text: str, i: int, j: int) -> bool:
    """Is ``text[i:j]`` a whole word (no letter, digit or underscore on either side)?"""
    return not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
                or j < len(text) and (text[j].isalnum() or text[j] == "_"))


def any_between(rows: List[int], first: int, last: int) -> bool:
    """Does the sorted ``rows`` hold a row in first..last?"""
    i = bisect_left(rows, first)
    return i < len(rows) and rows[i] <= last


_GLOBAL = re.compile(r"(?:^|;)[ \t]*global[ \t]+\w", re.MULTILINE)  # a statement (not "global pooling" in a docstring)


def plain_write_rows(body: List[ast.stmt], wanted: Callable[[int, int], bool],
                     unfollowed_rows: List[int]) -> Tuple[Counter, List[Tuple[int, int]]]:
    """Rows holding plain writes, counted, in every function defined in ``body`` (at any
    depth) whose rows a..b satisfy ``wanted(a, b)`` (the trigger pre-pass asks only about
    functions holding a match); and the rows (first, last) of those functions.
    ``unfollowed_rows``: the sorted rows where ``UNFOLLOWED`` matches."""
    rows: Counter = Counter()
    spans: List[Tuple[int, int]] = []
    for fn in _functions(body, wanted):
        first, last = fn.lineno, fn.end_lineno or fn.lineno
        spans.append((first, last))
        args = fn.args  # type: ignore[attr-defined]
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
                  if a is not None]
        kinds, writes = _scope_facts(_statements(fn.body), params, container_calls=False)
        if any_between(unfollowed_rows, first, last):
            kinds = {}  # names bound from elsewhere: only the writes plain by their syntax
        _count_writes(kinds, writes, rows)
    return rows, spans


def plain_module_rows(body: List[ast.stmt], text: str) -> Counter:
    """Rows holding plain writes in the module's own code (outside functions and classes)."""
    rows: Counter = Counter()
    if _GLOBAL.search(text) or ":=" in text or _match_statement(text):
        return rows
    # The module's code runs once, top to bottom: a write in one top-level statement sees the
    # bindings of the statements before it and its own, never those after it (``cfgs = {...}``,
    # then ``cfgs[k] = v`` in a loop, then ``cfgs = generate(cfgs)``: the write is plain).
    rebound = {n for n, k in _scope_facts(_statements(body), [], container_calls=False)[0].items()
               if n in _CONTAINER_CALLS}  # `dict` ... bound anywhere in the module: its calls make anything
    before: Dict[str, str] = {}
    for stmt in body:
        own, writes = _scope_facts(_statements([stmt]), [], container_calls=True, rebound=rebound)
        seen = dict(before)
        for name, kind in own.items():
            seen[name] = kind if before.get(name, kind) == kind else _OTHER
        _count_writes(seen, writes, rows)
        for w in writes:  # a counter that took a non-literal is not one any more
            if isinstance(w, ast.AugAssign) and isinstance(w.target, ast.Name):
                seen.setdefault(w.target.id, _OTHER)
                before[w.target.id] = seen[w.target.id]
        for name, kind in own.items():
            # an unconditional assignment replaces what the name held; anything else may not
            before[name] = kind if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else seen[name]
    return rows


_MATCH_WORD = re.compile(r"match")


def _match_statement(text: str) -> bool:
    """Does a line start with the word ``match`` (maybe a match statement)? Each occurrence of
    the word looks back to its own line's start only: ``^\\s*match`` would scan every run of
    blank lines again from each of its rows (a text analysed in parts is mostly blank rows:
    quadratic, seconds per part)."""
    for m in _MATCH_WORD.finditer(text):
        i = m.start()
        line_start = text.rfind("\n", 0, i) + 1
        if not text[line_start:i].strip(" \t") and _whole_word(text, i, m.end()):
            return True
    return False


def _functions(body: List[ast.AST], wanted: Callable[[int, int], bool]) -> Iterator[ast.AST]:
    for node in body:
        if not isinstance(node, ast.stmt) or not wanted(node.lineno, node.end_lineno or node.lineno):
            continue
        if isinstance(node, _FUNCS):
            yield node
        for sub in _sub_bodies(node):
            yield from _functions(sub, wanted)


def _sub_bodies(node: ast.AST) -> Iterator[List[ast.stmt]]:
    for field in _BODIES:
        sub = getattr(node, field, None)
        if sub:
            yield sub
    for h in getattr(node, "handlers", None) or ():
        yield h.body
    for c in getattr(node, "cases", None) or ():
        yield c.body


def _statements(body: List[ast.stmt]) -> Iterator[ast.AST]:
    """The statements of one scope, a compound one before those inside it; nested functions
    and classes are yielded (they bind their name) but not entered; except handlers are
    yielded too (they bind theirs)."""
    todo: List[ast.AST] = list(reversed(body))
    while todo:
        s = todo.pop()
        yield s
        if isinstance(s, _SCOPES) or isinstance(s, ast.ExceptHandler):
            if isinstance(s, ast.ExceptHandler):
                todo.extend(reversed(s.body))
            continue
        subs: List[ast.AST] = []
        for field in _BODIES:
            subs.extend(getattr(s, field, None) or ())
        subs.extend(getattr(s, "handlers", None) or ())
        todo.extend(reversed(subs))


def _number(v: ast.expr) -> bool:
    if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
        v = v.operand
    return isinstance(v, ast.Constant) and type(v.value) in (int, float)


def _names_in(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from _names_in(e)
    elif isinstance(target, ast.Starred):
        yield from _names_in(target.value)


def _scope_facts(statements: Iterator[ast.AST], params: List[str], container_calls: bool,
                 rebound: Set[str] = frozenset()) -> Tuple[Dict[str, str], List[ast.AST]]:  # type: ignore[assignment]
    """(what each name of the scope is bound to: a plain container, a number or other; the
    writes to check: AugAssign nodes and subscripted Assign targets)."""
    kinds: Dict[str, str] = {}
    calls: Dict[str, List[str]] = {}  # builtin container call -> names bound by it

    def bind(name: str, kind: str) -> None:
        old = kinds.get(name, kind)
        kinds[name] = kind if old == kind else _OTHER

    def value_kind(v: ast.expr, names: List[str]) -> str:
        if isinstance(v, _CONTAINER_VALUES):
            return _PLAIN_CONTAINER
        if (container_calls and isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                and v.func.id in _CONTAINER_CALLS):
            calls.setdefault(v.func.id, []).extend(names)
            return _PLAIN_CONTAINER
        if _text(v):
            return _PLAIN_TEXT
        return _PLAIN_NUMBER if _number(v) else _OTHER

    for name in params:
        bind(name, _OTHER)
    writes: List[ast.AST] = []
    for s in statements:
        if isinstance(s, ast.Assign):
            names = [t.id for t in s.targets if isinstance(t, ast.Name)]
            kind = value_kind(s.value, names)
            for t in s.targets:
                if isinstance(t, ast.Name):
                    bind(t.id, kind)
                elif isinstance(t, ast.Subscript):
                    writes.append(t)
                else:
                    for name in _names_in(t):  # unpacking
                        bind(name, _OTHER)
        elif isinstance(s, ast.AugAssign):
            writes.append(s)
        elif isinstance(s, ast.AnnAssign):
            if isinstance(s.target, ast.Name) and s.value is not None:
                bind(s.target.id, value_kind(s.value, [s.target.id]))
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            for name in _names_in(s.target):
                bind(name, _OTHER)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None:
                    for name in _names_in(item.optional_vars):
                        bind(name, _OTHER)
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                for name in _names_in(t):
                    bind(name, _OTHER)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for alias in s.names:
                bind((alias.asname or alias.name).split(".")[0], _OTHER)
        elif isinstance(s, ast.ExceptHandler):
            if s.name:
                bind(s.name, _OTHER)
        elif isinstance(s, _SCOPES):
            bind(s.name, _OTHER)
    for builtin, names in calls.items():
        if builtin in kinds or builtin in rebound:  # the scope rebinds `dict` ...: its calls make anything
            for name in names:
                kinds[name] = _OTHER
    return kinds, writes


def _count_writes(kinds: Dict[str, str], writes: List[ast.AST], rows: Counter) -> None:
    # a literal counter stays a number only while every write adds, subtracts or multiplies
    # a number literal
    for w in writes:
        if isinstance(w, ast.AugAssign) and isinstance(w.target, ast.Name) and kinds.get(w.target.id) == _PLAIN_NUMBER:
            if not (_number(w.value) and isinstance(w.op, (ast.Add, ast.Sub, ast.Mult))):
                kinds[w.target.id] = _OTHER
    for w in writes:
        if isinstance(w, ast.AugAssign):
            t = w.target
            if _never_a_tensor_operand(w.value) or isinstance(t, ast.Subscript) and _text(t.slice):
                rows[t.end_lineno or t.lineno] += 1  # a tensor there would raise TypeError
            elif isinstance(t, ast.Name):
                kind = kinds.get(t.id)
                if kind in (_PLAIN_NUMBER, _PLAIN_TEXT) or (kind == _PLAIN_CONTAINER and isinstance(w.op, _CONTAINER_OPS)):
                    rows[t.end_lineno or t.lineno] += 1
        elif isinstance(w, ast.Subscript) and (_text(w.slice) or isinstance(w.value, ast.Name)
                                               and kinds.get(w.value.id) == _PLAIN_CONTAINER):
            rows[w.end_lineno or w.lineno] += 1  # cfg['act'] = ...: a tensor there would raise


def _text(v: ast.expr) -> bool:
    return isinstance(v, ast.JoinedStr) or isinstance(v, ast.Constant) and isinstance(v.value, (str, bytes))


def _never_a_tensor_operand(v: ast.expr) -> bool:
    """``t += v`` with a tensor ``t`` raises TypeError for these (a list, tuple, dict or set, a
    string): whatever the target is, the write is not a tensor's."""
    return isinstance(v, _CONTAINER_VALUES + (ast.Tuple,)) or _text(v)
