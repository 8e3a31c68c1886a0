"""Op knowledge for the engine: what each torch op saves for backward, aliases and mutates.

Pure stdlib (never imports torch). Reads ``data/optable.json``, generated from the installed
torch by ``python -m gradwarden.opgen`` (see that package for how each fact is obtained).

Argument kinds (``ArgKind``): "T" tensor, "N" number (int/float), "B" bool, "S" sequence of
ints / shape, "L" list or tuple of tensors, "None" the literal None, "O" other/unknown (matches
anything).

Looking up an op::

    info = lookup_function("torch.mul", ["T", "N"])          # torch.mul(x, 2)
    info.saves("input", [True])                                 # -> False (nothing saved)
    info = lookup_method("add_", ["T"])                         # x.add_(y); kinds exclude self
    info = lookup_function("torch.nn.functional.relu", ["T"], ["inplace=True"])
    info = lookup_module("torch.nn.Linear")
    info.saves("input", [True])   # params default to requires_grad=True -> True

``kwargs`` are keyword names; a constant may be given as ``"name=value"`` (``"inplace=True"``,
``"training=False"``, ``"output_size=1"``) to pick the variant measured with that value; a
positional literal may likewise be given as ``"B=True"`` / ``"N=1"`` in ``kinds``. Without a value,
variants that differ by such a constant are merged (``saves`` -> None where they disagree).

Indexing: ``lookup_method("__getitem__", [K])`` (and ``__setitem__``, ``[K, value kind]``) with
K = "N" (int: view), "O" (slice / Ellipsis / None or a tuple of those: view), "T" (index tensor
or bool mask, or a tuple containing one: copy that saves the index), "S" (list of ints: copy).
An unknown argument kind ("O") matches anything, but prefers variants measured with an "O".
``OpInfo.slot_sources(n_positional, kwargs)`` tells which call argument feeds each slot.
"""
from __future__ import annotations

import itertools
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Collection, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

ArgKind = str

_DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "optable.json")
_LOCK = threading.Lock()
_TABLE: Optional[Dict[str, Any]] = None
_ATEN_INDEX: Optional[Dict[Tuple[str, str], List[str]]] = None

_MAX_UNKNOWN = 12  # give up (None) beyond 2**12 completions of unknown requires_grad


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    optional: bool = False
    kwonly: bool = False
    varargs: bool = False


def _parse_params(spec: str) -> Tuple[Param, ...]:
    out = []
    for part in spec.split(","):
        if not part:
            continue
        kwonly = part.startswith("*")
        if kwonly:
            part = part[1:]
        varargs = part.endswith("+")
        if varargs:
            part = part[:-1]
        optional = part.endswith("?")
        if optional:
            part = part[:-1]
        name, _, kind = part.partition(":")
        out.append(Param(name, kind, optional, kwonly, varargs))
    return tuple(out)


def _and3(a: Optional[bool], b: Optional[bool]) -> Optional[bool]:
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def _or3(vals: Sequence[Optional[bool]]) -> Optional[bool]:
    if any(v is True for v in vals):
        return True
    if all(v is False for v in vals):
        return False
    return None


def _combine(vals: Sequence[Optional[bool]]) -> Optional[bool]:
    s = set(vals)
    if s == {True}:
        return True
    if s == {False} or not s:
        return False
    return None


