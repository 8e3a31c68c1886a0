"""Installs every hook of the child (torch is imported)."""
import torch

from . import aliased as _aliased
from . import cleared as _cleared
from . import ctxstash as _cs
from . import evalmode as _evalmode
from . import freshleaves as _freshleaves
from . import gradmode as _gradmode
from . import groups as _groups
from . import heldgrads as _heldgrads
from . import hookslots as _hookslots
from . import lrzero as _lrzero
from . import memo as _memo
from . import nullsteps as _nullsteps
from . import mode as _md
from . import oneshot as _oneshot
from . import polluted as _polluted
from . import samples as _samples
from . import staleopt as _staleopt
from . import untrained as _untrained
from . import zerograd as _zerograd
from . import zerohooks as _zerohooks
from .backward import _wrap_backward
from .compile import _patch_compile
from .mode import _make_mode
from .patches import (
    _patch_custom_backward, _patch_data_setter, _patch_distribution_init, _patch_module_init, _patch_module_setattr,
    _patch_parameter_new
)
from .report import _patch_warnings, _state
from .saved import _pack, _unpack


def install(config):
    """Install every hook (torch is imported)."""
    _state.max_steps = config.get("max_steps")
    _patch_module_init()
    _patch_module_setattr()
    _patch_distribution_init()
    _polluted.install()
    _untrained.install()
    _state.finalizers.append(_untrained.finish)
    _heldgrads.install()
    _state.finalizers.append(lambda: _cleared.resolve(_state.bw_count, _state.last_bw_site, final=True))
    _groups.install()
    _aliased.install()
    _staleopt.install()
    _state.finalizers.append(_staleopt.finish)
    _lrzero.install()
    _state.finalizers.append(_zerograd.finish)
    _oneshot.install()
    _freshleaves.install()
    _nullsteps.install()
    _zerohooks.install()
    _patch_parameter_new()
    _hookslots.install()
    _evalmode.install()
    _gradmode.install()
    _memo.install()
    _samples.install()
    _cs.install()
    _patch_data_setter()
    _patch_custom_backward()
    _patch_compile()
    _patch_warnings()
    torch.autograd.backward = _wrap_backward(torch.autograd.backward, "backward")
    torch.autograd.grad = _wrap_backward(torch.autograd.grad, "grad")
    hooks = torch.autograd.graph.saved_tensors_hooks(_pack, _unpack)
    hooks.__enter__()
    mode = _md._MODE = _make_mode()
    mode.__enter__()
    return hooks, mode
