"""Generator of the op knowledge table ``gradwarden/engine/domain/data/optable.json``.

``python -m gradwarden.opgen [--out PATH] [--check]``

This package is the only part of gradwarden that imports torch / torchgen. The table it writes
is read by ``gradwarden.engine.domain.optable`` (pure stdlib). Two sources:

* ``aten``: every aten overload from the yaml torch ships (schema alias/mutation annotations,
  derivative formulas, ``all_saved_inputs``/``all_saved_outputs`` with torchgen's save guards);
* ``functions`` / ``methods`` / ``modules``: Python-level callables measured by running them once
  per requires-grad pattern under ``saved_tensors_hooks`` (see ``measure.py``).
"""
from __future__ import annotations

import inspect
import json
import os
import sys
import time
import types
from typing import Any, Callable

FORMAT_VERSION = 1

# keyword constants that select a different behaviour; recorded ("kv") so that a lookup with
# "inplace=True" picks the variant measured that way
SEMANTIC_KWARGS = {"inplace", "training", "train", "return_indices", "mode", "rounding_mode", "reduction",
                   "log_target", "use_input_stats", "is_causal", "output_size"}


def default_out_path() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(here), "engine", "domain", "data", "optable.json")


def dumps(table: dict) -> str:
    """Deterministic, compact serialisation (sorted keys, one top-level entry per line)."""
    lines = ["{"]
    keys = sorted(table)
    for i, k in enumerate(keys):
        v = table[k]
        sep = "," if i < len(keys) - 1 else ""
        if isinstance(v, dict) and v:
            lines.append(json.dumps(k) + ":{")
            sub = sorted(v)
            for j, sk in enumerate(sub):
                ssep = "," if j < len(sub) - 1 else ""
                lines.append(json.dumps(sk) + ":" + json.dumps(v[sk], sort_keys=True, separators=(",", ":")) + ssep)
            lines.append("}" + sep)
        else:
            lines.append(json.dumps(k) + ":" + json.dumps(v, sort_keys=True, separators=(",", ":")) + sep)
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------


def _resolve(qualname: str) -> Any:
    import torch

    if qualname.startswith("Tensor."):
        name = qualname[len("Tensor."):]
        from gradwarden.opgen.catalog import PROPERTIES

        if name in PROPERTIES:
            return (lambda n: lambda self: getattr(self, n))(name)
        return getattr(torch.Tensor, name, None)
    parts = qualname.split(".")
    if parts[0] != "torch":
        return None
    obj: Any = torch
    for p in parts[1:]:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj


def _kind_score(vk: str, p: Any) -> int | None:
    """Compatibility of a value kind with a declared param (None: conflict)."""
    pk = p.kind
    if vk == "None":
        return 1 if p.optional else None
    if vk == pk:
        return 2
    if pk == "O":
        return 1
    loose = {"T": (), "L": (), "N": ("B", "T", "S"), "B": ("N",), "S": ("N", "L"), "O": ("S",)}
    return 1 if pk in loose.get(vk, ()) else None


def _choose_params(sigs: list, args: tuple, kwargs: dict, method: bool) -> tuple | None:
    from gradwarden.opgen.values import spec_kind

    best = None
    best_score = -1
    pos = list(args[1:] if method else args)
    for sig in sigs:
        params = sig.params
        score = 0
        ok = True
        pi = 0
        bound = set()
        for v in pos:
            if pi >= len(params) or params[pi].kwonly:
                ok = False
                break
            p = params[pi]
            sc = _kind_score(spec_kind(v), p)
            if sc is None:
                ok = False
                break
            score += sc
            bound.add(p.name)
            if p.varargs:
                break
            pi += 1
        if not ok:
            continue
        names = {p.name: p for p in params}
        for k, v in kwargs.items():
            if k not in names or k in bound:
                ok = False
                break
            sc = _kind_score(spec_kind(v), names[k])
            if sc is None:
                ok = False
                break
            score += sc
            bound.add(k)
        if not ok:
            continue
        if any(not p.optional and p.name not in bound for p in params):
            continue
        if score > best_score:
            best, best_score = sig.params, score
    return best


def _fallback_params(args: tuple, kwargs: dict, method: bool) -> tuple:
    from gradwarden.opgen.spec import Param
    from gradwarden.opgen.values import spec_kind

    pos = list(args[1:] if method else args)
    ps = [Param(f"arg{i}", spec_kind(v) if spec_kind(v) != "None" else "O") for i, v in enumerate(pos)]
    ps += [Param(k, spec_kind(v) if spec_kind(v) != "None" else "O", True, True) for k, v in kwargs.items()]
    return tuple(ps)