@dataclass(frozen=True)
class OpInfo:
    qualname: str
    slots: Tuple[str, ...]
    alias: Optional[str]
    mutates: Tuple[int, ...]
    differentiable: bool
    n_outputs: int
    nondiff_outputs: Tuple[int, ...]
    factory: bool
    measured: bool
    # extras (not part of the core API contract)
    params: Tuple[Param, ...] = ()
    n_inputs: Optional[int] = None      # modules: forward inputs come first, then params/buffers
    method: bool = False                # slot 0 is self (not in params)
    _rule: Any = field(default=None, repr=False, compare=False)
    # saves() answers, by (slot, requires-grad of the slots): a pure function of the two, asked
    # for every slot of every op the analysis runs
    _saves_memo: Dict[Any, Optional[bool]] = field(default_factory=dict, init=False, repr=False, compare=False)

    # -- saved-ness -------------------------------------------------------------------------
    def saves(self, slot: Union[int, str], rg: Sequence[Optional[bool]]) -> Optional[bool]:
        """Is ``slot`` (index into ``slots``, a slot name, or "out"/"out1"... for outputs) saved for
        backward when the slots' requires_grad are ``rg``? True / False / None (unknown)."""
        key: Any = None if slot.__class__ is bool else (slot, *rg)  # True == 1: a bool slot names none
        if key is not None:
            try:
                return self._saves_memo[key]
            except KeyError:
                pass
            except TypeError:  # an unhashable flag (never expected): no memo
                key = None
        target = self._target(slot)
        kept = False if target is None else self._rule.saves(self, target, self._norm_rg(rg))
        if key is not None:
            self._saves_memo[key] = kept
        return kept

    def _target(self, slot: Union[int, str]) -> Optional[Tuple[str, int]]:
        if isinstance(slot, int) and not isinstance(slot, bool):
            return ("in", slot) if 0 <= slot < len(self.slots) else None
        if isinstance(slot, str):
            if slot == "out":
                return ("out", 0)
            if slot.startswith("out") and slot[3:].isdigit():
                return ("out", int(slot[3:]))
            if slot in self.slots:
                return ("in", self.slots.index(slot))
        return None

    def _norm_rg(self, rg: Sequence[Optional[bool]]) -> List[Optional[bool]]:
        out: List[Optional[bool]] = []
        for i in range(len(self.slots)):
            if i < len(rg):
                v = rg[i]
                out.append(None if v is None else bool(v))
            elif self.n_inputs is not None and i >= self.n_inputs:
                out.append(True)  # module parameters require grad by default
            else:
                out.append(None)
        return out

    def slot_sources(self, n_positional: int, kwargs: Collection[str] = ()) -> Tuple[Union[int, str, None], ...]:
        """For each slot: the index of the positional argument feeding it (for methods: excluding
        self; self itself is "self"), the keyword name, or None when the call does not pass it.
        A varargs slot (``torch.broadcast_tensors(*tensors)``) reports its first position."""
        kw = {k.split("=", 1)[0] for k in kwargs}
        pos_of: Dict[str, Union[int, str]] = {}
        pi = 0
        for i in range(n_positional):
            if pi >= len(self.params) or self.params[pi].kwonly:
                break
            p = self.params[pi]
            pos_of.setdefault(p.name, i)
            if not p.varargs:
                pi += 1
        for k in kw:
            pos_of.setdefault(k, k)
        res: List[Union[int, str, None]] = []
        for j, name in enumerate(self.slots):
            if self.method and j == 0:
                res.append("self")
            elif self.n_inputs is not None:
                res.append(j if j < self.n_inputs and j < n_positional else (name if name in kw else None))
            else:
                res.append(pos_of.get(name))
        return tuple(res)


# ---------------------------------------------------------------------------------------------
# Rules


class _Measured:
    __slots__ = ("sv", "so", "pm", "ng")

    def __init__(self, rec: Dict[str, Any], n: int) -> None:
        def masks(v: Any) -> Any:
            if v == "*":
                return "*"
            return frozenset(v)

        sv = rec.get("sv") or []
        self.sv = tuple(masks(sv[i]) if i < len(sv) else frozenset() for i in range(n))
        self.so = tuple(masks(v) for v in rec.get("so") or [])
        self.ng = frozenset(rec.get("ng") or [])
        pm = rec.get("pm")
        self.pm = frozenset(pm) if pm is not None else None

    def saves(self, info: OpInfo, target: Tuple[str, int], rg: List[Optional[bool]]) -> Optional[bool]:
        kind, idx = target
        if kind == "in":
            sset = self.sv[idx] if idx < len(self.sv) else frozenset()
        else:
            sset = self.so[idx] if idx < len(self.so) else frozenset()
        if not sset:
            return False
        n = len(rg)
        fixed = 0
        unknown = []
        for i in range(n):
            if i in self.ng:
                continue
            v = rg[i]
            if v is None:
                unknown.append(i)
            elif v:
                fixed |= 1 << i
        if len(unknown) > _MAX_UNKNOWN:
            return None
        results = []
        for bits in itertools.product((0, 1), repeat=len(unknown)):
            m = fixed
            for b, i in zip(bits, unknown):
                if b:
                    m |= 1 << i
            if m == 0:
                results.append(False)
                continue
            if self.pm is not None and m not in self.pm:
                results.append(None)
                continue
            results.append(True if sset == "*" else (m in sset))
            if len(set(results)) > 1:
                return None
        return _combine(results)


