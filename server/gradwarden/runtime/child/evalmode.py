"""Training steps that run a module in eval mode (GW719/GW718, at the mode switch).

A module whose ``forward`` (the user's code) reads ``self.training`` takes another branch after
``.eval()`` or ``.train(False)``: ``round`` instead of a straight-through estimator, ``argmax``
instead of a hard Gumbel sample. The run proves the hazard when all of these happen:

- the module was called with grad on while its ``training`` flag was False;
- a backward ran after that call, and then an optimizer stepped that holds parameters of the
  module (or, for a module without parameters, of the module that contains it);
- the step's gradients show the branch: the module's own parameters got none (GW719) or every
  one of them an all-zero gradient (GW718), or a parameter of the module that contains it got an
  all-zero gradient (GW718).

"Reads ``self.training``" is any method of the module's class (or of its user-written bases):
forward may branch in a helper it calls (``self._quantize(x)``).

It is shown where the static finding is (engine/checks/modes.py): the ``.train()`` that ran once
before training and that a later ``.eval()`` (validation) undid, when the module had trained in
training mode before that switch; else the ``.train(False)``/``.eval()`` itself (a helper that
switches the whole model off). A ``.train()`` on the module forgets its eval-mode calls (a
validation forward made with grad on, then training resumed in training mode). 
BatchNorm (with running statistics) and Dropout (p > 0) change what they compute in eval mode too
(GW724): when a training step runs them in eval mode it is reported only when the module switched
as a whole holds every trainable parameter the optimizer steps (a frozen backbone kept in eval on
purpose is a part of the model) and the program asked for training mode (a `.train()` of it, or
the switch made by another function than the one that steps) -- the static check's conditions.
"""
import weakref

import torch

from . import optwatch as _optwatch
from .records import _mod_sites
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _is_user, _site, _user_frame

_reads = {}  # module class -> its forward reads `self.training` (the user's code)
_info = weakref.WeakKeyDictionary()  # watched module -> _Info
_depth = [0]  # nesting of Module.train (it recurses into the children)
_named = set()  # the switch sites a GW718/GW719 finding named
explained = set()  # ids of the parameters a GW719 here says get no gradient (untrained.py names no other cut for them)


class _Info(object):
    __slots__ = ("train_site", "eval_site", "trained", "trained_before_eval", "eval_call", "root", "__weakref__")

    def __init__(self):
        self.train_site = None  # the last .train() / .train(True) that reached the module
        self.eval_site = None  # the last .eval() / .train(False)
        self.trained = False  # called in training mode with grad on since train_site
        self.trained_before_eval = False
        self.eval_call = None  # backward count at its first grad-enabled call in eval mode, since eval_site
        self.root = None  # weakref: the module the switch was called on


def _names_training(code, depth=0):
    """``code`` or a function, lambda or comprehension defined in it names ``training``."""
    if "training" in code.co_names:
        return True
    return depth < 3 and any(_names_training(c, depth + 1) for c in code.co_consts if hasattr(c, "co_names"))


def _reads_training(cls):
    """The module's code (your code: its ``forward``, the other methods of its class and of its
    user-written bases, which forward may call: ``self._quantize(x)``) reads ``self.training``."""
    out = _reads.get(cls)
    if out is None:
        out = False
        try:
            for klass in cls.__mro__:
                if klass is torch.nn.Module or klass is object:
                    break
                for value in list(vars(klass).values())[:256]:
                    fn = getattr(value, "__func__", getattr(value, "fget", value))  # static/class method, property
                    code = getattr(fn, "__code__", None)
                    if code is not None and _is_user(code.co_filename) and _names_training(code):
                        out = True
                        break
                if out:
                    break
        except Exception:  # noqa: BLE001
            pass
        _reads[cls] = out
    return out


def _pre_hook(module, args):
    if _state.suspended or not torch.is_grad_enabled():
        return None
    info = _info.get(module)
    if info is None:
        return None
    if module.training:
        info.trained = True
    elif info.eval_call is None:
        info.eval_call = _state.bw_count
    return None


