"""Measurement harness: call a Python-level callable once per requires-grad pattern under
``torch.autograd.graph.saved_tensors_hooks`` and record what autograd saved.

"Saved" means: a packed tensor shares storage with the slot's tensor (the tensor itself or a
view of it — views share the version counter, so an in-place write to the input after the op
would break backward) or with an output.
"""
from __future__ import annotations

import inspect
import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from gradwarden.opgen.spec import Param, encode_params
from gradwarden.opgen.values import materialize, spec_kind, spec_requires_grad_capable, is_slot_spec

MAX_FULL_DIFF = 7  # up to 2**7 patterns are enumerated completely


@dataclass
class Obs:
    """Result of one call."""

    saved_slots: set[int]
    saved_outs: set[int]
    mutated: set[int]
    n_out: int
    out_rg: list[bool]
    alias: str | None
    viewish: list[bool]  # per output: shares storage with slot 0


@dataclass
class Template:
    qualname: str
    group: str                    # "functions" | "methods"
    fn: Callable
    params: tuple[Param, ...]     # for methods: without self
    args: tuple                   # specs; for methods self first
    kwargs: tuple = ()            # ((name, spec), ...)
    kv: tuple = ()                # ((name, value), ...) semantic constants recorded for matching
    probe: bool = True            # run the non-contiguous alias probe

    # derived
    slot_names: list[str] = field(default_factory=list)
    slot_pos: list[tuple[str, Any]] = field(default_factory=list)  # ("a", index) | ("k", name)
    k: str = ""
    nvar: int | None = None       # number of positional values a varargs parameter absorbed

    def __post_init__(self) -> None:
        self.slot_names, self.slot_pos, self.k = bind_slots(self)


def bind_slots(t: Template) -> tuple[list[str], list[tuple[str, Any]], str]:
    """Map the template's values onto its params: slot names/positions and the kinds string."""
    names: list[str] = []
    pos: list[tuple[str, Any]] = []
    nvar = None
    args = list(t.args)
    start = 0
    if t.group == "methods":
        names.append("self")
        pos.append(("a", 0))
        start = 1
    kinds = ["-"] * len(t.params)
    pi = 0
    i = start
    while i < len(args):
        if pi >= len(t.params):
            raise TypeError(f"{t.qualname}: too many positional args for {encode_params(t.params)}")
        p = t.params[pi]
        if p.kwonly:
            raise TypeError(f"{t.qualname}: positional arg bound to keyword-only {p.name}")
        v = args[i]
        if p.varargs:
            rest = args[i:]
            kinds[pi] = spec_kind(rest[0]) if len(rest) == 1 else ("T" if all(is_slot_spec(x) for x in rest) else "N")
            nvar = len(rest)
            if any(is_slot_spec(x) for x in rest):
                names.append(p.name)
                pos.append(("v", i))
            break
        kinds[pi] = spec_kind(v)
        if is_slot_spec(v):
            names.append(p.name)
            pos.append(("a", i))
        pi += 1
        i += 1
    kw = dict(t.kwargs)
    by_name = {p.name: j for j, p in enumerate(t.params)}
    for name, v in kw.items():
        if name not in by_name:
            raise TypeError(f"{t.qualname}: unknown kwarg {name}")
        kinds[by_name[name]] = spec_kind(v)
    # slots passed by keyword, in parameter order
    kw_slots = sorted((by_name[n], n) for n, v in kw.items() if is_slot_spec(v))
    for _, n in kw_slots:
        names.append(n)
        pos.append(("k", n))
    kinds = ["n" if k == "None" else k for k in kinds]
    t.nvar = nvar
    return names, pos, "".join(kinds)


def _tensors_of(v: Any, torch: Any) -> list:
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for x in v if isinstance(x, torch.Tensor)]
    return []


def _flatten_out(out: Any, torch: Any) -> list:
    res: list = []

    def rec(o: Any) -> None:
        if isinstance(o, torch.Tensor):
            res.append(o)
        elif isinstance(o, (list, tuple)):
            for x in o:
                rec(x)

    rec(out)
    return res


def _storage(t: Any) -> int | None:
    try:
        if t.layout.__class__.__name__ != "layout" or t.is_sparse or t.is_nested:
            return None
        st = t.untyped_storage()
        if st.nbytes() == 0:
            return None
        return st.data_ptr()
    except Exception:
        return None


def _has_broadcast_stride(x: Any) -> bool:
    return any(s == 0 and d > 1 for s, d in zip(x.stride(), x.shape))