class _Aten:
    __slots__ = ("g", "so", "dv", "c", "x")

    def __init__(self, rec: Dict[str, Any]) -> None:
        self.g = tuple(rec.get("g") or [])
        self.so = frozenset(rec.get("so") or [])
        self.dv = tuple(rec.get("dv") or [])
        self.c = bool(rec.get("c"))
        self.x = bool(rec.get("x")) or rec.get("d") == 0

    def saves(self, info: OpInfo, target: Tuple[str, int], rg: List[Optional[bool]]) -> Optional[bool]:
        kind, idx = target
        dv = self.dv if self.dv else tuple(range(len(rg)))
        node = _or3([rg[i] for i in dv if i < len(rg)])
        if node is False:
            return False
        if self.c:
            return None  # decomposes into other ops: unknown
        if self.x:
            return False
        if kind == "out":
            return node if idx in self.so else False
        g = self.g[idx] if idx < len(self.g) else None
        if g is None:
            return False
        if g == -1:
            return node
        if g == -2:
            return None
        return _and3(node, rg[g] if g < len(rg) else None)


class _Merged:
    __slots__ = ("parts",)

    def __init__(self, parts: List[Tuple[OpInfo, Tuple[Optional[int], ...]]]) -> None:
        # parts: (candidate, for each candidate slot the merged slot index)
        self.parts = parts

    def saves(self, info: OpInfo, target: Tuple[str, int], rg: List[Optional[bool]]) -> Optional[bool]:
        kind, idx = target
        vals = []
        for cand, mapping in self.parts:
            crg = [rg[m] if m is not None else None for m in mapping]
            if kind == "in":
                if idx not in mapping:
                    vals.append(False)
                    continue
                vals.append(cand._rule.saves(cand, ("in", mapping.index(idx)), crg))
            else:
                vals.append(cand._rule.saves(cand, target, crg))
        return _combine(vals)


# ---------------------------------------------------------------------------------------------
# Loading


def _table() -> Dict[str, Any]:
    global _TABLE
    if _TABLE is None:
        with _LOCK:
            if _TABLE is None:
                with open(_DATA_PATH, encoding="utf-8") as f:
                    _TABLE = json.load(f)
    return _TABLE


def table_info() -> Dict[str, Any]:
    """Format version and the torch version the table was generated with."""
    t = _table()
    return {"format": t.get("format"), "torch": t.get("torch")}


def _info_from_measured(qualname: str, rec: Dict[str, Any], method: bool, module: bool = False) -> OpInfo:
    slots = tuple(rec.get("s") or ())
    nd = tuple(rec.get("nd") or ())
    return OpInfo(
        qualname=qualname,
        slots=slots,
        alias=rec.get("al"),
        mutates=tuple(rec.get("mu") or ()),
        differentiable=rec.get("d", 1) != 0,
        n_outputs=rec.get("n", 1),
        nondiff_outputs=nd,
        factory=bool(rec.get("f")),
        measured=True,
        params=_parse_params(rec.get("p", "")) if not module else (),
        n_inputs=rec.get("ni") if module else None,
        method=method,
        _rule=_Measured(rec, len(slots)),
    )


