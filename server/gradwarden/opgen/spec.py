"""Parameter specs and argument kinds shared by the aten section and the measurement.

A parameter spec is serialised as one compact string, e.g. ``"input:T,dim:N,keepdim:B?,*out:T?"``:
parameters separated by ``,``; each ``name:K`` where K is an argument kind
(T tensor, L list of tensors, N number, B bool, S sequence of ints, O other);
suffix ``?`` = has a default (optional), ``+`` = varargs (absorbs the remaining positional
arguments); prefix ``*`` = keyword-only.  The loader in ``gradwarden.engine.domain.optable`` parses the
same format (it does not import this module).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("T", "L", "N", "B", "S", "O")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    optional: bool = False
    kwonly: bool = False
    varargs: bool = False

    def encode(self) -> str:
        return ("*" if self.kwonly else "") + f"{self.name}:{self.kind}" + (
            "?" if self.optional else ""
        ) + ("+" if self.varargs else "")


def encode_params(params: "list[Param] | tuple[Param, ...]") -> str:
    return ",".join(p.encode() for p in params)


_FIXED_LIST = re.compile(r"^(?:Sym)?[Ii]nt\[\d*\]\??$")


def kind_of_schema_type(t: str) -> str:
    """Map a torchgen/JIT schema type string (``Tensor?``, ``SymInt[2]``...) to an argument kind."""
    base = t.rstrip("?")
    if base in ("Tensor",):
        return "T"
    if base.startswith("Tensor") and base.endswith("]"):  # Tensor[], Tensor?[], Tensor(a)[]
        return "L"
    if base in ("ITensorListRef", "TensorList", "const ITensorListRef &"):
        return "L"
    if base == "bool":
        return "B"
    if base in ("int", "SymInt", "float", "Scalar", "double", "int64_t", "complex"):
        return "N"
    if _FIXED_LIST.match(t) or base in ("int[]", "SymInt[]", "float[]", "IntArrayRef", "SymIntArrayRef",
                                         "bool[]") or re.match(r"^(Sym)?[Ii]nt\[\d+\]$", base) or base.startswith("float["):
        return "S"
    if base.startswith("bool["):
        return "S"
    return "O"