def _python_params(fn: Callable, method: bool) -> tuple | None:
    from gradwarden.opgen.catalog import py_params

    target = fn
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    ps = list(sig.parameters.values())
    if [p.kind for p in ps] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        # boolean_dispatch wrappers (F.max_pool2d...): use the implementation's signature
        inner = getattr(sys.modules.get(getattr(fn, "__module__", "") or ""), "_" + fn.__name__, None)
        if inner is not None:
            target = inner
        else:
            return None
    try:
        return py_params(target, method=method)
    except (TypeError, ValueError):
        return None


def _to_int_specs(v: Any) -> Any:
    from gradwarden.opgen.values import I, Lst, T

    if isinstance(v, T):
        return I(*v.shape, high=4)
    if isinstance(v, Lst):
        return Lst(*(_to_int_specs(x) for x in v.items), as_tuple=v.as_tuple)
    return v


class Generator:
    def __init__(self, verbose: bool = False) -> None:
        import torch

        from gradwarden.opgen.measure import Runner

        self.torch = torch
        self.runner = Runner()
        self.verbose = verbose
        self.functions: dict[str, list[dict]] = {}
        self.methods: dict[str, list[dict]] = {}
        self.modules: dict[str, list[dict]] = {}
        self.failed: list[str] = []
        self.objs: dict[int, str] = {}

    # -- helpers ---------------------------------------------------------------------------
    def _store(self, group: str, qualname: str, rec: dict) -> None:
        tab = self.functions if group == "functions" else self.methods
        key = qualname if group == "functions" else qualname[len("Tensor."):]
        lst = tab.setdefault(key, [])
        def ident(r: dict) -> tuple:
            return (r.get("p"), r.get("k"), r.get("nv"), json.dumps(r.get("kv"), sort_keys=True))

        if any(ident(old) == ident(rec) for old in lst):
            return
        lst.append(rec)

    def _template(self, qualname: str, group: str, fn: Callable, params: tuple, args: tuple,
                  kwargs: dict) -> Any:
        from gradwarden.opgen.measure import Template

        kv = tuple(sorted((k, v) for k, v in kwargs.items()
                          if k in SEMANTIC_KWARGS and isinstance(v, (bool, str, int))))
        try:
            return Template(qualname, group, fn, params, tuple(args), tuple(kwargs.items()), kv)
        except TypeError:
            return None

    def _runs(self, t: Any) -> bool:
        from gradwarden.opgen.measure import _build_template, diff_slots_of

        build = _build_template(t, self.torch, self.runner.gen)
        full = 0
        for s in diff_slots_of(t):
            full |= 1 << s
        name = t.qualname.rsplit(".", 1)[-1]
        for m in (full, 0) if full else (0,):
            try:
                self.runner.call(build, m, len(t.slot_names), name)
                return True
            except Exception:
                continue
        return False

    def _measure(self, t: Any) -> bool:
        from gradwarden.opgen.measure import measure_template

        rec = measure_template(self.runner, t)
        if rec is None:
            return False
        self._store(t.group, t.qualname, rec)
        self.objs.setdefault(id(t.fn), t.qualname)
        return True

    # -- sources ---------------------------------------------------------------------------
    def curated(self) -> set[str]:
        from gradwarden.opgen.catalog import FUNCTIONS, METHODS, PARAMS, parse_params
        from gradwarden.opgen.aten import python_signatures

        sigs_by_q: dict[str, list] = {}
        for s in python_signatures():
            sigs_by_q.setdefault(self._qualname_of(s), []).append(s)
        done: set[str] = set()
        for qualname, calls in FUNCTIONS.items():
            fn = _resolve(qualname)
            if fn is None:
                self.failed.append(qualname)
                continue
            ok_any = False
            for args, kwargs in calls:
                params = None
                if qualname in PARAMS:
                    params = parse_params(PARAMS[qualname])
                elif isinstance(fn, types.FunctionType):
                    params = _python_params(fn, False)
                elif qualname in sigs_by_q:
                    params = _choose_params(sigs_by_q[qualname], args, kwargs, False)
                if params is None:
                    params = _fallback_params(args, kwargs, False)
                t = self._template(qualname, "functions", fn, params, args, kwargs)
                if t is not None and self._measure(t):
                    ok_any = True
                else:
                    self.failed.append(f"{qualname}{args}{kwargs}")
            if ok_any:
                done.add(qualname)
        for name, calls in METHODS.items():
            qualname = "Tensor." + name
            fn = _resolve(qualname)
            if fn is None:
                self.failed.append(qualname)
                continue
            ok_any = False
            for pspec, args, kwargs in calls:
                if pspec is not None:
                    params = parse_params(pspec)
                elif isinstance(fn, types.FunctionType):
                    params = _python_params(fn, True)
                elif qualname in sigs_by_q:
                    params = _choose_params(sigs_by_q[qualname], args, kwargs, True)
                else:
                    params = None
                if params is None:
                    params = _fallback_params(args, kwargs, True)
                t = self._template(qualname, "methods", fn, params, args, kwargs)
                if t is not None and self._measure(t):
                    ok_any = True
                else:
                    self.failed.append(f"{qualname}{args}{kwargs}")
            if ok_any:
                done.add(qualname)
        return done

    @staticmethod
    def _qualname_of(sig: Any) -> str:
        return {"torch": "torch.", "Tensor": "Tensor.", "nn": "torch.nn.functional.", "linalg": "torch.linalg.",
                "special": "torch.special.", "fft": "torch.fft."}[sig.namespace] + sig.name

    def generic(self, skip: set[str]) -> None:
        """Schema-derived templates for the torch builtins not curated."""
        import torch.nn.functional as F

        from gradwarden.opgen.aten import python_signatures
        from gradwarden.opgen.catalog import NO_GENERIC
        from gradwarden.opgen.values import CONFIG_ORDER, CONFIGS, SKIP, T, generic_value

        for sig in python_signatures():
            qualname = self._qualname_of(sig)
            if qualname in NO_GENERIC:
                continue
            if sig.namespace == "nn":
                fn = getattr(F, sig.name, None)
                if fn is None or fn is not getattr(self.torch._C._nn, sig.name, None):
                    continue
            else:
                fn = _resolve(qualname)
            if fn is None or isinstance(fn, types.FunctionType):
                continue
            method = sig.namespace == "Tensor"
            found = None
            for cfg in CONFIG_ORDER + ("int",):
                c = "2d" if cfg == "int" else cfg
                args: list = [T(*CONFIGS[c])] if method else []
                kwargs: dict = {}
                ok = True
                for p, ty in zip(sig.params, sig.types):
                    if p.optional:
                        continue
                    v = generic_value(ty, p.name, c)
                    if v is SKIP:
                        ok = False
                        break
                    if p.kwonly:
                        kwargs[p.name] = v
                    else:
                        args.append(v)
                if not ok:
                    break
                if cfg == "int":
                    args = [_to_int_specs(a) for a in args]
                    kwargs = {k: _to_int_specs(v) for k, v in kwargs.items()}
                t = self._template(qualname, "methods" if method else "functions", fn, sig.params, args, kwargs)
                if t is not None and self._runs(t):
                    found = (t, args, kwargs, c)
                    break
            if found is None:
                self.failed.append(f"{qualname}({','.join(p.encode() for p in sig.params)})")
                continue
            t, args, kwargs, c = found
            self._measure(t)
            # optional tensor arguments given (weight, bias...)
            opt = {p.name: generic_value("Tensor", p.name, c) for p, ty in zip(sig.params, sig.types)
                   if p.optional and p.kind == "T" and p.name != "out"}
            if opt:
                t2 = self._template(qualname, t.group, fn, sig.params, args, {**kwargs, **opt})
                if t2 is not None and self._runs(t2):
                    self._measure(t2)
            # python numbers for tensor arguments (x * 2 records a wrapped number)
            for i in range(1, len(args)):
                if isinstance(args[i], T):
                    a2 = list(args)
                    a2[i] = 2.0
                    t3 = self._template(qualname, t.group, fn, sig.params, a2, kwargs)
                    if t3 is not None and self._runs(t3):
                        self._measure(t3)

    def python_functions(self, skip: set[str]) -> None:
        """Inspect-derived templates for Python-level functions that are not curated."""
        import torch.nn.functional as F

        from gradwarden.opgen.values import T, _int_value

        for name in sorted(dir(F)):
            if name.startswith("_"):
                continue
            q = "torch.nn.functional." + name
            fn = getattr(F, name)
            if q in skip or not isinstance(fn, types.FunctionType) or fn.__module__ != F.__name__:
                continue
            params = _python_params(fn, False)
            if params is None:
                continue
            args: list = []
            ok = True
            for p in params:
                if p.optional or p.kwonly:
                    continue
                if p.kind == "T":
                    args.append(T(3, 3))
                elif p.kind == "N":
                    args.append(_int_value(p.name, (3, 3)))
                elif p.kind == "B":
                    args.append(False)
                else:
                    ok = False
                    break
            if not ok:
                continue
            t = self._template(q, "functions", fn, params, args, {})
            if t is not None and self._runs(t):
                self._measure(t)
            else:
                self.failed.append(q)

    def modules_(self) -> None:
        from gradwarden.opgen.catalog import module_specs
        from gradwarden.opgen.measure import measure_module

        for spec in module_specs():
            for inplace in ((False, True) if spec.inplace else (False,)):
                recs = []
                for training in (True, False):
                    rec = measure_module(self.runner, spec, training=training, inplace=inplace)
                    if rec is None:
                        self.failed.append(f"{spec.qualname}(training={training}, inplace={inplace})")
                        continue
                    if not training and recs and recs[0] == rec:
                        continue
                    recs.append(rec)
                for i, rec in enumerate(recs):
                    if i == 1:
                        rec["tr"] = 0
                    if inplace:
                        rec["ip"] = 1
                self.modules.setdefault(spec.qualname, []).extend(recs)

    def aliases(self) -> dict[str, str]:
        import torch

        out: dict[str, str] = {}
        spaces = [("torch", torch), ("torch.nn.functional", torch.nn.functional), ("torch.linalg", torch.linalg),
                  ("torch.special", torch.special), ("torch.fft", torch.fft)]
        for prefix, mod in spaces:
            for name in sorted(dir(mod)):
                if name.startswith("_"):
                    continue
                q = f"{prefix}.{name}"
                if q in self.functions:
                    continue
                obj = getattr(mod, name, None)
                if obj is None or isinstance(obj, (type, types.ModuleType)):
                    continue
                target = self.objs.get(id(obj))
                if target is not None and target != q and target in self.functions:
                    out[q] = target
        return out