def _info_from_aten(key: str, rec: Dict[str, Any], method: bool, python_names: bool = True) -> OpInfo:
    params = _parse_params(rec.get("p", ""))
    slots = tuple(rec.get("s") or ())
    if method and params and params[0].name == "self":
        params = params[1:]
    elif python_names and not method and params and params[0].name == "self" and params[0].kind == "T":
        # torch.<fn>(input, ...): Python names the aten "self" argument "input"
        params = (Param("input", "T", params[0].optional, params[0].kwonly, False),) + params[1:]
        slots = tuple("input" if n == "self" else n for n in slots)
    nd = tuple(rec.get("nd") or ())
    alias = rec.get("al")
    return OpInfo(
        qualname="aten." + key,
        slots=slots,
        alias=alias,
        mutates=tuple(rec.get("mu") or ()),
        differentiable=rec.get("d", 1) != 0 and alias != "detach",
        n_outputs=rec.get("n", 1),
        nondiff_outputs=nd,
        factory=bool(rec.get("f")),
        measured=False,
        params=params,
        method=method,
        _rule=_Aten(rec),
    )


# ---------------------------------------------------------------------------------------------
# Matching a call against measured variants

_LOOSE = {
    ("N", "B"), ("B", "N"), ("N", "S"), ("S", "N"), ("S", "L"), ("L", "S"), ("O", "S"), ("S", "O"),
}


def _compat(qk: str, mk: str) -> Optional[int]:
    if qk == mk:
        return 2
    if qk == "O" or mk == "O":
        return 0
    if (qk, mk) in _LOOSE:
        return 1
    return None


def _split_kind(q: str) -> Tuple[str, Optional[str]]:
    kind, eq, val = q.partition("=")
    return kind.strip(), (val.strip() if eq else None)


def _parse_kwargs(kwargs: Collection[str]) -> Tuple[List[str], Dict[str, str]]:
    names: List[str] = []
    vals: Dict[str, str] = {}
    for k in kwargs:
        name, eq, val = k.partition("=")
        name = name.strip()
        names.append(name)
        if eq:
            vals[name] = val.strip()
    return names, vals


