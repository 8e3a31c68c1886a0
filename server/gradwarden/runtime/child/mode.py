"""The TorchFunctionMode that sees every torch call made from Python."""
import torch

from . import ctxstash as _cs
from . import heldgrads as _heldgrads
from . import nonfinite as _nf
from . import probestate as _ps
from . import recurrent as _recurrent
from . import samples as _samples
from . import untrained as _untrained
from . import zerograd as _zerograd
from .chainrule import note_fresh as _note_fresh
from .graphtags import _tag_built
from .hidden import _note_alias
from .records import _packs
from .saved import _check_packed_during
from .writes import (
    _expand_funcs, _expanded, _kind_of_function, _on_write, _track_views, _write_kind, note_nograd_view
)


def _make_mode():
    """A ``TorchFunctionMode``: it sees the calls made from Python (the user's code, torch's own
    Python code: nn modules, optimizers), above autograd, and none of the aten ops that C++
    kernels and composite implementations run internally (an LSTM cell's ``sigmoid_`` on its
    private gates). Unlike a dispatch mode, it does not make torch take its "tensor subclass"
    code paths (out-of-place derivative formulas), so the program runs as it does plainly."""
    from torch.overrides import TorchFunctionMode

    kinds = _write_kind
    expand_funcs = _expand_funcs
    detach = torch.Tensor.detach
    detach_ = torch.Tensor.detach_
    zeroing = {f for f in (getattr(torch.Tensor, "zero_", None), getattr(torch, "_foreach_zero_", None))
               if f is not None}
    grads_zeroed = _heldgrads.grads_zeroed
    fw_frames = _cs._frames
    probe_fresh = _ps.fresh
    singular = _nf._singular
    singular_kind = _nf.kind_of
    watch_singular = _nf.watch
    untrained_watch = _untrained.watch
    untrained_cut = _untrained.cut
    untrained_call = _untrained.after_call
    untrained_taint = _untrained.taint
    untrained_carry = _untrained.carry
    sample_taint = _samples.taint
    sample_carry = _samples.carry
    recurrent_detach = _recurrent.note_detach
    recurrent_taint = _recurrent.taint
    recurrent_carry = _recurrent.carry
    zero_kind = _zerograd._zero_kind
    zero_kind_of = _zerograd.kind_of
    zero_note = _zerograd.note
    note_call = _cs.note_call
    grad_enabled = torch.is_grad_enabled
    tensor_type = torch.Tensor
    for f in (getattr(torch.Tensor, "expand", None), getattr(torch.Tensor, "expand_as", None),
              getattr(torch.Tensor, "broadcast_to", None), getattr(torch, "broadcast_to", None)):
        if f is not None:
            expand_funcs.add(f)

    class GradwardenMode(TorchFunctionMode):
        """Only mutating calls cost more than a dict lookup."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            try:
                kind = kinds.get(func)
            except TypeError:
                kind = 0
            if kind is None:
                kind = _kind_of_function(func)
            if kind == 0:
                if kwargs:
                    if kwargs.get("inplace") is True:
                        kind = 1
                    elif kwargs.get("out") is not None:
                        kind = 3
                if kind == 0:
                    if func is detach:
                        out = func(*args, **kwargs) if kwargs else func(*args)
                        _note_alias(args[0] if args else None, out)
                        if untrained_watch[0] and args and isinstance(args[0], torch.Tensor):
                            untrained_cut(args[0], ".detach()", out)
                        if args and type(args[0]) is tensor_type and grad_enabled():
                            recurrent_detach(args[0], out)  # a state fed back detached (GW733)
                        if fw_frames:
                            note_call(func, args, kwargs, out)
                        return out
                    packs = _packs[0]
                    if _expanded or func in expand_funcs:
                        out = _track_views(func, args, kwargs)
                    elif kwargs:
                        out = func(*args, **kwargs)
                    else:
                        out = func(*args)
                    if packs != _packs[0]:
                        _check_packed_during(func, packs)
                    _tag_built(out)
                    if not grad_enabled() and type(out) is tensor_type and out._is_view():
                        note_nograd_view(out)  # written later with grad on, it raises (GW711)
                    try:
                        sk = singular.get(func)
                    except TypeError:
                        sk = 0
                    if sk is None:
                        sk = singular_kind(func)
                    if sk:  # an op with an infinite derivative somewhere: watch its backward (GW720)
                        watch_singular(sk, args, out)
                    else:
                        try:
                            zk = zero_kind.get(func)
                        except TypeError:
                            zk = False
                        if zk is None:
                            zk = zero_kind_of(func)
                        if zk:  # an op with a zero derivative: search the next loss's graph (GW718)
                            zero_note(out, func, args, kwargs)
                    if fw_frames:  # a custom Function's forward runs: what derives from its inputs
                        note_call(func, args, kwargs, out)
                    if probe_fresh:  # the chain-rule probe runs: what it makes, it may write
                        _note_fresh(out)
                    if untrained_watch[0]:  # some optimizer parameter has not trained yet (GW719)
                        untrained_call(func, args, out)
                    if untrained_taint[0]:  # a copy of such a parameter's value is alive
                        untrained_carry(args, out)
                    if sample_taint[0]:  # a `sample()` of a distribution that requires grad is alive (GW722)
                        sample_carry(args, out)
                    if recurrent_taint[0]:  # a detached copy of a value made since the last backward
                        recurrent_carry(args)
                    return out
            if func is detach_ and untrained_watch[0] and args and isinstance(args[0], tensor_type):
                # `h.detach_()`: the tensor itself leaves the graph (its graph is read before it goes)
                untrained_cut(args[0], ".detach_()", args[0])
            if func in zeroing and args:  # `p.grad.zero_()` in a loop: a zeroing call (GW725)
                grads_zeroed(args[0] if isinstance(args[0], (list, tuple)) else args[:1])
            out = _on_write(func, kind, args, kwargs)
            _tag_built(out)
            if untrained_taint[0]:  # `loss += term` of a copy that left the graph
                untrained_carry(args, out)
            try:
                zk = zero_kind.get(func)
            except TypeError:
                zk = False
            if zk or (zk is None and zero_kind_of(func)):
                zero_note(out, func, args, kwargs)  # round_, sign_, relu_ ... of a graph tensor
            return out

    return GradwardenMode()

_MODE = None


def _user_function(node):
    """False for the Functions of torch's compiler stack (AOTAutograd's compiled backward)."""
    cls = getattr(node, "_forward_cls", None)
    module = getattr(cls, "__module__", "") or ""
    return not module.startswith(("torch._functorch", "torch._dynamo", "torch._inductor", "torch._higher_order_ops"))


def _mode_active():
    try:
        stack = torch._C._len_torch_function_stack()
        return any(torch._C._get_function_stack_at(i) is _MODE for i in range(stack))
    except Exception:  # noqa: BLE001
        return True
