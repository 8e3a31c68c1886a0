"""The abstract autograd model: tensor facts, graph nodes, writes, and the forkable state.

A tensor *value* (``TensorV``) is only an identity; what autograd knows about it (requires
grad, leaf, grad_fn, which version counter it shares, whether it is an expanded view ...)
lives in the ``State`` so that an in-place op updates every name bound to the same tensor,
and so that states can be forked at branches and joined again.

Version counters are modelled as in PyTorch: views, ``.detach()`` and same-object returns
share the counter of their base (``counter``); ``.data`` shares the storage (``storage``)
but gets a counter of its own, which is why writes through it go unnoticed.
"""
from __future__ import annotations

import itertools
from dataclasses import MISSING, dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Span

_ids = itertools.count(1)


def fresh_id() -> int:
    return next(_ids)


# --------------------------------------------------------------------------- values
class Value:
    """Base of every abstract value."""

    __slots__ = ()


class UnknownV(Value):
    """Anything we do not model (numbers we cannot compute, foreign objects, ...)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "?"


UNKNOWN = UnknownV()


class NumberV(UnknownV):
    """A Python number: behaves as unknown everywhere, but is known not to be a tensor (so it
    hides no graph, and an op with it saves no tensor for it). Derived from a tensor
    (``loss.item()``, ``x.size(0)``, ``x.shape``) or from the code (``float(n)``, a loop index
    over ``range``, an argument annotated ``int``). ``cut`` is set when it holds a tensor's
    values (``item``/``tolist``/``float(t)``): the gradient-flow ``Cut`` (engine/checks/flowfacts.py)
    where a gradient path ends."""

    __slots__ = ("cut",)

    def __init__(self, cut: Any = None) -> None:
        self.cut = cut

    def __repr__(self) -> str:
        return "number"


PLAIN_NUMBER = NumberV()  # a number that holds no tensor's values


@dataclass(frozen=True, eq=False)
class ConstV(Value):
    """A Python constant we can compute with (bool, int, float, str, None)."""

    value: Any


NONE = ConstV(None)
TRUE = ConstV(True)
FALSE = ConstV(False)


@dataclass(frozen=True, eq=False)
class TensorV(Value):
    """A tensor object; its facts are in ``State.t[tid]``."""

    tid: int


@dataclass(frozen=True, eq=False)
class SeqV(Value):
    """A list or tuple. Lists are mutable: their items live in ``State.lists[lid]``.

    ``homogeneous`` marks a sequence of unknown length whose items are represented by the
    stored ones (a comprehension over ``range(n)``, a list appended to in a loop).
    """

    lid: int
    kind: str = "list"  # list | tuple | dict_values | generator


@dataclass(frozen=True, eq=False)
class DictV(Value):
    did: int


@dataclass(frozen=True, eq=False)
class ObjV(Value):
    """An object: an instance of a class of the file, a torch module, an optimizer, ctx, ..."""

    oid: int


@dataclass(frozen=True, eq=False)
class RefV(Value):
    """A reference to something named: a torch API path (``torch.nn.Linear``), a function or
    class defined in the analysed file, a bound method, a builtin."""

    kind: str  # torch | func | class | method | builtin | module | super (a super() proxy: target = the defining ClassInfo, bound = self)
    name: str  # qualified name (torch path, builtin name) or the def's name
    target: Any = None  # ast.FunctionDef / ClassInfo / (self value, FunctionDef) / torch method name
    bound: Optional[Value] = None


# --------------------------------------------------------------------------- tensor facts
@dataclass(frozen=True)
class TInfo:
    counter: int  # version counter identity (shared by views / detach)
    storage: int  # storage identity (shared also by .data)
    rg: Optional[bool]  # requires grad: True / False / None (unknown)
    leaf: bool = True  # no grad_fn
    grad_fn: Optional["Node"] = None
    param: bool = False  # nn.Parameter / module parameter
    base: Optional[int] = None  # tid of the base when this is a view
    expanded: Optional[Span] = None  # made by expand/expand_as (elements share memory)
    multi_view: Optional[Tuple[str, Span]] = None  # one of several views (split/chunk/unbind)
    data_alias: bool = False  # obtained through .data
    grad_output: Optional[str] = None  # (a view of) grad_output in Function `name`.backward
    ctx_saved: bool = False  # restored from ctx.saved_tensors
    custom_out: Optional[Tuple[str, Span]] = None  # output of Function.apply that returns its input
    name: str = ""  # a name for messages (the variable it was first bound to)
    created: Optional[Span] = None
    loop_ctx: Tuple[Tuple[int, int], ...] = ()
    grad_site: bool = False  # a `.grad` tensor (writes to it are fine)
    stored_at: Optional[Span] = None  # the last statement that stored it (variable, attribute, list)
    stored_depth: int = 0  # the call depth of that statement
    # the last statement that put it where it outlives the code that made it (an attribute, a
    # list or dict element, a buffer): where a value carried into a later iteration is kept
    held_at: Optional[Span] = None
    dtype: Optional[str] = None  # "float" | "int" | "bool" when known: a cast to another one copies
    alias_of: Optional[int] = None  # the tensor this `.detach()` / `.data` alias was taken from
    dual: bool = False  # carries a forward-mode tangent (torch.autograd.forward_ad.make_dual)
    # a log-probability: "dist" a whole distribution (log_softmax), "action" the log-probability
    # of chosen actions (Distribution.log_prob, a gather/index of a "dist")
    logprob: str = ""


_TINFO_FIELDS = frozenset(f for f in TInfo.__dataclass_fields__)
_TINFO_DEFAULTS = {name: f.default for name, f in TInfo.__dataclass_fields__.items()
                   if f.default is not MISSING}
_TINFO_REQUIRED = _TINFO_FIELDS - _TINFO_DEFAULTS.keys()


def make_tinfo(**kw: Any) -> TInfo:
    """``TInfo(**kw)`` without the frozen dataclass's ``__init__`` (one ``object.__setattr__``
    per field, 27 of them, for the most made record of the analysis): the defaults, then the
    given fields, copied into the new record's dict."""
    if not (kw.keys() <= _TINFO_FIELDS and kw.keys() >= _TINFO_REQUIRED):
        raise TypeError(f"TInfo fields: unknown {sorted(kw.keys() - _TINFO_FIELDS)}, "
                        f"missing {sorted(_TINFO_REQUIRED - kw.keys())}")
    new = object.__new__(TInfo)
    d = new.__dict__
    d.update(_TINFO_DEFAULTS)
    d.update(kw)
    return new