def _kv_str(v: Any) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _norm_val(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def _score(params: Tuple[Param, ...], k: str, kv: Dict[str, Any], kinds: Sequence[str],
           kw_names: List[str], kw_vals: Dict[str, str], nv: Optional[int] = None,
           sibling_kv: Optional[Dict[str, set]] = None) -> Optional[int]:
    """Score of one variant for a call (None: does not bind). ``kv``: constants the variant was
    measured with; ``sibling_kv``: name -> values measured by any variant of the same op."""
    sibling_kv = sibling_kv or {}
    score = 0
    bound: Dict[str, bool] = {}
    pi = 0
    i = 0
    kw_vals = dict(kw_vals)
    split = [_split_kind(q) for q in kinds]
    kinds = [q for q, _ in split]
    while i < len(kinds):
        if pi >= len(params) or params[pi].kwonly:
            return None
        p = params[pi]
        qk = kinds[i]
        if split[i][1] is not None:
            kw_vals[p.name] = split[i][1]  # a literal value given with the kind ("B=True")
        mk = k[pi] if pi < len(k) else "-"
        if p.varargs:
            rest = kinds[i:]
            if nv is not None and nv == len(rest):
                score += 2
            for r in rest:
                if r == "O":
                    continue
                if p.kind == "T" and r in ("T", "L") and (r == "T" or len(rest) == 1):
                    score += 1
                elif p.kind == "S" and r in ("N", "S"):
                    score += 1
                elif r == p.kind:
                    score += 1
                else:
                    return None
            bound[p.name] = True
            break
        if qk == "None":
            if not p.optional:
                return None
            bound[p.name] = True
            pi += 1
            i += 1
            continue
        if p.name in sibling_kv:
            pass  # a behaviour-selecting constant: decided by its value below, not by its kind
        elif mk in ("-", "n"):
            # not passed in the measurement
            sc = _compat(qk, p.kind)
            if sc is None:
                return None
            score += max(sc - 1, 0)
        else:
            sc = _compat(qk, mk)
            if sc is None:
                return None
            score += sc
        bound[p.name] = True
        pi += 1
        i += 1
    names = {p.name: j for j, p in enumerate(params)}
    for name in kw_names:
        if name not in names or name in bound:
            return None
        bound[name] = True
        j = names[name]
        if j < len(k) and k[j] not in ("-",) and name not in sibling_kv:
            score += 1
    for j, p in enumerate(params):
        if p.name in bound:
            continue
        if not p.optional and not p.varargs:
            return None
        if j < len(k) and k[j] not in ("-", "n"):
            score -= 1  # measured with an argument the call does not pass
    for name, val in kv.items():
        if name in kw_vals:
            if _norm_val(kw_vals[name]) != _kv_str(val):
                return None
            score += 3
        elif name in bound:
            continue  # passed, value unknown: ambiguous
        else:
            return None  # not passed: the default applies, which is not what this variant measured
    for name, val in kw_vals.items():
        if name not in kv and _norm_val(val) in sibling_kv.get(name, ()):
            return None  # another variant was measured with exactly this value
    return score


def _select(cands: List[Tuple[int, OpInfo]]) -> Optional[OpInfo]:
    if not cands:
        return None
    best = max(s for s, _ in cands)
    top = [c for s, c in cands if s == best]
    if len(top) == 1:
        return top[0]
    return _merge(top)


def _merge(infos: List[OpInfo]) -> OpInfo:
    # identical candidates (same facts) collapse
    uniq: List[OpInfo] = []
    for inf in infos:
        if not any(_same_facts(inf, u) for u in uniq):
            uniq.append(inf)
    if len(uniq) == 1:
        return uniq[0]
    slots: List[str] = []
    for inf in uniq:
        for s in inf.slots:
            if s not in slots:
                slots.append(s)
    parts = []
    for inf in uniq:
        parts.append((inf, tuple(slots.index(s) for s in inf.slots)))
    aliases = {inf.alias for inf in uniq}
    if len(aliases) == 1:
        alias = aliases.pop()
    elif aliases <= {"view", "expand"}:
        alias = "view"
    elif "multi_view" in aliases and aliases <= {"multi_view", None}:
        alias = "may_alias"
    else:
        alias = "may_alias"
    mut = sorted({slots.index(inf.slots[m]) for inf in uniq for m in inf.mutates if m < len(inf.slots)})
    nd = set(uniq[0].nondiff_outputs)
    for inf in uniq[1:]:
        nd &= set(inf.nondiff_outputs)
    first = uniq[0]
    return OpInfo(
        qualname=first.qualname,
        slots=tuple(slots),
        alias=alias,
        mutates=tuple(mut),
        differentiable=any(inf.differentiable for inf in uniq),
        n_outputs=max(inf.n_outputs for inf in uniq),
        nondiff_outputs=tuple(sorted(nd)),
        factory=all(inf.factory for inf in uniq),
        measured=all(inf.measured for inf in uniq),
        params=first.params,
        n_inputs=first.n_inputs,
        method=first.method,
        _rule=_Merged(parts),
    )


def _same_facts(a: OpInfo, b: OpInfo) -> bool:
    if (a.slots, a.alias, a.mutates, a.differentiable, a.n_outputs, a.nondiff_outputs, a.factory) != (
        b.slots, b.alias, b.mutates, b.differentiable, b.n_outputs, b.nondiff_outputs, b.factory
    ):
        return False
    ra, rb = a._rule, b._rule
    if isinstance(ra, _Measured) and isinstance(rb, _Measured):
        return (ra.sv, ra.so, ra.pm, ra.ng) == (rb.sv, rb.so, rb.pm, rb.ng)
    return False


def _match_measured(qualname: str, recs: List[Dict[str, Any]], kinds: Sequence[str], kwargs: Collection[str],
                    method: bool) -> Tuple[Optional[OpInfo], bool]:
    kw_names, kw_vals = _parse_kwargs(kwargs)
    sibling_kv: Dict[str, set] = {}
    for rec in recs:
        for name, val in (rec.get("kv") or {}).items():
            sibling_kv.setdefault(name, set()).add(_kv_str(val))
    cands = []
    for rec in recs:
        params = _parse_params(rec.get("p", ""))
        sc = _score(params, rec.get("k", ""), rec.get("kv") or {}, kinds, kw_names, kw_vals, rec.get("nv"),
                    sibling_kv)
        if sc is not None:
            cands.append((sc, _info_from_measured(qualname, rec, method)))
    return _select(cands), bool(cands)


def _aten_index() -> Dict[Tuple[str, str], List[str]]:
    global _ATEN_INDEX
    if _ATEN_INDEX is None:
        idx: Dict[Tuple[str, str], List[str]] = {}
        for key, rec in _table().get("aten", {}).items():
            base = key.split(".", 1)[0]
            v = rec.get("v", "")
            ns, _, var = v.rpartition(":")
            if "f" in var:
                idx.setdefault((ns or "torch", base), []).append(key)
            if "m" in var:
                idx.setdefault(("Tensor", base), []).append(key)
            idx.setdefault(("aten", base), []).append(key)
        _ATEN_INDEX = idx
    return _ATEN_INDEX


_NS_PREFIX = (
    ("torch.nn.functional.", "nn", ""),
    ("torch.linalg.", "linalg", "linalg_"),
    ("torch.special.", "special", "special_"),
    ("torch.fft.", "fft", "fft_"),
    ("torch.", "torch", ""),
)


def _aten_keys_for_function(qualname: str) -> List[str]:
    if qualname.startswith("aten."):
        rest = qualname[5:]
        if rest in _table().get("aten", {}):
            return [rest]
        return list(_aten_index().get(("aten", rest), []))
    for prefix, ns, add in _NS_PREFIX:
        if qualname.startswith(prefix):
            name = qualname[len(prefix):]
            if "." in name:
                return []
            return list(_aten_index().get((ns, add + name), []))
    return []


def _match_aten(keys: List[str], kinds: Sequence[str], kwargs: Collection[str], method: bool,
                python_names: bool = True) -> Optional[OpInfo]:
    aten = _table().get("aten", {})
    kw_names, kw_vals = _parse_kwargs(kwargs)
    cands = []
    for key in keys:
        rec = aten[key]
        info = _info_from_aten(key, rec, method, python_names)
        sc = _score(info.params, "", {}, kinds, kw_names, kw_vals)
        if sc is not None:
            # functional overloads before in-place/other ones when the name is the same
            cands.append((sc, info))
    return _select(cands)


# ---------------------------------------------------------------------------------------------
# Public API


def _lookup_function_uncached(qualname: str, kinds: Sequence[ArgKind] = (), kwargs: Collection[str] = ()) -> Optional[OpInfo]:
    """A function call ``qualname(*args, **kwargs)``; ``kinds``: kinds of the positional arguments.
    Also accepts ``"Tensor.<name>"`` (unbound method call: kinds[0] is self) and ``"aten.<op>"``."""
    t = _table()
    if qualname.startswith("Tensor."):
        return lookup_method(qualname[len("Tensor."):], tuple(kinds)[1:], kwargs)
    q = t.get("function_aliases", {}).get(qualname, qualname)
    recs = t.get("functions", {}).get(q)
    if recs:
        info, any_match = _match_measured(q, recs, kinds, kwargs, method=False)
        if info is not None:
            return info
        keys = _aten_keys_for_function(q)
        if keys:
            info = _match_aten(keys, kinds, kwargs, method=False)
            if info is not None:
                return info
        return _merge([_info_from_measured(q, r, False) for r in recs])
    keys = _aten_keys_for_function(qualname)
    if not keys:
        return None
    py = not qualname.startswith("aten.")
    info = _match_aten(keys, kinds, kwargs, method=False, python_names=py)
    if info is None:
        aten = t["aten"]
        infos = [_info_from_aten(k, aten[k], False, py) for k in keys]
        return infos[0] if len(infos) == 1 else _merge(infos)
    return info


def _lookup_method_uncached(name: str, kinds: Sequence[ArgKind] = (), kwargs: Collection[str] = ()) -> Optional[OpInfo]:
    """A method call ``x.name(*args, **kwargs)`` (or a property such as ``x.T``); ``kinds`` exclude self."""
    t = _table()
    recs = t.get("methods", {}).get(name)
    q = "Tensor." + name
    if recs:
        info, _ = _match_measured(q, recs, kinds, kwargs, method=True)
        if info is not None:
            return info
        keys = _aten_index().get(("Tensor", name), [])
        if keys:
            info = _match_aten(keys, kinds, kwargs, method=True)
            if info is not None:
                return info
        return _merge([_info_from_measured(q, r, True) for r in recs])
    keys = _aten_index().get(("Tensor", name), [])
    if not keys:
        return None
    info = _match_aten(keys, kinds, kwargs, method=True)
    if info is None:
        aten = t["aten"]
        infos = [_info_from_aten(k, aten[k], True) for k in keys]
        return infos[0] if len(infos) == 1 else _merge(infos)
    return info


def _lookup_module_uncached(qualname: str, *, inplace: bool = False, training: bool = True) -> Optional[OpInfo]:
    """An ``nn.Module`` instance call. Slots: forward inputs first (``n_inputs`` of them), then
    parameters and buffers by attribute name (``weight``, ``bias``, ``running_mean``...)."""
    mods = _table().get("modules", {})
    recs = mods.get(qualname)
    if recs is None and qualname.startswith("torch.nn."):
        recs = mods.get("torch.nn." + qualname.rsplit(".", 1)[-1])
        if recs is not None:
            qualname = "torch.nn." + qualname.rsplit(".", 1)[-1]
    if not recs:
        return None
    ip = 1 if inplace else 0
    tr = 1 if training else 0
    chosen = None
    for want_ip in (ip, 0):
        for want_tr in (tr, 1):
            for rec in recs:
                if rec.get("ip", 0) == want_ip and rec.get("tr", 1) == want_tr:
                    chosen = rec
                    break
            if chosen is not None:
                break
        if chosen is not None:
            break
    if chosen is None:
        chosen = recs[0]
    return _info_from_measured(qualname, chosen, method=False, module=True)


def known_function_names() -> FrozenSet[str]:
    t = _table()
    names = set(t.get("functions", {})) | set(t.get("function_aliases", {}))
    for ns, base in _aten_index():
        if ns == "aten" or ns == "Tensor":
            continue
        if base.startswith("_"):
            continue
        for prefix, n, add in _NS_PREFIX:
            if n == ns and base.startswith(add):
                names.add(prefix + base[len(add):])
                break
    return frozenset(names)


def known_method_names() -> FrozenSet[str]:
    t = _table()
    names = set(t.get("methods", {}))
    names |= {base for ns, base in _aten_index() if ns == "Tensor"}
    return frozenset(names)


def known_module_names() -> FrozenSet[str]:
    return frozenset(_table().get("modules", {}))


__all__ = [
    "ArgKind", "OpInfo", "Param", "lookup_function", "lookup_method", "lookup_module", "known_function_names",
    "known_method_names", "known_module_names", "table_info",
]


# --------------------------------------------------------------------------- memoised front doors
# The engine asks the same questions thousands of times per file; answers never change.
_CACHE: Dict[Any, Any] = {}


def lookup_function(qualname: str, kinds: Sequence[str] = (), kwargs: Collection[str] = ()) -> Optional[OpInfo]:
    key = ("f", qualname, tuple(kinds), tuple(sorted(kwargs)))
    if key not in _CACHE:
        _CACHE[key] = _lookup_function_uncached(qualname, kinds, kwargs)
    return _CACHE[key]


def lookup_method(name: str, kinds: Sequence[str] = (), kwargs: Collection[str] = ()) -> Optional[OpInfo]:
    key = ("m", name, tuple(kinds), tuple(sorted(kwargs)))
    if key not in _CACHE:
        _CACHE[key] = _lookup_method_uncached(name, kinds, kwargs)
    return _CACHE[key]


def lookup_module(qualname: str, *, inplace: bool = False, training: bool = True) -> Optional[OpInfo]:
    key = ("M", qualname, inplace, training)
    if key not in _CACHE:
        _CACHE[key] = _lookup_module_uncached(qualname, inplace=inplace, training=training)
    return _CACHE[key]