def _mode_layer(m):
    """torch's BatchNorm with running statistics, Dropout with p > 0: they compute otherwise in eval mode."""
    nn = torch.nn.modules
    if isinstance(m, nn.batchnorm._BatchNorm):
        return bool(m.track_running_stats)
    if isinstance(m, nn.dropout._DropoutNd):
        return m.p > 0
    return False


def _switched(root, mode, site, alone=False):
    """``root`` switched to ``mode`` at ``site`` (with its submodules; ``alone``: a store of its own
    flag only, which leaves its submodules as they were)."""
    for m in ((root,) if alone else root.modules()):
        if not (_reads_training(type(m)) or _mode_layer(m)):
            continue
        info = _info.get(m)
        if info is None:
            info = _info[m] = _Info()
            m.register_forward_pre_hook(_pre_hook)
        info.root = weakref.ref(root)
        if mode:
            info.train_site = site
            info.trained = info.trained_before_eval = False
            info.eval_call = None
        else:
            info.trained_before_eval = info.trained_before_eval or info.trained
            info.eval_site = site
            info.trained = False


def _holder(module, root):
    """``module`` when it has parameters that require grad, else the module of ``root`` that contains it."""
    if any(p.requires_grad for p in module.parameters()):
        return module
    for m in (root.modules() if root is not None else ()):
        if any(c is module for c in m.children()):
            return m
    return None


def on_step(opt, args, kwargs):
    """Global step pre-hook: modules run in eval mode before this step's backward."""
    if _state.suspended or not _info:
        return None
    try:
        n = _state.bw_count
        held = None
        later = []
        for module, info in list(_info.items()):
            if info.eval_call is None or info.eval_call >= n or module.training:
                continue
            if held is None:
                held = {id(p) for g in opt.param_groups for p in g.get("params", ())}
            root = info.root() if info.root is not None else None
            code = None
            holder = None if _mode_layer(module) else _holder(module, root)
            params = [p for p in holder.parameters() if p.requires_grad and id(p) in held] if holder is not None else ()
            if params:
                if holder is module:
                    if not any(p.grad is not None for p in params):
                        code = "GW719"
                    elif all(p.grad is not None and p.grad.numel() and not p.grad.any() for p in params):
                        # every one of its parameters got an exactly zero gradient: the eval branch
                        # went through a zero-derivative op (`round` instead of its estimator)
                        code = "GW718 own"
                elif any(p.grad is not None and p.grad.numel() and not p.grad.any() for p in params):
                    code = "GW718"
            if code is not None:
                if code == "GW719":  # the eval branch's own cuts (an argmax, a detach) are this switch's effect
                    explained.update(id(p) for p in params)
                _report(module, info, code.split()[0], opt, _site(_user_frame(_caller(1))), own=code.endswith("own"))
                info.eval_call = None
            else:
                later.append((module, info, root))
        # BatchNorm/Dropout, or a `self.training` branch whose parameters still got gradients: the
        # step ran in eval mode all the same (GW724), unless GW718/GW719 named that switch already
        for module, info, root in later:
            if _layer_step(module, info, root, opt):
                info.eval_call = None
    except Exception:  # noqa: BLE001
        _internal_error("eval mode: step")
    return None