# The values made most often, without their frozen dataclass's ``__init__`` (one
# ``object.__setattr__`` per field): tests/test_engine_model.py checks each against it.
_new = object.__new__


def _made(cls: type, fields: Dict[str, Any]) -> Any:
    """An instance of the dataclass ``cls`` holding ``fields`` (every field, by name)."""
    new = _new(cls)
    object.__setattr__(new, "__dict__", fields)
    return new


def new_tinfo(counter: int, storage: int, rg: Optional[bool], leaf: bool, grad_fn: Optional["Node"], param: bool,
              name: str, created: Optional[Span], loop_ctx: Tuple[Tuple[int, int], ...], dtype: Optional[str]) -> TInfo:
    """The record of a new tensor (``make_tinfo`` with these fields, positionally: keyword
    matching costs as much as the rest of the call)."""
    return _made(TInfo, {**_TINFO_DEFAULTS, "counter": counter, "storage": storage, "rg": rg, "leaf": leaf,
                         "grad_fn": grad_fn, "param": param, "name": name, "created": created, "loop_ctx": loop_ctx,
                         "dtype": dtype})


def view_tinfo(s: TInfo, rg: Optional[bool], leaf: bool, grad_fn: Optional["Node"], base: Optional[int],
               created: Optional[Span], loop_ctx: Tuple[Tuple[int, int], ...], expanded: Optional[Span],
               multi_view: Optional[Tuple[str, Span]]) -> TInfo:
    """The record of a view of the tensor ``s`` describes (it shares its version counter and
    storage and keeps what it carries: name, dtype, where it came from), with these fields;
    the others take their defaults. Positional, like ``new_tinfo``."""
    sd = s.__dict__
    return _made(TInfo, {**_TINFO_DEFAULTS, "counter": sd["counter"], "storage": sd["storage"], "name": sd["name"],
                         "data_alias": sd["data_alias"], "grad_output": sd["grad_output"], "ctx_saved": sd["ctx_saved"],
                         "custom_out": sd["custom_out"], "grad_site": sd["grad_site"], "dtype": sd["dtype"],
                         "logprob": sd["logprob"], "rg": rg, "leaf": leaf, "grad_fn": grad_fn, "base": base,
                         "created": created, "loop_ctx": loop_ctx, "expanded": expanded, "multi_view": multi_view})


