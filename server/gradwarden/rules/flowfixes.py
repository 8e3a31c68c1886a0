"""Fix suggestions of the gradient-flow rules (GW7xx), as data: which realiser of
``gradwarden.fixes`` (fixes/flow.py, fixes/clone.py) applies where, and whether it is safe."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from gradwarden.engine.diagnostic import Edit, Fix, Span
from gradwarden.engine.events import Event


def _p(**kw: Any) -> Tuple[Tuple[str, str], ...]:
    return tuple((k, str(v)) for k, v in kw.items() if v not in (None, ""))


def _after(span: Optional[Span], text: str) -> Tuple[Edit, ...]:
    if span is None:
        return ()
    return (Edit(Span(span.end_row, span.end_column, span.end_row, span.end_column), text),)


def flow_fixes(code: str, ev: Event) -> List[Fix]:
    ff = ev.fix_facts
    facts = ev.facts
    out: List[Fix] = []
    if code in ("GW704", "GW705") and ev.severity == 3:
        # said only "if `.to()` copied it": on the same device the tensor is the leaf, and
        # `retain_grad()` or a detach would break a correct program (the FGSM tutorial)
        return out
    if code == "GW701":
        kind = ff.get("cut_kind")
        at = ff.get("cut_span") or ev.span
        if kind in ("rewrap", "rewrap_rg"):
            out.append(Fix("unwrap_number", "Use the loss tensor itself instead of re-wrapping its value",
                           safe=True, preferred=True, target=at, params=_p(mode="rewrap")))
        elif kind in ("number", "item"):
            out.append(Fix("unwrap_number", "Keep the tensor: drop `.item()` here (take `.item()` only for logging)",
                           safe=False, preferred=True, target=at, params=_p(mode="item")))
        elif kind == "nograd" and ff.get("region") == "decorator":
            out.append(Fix("drop_decorator", "Let the function record gradients: remove `@torch.no_grad()`",
                           safe=False, preferred=True, target=at))
        elif kind == "nograd" and ff.get("region") in ("", "with"):
            out.append(Fix("leave_no_grad", "Compute it with gradients: move it out of `with torch.no_grad():`",
                           safe=False, preferred=True, target=at))
        elif kind == "frozen":
            out.append(Fix("freeze_first", "Freeze before attaching the new module, so that it trains",
                           safe=False, preferred=True, target=at))
        elif kind in ("detach", "data_attr"):
            out.append(Fix("drop_detach", "Keep the graph: drop the `.detach()` / `.data` that cuts it",
                           safe=False, preferred=True, target=at))
    elif code == "GW702" and ff.get("api") == "autograd.grad":
        bw = ff.get("backward_span")
        out.append(Fix("reduce_loss", "Differentiate the sum of the outputs: `torch.autograd.grad(out.sum(), ...)`",
                       safe=False, preferred=True, target=bw, params=_p(reduce="sum")))
    elif code == "GW702" and ff.get("api") == "backward" and ff.get("backward_span") not in (None, ev.span) and \
            any(r.kind == "call" for r in ev.related):
        # shown at the last op of a per-sample loss a helper returns (`return recon + kld`): the
        # reduction goes there, the line the diagnostic names, not at the caller's backward
        out.append(Fix("reduce_loss", "Reduce the returned loss: `return (...).mean()`", safe=False, preferred=True,
                       target=ev.span, params=_p(reduce="mean", at="return")))
        out.append(Fix("reduce_loss", "Reduce the returned loss: `return (...).sum()`", safe=False, target=ev.span,
                       params=_p(reduce="sum", at="return")))
    elif code == "GW702" and ff.get("api") == "backward":
        bw = ff.get("backward_span")
        out.append(Fix("reduce_loss", "Reduce the loss: `.mean().backward()`", safe=False, preferred=True,
                       target=bw, params=_p(reduce="mean")))
        out.append(Fix("reduce_loss", "Reduce the loss: `.sum().backward()`", safe=False, target=bw,
                       params=_p(reduce="sum")))
    elif code == "GW702" and ff.get("api") == "autograd.grad":
        call = ff.get("backward_span")
        out.append(Fix("reduce_loss", "Differentiate a scalar: `torch.autograd.grad(y.mean(), ...)`", safe=False,
                       preferred=True, target=call, params=_p(reduce="mean")))
        out.append(Fix("reduce_loss", "Differentiate a scalar: `torch.autograd.grad(y.sum(), ...)`", safe=False,
                       target=call, params=_p(reduce="sum")))
    elif code == "GW703" and ff.get("reason") == "no_grad":
        out.append(Fix("requires_grad_after", f"Make `{facts.get('name', 'it')}` require grad where it is made: "
                       "`(...).requires_grad_()`", safe=True, preferred=True, target=ev.span))
    elif code == "GW703" and ff.get("reason") == "unused":
        out.append(Fix("allow_unused", "Pass `allow_unused=True, materialize_grads=True` (its gradient is then zeros)",
                       safe=False,
                       preferred=True, target=ff.get("call_span") or ev.span))
    elif code == "GW704":
        flag = ff.get("flag")
        out.append(Fix("detach_instead", "Detach instead: `y = y.detach()`" if flag is False else
                       "It already requires grad: keep its gradient with `retain_grad()`",
                       safe=flag is False, preferred=True, target=ff.get("stmt_span") or ev.span))
    elif code in ("GW705", "GW706"):
        out.append(Fix("leaf_last", "Create the leaf last: `(torch.randn(...) * k).requires_grad_()`", safe=True,
                       preferred=True, target=ev.span))
        if code == "GW705":
            out.append(Fix("retain_grad", f"Keep this non-leaf's gradient: `{facts.get('name', 'w')}.retain_grad()`",
                           safe=False, target=ev.span))
    elif code == "GW708":
        out.append(Fix("use_reentrant", "Use the non-reentrant checkpoint: `use_reentrant=False`", safe=True,
                       preferred=True, target=ff.get("call_span") or ev.span))
    elif code == "GW709":
        out.append(Fix("chain_rule", f"Apply the chain rule: multiply by `{facts.get('grad', 'grad_output')}`",
                       safe=False, preferred=True, target=ff.get("expr_span") or ev.span,
                       params=_p(grad=facts.get("grad"))))
    elif code == "GW710":
        out.append(Fix("zero_grad", f"Reset the gradients after each step: `{facts.get('opt', 'opt')}.zero_grad()`",
                       safe=False, preferred=True, target=ff.get("step_span") or ev.span))
    elif code == "GW716":
        out.append(Fix("requires_grad_after", f"Make `{facts.get('name', 'it')}` a trainable leaf where it is made: "
                       "`(...).requires_grad_()`", safe=False, preferred=True, target=ev.span))
    elif code == "GW715" and ff.get("module_text") and ff.get("value_text"):
        text = f"{ff['module_text']}.requires_grad_({ff['value_text']})"
        out.append(Fix("requires_grad_method", f"Set the flag on its parameters: `{text}`", safe=False,
                       preferred=True, target=ev.span))
    elif code == "GW718":
        op = str(ff.get("op", "round")).rstrip("_")
        out.append(Fix("straight_through", f"Pass the gradient straight through `{op}`: `x + (x.{op}() - x).detach()`",
                       safe=False, preferred=True, target=ev.span, params=_p(op=op)))
    elif code == "GW711" and ff.get("value_rg") and ff.get("view_span") is not None:
        # the value written must keep its gradient: a no_grad write would cut it
        at = ff["view_span"]
        out.append(Fix("clone", "Make the view a tensor of its own before writing: `.clone()`", safe=False,
                       preferred=True, target=at, edits=_after(at, ".clone()"), params=_p(mode="expr")))
    elif code == "GW711":
        out.append(Fix("no_grad", "Do the write under `with torch.no_grad():` too, like the view (not recorded)",
                       safe=False, preferred=True, target=ev.span))
    elif code == "GW712":
        out.append(Fix("detach_rebind", "Rebind instead: `h = h.detach()`", safe=True, preferred=True,
                       target=ff.get("call_span") or ev.span))
    elif code == "GW713" and ff.get("src_span") is not None:
        src = ff["src_span"]
        out.append(Fix("clone", "Clone the source before writing (`.clone()`)", safe=True, preferred=True,
                       target=src, edits=_after(src, ".clone()"), params=_p(mode="expr")))
    elif code == "GW714" and ff.get("unfold_span") is not None:
        at = ff["unfold_span"]
        out.append(Fix("clone", "Work on a copy of the windows: `.unfold(...).clone()`", safe=False, preferred=True,
                       target=at, edits=_after(at, ".clone()"), params=_p(mode="expr")))
    return out
