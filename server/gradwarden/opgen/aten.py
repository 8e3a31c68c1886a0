"""The "aten" section: op knowledge read from the yaml files torch ships (via torchgen).

For every aten overload (functional and in-place variants; out= variants are left out):
parameters, tensor slots, alias/view relation of output 0 to ``self``, mutated arguments,
differentiability, and which tensor arguments/outputs the autograd node saves, with the save
guard torchgen's ``gen_variable_type`` emits (``grad_fn->should_compute_output(k)``).

Also provides the Python signatures (``torch.x``, ``Tensor.x``, ``torch.linalg.x``...) that the
measurement uses as call templates.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from gradwarden.opgen.spec import Param, encode_params, kind_of_schema_type


def _paths() -> dict[str, str]:
    import torchgen

    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    return {
        "native": os.path.join(base, "ATen", "native", "native_functions.yaml"),
        "tags": os.path.join(base, "ATen", "native", "tags.yaml"),
        "derivatives": os.path.join(base, "autograd", "derivatives.yaml"),
        "deprecated": os.path.join(base, "autograd", "deprecated.yaml"),
    }


_CACHE: dict[str, Any] = {}


def native_functions() -> list:
    if "nfs" not in _CACHE:
        from torchgen.gen import parse_native_yaml

        p = _paths()
        _CACHE["nfs"] = parse_native_yaml(p["native"], p["tags"]).native_functions
    return _CACHE["nfs"]


# ---------------------------------------------------------------------------------------------
# Python signatures (templates for the measurement)


@dataclass(frozen=True)
class PySig:
    """One Python-visible overload of a torch builtin."""

    name: str                  # python name (e.g. "add_", "linalg_norm" -> "norm" in torch.linalg)
    namespace: str             # "torch" | "Tensor" | "nn" | "linalg" | "special" | "fft"
    params: tuple[Param, ...]  # without self for methods
    types: tuple[str, ...]     # schema type string per param
    aten: str                  # aten overload name, e.g. "add.Tensor"


def _py_params(sig, method: bool) -> tuple[tuple[Param, ...], tuple[str, ...]]:
    params: list[Param] = []
    types: list[str] = []
    pos = [a for a in sig.input_args if not (method and a.name == "self")]
    kw = list(sig.input_kwargs) + list(sig.tensor_options_args)
    n_pos = len(pos)
    for i, a in enumerate(pos):
        t = str(a.type)
        k = kind_of_schema_type(t)
        name = a.name
        if name == "self" and not method:
            name = "input"
        varargs = n_pos == 1 and k == "S" and a.default is None
        params.append(Param(name, k, a.default is not None, False, varargs))
        types.append(t)
    for a in kw:
        t = str(a.type)
        params.append(Param(a.name, kind_of_schema_type(t), a.default is not None, True, False))
        types.append(t)
    return tuple(params), tuple(types)


def python_signatures() -> list[PySig]:
    """All public (non-underscore) Python overloads of torch builtins, out= variants merged."""
    if "pysigs" in _CACHE:
        return _CACHE["pysigs"]
    from torchgen.model import SchemaKind
    from torchgen.packaged.autograd import gen_python_functions as gpf

    p = _paths()
    fns = [f for f in native_functions() if gpf.should_generate_py_binding(f)]
    out: list[PySig] = []
    seen: set[tuple] = set()
    for method in (False, True):
        pairs = gpf.load_signatures(fns, p["deprecated"], method=method, skip_deprecated=True)
        for pair in pairs:
            f = pair.function
            if f.func.kind() == SchemaKind.out:
                continue
            name = pair.signature.name
            if name.startswith("_"):
                continue
            if method:
                if not gpf.is_py_variable_method(f):
                    continue
                ns = "Tensor"
            else:
                mod = f.python_module
                if mod is None:
                    if not gpf.is_py_torch_function(f):
                        continue
                    ns = "torch"
                elif mod in ("nn", "linalg", "special", "fft"):
                    ns = mod
                    prefix = {"nn": "", "linalg": "linalg_", "special": "special_", "fft": "fft_"}[mod]
                    if prefix and name.startswith(prefix):
                        name = name[len(prefix):]
                else:
                    continue
            if any("Dimname" in str(a.type) for a in pair.signature.input_args + pair.signature.input_kwargs):
                continue
            params, types = _py_params(pair.signature, method)
            key = (ns, name, encode_params(params))
            if key in seen:
                continue
            seen.add(key)
            out.append(PySig(name, ns, params, types, str(f.func.name)))
    out.sort(key=lambda s: (s.namespace, s.name, s.aten, encode_params(s.params)))
    _CACHE["pysigs"] = out
    return out


# ---------------------------------------------------------------------------------------------
# The aten section


_COMPOSITE_MAY_ALIAS = {"contiguous", "reshape", "reshape_as", "flatten", "to", "_autocast_to_reduced_precision",
                        "_autocast_to_full_precision", "type_as", "ravel", "lift_fresh", "_lazy_clone"}
_MULTI = {"chunk", "tensor_split", "split", "split_with_sizes", "unbind", "unsafe_split", "unsafe_chunk",
          "hsplit", "vsplit", "dsplit", "unsafe_split_with_sizes"}


def _alias_kind(f, view_functions: set[str], returns_views: set[str]) -> str | None:
    rets = f.func.returns
    if not rets:
        return None
    r0 = rets[0]
    ann = r0.annotation
    if ann is None:
        return None
    args = list(f.func.arguments.flat_positional) + list(f.func.arguments.flat_kwarg_only)
    first = next((a for a in args if kind_of_schema_type(str(a.type)) in ("T", "L")), None)
    if first is None or first.annotation is None or not (set(first.annotation.alias_set) & set(ann.alias_set)):
        return None
    if ann.is_write:
        return "same"
    base = f.func.name.name.base
    if str(r0.type).endswith("[]") or base in _MULTI:
        return "multi_view"
    if base in ("expand", "expand_as", "broadcast_to"):
        return "expand"
    if base == "detach":
        return "detach"
    if base in _COMPOSITE_MAY_ALIAS:
        return "may_alias"
    if base in view_functions or base in returns_views:
        return "view"
    # schema says "may return an alias" (e.g. alias, conj, resolve_conj, positive):
    return "may_alias"


def _guard_for(info, arg_name: str, tensor_like: bool) -> int | str | None:
    """Mirror of gen_variable_type.emit_save_inputs.guard_for.

    Returns the name of the differentiable input whose requires_grad guards the save,
    None when the save is unconditional (whenever the node is created), or "?" when the guard is
    a condition we do not model.
    """
    args_with_derivatives = info.args_with_derivatives
    def is_list(b) -> bool:
        t = getattr(getattr(b, "argument", None), "type", None)
        return t is not None and hasattr(t, "is_list_like") and t.is_tensor_like() and t.is_list_like() is not None

    if any(is_list(a) for a in args_with_derivatives):
        return None
    if "backward" in info.name:
        return None
    if len(args_with_derivatives) <= 1:
        return None
    if not tensor_like:
        return None
    used_in = [d for d in info.derivatives if any(s.nctype.name == arg_name for s in d.saved_inputs)]
    if len(used_in) != 1:
        return None
    d = used_in[0]
    if len(d.var_names) != 1:
        m = re.search(rf"wrap_opt_if\({re.escape(arg_name)},(.*?)\)", d.formula)
        if m is None:
            return None
        cond = m.group(1).strip()
        mm = re.fullmatch(r"grad_input_mask\[(\d+)\]", cond)
        if mm is not None:
            k = int(mm.group(1))
            if k < len(args_with_derivatives):
                return args_with_derivatives[k].name
        return "?"
    return d.var_names[0]


def build_aten_section() -> dict[str, dict]:
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.model import SchemaKind
    from torchgen.packaged.autograd.gen_inplace_or_view_type import RETURNS_VIEWS_OF_INPUT, VIEW_FUNCTIONS
    from torchgen.packaged.autograd.gen_variable_type import DONT_REQUIRE_DERIVATIVE
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    p = _paths()
    nfs = native_functions()
    infos, _ = load_derivatives(p["derivatives"], p["native"], p["tags"])
    fwinfos = match_differentiability_info(nfs, infos)
    view_functions = set(VIEW_FUNCTIONS)
    returns_views = set(RETURNS_VIEWS_OF_INPUT)

    section: dict[str, dict] = {}
    for fwi in fwinfos:
        f = fwi.func
        kind = f.func.kind()
        if kind == SchemaKind.out or kind == SchemaKind.scratch:
            continue
        name = str(f.func.name)
        base = f.func.name.name.base
        if base.endswith("_backward") or "_backward_" in base:
            continue
        args = f.func.arguments
        params: list[Param] = []
        arg_objs = []
        for a in args.flat_positional:
            params.append(Param(a.name, kind_of_schema_type(str(a.type)), a.default is not None, False, False))
            arg_objs.append(a)
        for a in args.flat_kwarg_only:
            params.append(Param(a.name, kind_of_schema_type(str(a.type)), a.default is not None, True, False))
            arg_objs.append(a)
        slots = [p_.name for p_ in params if p_.kind in ("T", "L")]
        slot_of = {n: i for i, n in enumerate(slots)}
        ent: dict[str, Any] = {"p": encode_params(params), "s": slots}
        al = _alias_kind(f, view_functions, returns_views)
        if al:
            ent["al"] = al
        mut = sorted(slot_of[a.name] for a in arg_objs
                     if a.annotation is not None and a.annotation.is_write and a.name in slot_of)
        if mut:
            ent["mu"] = mut
        n_out = sum(1 for r in f.func.returns if str(r.type).startswith("Tensor"))
        if n_out != 1:
            ent["n"] = n_out
        ns = f.python_module or ""
        variants = "".join(sorted(v.name[0] for v in f.variants))  # "f", "m", "fm"
        ent["v"] = (ns + ":" if ns else "") + variants
        tags = sorted(str(t) for t in f.tags) if f.tags else []
        if "nondeterministic_seeded" in tags and not slots:
            ent["f"] = 1
        info = None
        if fwi.info is not None:
            info = fwi.info.get("Default")
        if info is None:
            if f.has_composite_implicit_autograd_kernel:
                ent["c"] = 1  # decomposes into other ops: saves unknown
            elif base in DONT_REQUIRE_DERIVATIVE or base.rstrip("_") in DONT_REQUIRE_DERIVATIVE or n_out == 0:
                ent["d"] = 0
            else:
                ent["x"] = 1  # no formula (autograd NotImplemented node / not differentiable)
            if not slots:
                ent["f"] = 1
            section[name] = ent
            continue
        if not info.args_with_derivatives or (
            info.output_differentiability is not None and not any(info.output_differentiability)
        ):
            ent["d"] = 0
        if info.output_differentiability is not None:
            nd = [i for i, d in enumerate(info.output_differentiability) if not d]
            if nd and any(info.output_differentiability):
                ent["nd"] = nd
        dv = sorted(slot_of[a.name] for a in info.args_with_derivatives if a.name in slot_of)
        ent["dv"] = dv
        inplace = kind == SchemaKind.inplace
        guards: list[Any] = [None] * len(slots)
        for sa in info.all_saved_inputs:
            n = sa.nctype.name
            if n not in slot_of:
                continue
            if inplace and n == "self":
                continue  # in-place ops save a clone of the old self ("original_self")
            tstr = str(sa.nctype.type)
            tensor_like = tstr == "BaseCType(type=BaseCppType(ns='at', name='Tensor'))"
            g = _guard_for(info, n, tensor_like)
            if g is None:
                guards[slot_of[n]] = -1
            elif g == "?":
                guards[slot_of[n]] = -2
            elif g in slot_of:
                guards[slot_of[n]] = slot_of[g]
            else:
                guards[slot_of[n]] = -1
        ret_names = [r.name for r in f.func.returns]
        so: list[int] = []
        for sa in info.all_saved_outputs:
            n = sa.nctype.name
            idx = None
            if n == "result":
                idx = 0
            elif re.fullmatch(r"result\d+", n):
                idx = int(n[6:])
            elif n in ret_names:
                idx = ret_names.index(n)
            if idx is not None and idx not in so:
                so.append(idx)
        so.sort()
        if so:
            ent["so"] = so
            if al == "same" and 0 in so and slots:
                guards[0] = -1  # in-place: the saved result is the mutated self
        if any(g is not None for g in guards):
            ent["g"] = guards
        section[name] = ent
    return dict(sorted(section.items()))