def _layer_step(module, info, root, opt):
    """GW724: a mode-dependent module run in eval mode by this training step (True: reported)."""
    if root is None or root.training:
        return False
    mine = {id(p) for p in root.parameters()}
    stepped = [p for g in opt.param_groups for p in g.get("params", ()) if p.requires_grad]
    if not stepped or not all(id(p) in mine for p in stepped) or all(p.grad is None for p in stepped):
        return False
    step_site = _site(_user_frame(_caller(2)))
    eval_site = info.eval_site
    asked = info.train_site is not None or (eval_site is not None and step_site is not None
                                            and eval_site[::2] != step_site[::2])
    if not asked:
        return False  # the stepping function keeps the whole model in eval itself: a choice
    if tuple(info.train_site if info.trained_before_eval and info.train_site is not None else eval_site or ()) \
            in _named:
        return True  # GW718/GW719 names this switch (engine/checks/modes.py does the same)
    if info.trained_before_eval and info.train_site is not None:
        where = info.train_site
        how = ("the `.train()` here runs once, and the `.eval()` at %s:%s switched the model off before this "
               "step; call `.train()` at the start of every training iteration" % tuple(eval_site[:2])
               if eval_site else "call `.train()` at the start of every training iteration")
    else:
        where = eval_site
        how = "this call left it in eval mode; restore the mode the model had before the training step"
    name = type(module).__name__
    sites = [{"kind": "step", "site": step_site, "message": "%s.step() follows" % type(opt).__name__}] \
        if step_site is not None else []
    what = ("takes its eval-mode branch (`self.training` is False)" if not _mode_layer(module) else
            "normalises with its running statistics instead of the batch's" if "Norm" in name else "drops nothing")
    _finding(("eval-mode-layer", tuple(where or ())), code="GW724", kind="eval-mode-training", severity="warning",
             site=where, sites=sites,
             message="a training step ran the model in eval mode: its `%s` %s, and the gradients differ from "
                     "train mode's (%s)" % (name, what, how))
    return True


def _report(module, info, code, opt, step_site, own=False):
    name = type(module).__name__
    sites = []
    if info.trained_before_eval and info.train_site is not None:
        where = info.train_site
        sites.append({"kind": "eval", "site": info.eval_site,
                      "message": "this switch to eval mode is never undone before the next training step"})
        how = ("it trained in training mode after the `.train()` here, until an `.eval()` switched it off; this "
               "`.train()` runs once and is not run again before the next training steps")
    else:
        where = info.eval_site
        how = "this call switched it to eval mode before the training steps"
    built = _mod_sites.get(module) if _mod_sites is not None else None
    if built is not None:
        sites.append({"kind": "created", "site": built, "message": "the %s is built here" % name})
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site, "message": "%s.step() follows" % type(opt).__name__})
    got = ("its parameters get no gradient" if code == "GW719" else
           "every one of its parameters gets an all-zero gradient" if own else
           "a parameter before it gets an all-zero gradient")
    _named.add(tuple(where or ()))
    _finding(("eval-mode", tuple(where or ()), name), code=code, kind="untrained-parameter" if code == "GW719"
             else "zero-gradient", severity="warning", site=where, sites=sites,
             message="a training step ran `%s` in eval mode: its forward reads `self.training` and took its "
                     "evaluation branch, and %s (%s)" % (name, got, how))


def install():
    Module = torch.nn.Module
    orig = Module.train

    def train(self, mode=True):
        _depth[0] += 1
        try:
            out = orig(self, mode)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0 and not _state.suspended:
            try:
                _switched(self, bool(mode), _site(_user_frame(_caller(1))))
            except Exception:  # noqa: BLE001
                _internal_error("eval mode: switch")
        return out

    train.__wrapped__ = orig
    Module.train = train
    orig_setattr = Module.__setattr__

    def __setattr__(self, name, value):
        orig_setattr(self, name, value)
        if name == "training" and _depth[0] == 0 and not _state.suspended and isinstance(value, bool):
            # `m.training = False` (a loop over `model.modules()`, one module at a time): the switch
            # `.train(False)` makes, without the call (Module.train stores it here too, at depth > 0)
            try:
                _switched(self, value, _site(_user_frame(_caller(1))), alone=True)
            except Exception:  # noqa: BLE001
                _internal_error("eval mode: store")

    __setattr__.__wrapped__ = orig_setattr
    Module.__setattr__ = __setattr__
    _optwatch.on_step(on_step)
