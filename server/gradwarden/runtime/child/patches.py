"""Patches of torch classes: where modules were built or made in-place, Tensor.data's
setter, custom Functions' backward."""
import torch

from . import chainrule as _chainrule
from . import contract as _contract
from . import ctxstash as _cs
from . import freshleaves as _freshleaves
from . import mode as _md
from . import polluted as _polluted
from . import untrained as _untrained
from .hidden import _aliases, _leaf_writes, _note_alias, _watch_shared_grads
from .mode import _mode_active, _user_function
from .records import ATTR_STORE, _dist_sites, _inplace_sites, _mod_callers, _mod_sites
from .report import _internal_error, _state
from .tensors import _internal_overlap, _storage_key
from .userfiles import _caller, _is_user, _site, _user_frame
from .writes import _data_sites, _expand_made, _grad_outputs

_Tensor = torch.Tensor


def _patch_module_init():
    Module = torch.nn.Module
    orig = Module.__init__

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            f = _built_at(self, _caller(1))
            if f is not None and self not in _mod_sites:
                _mod_sites[self] = _site(f)
                _note_callers(self, f)
        except Exception:  # noqa: BLE001
            pass

    __init__.__wrapped__ = orig
    Module.__init__ = __init__

    # `copy.deepcopy(model)` and `torch.load` of a pickled module build instances without
    # `__init__`: their state is set by `__setstate__`, called from the user's line that made them
    orig_state = Module.__setstate__

    def __setstate__(self, state):
        orig_state(self, state)
        try:
            if self not in _mod_sites:
                f = _built_at(self, _caller(1))
                if f is not None:
                    _mod_sites[self] = _site(f)
                    _note_callers(self, f)
        except Exception:  # noqa: BLE001
            pass

    __setstate__.__wrapped__ = orig_state
    Module.__setstate__ = __setstate__


def _note_callers(module, f, depth=4):
    """The user's frames calling the one that built ``module`` (a factory's callers), when the
    construction is not in the program's top frame."""
    callers = []
    f = f.f_back
    while f is not None and len(callers) < depth:
        if _is_user(f.f_code.co_filename):
            callers.append(_site(f))
        f = f.f_back
    if callers:
        _mod_callers[module] = callers


def _built_at(obj, f):
    """The frame of the user's code that built ``obj``: the innermost user frame at or above
    ``f`` that is not an ``__init__`` of ``obj`` itself (a subclass's, calling its base's)."""
    while f is not None:
        if f.f_code.co_name == "__init__" and f.f_locals.get("self") is obj:
            f = f.f_back
            continue
        if _is_user(f.f_code.co_filename):
            return f
        f = f.f_back
    return None


def _patch_distribution_init():
    """Where each ``torch.distributions`` object was built (as for modules: a subclass's own
    ``__init__`` is not the place), and the user frame that called that: a freed-graph error
    through a tensor one of them cached names those lines."""
    try:
        from torch.distributions import Distribution
    except Exception:  # noqa: BLE001
        return
    orig = Distribution.__init__

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            if self not in _dist_sites:
                inner = _built_at(self, _caller(1))
                if inner is not None:
                    # and the user frame that called it: a helper that returns the object
                    # (``def dist(self): return Bernoulli(...)``) hands it to where it is kept
                    outer = _user_frame(inner.f_back)
                    _dist_sites[self] = (_site(inner), _site(outer) if outer is not None else None)
        except Exception:  # noqa: BLE001
            pass

    __init__.__wrapped__ = orig
    Distribution.__init__ = __init__


def _patch_module_setattr():
    """``m.inplace = True`` after construction (``for m in model.modules(): ...``) is where the
    module became in-place: remember that line (the write is reported there, not at the
    construction)."""
    Module = torch.nn.Module
    orig = Module.__setattr__

    def __setattr__(self, name, value):
        orig(self, name, value)
        if isinstance(value, (_Tensor, tuple, list)) and not isinstance(value, torch.nn.Parameter):
            _note_graph_attribute(self, name, value)
        if name == "inplace" and value is True:
            try:
                f = _caller(1)
                while f is not None:
                    if f.f_code.co_name == "__init__" and f.f_locals.get("self") is self:
                        return  # chosen at construction: the construction site says it
                    if _is_user(f.f_code.co_filename):
                        _inplace_sites[self] = _site(f)
                        return
                    f = f.f_back
            except Exception:  # noqa: BLE001
                pass

    __setattr__.__wrapped__ = orig
    Module.__setattr__ = __setattr__


