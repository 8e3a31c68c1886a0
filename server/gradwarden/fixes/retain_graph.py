"""``retain_graph``: keep the graph of the first of two backward passes over it
(``loss.backward(retain_graph=True)``). Gradients and values are unchanged: safe."""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import find_call_at
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, dotted

# positional index of retain_graph
_POSITION = {"backward": 1, "torch.autograd.backward": 2, "autograd.backward": 2, "torch.autograd.grad": 3,
             "autograd.grad": 3}


@realiser("retain_graph")
def retain_graph(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    call = find_call_at(doc, ctx.target)
    if call is None:
        raise CannotFix("no backward call at the target")
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "retain_graph":
            if isinstance(a.value, cst.Name) and a.value.value == "True":
                raise CannotFix("already retains the graph")
            s, e = doc.full_offsets(a.value)
            return [TextEdit(s, e, "True")]
    name = dotted(call.func) or ""
    key = "backward" if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward" and \
        not name.endswith("autograd.backward") else name
    pos = [a for a in call.args if a.keyword is None and not a.star]
    at = _POSITION.get(key)
    if at is not None and len(pos) > at and not any(a.star for a in call.args[: at + 1]):
        s, e = doc.full_offsets(pos[at].value)
        return [TextEdit(s, e, "True")]
    if call.args:
        last = call.args[-1]
        _, e = doc.full_offsets(last.value)
        return [TextEdit(e, e, ", retain_graph=True")]
    open_at = _open_paren(doc, call)
    return [TextEdit(open_at, open_at, "retain_graph=True")]


def _open_paren(doc: Doc, call: cst.Call) -> int:
    _, e = doc.full_offsets(call.func)
    text = doc.text
    i = e
    while i < len(text):
        ch = text[i]
        if ch == "(":
            return i + 1
        if ch == "#":
            while i < len(text) and text[i] not in "\r\n":
                i += 1
            continue
        if ch not in " \t\r\n\\)":
            break
        i += 1
    raise CannotFix("cannot find the call's parenthesis")