def _shares_version_counter(o: Any, t: Any, torch: Any) -> bool:
    """Does an in-place write through ``o`` bump ``t``'s version? (run after the observation)"""
    v = t._version
    try:
        with torch.no_grad():
            o.copy_(o.clone())
    except Exception:
        return True  # e.g. an expanded tensor cannot be written: it is a view
    return t._version != v


def classify_alias(o: Any, t: Any, mutated0: bool, name: str, torch: Any) -> str | None:
    """Alias kind of output ``o`` relative to input tensor ``t``."""
    so, st = _storage(o), _storage(t)
    if so is None or st is None or so != st:
        return None
    if o is t:
        return "same" if (mutated0 or name.endswith("_")) else "may_alias"
    if not _shares_version_counter(o, t, torch):
        return None  # shares memory but not the version counter (unsafe_split...): not tracked as a view
    if o._is_view():
        nbytes = lambda x: x.numel() * x.element_size()  # noqa: E731
        if nbytes(o) > nbytes(t) or (_has_broadcast_stride(o) and not _has_broadcast_stride(t)):
            return "expand"
        return "view"
    if t.requires_grad and not o.requires_grad and (o.is_floating_point() or o.is_complex()):
        return "detach"
    if not o.requires_grad and not (o.is_floating_point() or o.is_complex()):
        return "view"  # reinterpreting view (x.view(torch.int32))
    return "may_alias"


