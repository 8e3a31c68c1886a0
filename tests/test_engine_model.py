"""The engine's fast constructors (engine/state/model.py) make exactly what the dataclasses make.

The interpreter builds its most frequent records without the dataclasses' ``__init__`` (keyword
matching and one ``object.__setattr__`` per field of a frozen class cost as much as the rest
of an op), and builds ``Node`` positionally. These tests fail as soon as a field is added,
removed, renamed or moved without the fast path following.
"""
from __future__ import annotations

from dataclasses import fields

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.model import (
    Node, RefV, Saved, TensorV, TInfo, make_tinfo, new_tinfo, ref_value, saved_value, tensor_value, view_tinfo,
)


def _same(a, b) -> None:
    assert type(a) is type(b)
    assert a.__dict__ == b.__dict__
    assert set(a.__dict__) == {f.name for f in fields(type(a))}


def test_tensor_and_ref_values() -> None:
    _same(tensor_value(7), TensorV(7))
    t = TensorV(3)  # values compare by identity
    _same(ref_value("tmethod", "add", None, t), RefV("tmethod", "add", None, t))
    _same(ref_value("torch", "torch.nn"), RefV("torch", "torch.nn"))


def test_saved_record() -> None:
    _same(saved_value(1, 2, 3, 4, 5, "x", True, False),
          Saved(tid=1, counter=2, storage=3, version=4, seq=5, name="x", is_output=True, maybe=False))
    _same(saved_value(1, 2, 3, 0, 5, ""), Saved(1, 2, 3, 0, 5, ""))
    assert saved_value(1, 2, 3, 4, 5, "x") == Saved(1, 2, 3, 4, 5, "x")  # equal and hashed alike
    assert hash(saved_value(1, 2, 3, 4, 5, "x")) == hash(Saved(1, 2, 3, 4, 5, "x"))


def test_new_tensor_record() -> None:
    span = Span(1, 2, 1, 5)
    fast = new_tinfo(4, 4, None, True, None, True, "w", span, ((1, 2),), "float")
    slow = make_tinfo(counter=4, storage=4, rg=None, leaf=True, grad_fn=None, param=True, name="w", created=span,
                      loop_ctx=((1, 2),), dtype="float")
    assert fast == slow and fast.__dict__ == slow.__dict__
    assert fast == TInfo(counter=4, storage=4, rg=None, leaf=True, param=True, name="w", created=span,
                         loop_ctx=((1, 2),), dtype="float")


def test_node_fields_in_the_order_make_node_passes_them() -> None:
    # AutogradMixin.make_node calls Node(...) positionally in this order
    assert [f.name for f in fields(Node)] == [
        "op", "span", "inputs", "leaves", "saved", "seq", "loop_ctx", "report_span", "call_span", "custom", "stack",
        "label", "input_names", "stale_site", "input_tids", "holds", "defs", "frame_args", "opaque", "id"]


def test_view_record() -> None:
    span, other = Span(2, 1, 2, 9), Span(3, 1, 3, 4)
    s = make_tinfo(counter=3, storage=5, rg=True, leaf=False, name="h", created=other, loop_ctx=((1, 1),),
                   data_alias=True, grad_output="F", ctx_saved=True, custom_out=("F", other), grad_site=True,
                   dtype="float", logprob="dist", param=True, stored_at=other, stored_depth=2, held_at=other,
                   alias_of=9, dual=True, base=7, expanded=other, multi_view=("split", other))
    fast = view_tinfo(s, None, False, None, 7, span, ((2, 1),), span, ("chunk", span))
    slow = make_tinfo(counter=s.counter, storage=s.storage, rg=None, leaf=False, grad_fn=None, base=7, name=s.name,
                      created=span, loop_ctx=((2, 1),), expanded=span, multi_view=("chunk", span),
                      data_alias=s.data_alias, grad_output=s.grad_output, ctx_saved=s.ctx_saved,
                      custom_out=s.custom_out, grad_site=s.grad_site, dtype=s.dtype, logprob=s.logprob)
    assert fast == slow and fast.__dict__ == slow.__dict__
