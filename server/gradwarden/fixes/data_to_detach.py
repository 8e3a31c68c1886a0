"""``data_to_detach``: ``x.data`` -> ``x.detach()``: same values and storage, but the version
counter is shared again, so autograd's check is back on (a write to a tensor a graph still
needs now raises instead of silently corrupting the gradients). Unsafe for that reason; the
preferred fix of a write that hits a saved tensor is the ``clone`` (mode ``data``)."""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import find_write
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit
from gradwarden.fixes._flow import scope_index, view_source


def _replace_data(doc: Doc, attr: cst.Attribute) -> List[TextEdit]:
    _, e_val = doc.full_offsets(attr.value)
    _, e = doc.offsets(attr)
    return [TextEdit(e_val, e, ".detach()")]


@realiser("data_to_detach")
def data_to_detach(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    node = w.target
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        return _replace_data(doc, node)
    name = w.name
    if not name:
        raise CannotFix("unnamed target")
    idx = scope_index(doc, doc.scope_of(w.stmt))
    at = doc.offsets(w.stmt)[0]
    for _ in range(6):
        ev = idx.binding_before(name, at)
        b = idx.binding(ev) if ev is not None else None
        if b is None or b.value is None or b.kind not in ("assign", "ann"):
            break
        v = b.value
        if isinstance(v, cst.Attribute) and v.attr.value == "data":
            return _replace_data(doc, v)
        src = view_source(v, tuple_index=b.index)
        if src is None:
            break
        name, at = src, doc.offsets(b.stmt)[0]
    raise CannotFix("no `.data` found")