def _note_graph_attribute(module, name, value):
    """``self.memory = memory``: a tensor (or a tuple of them) that carries a graph kept as a plain
    attribute of a module: its node is tagged with the user's line (records.ATTR_STORE)."""
    try:
        nodes = [t.grad_fn for t in (value if isinstance(value, (tuple, list)) else (value,))[:8]
                 if isinstance(t, _Tensor) and t.grad_fn is not None]
        if not nodes:
            return
        f = _user_frame(_caller(2))
        if f is None:
            return
        tag = (_site(f), name, type(module).__name__)
        for node in nodes:
            node.metadata[ATTR_STORE] = tag
    except Exception:  # noqa: BLE001
        _internal_error("module attribute")


def _patch_data_setter():
    if _data_sites is None:  # older torch: no registry keyed by tensors
        return
    base = torch._C.TensorBase.data

    def _get(self):
        out = base.__get__(self, type(self))
        if self.grad_fn is not None:
            _note_alias(self, out)
            if _untrained.watch[0]:
                _untrained.cut(self, ".data", out)
        elif _untrained.watch[0] and self.requires_grad:
            # a parameter read through `.data` (`scale.data.exp()` in a loss): its value, no graph
            _untrained.cut_leaf(self, ".data", out, _caller(1))
        return out

    def _set(self, value):
        base.__set__(self, value)
        if _untrained.taint[0]:  # some copy that left the graph is alive
            _untrained.set_data(self, value)
        try:
            if _internal_overlap(value):
                _data_sites[self] = _site(_user_frame(_caller(1)))
        except Exception:  # noqa: BLE001
            pass

    torch.Tensor.data = property(_get, _set, doc=getattr(base, "__doc__", None))


def _patch_parameter_new():
    """``nn.Parameter(t)`` of a tensor of a graph makes a new leaf: the parameters ``t`` was
    computed from get no gradient through it (GW719's cut)."""
    Parameter = torch.nn.Parameter
    orig = Parameter.__new__

    def __new__(cls, *args, **kwargs):
        out = orig(cls, *args, **kwargs)
        if _untrained.watch[0]:
            data = args[0] if args else kwargs.get("data")
            if isinstance(data, _Tensor) and data.grad_fn is not None:
                _untrained.cut(data, "nn.Parameter(...)", out)
            elif isinstance(data, _Tensor) and data.requires_grad and data is not out:
                # a parameter re-wrapped as a new leaf (`nn.Embedding.from_pretrained(other.weight,
                # freeze=False)`, `nn.Parameter(layer.weight)`): a loss through the new one gives the
                # old one nothing
                _untrained.cut_leaf(data, "nn.Parameter(...)", out, _caller(1))
        if _polluted._optimizers:
            _freshleaves.note_parameter(out, args[0] if args else kwargs.get("data"), _caller(1))
        return out

    __new__.__wrapped__ = orig
    Parameter.__new__ = staticmethod(__new__)


def _patch_custom_backward():
    from torch.autograd import function as F

    cls = getattr(F, "BackwardCFunction", None)
    if cls is None or not hasattr(cls, "apply"):
        return
    orig = cls.apply

    def apply(self, *args):
        # storage -> why writing it in place is a hazard (None: private buffer, harmless)
        keys = {}
        try:
            user = _state.user_grads
            for a in args:
                if isinstance(a, _Tensor):
                    k = _storage_key(a)
                    if k is not None:
                        if _internal_overlap(a):
                            keys[k] = "expanded"
                        elif k in user:
                            keys[k] = "user"
                        else:
                            keys[k] = None
        except Exception:  # noqa: BLE001
            _internal_error("custom backward")
        _grad_outputs.append(keys)
        _cs.check_backward(self)
        try:
            # backward runs inside the mode's handling of ``Tensor.backward`` (the mode is off
            # there): a custom backward is user code, so its writes are watched again
            if _md._MODE is not None and not _state.suspended and _user_function(self) and not _mode_active():
                with _md._MODE:
                    out = _contract.run_backward(self, lambda: orig(self, *args))
                    _chainrule.after_backward(self, args, out)
            else:
                out = _contract.run_backward(self, lambda: orig(self, *args))
                _chainrule.after_backward(self, args, out)
        finally:
            _grad_outputs.pop()
        if _untrained.watch[0] and not _state.suspended:
            _untrained.none_returned(self, out)
        if keys.get("writes"):
            try:
                _watch_shared_grads(self, args, keys["writes"])
            except Exception:  # noqa: BLE001
                _internal_error("shared grad")
        return out

    apply.__wrapped__ = orig
    cls.apply = apply