def tensor_value(tid: int) -> TensorV:
    v = _new(TensorV)
    v.__dict__["tid"] = tid
    return v


def ref_value(kind: str, name: str, target: Any = None, bound: Optional[Value] = None) -> RefV:
    return _made(RefV, {"kind": kind, "name": name, "target": target, "bound": bound})


# --------------------------------------------------------------------------- graph
@dataclass(frozen=True)
class Saved:
    """One tensor a node saved for backward, with its version at save time."""

    tid: int
    counter: int
    storage: int
    version: int
    seq: int
    name: str
    is_output: bool = False
    maybe: bool = False  # saved only if an input of unknown requires-grad does require it
    unchecked: bool = False  # kept as a ctx attribute, not save_for_backward: no version check
    view: bool = False  # autograd saved a view of it (Linear saves weight.t()): `.data = ` does not reach it


def saved_value(tid: int, counter: int, storage: int, version: int, seq: int, name: str, is_output: bool = False,
                maybe: bool = False) -> Saved:
    return _made(Saved, {"tid": tid, "counter": counter, "storage": storage, "version": version, "seq": seq,
                         "name": name, "is_output": is_output, "maybe": maybe, "unchecked": False, "view": False})


@dataclass(eq=False)
class Node:
    """A graph node (grad_fn). Immutable once built; freed-ness lives in the State."""

    op: str
    span: Span
    inputs: Tuple["Node", ...]
    leaves: Tuple[int, ...]  # tids of leaf tensors requiring grad that feed it (AccumulateGrad)
    saved: Tuple[Saved, ...]
    seq: int
    loop_ctx: Tuple[Tuple[int, int], ...]
    report_span: Optional[Span] = None  # where to point for this op (a module's construction site)
    call_span: Optional[Span] = None  # the call that ran it, when different from report_span
    custom: Any = None  # (class name, ClassInfo, ctx ObjV) for a custom autograd.Function
    stack: Tuple[Span, ...] = ()  # call sites (outermost first) that led to this node
    label: str = ""  # the name its output was first bound to, for messages
    input_names: Tuple[str, ...] = ()  # names of the tensors behind ``inputs`` (same order)
    stale_site: Optional[Span] = None  # a call, in an outer frame, that passed in a freed-graph value
    input_tids: Tuple[int, ...] = ()  # the tensors behind ``inputs`` (same order)
    # saves something the analysis does not follow as a tensor (a Python number autograd wraps
    # in a tensor, the index tensors of advanced indexing): freed by a backward all the same
    holds: bool = False
    defs: Tuple[Any, ...] = ()  # the functions running (outermost first) when it was recorded
    frame_args: Tuple[FrozenSet[int], ...] = ()  # the tensors each of those calls was given
    # an input the analysis cannot see into fed it (a value of unknown kind, a tensor whose
    # requires_grad is unknown): gradient may reach leaves through it that ``leaves`` lacks
    opaque: bool = False
    id: int = field(default_factory=fresh_id)


def walk_nodes(roots: "Sequence[Node]") -> List["Node"]:
    """Every node reachable from ``roots`` through their inputs, each once (the graph a
    backward from them would run)."""
    seen: set = set()
    out: List[Node] = []
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        out.append(n)
        stack.extend(n.inputs)
    return out


@dataclass(frozen=True)
class Write:
    """An in-place write that bumped a version counter (or, through .data, a storage)."""

    counter: int
    storage: int
    version_after: int
    seq: int
    span: Span
    op: str
    kind: str  # user | step | module | data | fused_step
    name: str
    site: Optional[Span] = None  # module construction site, when a module inside a container wrote
    optimizer: str = ""
    stack: Tuple[Span, ...] = ()  # call sites that led to the write
    tid: int = 0  # for a `.data = ...` reassignment: the tensor whose data was replaced


@dataclass(frozen=True)
class Backward:
    span: Span
    seq: int
    retain: bool
    roots: Tuple["Node", ...] = ()


# --------------------------------------------------------------------------- state
_FIELDS = ("t", "versions", "writes", "data_writes", "freed", "objs", "lists", "dicts",
           "grads", "meta")


_SHARED_SETS: Dict[int, FrozenSet[Any]] = {}