class Runner:
    """Executes calls under saved_tensors_hooks."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.gen = torch.Generator()

    def call(self, build: Callable[[int], tuple], mask: int, slot_count: int, name: str,
             probe: bool = False) -> Obs:
        """``build(mask)`` -> (fn, args, kwargs, slot_values). Raises on failure."""
        torch = self.torch
        self.gen.manual_seed(0)
        torch.manual_seed(0)
        fn, args, kwargs, slot_values = build(mask, probe)
        slot_tensors = [_tensors_of(v, torch) for v in slot_values]
        versions = [[x._version for x in ts] for ts in slot_tensors]
        storages = [{s for s in (_storage(x) for x in ts) if s is not None} for ts in slot_tensors]
        packed: list = []

        def pack(x: Any) -> Any:
            packed.append(x)
            return x

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            out = fn(*args, **kwargs)
        outs = _flatten_out(out, torch)
        out_st = [_storage(o) for o in outs]
        saved_slots: set[int] = set()
        saved_outs: set[int] = set()
        for x in packed:
            if not isinstance(x, torch.Tensor):
                continue
            s = _storage(x)
            if s is None:
                continue
            for i, st in enumerate(storages):
                if s in st:
                    saved_slots.add(i)
            for j, so in enumerate(out_st):
                if so is not None and so == s:
                    saved_outs.add(j)
        mutated = {i for i, ts in enumerate(slot_tensors) if [x._version for x in ts] != versions[i]}
        alias = None
        viewish: list[bool] = []
        if slot_tensors and slot_tensors[0]:
            t0s = slot_tensors[0]
            s0 = storages[0]
            viewish = [st is not None and st in s0 for st in out_st]
            multi = []
            for t0 in t0s:
                js = [j for j, st in enumerate(out_st) if st is not None and st == _storage(t0) and outs[j] is not t0]
                if len(js) >= 2:
                    multi.append((t0, js))
            if multi:
                t0, js = multi[0]
                alias = "multi_view" if _shares_version_counter(outs[js[0]], t0, torch) else None
            elif outs:
                for t0 in t0s:
                    alias = classify_alias(outs[0], t0, 0 in mutated, name, torch)
                    if alias:
                        break
        return Obs(saved_slots, saved_outs, mutated, len(outs), [bool(o.requires_grad) for o in outs],
                   alias, viewish)


def patterns_for(diff: list[int], n_inputs: int | None = None) -> list[int]:
    """Requires-grad masks to measure. ``diff``: slots that can require grad."""
    if len(diff) <= MAX_FULL_DIFF:
        masks = []
        for bits in itertools.product((0, 1), repeat=len(diff)):
            m = 0
            for b, s in zip(bits, diff):
                if b:
                    m |= 1 << s
            masks.append(m)
        return sorted(masks)
    full = 0
    for s in diff:
        full |= 1 << s
    ms = {0, full}
    for s in diff:
        ms.add(1 << s)
        ms.add(full & ~(1 << s))
    if n_inputs is not None:
        inp = [s for s in diff if s < n_inputs]
        par = [s for s in diff if s >= n_inputs]
        pmask = 0
        for s in par:
            pmask |= 1 << s
        for bits in itertools.product((0, 1), repeat=len(inp)):
            m = 0
            for b, s in zip(bits, inp):
                if b:
                    m |= 1 << s
            ms.add(m | pmask)
            ms.add(m)
    return sorted(ms)


def summarize(obs: dict[int, Obs], probe_obs: Obs | None, slot_names: list[str], diff: list[int],
              patterns: list[int], factory: bool) -> dict:
    """Fold per-pattern observations into the compact variant record."""
    # a slot that never ran with requires_grad (e.g. running stats: "running_mean should not
    # require grad") cannot require grad: treat it like an integer tensor
    diff = [s for s in diff if any(m >> s & 1 for m in obs)]
    full = 0
    for s in diff:
        full |= 1 << s
    rec: dict[str, Any] = {"s": list(slot_names)}
    n = len(slot_names)
    nonzero = [m for m in sorted(obs) if m]

    def compact(ms: list) -> Any:
        # "*": saved under every measured pattern in which something requires grad
        return "*" if len(ms) >= 4 and ms == nonzero else ms

    sv = [compact([m for m in sorted(obs) if i in obs[m].saved_slots]) for i in range(n)]
    if any(sv):
        rec["sv"] = sv
    n_out = max((o.n_out for o in obs.values()), default=0)
    so = [compact([m for m in sorted(obs) if j in obs[m].saved_outs]) for j in range(n_out)]
    while so and not so[-1]:
        so.pop()
    if so:
        rec["so"] = so
    measured = sorted(obs)
    if measured != sorted(patterns_for(diff)) or len(diff) > MAX_FULL_DIFF:
        rec["pm"] = measured
    ng = [i for i in range(n) if i not in diff]
    if ng:
        rec["ng"] = ng
    ref = obs.get(full) or obs[max(obs)]
    alias = ref.alias
    if probe_obs is not None and probe_obs.alias != alias:
        if {alias, probe_obs.alias} <= {"view", "expand"}:
            pass
        elif "multi_view" in (alias, probe_obs.alias):
            alias = "multi_view"
        else:
            alias = "may_alias"
    if alias:
        rec["al"] = alias
    mut = sorted(set().union(*(o.mutated for o in obs.values())))
    if mut:
        rec["mu"] = mut
    differentiable = any(ref.out_rg) if full else False
    if not differentiable:
        rec["d"] = 0
    if ref.n_out != 1:
        rec["n"] = ref.n_out
    if differentiable:
        nd = [j for j, r in enumerate(ref.out_rg) if not r]
        if nd:
            rec["nd"] = nd
    if factory:
        rec["f"] = 1
    return rec


def quiet() -> Any:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("ignore")
    return ctx


# ---------------------------------------------------------------------------------------------
# Templates (functions and methods)


def _build_template(t: Template, torch: Any, gen: Any) -> Callable:
    slot_of_pos: dict[tuple[str, Any], int] = {p: i for i, p in enumerate(t.slot_pos)}

    def build(mask: int, probe: bool) -> tuple:
        args = []
        slot_values: list[Any] = [None] * len(t.slot_pos)
        for i, spec in enumerate(t.args):
            si = slot_of_pos.get(("a", i))
            if si is None and ("v", i) in slot_of_pos:
                si = slot_of_pos[("v", i)]
                vals = [materialize(x, bool(mask >> si & 1), torch, gen) for x in t.args[i:]]
                args.extend(vals)
                slot_values[si] = vals
                break
            v = materialize(spec, si is not None and bool(mask >> si & 1), torch, gen)
            if probe and si == 0 and isinstance(v, torch.Tensor) and v.dim() >= 2 and v.shape[-1] == v.shape[-2]:
                v = v.transpose(-1, -2)
            if si is not None:
                slot_values[si] = v
            args.append(v)
        kwargs = {}
        for name, spec in t.kwargs:
            si = slot_of_pos.get(("k", name))
            v = materialize(spec, si is not None and bool(mask >> si & 1), torch, gen)
            if si is not None:
                slot_values[si] = v
            kwargs[name] = v
        return t.fn, args, kwargs, slot_values

    return build


def diff_slots_of(t: Template) -> list[int]:
    specs: list[Any] = []
    for kind, where in t.slot_pos:
        if kind == "a":
            specs.append(t.args[where])
        elif kind == "v":
            specs.append(("varargs", t.args[where:]))
        else:
            specs.append(dict(t.kwargs)[where])
    out = []
    for i, s in enumerate(specs):
        if isinstance(s, tuple) and s and s[0] == "varargs":
            if any(spec_requires_grad_capable(x) for x in s[1]):
                out.append(i)
        elif spec_requires_grad_capable(s):
            out.append(i)
    return out


def measure_template(runner: Runner, t: Template, *, first_only: bool = False) -> dict | None:
    """Measure a template under all its patterns. None if the all-requires-grad call fails."""
    torch = runner.torch
    build = _build_template(t, torch, runner.gen)
    diff = diff_slots_of(t)
    full = 0
    for s in diff:
        full |= 1 << s
    name = t.qualname.rsplit(".", 1)[-1]
    obs: dict[int, Obs] = {}
    try:
        obs[full] = runner.call(build, full, len(t.slot_names), name)
    except Exception:
        if first_only:
            return None
    if first_only:
        return {}
    for m in patterns_for(diff):
        if m in obs:
            continue
        try:
            obs[m] = runner.call(build, m, len(t.slot_names), name)
        except Exception:
            pass
    if not obs:
        return None
    probe_obs = None
    if t.probe and full in obs and obs[full].alias is not None and obs[full].alias != "same":
        try:
            probe_obs = runner.call(build, full, len(t.slot_names), name, probe=True)
        except Exception:
            probe_obs = None
    factory = not t.slot_names or name.endswith("_like") or name.startswith("new_")
    rec = summarize(obs, probe_obs, t.slot_names, diff, patterns_for(diff), factory)
    rec["p"] = encode_params(t.params)
    rec["k"] = t.k
    if t.nvar is not None:
        rec["nv"] = t.nvar
    if t.kv:
        rec["kv"] = {k: v for k, v in t.kv}
    return rec


# ---------------------------------------------------------------------------------------------
# Modules


def measure_module(runner: Runner, spec: Any, *, training: bool, inplace: bool) -> dict | None:
    """Measure an nn module: forward inputs vary; parameters vary too (default: require grad);
    buffers never require grad."""
    torch = runner.torch
    import torch.nn as nn

    torch.manual_seed(0)
    try:
        mod = spec.ctor(nn, inplace=True) if inplace else spec.ctor(nn)
    except Exception:
        return None
    mod.train(training)
    gen = runner.gen
    inputs = spec.inputs
    try:
        gen.manual_seed(0)
        with torch.no_grad():
            mod(*[materialize(v, False, torch, gen) for v in inputs])  # materialise lazy modules
    except Exception:
        return None
    if spec.input_names:
        in_names = list(spec.input_names)
    else:
        try:
            ps = [p for p in inspect.signature(mod.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            in_names = [p.name for p in ps][: len(inputs)]
        except (TypeError, ValueError):
            in_names = []
        while len(in_names) < len(inputs):
            in_names.append(f"input{len(in_names)}")
    params = list(mod.named_parameters())
    buffers = list(mod.named_buffers())
    slot_names = in_names + [n for n, _ in params] + [n for n, _ in buffers]
    n_in = len(inputs)
    in_slots = [i for i, v in enumerate(inputs) if is_slot_spec(v)]
    diff = [i for i in in_slots if spec_requires_grad_capable(inputs[i])]
    diff += [n_in + j for j, (_, p) in enumerate(params) if p.is_floating_point()]
    # slots = inputs that are tensors + params + buffers; non-tensor inputs keep their index but
    # are never saved (ng)

    def build(mask: int, probe: bool) -> tuple:
        vals = []
        for i, v in enumerate(inputs):
            vals.append(materialize(v, bool(mask >> i & 1), torch, gen))
        for j, (_, p) in enumerate(params):
            p.requires_grad_(bool(mask >> (n_in + j) & 1))
        slot_values = list(vals) + [p for _, p in params] + [b for _, b in buffers]
        return mod, vals, {}, slot_values

    name = spec.qualname.rsplit(".", 1)[-1].lower()
    obs: dict[int, Obs] = {}
    pats = patterns_for(diff, n_inputs=n_in)
    for m in pats:
        try:
            obs[m] = runner.call(build, m, len(slot_names), name)
        except Exception:
            pass
    for _, p in params:
        p.requires_grad_(True)
    if not obs:
        return None
    rec = summarize(obs, None, slot_names, diff, pats, False)
    if len(diff) > MAX_FULL_DIFF and "pm" not in rec:
        rec["pm"] = sorted(obs)
    rec["ni"] = n_in
    return rec