def _python_variants(aten: dict, torch: Any) -> None:
    """Keep the "f"/"m" flags of an aten entry only where torch really exposes that Python name,
    so that the loader's fallback (torch.X -> aten X) never answers for a name that does not exist."""
    spaces = {"": torch, "nn": torch.nn.functional, "linalg": torch.linalg, "special": torch.special,
              "fft": torch.fft}
    prefix = {"": "", "nn": "", "linalg": "linalg_", "special": "special_", "fft": "fft_"}
    for key, ent in aten.items():
        ns, _, var = ent.get("v", "").rpartition(":")
        base = key.split(".", 1)[0]
        mod = spaces.get(ns)
        new = ""
        if "f" in var and mod is not None and base.startswith(prefix[ns]) \
                and hasattr(mod, base[len(prefix[ns]):]):
            new += "f"
        if "m" in var and hasattr(torch.Tensor, base):
            new += "m"
        ent["v"] = (ns + ":" if ns and new else "") + new
        if not ent["v"]:
            del ent["v"]


def generate(verbose: bool = False) -> dict:
    """Build the whole table (imports torch)."""
    import warnings

    t0 = time.perf_counter()
    import torch

    from gradwarden.opgen.aten import build_aten_section

    torch.set_num_threads(1)
    aten = build_aten_section()
    t1 = time.perf_counter()
    g = Generator(verbose)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curated = g.curated()
        g.generic(curated)
        g.python_functions(curated)
        g.modules_()
    aliases = g.aliases()
    _python_variants(aten, torch)
    t2 = time.perf_counter()
    for tab in (g.functions, g.methods, g.modules):
        for k in tab:
            tab[k].sort(key=lambda r: json.dumps(r, sort_keys=True))
    table = {
        "format": FORMAT_VERSION,
        "torch": torch.__version__,
        "aten": aten,
        "functions": dict(sorted(g.functions.items())),
        "methods": dict(sorted(g.methods.items())),
        "modules": dict(sorted(g.modules.items())),
        "function_aliases": dict(sorted(aliases.items())),
    }
    if verbose:
        nv = lambda tab: sum(len(v) for v in tab.values())  # noqa: E731
        print(f"aten: {len(aten)} overloads ({t1 - t0:.1f}s incl. import)", file=sys.stderr)
        print(f"functions: {len(g.functions)} names / {nv(g.functions)} variants; "
              f"methods: {len(g.methods)} / {nv(g.methods)}; modules: {len(g.modules)} / {nv(g.modules)}; "
              f"aliases: {len(aliases)}; skipped templates: {len(g.failed)} ({t2 - t1:.1f}s)", file=sys.stderr)
        if verbose > 1:
            for f in g.failed:
                print("  skipped:", f, file=sys.stderr)
    return table