def _all_shared(frames: int) -> set:
    """A new set naming every field and the first ``frames`` frames (all shared after a fork)."""
    base = _SHARED_SETS.get(frames)
    if base is None:
        base = _SHARED_SETS[frames] = frozenset(_FIELDS) | {("frame", i) for i in range(frames)}
    return set(base)


class State:
    """One path's abstract state. ``fork`` is O(1): dictionaries are copied on first write."""

    __slots__ = _FIELDS + ("frames", "fi", "seq", "grad_enabled", "flow", "retval", "loop_ctx",
                           "_shared", "halted", "origins", "lineage")

    def __init__(self) -> None:
        self.t: Dict[int, TInfo] = {}
        self.versions: Dict[int, int] = {}
        self.writes: Dict[int, Tuple[Write, ...]] = {}
        self.data_writes: Dict[int, Tuple[Write, ...]] = {}  # by storage
        self.freed: Dict[int, Backward] = {}  # node id -> the backward that freed it
        self.objs: Dict[int, Dict[str, Value]] = {}
        self.lists: Dict[int, Tuple[Value, ...]] = {}
        self.dicts: Dict[int, Tuple[Tuple[Any, Value], ...]] = {}
        self.grads: Dict[int, Tuple[Span, str]] = {}  # leaf tid -> last backward that accumulated into it
        self.meta: Dict[str, Any] = {}  # misc path facts (last backward, steps, ...)
        self.frames: List[Dict[str, Value]] = [{}]
        self.fi = 0
        self.seq = 0
        self.grad_enabled = True
        self.flow: Optional[str] = None  # return | break | continue
        self.retval: Value = NONE
        self.loop_ctx: Tuple[Tuple[int, int], ...] = ()
        self._shared: set = set()
        self.halted = False
        # (loop id, index): which of the paths that entered a running loop together this one
        # descends from (it binds that path's loop element in the next iteration)
        self.origins: Tuple[Tuple[int, int], ...] = ()
        # The forks this state descends from, latest first: (fork number, the sizes of t, objs,
        # lists and dicts then, the earlier forks). Those four only ever gain keys, and a copy
        # keeps their order: two states descending from one fork both start with the keys
        # they shared there, in order (join_states looks only at what comes after).
        self.lineage: Optional[tuple] = None

    # -- copy on write
    def fork(self) -> "State":
        s = State.__new__(State)
        s.lineage = self.lineage = (next(_forks), len(self.t), len(self.objs), len(self.lists), len(self.dicts),
                                    self.lineage)
        s.t, s.versions, s.writes, s.data_writes, s.freed = self.t, self.versions, self.writes, self.data_writes, \
            self.freed
        s.objs, s.lists, s.dicts, s.grads, s.meta = self.objs, self.lists, self.dicts, self.grads, self.meta
        s.frames = list(self.frames)
        s._shared = _all_shared(len(self.frames))
        self._shared = set(s._shared)
        s.fi = self.fi
        s.seq = self.seq
        s.grad_enabled = self.grad_enabled
        s.flow = self.flow
        s.retval = self.retval
        s.loop_ctx = self.loop_ctx
        s.halted = self.halted
        s.origins = self.origins
        return s

    def own(self, name: str) -> Dict:
        d = getattr(self, name)
        if name in self._shared:
            d = dict(d)
            setattr(self, name, d)
            self._shared.discard(name)
        return d

    def frame(self, i: Optional[int] = None) -> Dict[str, Value]:
        i = self.fi if i is None else i
        key = ("frame", i)
        if key in self._shared:
            self.frames[i] = dict(self.frames[i])
            self._shared.discard(key)
        return self.frames[i]

    def frame_shared(self, i: int) -> bool:
        """Is frame ``i`` shared with a fork (so never written in place any more)?"""
        return ("frame", i) in self._shared

    def lookup(self, name: str) -> Optional[Value]:
        frame = self.frames[self.fi]
        v = frame.get(name)
        if v is None and self.fi != 0:
            foreign = frame.get("__gw_globals__")  # a function of another project module
            v = foreign.get(name) if foreign is not None else self.frames[0].get(name)  # type: ignore[union-attr]
        return v

    def push_frame(self, env: Dict[str, Value]) -> int:
        self.frames.append(env)
        self.fi = len(self.frames) - 1
        return self.fi

    def pop_frame(self, caller: int) -> None:
        idx = len(self.frames) - 1
        self.frames.pop()
        self._shared.discard(("frame", idx))
        self.fi = caller

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    # -- tensors
    def tinfo(self, tid: int) -> TInfo:
        return self.t[tid]

    def set_t(self, tid: int, info: TInfo) -> None:
        self.own("t")[tid] = info

    def update_t(self, tid: int, **kw: Any) -> None:
        # dataclasses.replace re-runs __init__ through a generic path; a copy of the fields
        # does the same for a frozen dataclass without __post_init__, several times faster
        old = self.t[tid]
        if not kw.keys() <= _TINFO_FIELDS:
            raise TypeError(f"TInfo has no field {sorted(kw.keys() - _TINFO_FIELDS)}")
        new = object.__new__(TInfo)
        d = new.__dict__
        d.update(old.__dict__)
        d.update(kw)
        self.own("t")[tid] = new

    def version(self, counter: int) -> int:
        return self.versions.get(counter, 0)

    # -- objects
    def attrs(self, oid: int) -> Dict[str, Value]:
        return self.objs.get(oid, {})

    def set_attr(self, oid: int, name: str, value: Value) -> None:
        objs = self.own("objs")
        d = dict(objs.get(oid, {}))
        d[name] = value
        objs[oid] = d

    def become(self, other: "State") -> None:
        """Take over another state's contents (used after joining an inlined call's exits)."""
        for f in _FIELDS + ("frames", "fi", "seq", "grad_enabled", "flow", "retval", "loop_ctx",
                            "halted", "origins", "lineage"):
            setattr(self, f, getattr(other, f))
        self._shared = _all_shared(len(self.frames))
        other._shared = set(self._shared)
        self.frames = list(self.frames)


def join_states(states: List[State]) -> State:
    """Merge paths into one (past the path budget, and at the exits of an inlined call).

    One whole path is kept: the one that did the most (``seq`` counts saves, writes and
    backwards, so hazards tend to live on it). Mixing facts of different paths — one path's
    saved versions with another path's writes — would make up hazards no single run has.
    From the other paths only what the kept one lacks is added: names they bound and the
    tensors and objects behind them (so later code can still use them), and their writes
    (only ever used to name the culprit of a mismatch the kept path itself shows).
    """
    if len(states) == 1:
        return states[0]
    major = max(states, key=lambda s: s.seq)
    out = major.fork()
    for other in states:
        if other is major:
            continue
        for i in range(min(len(out.frames), len(other.frames))):
            a, b = out.frames[i], other.frames[i]
            if a is b:
                continue
            missing = b.keys() - a.keys()
            if missing:
                fr = out.frame(i)
                for k in missing:
                    fr[k] = b[k]
        shared = _shared_fork(out.lineage, other.lineage)
        for i, name in enumerate(("t", "objs", "lists", "dicts")):
            od, md = getattr(other, name), getattr(out, name)
            if od is md:
                continue
            if shared is not None:
                # the first shared[i] keys of both are the same: only later ones can be missing
                missing = [k for k in itertools.islice(reversed(od), len(od) - shared[i]) if k not in md]
            else:
                missing = od.keys() - md.keys()
            if missing:
                d = out.own(name)
                for k in missing:
                    d[k] = od[k]
        for name in ("writes", "data_writes"):
            od, md = getattr(other, name), getattr(out, name)
            if od is md:
                continue
            d = None
            for k, ws in od.items():
                mine = md.get(k, ())
                if mine is ws:
                    continue
                have = {id(w) for w in mine}  # records are shared between forks: identity is enough
                extra = tuple(w for w in ws if id(w) not in have)
                if extra:
                    if d is None:
                        d = out.own(name)
                    d[k] = d.get(k, ()) + extra
        out.seq = max(out.seq, other.seq)
    return out


_forks = itertools.count(1)
_LINEAGE_DEPTH = 64  # forks looked back at for a common one (past it: the plain key difference)


def _shared_fork(a: Optional[tuple], b: Optional[tuple]) -> Optional[Tuple[int, int, int, int]]:
    """The sizes of t, objs, lists and dicts at the latest fork both lineages share, if found
    within _LINEAGE_DEPTH forks of each."""
    if a is None or b is None:
        return None
    seen = {}
    for _ in range(_LINEAGE_DEPTH):
        seen[a[0]] = a
        a = a[5]
        if a is None:
            break
    for _ in range(_LINEAGE_DEPTH):
        hit = seen.get(b[0])
        if hit is not None:
            return hit[1], hit[2], hit[3], hit[4]
        b = b[5]
        if b is None:
            break
    return None
