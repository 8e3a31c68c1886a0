"""Parameters an optimizer steps that no backwarded loss trains (GW719).

The run sees every ``optimizer.step()`` and the ``.grad`` each parameter has then. A parameter
that requires grad, whose optimizer steps after a loss was backpropagated, and whose ``.grad``
at every such step is None never trains. That alone is not a bug (a module built but never
called, a head whose loss starts after a warm-up), so a finding needs the run's proof of why
no gradient arrives, a *cut*:

- a value computed from the parameter left the graph as a tensor (``.detach()``, ``.data``,
  re-wrapped as ``nn.Parameter(...)``, computed on under ``no_grad``), and a backwarded loss
  that does not reach the parameter directly went through a node built from that copy (the
  copy is followed: ``carry`` passes it on, or marks the node it builds);
- a number was read from it (``.item()``, ``float()``, ``.tolist()``, ``.numpy()``) from a
  tensor that no backward went through (``loss.item()`` for a log is no cut): a number cannot
  be followed into the loss, so it counts as used;
- a custom backward returned None for the input it comes through, while ``needs_input_grad``
  asked for a gradient there.

The cut is found by walking, where it happens, the graph of the value that leaves it down to
the leaves (bounded: ``_WALK_NODES`` nodes, ``_WALKS_PER_STEP`` walks between two backward
calls, ``_WALKS_PER_SITE`` from a line whose walks found nothing, and only while some
parameter has not been reached yet, which a correct program stops paying for after its first
step). A ``.grad`` the program changed after backward (clipped, zeroed, set to None: a freeze)
is not counted, a parameter that backward ever reaches is forgotten (an exactly zero gradient
behind ``round``/``floor``/``sign`` is GW718's, proven per backward in zerograd.py), and
programs without an optimizer are not judged. Findings are made when the run ends.
"""
import weakref

import torch

from . import deadterms as _deadterms
from . import evalmode as _evalmode
from . import optwatch as _optwatch
from . import polluted as _polluted
from .graphtags import _walk
from .paramnames import describe, quoted
from .report import _finding, _internal_error, _state
from .tensors import tensor_registry
from .userfiles import _caller, _display_file, _grad_off_decorator, _is_user, _library_call, _site, _user_frame

_Tensor = torch.Tensor
_Parameter = torch.nn.Parameter

_WALK_NODES = 5000
_WALKS_PER_STEP = 16
_WALKS_PER_SITE = 4  # a line whose cuts reach no untrained parameter is not walked again
_MAX_TRACKED = 20000  # parameters followed, over all optimizers
_SNAP_NUMEL = 1 << 16  # parameters whose value is kept to tell one the program updates itself
_MAX_NAMED = 64  # parameters named when first stepped without a gradient (a report quotes 5)
_named_count = [0]
_NUMBER = frozenset(("item", "tolist", "numpy", "__float__", "__int__", "__index__", "__complex__"))


class _Rec(object):
    __slots__ = ("opt", "kept", "named", "none", "cuts", "steps", "snap")

    def __init__(self, opt):
        self.opt = weakref.ref(opt)
        # the optimizer itself once it stepped this parameter without a gradient: the finding is
        # made when the run ends, and a training function's optimizer is freed before that
        self.kept = None
        # its describe() while its modules are alive: they may be freed before the run ends too
        self.named = None
        self.none = 0
        self.cuts = []  # [(site, how)]
        self.steps = []  # step sites
        # its value when first stepped without a gradient (small parameters): one the program
        # moves by other means (a running mean of prototypes) is not untrained
        self.snap = None


_pending = tensor_registry()  # parameter -> _Rec, until backward reaches it
_tracked = tensor_registry()  # every parameter an optimizer was seen to hold -> True
_count = [0]
watch = [False]  # read by the mode: cuts are looked for
_opt_sites = weakref.WeakKeyDictionary()  # optimizer -> where it was built
# optimizers over a model instance the program re-created since (staleopt.py shows that line): a
# copy of the old instance's values (`model.state_dict()` loaded into the new one) is not the cause
superseded = weakref.WeakSet()
_last_step = weakref.WeakKeyDictionary()  # optimizer -> backward count at its last step
_walks = [0]
_walked = set()
_site_walks = {}  # (code, line) -> walks made from there


# Before the first backward of a program that built no optimizer (a script that backwards once
# and compares gradients, a training loop that updates `p.data` by hand), the parameters of its
# modules have not trained yet either: a copy of them is followed too, for dead terms only
# (deadterms.py: no optimizer, no GW719). `_free` counts the copies made so.
_free = [0]


def _unarmed():
    """True before the first backward while no optimizer exists."""
    return _state.bw_count == 0 and not _opt_sites


def _armed():
    return _count[0] > 0 or _free[0] > 0


def _update_watch():
    watch[0] = (_count[0] > 0 or _unarmed()) and _walks[0] < _WALKS_PER_STEP


def note_optimizer(opt):
    if _pending is None:
        return
    try:
        site = _site(_user_frame(_caller(2)))
        if site is not None:
            _opt_sites[opt] = site
        for group in opt.param_groups:
            for p in group.get("params", ()):
                if isinstance(p, _Tensor) and _pending.get(p) is None:
                    if _track(p, opt) is None and _count[0] >= _MAX_TRACKED:
                        return
    except Exception:  # noqa: BLE001
        _internal_error("untrained: optimizer")
    finally:
        _update_watch()


def _track(p, opt):
    """Follow parameter ``p`` of ``opt`` until backward reaches it (the new record, or None)."""
    _tracked[p] = True
    if not (p.requires_grad and p.is_leaf) or _count[0] >= _MAX_TRACKED:
        return None
    rec = _pending[p] = _Rec(opt)
    _count[0] += 1
    return rec


def _forget(p):
    try:
        del _pending[p]
        _count[0] -= 1
    except KeyError:
        pass


def on_step(opt, args, kwargs):
    """Global step pre-hook: the .grad each pending parameter of ``opt`` steps with."""
    if _state.suspended or _pending is None or not _count[0]:
        return None
    try:
        n = _state.bw_count
        if _last_step.get(opt, 0) == n:
            return None  # no loss was backpropagated since this optimizer's last step
        _last_step[opt] = n
        site = _site(_user_frame(_caller(1)))
        for group in opt.param_groups:
            for p in group.get("params", ()):
                rec = _pending.get(p) if isinstance(p, _Tensor) else None
                if rec is None and isinstance(p, _Tensor) and _tracked is not None and _tracked.get(p) is None:
                    # given to the optimizer after it was built (`add_param_group`, a group's list
                    # edited): followed from this step on
                    rec = _track(p, opt)
                if rec is None or not p.requires_grad:
                    continue
                g = p.grad
                if g is not None:
                    # backward reached it (zeros included: GW718's, when an op proves them)
                    _forget(p)
                    continue
                if not _clean(p, g):
                    continue
                rec.none += 1
                rec.kept = opt
                if rec.none == 1 and p.numel() <= _SNAP_NUMEL:
                    with torch.no_grad():
                        rec.snap = p.detach().clone()
                if rec.named is None and _named_count[0] < _MAX_NAMED:
                    _named_count[0] += 1
                    rec.named = describe(p)
                if site is not None and len(rec.steps) < 2 and site not in rec.steps:
                    rec.steps.append(site)
    except Exception:  # noqa: BLE001
        _internal_error("untrained: step")
    finally:
        _update_watch()
    return None


def _clean(p, g):
    """True when ``g`` is what backward left in ``p.grad`` (the program did not clip, zero or
    drop it since)."""
    grads = _polluted._grads
    rec = grads.get(p) if grads is not None else None
    if g is None:
        return rec is None
    if rec is None:
        return False
    state = _polluted._grad_state(p)
    return state is not None and (rec[0], rec[1]) == state


def before_backward(roots):
    """Before a top-level backward: a new step's budget of walks; the copies its graph uses."""
    _walks[0] = 0
    _walked.clear()
    _update_watch()
    if taint[0] or _tagged[0] or _number_cuts:
        try:
            _uses_of_cuts(roots)
        except Exception:  # noqa: BLE001
            _internal_error("untrained: uses")


def optimizer_params():
    """Every tensor an optimizer the run saw holds."""
    for opt in list(_opt_sites.keys()):
        for group in opt.param_groups:
            for p in group.get("params", ()):
                if isinstance(p, _Tensor):
                    yield p


def optimizer_of(p):
    """(optimizer class name, where it was built) of an optimizer that holds ``p``, or None."""
    try:
        for opt, site in list(_opt_sites.items()):
            for group in opt.param_groups:
                if any(q is p for q in group.get("params", ())):
                    return type(opt).__name__, site
    except Exception:  # noqa: BLE001
        pass
    return None


class _Cut(object):
    """A value computed from pending parameters that left the graph at ``site``; its copies
    (and what is computed from them without grad) carry it, and a node built from one of them
    carries it into a graph: when a backwarded loss goes through such a node, the parameters
    were used through the cut."""

    __slots__ = ("params", "site", "how", "backwarded", "term", "trains", "bw", "derived", "discrete")

    def __init__(self, params, site, how, trains=True, discrete=False):
        self.params = [weakref.ref(p) for p in params]
        self.site = site
        self.how = how
        self.backwarded = False  # a number's source was itself backwarded: no cut
        # where a value carrying the copy was last computed under no_grad (the loss term made in
        # the block), else None: the line a dead term of the loss is shown at (deadterms.py)
        self.term = None
        # False: a cut only a dead term can show (parameters used under no_grad: a frozen teacher
        # an optimizer happens to hold is not proven untrained by it)
        self.trains = trains
        self.bw = _state.bw_count  # backward calls made before the copy
        # True: the value is computed from the copy (new values, not the copy or a view of it): a
        # term of the loss made of it is a dead term by itself (deadterms.py), where the copy alone
        # added to a loss is also the straight-through trick `a - a.detach()`
        self.derived = False
        # an integer or boolean result (argmax's indices): no gradient by nature, so a tensor copy
        # that left the graph (a `.detach()` of the same parameters) is the better cause to show
        self.discrete = discrete

    def at(self, term, derived=True):
        """This cut, carried by a value computed under no_grad at ``term`` (None: where the copy
        was made)."""
        c = _Cut((), self.site, self.how, self.trains, self.discrete)
        c.params = self.params
        c.term = term if term is not None else self.term
        c.bw = self.bw
        c.derived = self.derived or derived
        return c

    def discrete_copy(self):
        """This cut, carried by an integer result computed from the copy."""
        c = self.at(None, False)
        c.discrete = True
        return c

    def used(self, reached=()):
        """The loss used the copy: a cause for the parameters it did not reach directly."""
        if not self.trains:
            return
        for ref in self.params:
            p = ref()
            if p is None or id(p) in reached:
                continue
            rec = _pending.get(p)
            if rec is not None and len(rec.cuts) < 3 and all(c[0][:2] != self.site[:2] for c in rec.cuts):
                if self.discrete:
                    rec.cuts.append((self.site, self.how, True))
                else:  # before the integer results
                    at = next((i for i, c in enumerate(rec.cuts) if c[2]), len(rec.cuts))
                    rec.cuts.insert(at, (self.site, self.how, False))


_CUT = "_gradwarden_cut"  # node.metadata key: the _Cut whose copy the node was built from
_NUMBER_SOURCE = "_gradwarden_number"  # node.metadata key: the _Cut of a number read from the node's output
_number_cuts = []  # _Cut of numbers, decided when the run ends
_cut_values = tensor_registry()  # the copies: detach/.data/no_grad outputs, re-wrapped leaves -> _Cut
taint = [False]  # read by the mode: some copy is alive
_tagged = [0]  # nodes marked since the last backward


def cut(t, how, out=None, depth=2, more=(), discrete=False):
    """``t``'s value leaves the graph here, as ``out`` (a tensor without graph; None: a Python
    number). The pending parameters ``t``'s graph reaches are used through a copy that carries
    no gradient: proven when a backwarded loss goes through a node built from ``out`` (a
    number cannot be followed: taken as used). ``more``: other graph tensors copied into the same
    ``out`` (the items of a list given to ``torch.tensor``)."""
    node = t.grad_fn
    if node is None:
        if out is not None and t.requires_grad and _pending.get(t) is not None:
            # a parameter itself detached (`self.prototypes.detach()` in forward): its value, no graph
            cut_leaf(t, how, out, _caller(depth))
        return
    if id(node) in _walked or _walks[0] >= _WALKS_PER_STEP:
        return
    try:
        inner = _caller(depth)
        frame = _user_frame(inner)
        if frame is None:
            return
        where = (frame.f_code, frame.f_lineno)
        if _site_walks.get(where, 0) >= _WALKS_PER_SITE:
            return
        _site_walks[where] = _site_walks.get(where, 0) + 1
        _walks[0] += 1
        _walked.add(id(node))
        _update_watch()
        nodes, _, _ = _walk([node] + [m.grad_fn for m in more if m.grad_fn is not None], limit=_WALK_NODES)
        hits = []
        free = _unarmed()
        for n in nodes.values():
            var = getattr(n, "variable", None)
            if var is not None and (_pending.get(var) is not None or free and isinstance(var, _Parameter)):
                hits.append(var)
        if not hits:
            return
        _site_walks[where] = 0  # this line does cut an untrained parameter: keep looking there
        called = _library_call(inner, frame)
        if called is not None:
            # the program called a library function that cut it (``nn.utils.vector_to_parameters``
            # sets each parameter's ``.data``): named as the program wrote it
            how = "`%s(...)`, through %s" % (called, how)
        c = _Cut(hits, _site(frame), how, trains=not free, discrete=discrete)
        if free:
            _free[0] += 1
        if out is None:
            # a number cannot be followed into the loss; but when the tensor it was read from is
            # backwarded itself (``loss.item()`` for a log), nothing was cut: decided at the end
            if len(_number_cuts) < 64:
                node.metadata[_NUMBER_SOURCE] = c
                _number_cuts.append(c)
        elif isinstance(out, _Tensor) and _cut_values is not None:
            _cut_values[out] = c
            taint[0] = True
    except Exception:  # noqa: BLE001
        _internal_error("untrained: cut")


def cut_leaf(t, how, out, frame):
    """``t`` is a leaf an optimizer holds and nothing has reached yet, and ``out`` is its value
    without the graph (``t.data``): a loss built from ``out`` uses ``t`` through a copy."""
    try:
        if _pending.get(t) is None or not isinstance(out, _Tensor) or _cut_values is None:
            return
        frame = _user_frame(frame)
        if frame is None:
            return
        _cut_values[out] = _Cut([t], _site(frame), how)
        taint[0] = True
    except Exception:  # noqa: BLE001
        _internal_error("untrained: leaf cut")


def set_data(t, value):
    """``t.data = value`` where ``value`` is a copy that left the graph (what
    ``nn.utils.vector_to_parameters`` does with a generated vector): ``t`` now holds the copy, and
    a loss built from ``t`` uses the parameters the copy was computed from without their graph."""
    try:
        if _cut_values is None or not isinstance(value, _Tensor) or not isinstance(t, _Tensor):
            return
        c = _cut_values.get(value)
        if c is not None:
            _cut_values[t] = c
            taint[0] = True
    except Exception:  # noqa: BLE001
        _internal_error("untrained: set data")


def carry(args, out):
    """The mode, while ``taint`` is on: a call that takes a copy in passes it on (``out``
    without graph) or marks the node it builds (and, when the copy is an operand of a sum, the
    sum: a term of the loss, deadterms.py)."""
    try:
        c = None
        term = False
        src = None
        first = None  # (c, term, src) of an integer result, kept while a tensor copy may follow
        for a in args[:6]:
            if isinstance(a, _Tensor):
                c = _cut_values.get(a)
                term = c is not None and not a.requires_grad
                src = a
            elif isinstance(a, (list, tuple)) and len(a) < 16:
                x = next((x for x in a if isinstance(x, _Tensor) and _cut_values.get(x)), None)
                c = _cut_values.get(x) if x is not None else None
            if c is not None:
                if not c.discrete:
                    break
                if first is None:
                    first = (c, term, src)
                c = None
        if c is None:
            if first is None:
                return
            c, term, src = first
        moved = None
        for o in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(o, _Tensor):
                g = o.grad_fn
                if g is not None:
                    g.metadata[_CUT] = c
                    if term and not c.discrete and _deadterms.is_sum(g):
                        g.metadata[_deadterms.TERM] = c
                    _tagged[0] += 1
                elif _discrete(o):
                    # indices computed from the copy (`F.one_hot(idx, n)` of argmax's, a
                    # `searchsorted` over a detached cdf): they carry it as an integer result
                    _cut_values[o] = c if c.discrete else c.discrete_copy()
                elif o.is_floating_point():
                    if c.discrete and _valued(args):
                        continue  # values taken from another tensor at those indices (`bins.gather(-1, idx)`)
                    if moved is None:
                        # computed under no_grad: the copy now is this line's value (the loss term
                        # written in the block); with grad on, only scaled or reshaped constants
                        moved = c
                        derived = not c.derived and not _alias(o, src)
                        if not torch.is_grad_enabled():
                            site = _nograd_site(_user_frame(_caller(1)))
                            if site is not None:
                                moved = c.at(site, derived)
                        if derived and moved is c:
                            moved = c.at(None)
                    _cut_values[o] = moved
    except Exception:  # noqa: BLE001
        _internal_error("untrained: carry")


def _valued(args):
    """Some floating tensor among ``args`` carries no copy: the call's values come from it."""
    for a in args[:6]:
        if isinstance(a, _Tensor) and a.is_floating_point() and _cut_values.get(a) is None:
            return True
    return False


def _alias(o, src):
    """``o`` shares its values with ``src`` (a view of it, or the same memory): no new values."""
    if src is None:
        return False
    try:
        return o._base is not None or o.data_ptr() == src.data_ptr()
    except Exception:  # noqa: BLE001
        return True


def _uses_of_cuts(roots):
    """Before a backward: the copies its graph goes through are used by the loss."""
    tagged = _tagged[0]
    _tagged[0] = 0
    taint[0] = bool(_armed() and _cut_values is not None and len(_cut_values))
    numbers = any(not c.backwarded for c in _number_cuts)
    if not (tagged or numbers) or not _armed():
        return
    nodes, _, _ = _walk([t.grad_fn for t in roots if t.grad_fn is not None], limit=20000)
    used = []
    reached = set()  # parameters this loss reaches directly: a copy of them is not why they get nothing
    for n in nodes.values():
        var = getattr(n, "variable", None)
        if var is not None:
            reached.add(id(var))
        try:
            md = n.metadata
            c = md.get(_CUT)
            number = md.get(_NUMBER_SOURCE) if numbers else None
        except Exception:  # noqa: BLE001
            continue
        if c is not None:
            used.append(c)
        if number is not None:
            number.backwarded = True
    for c in used:
        c.used(reached)
    if tagged:
        _deadterms.after_uses(roots)


def none_returned(node, out):
    """A custom backward returned None for an input that needs a gradient: the parameters below
    that input get nothing through it (``needs_input_grad`` checked at the wrong index)."""
    try:
        needs = getattr(node, "needs_input_grad", None)
        outs = out if isinstance(out, tuple) else (out,)
        if not needs or len(outs) != len(needs):
            return
        nexts = node.next_functions
        cls = getattr(node, "_forward_cls", None)
        for i, (g, need) in enumerate(zip(outs, needs)):
            if g is not None or not need or i >= len(nexts) or nexts[i][0] is None:
                continue
            below, _, _ = _walk([nexts[i][0]], limit=_WALK_NODES)
            hits = [n.variable for n in below.values()
                    if getattr(n, "variable", None) is not None and _pending.get(n.variable) is not None]
            if hits:
                c = _Cut(hits, _return_line(cls), "`%s.backward` returns None for its input %d, which needs a "
                                                  "gradient" % (getattr(cls, "__name__", "Function"), i))
                c.used()
    except Exception:  # noqa: BLE001
        _internal_error("untrained: none returned")


def _return_line(cls):
    """[file, line, function] of the last ``return`` of ``cls.backward`` (the user's code)."""
    import dis
    import inspect

    fn = getattr(cls, "backward", None)
    try:
        code = inspect.unwrap(fn).__code__
    except Exception:  # noqa: BLE001
        return None
    line = code.co_firstlineno
    last = line
    for ins in dis.get_instructions(code):
        start = ins.line_number if hasattr(ins, "line_number") else ins.starts_line
        if start:
            line = start
        if ins.opname in ("RETURN_VALUE", "RETURN_CONST"):
            last = line
    return [_display_file(code.co_filename), last, code.co_name]


def _nograd_site(frame):
    """Where a value computed under no_grad in ``frame`` was made: the ``@torch.no_grad()``
    decorator of the user's function that turned grad off (every call of it is a cut: the fix
    removes the decorator), else the line."""
    if frame is None:
        return None
    return _grad_off_decorator(frame) or _site(frame)


_number_kind = {}
# calls that copy a tensor's values into a new tensor without its graph: name -> the data argument
_REWRAP = {"tensor": 0, "new_tensor": 1}


def after_call(func, args, out):
    """The mode, for a call that writes nothing, while ``watch`` is on."""
    try:
        if not args:
            return
        if not isinstance(args[0], _Tensor):
            if isinstance(args[0], (list, tuple)) and isinstance(out, _Tensor) and out.grad_fn is None and \
                    torch.is_grad_enabled() and _REWRAP.get(getattr(func, "__name__", "")) == 0:
                # `torch.tensor(losses)` of a list of graph tensors: their numbers, in a new leaf
                items = [d for d in args[0][:64] if isinstance(d, _Tensor) and d.grad_fn is not None]
                if items:
                    cut(items[0], "`%s(...)` of a list of tensors" % func.__name__, out, depth=3, more=items[1:])
            return
        if torch.is_grad_enabled():
            try:
                number = _number_kind.get(func)
            except TypeError:
                return
            if number is None:
                number = _number_kind[func] = (getattr(func, "__name__", "") in _NUMBER)
            if number and args[0].grad_fn is not None:
                cut(args[0], "." + func.__name__.strip("_") + "()", depth=3)
            elif isinstance(out, _Tensor) and out.grad_fn is None:
                # `torch.tensor(t)`, `x.new_tensor(t)` of a graph tensor: a new leaf with its values
                at = _REWRAP.get(getattr(func, "__name__", ""))
                data = args[at] if at is not None and len(args) > at else None
                if isinstance(data, _Tensor) and data.grad_fn is not None:
                    cut(data, "`%s(...)`" % func.__name__, out, depth=3)
                elif args[0].grad_fn is not None and _discrete(out):
                    _discrete_cut(func, args[0], out)
            elif isinstance(out, tuple) and args[0].grad_fn is not None:
                # `values, idx = x.topk(k)`, `x.max(dim)`, `x.sort()`: the indices carry no gradient
                idx = next((o for o in out if isinstance(o, _Tensor) and o.grad_fn is None and _discrete(o)), None)
                if idx is not None:
                    _discrete_cut(func, args[0], idx)
            return
        # under no_grad: a value computed from a graph tensor is a constant
        if isinstance(out, _Tensor) and out.is_floating_point():
            leaves = None
            for a in args[:3]:
                if isinstance(a, _Tensor):
                    if a.grad_fn is not None:
                        cut(a, "no_grad", out, depth=3)
                        return
                    if a.requires_grad and (_pending.get(a) is not None or isinstance(a, _Parameter) and _unarmed()):
                        leaves = (leaves or []) + [a]
            if leaves and _cut_values is not None and _cut_values.get(out) is None:
                # computed from parameters that have not trained yet, e.g. a critic called in the
                # block that makes the targets: its value is a constant; only a dead term of the
                # loss shows it (a frozen teacher an optimizer holds is used the same way). Unless
                # a method of the module that holds them opened the `no_grad` block itself and read
                # them there (a property that normalises its own weights under no_grad): then the
                # module's forward uses its own parameters without their graph
                frame = _user_frame(_caller(1))
                site = _nograd_site(frame)
                if site is not None:
                    own = not _unarmed() and _own_block(frame, leaves)
                    _cut_values[out] = _Cut(leaves, site, "a `no_grad` block of the module's own method" if own
                                            else "no_grad", trains=own)
                    taint[0] = True
                    if _unarmed():
                        _free[0] += 1
    except Exception:  # noqa: BLE001
        _internal_error("untrained: call")


def _discrete(t):
    """An integer or boolean tensor (indices, a comparison, a cast): no gradient can flow through it."""
    return not (t.is_floating_point() or t.is_complex())


def _discrete_cut(func, t, out):
    """``out`` is an integer or boolean result of a graph tensor ``t`` (``argmax``, ``topk``'s
    indices, ``x > 0``, ``.long()``): its values depend on ``t`` but no gradient flows back
    through them. A loss that uses it (a hard routing decision, a threshold mask) reaches the
    parameters below ``t`` through a copy that carries no gradient, as a ``.detach()`` would."""
    name = (getattr(func, "__name__", "") or "").strip("_") or "call"
    cut(t, "`%s`, whose %s result carries no gradient" % (name, "boolean" if out.dtype is torch.bool else "integer"),
        out, depth=4, discrete=True)


def finish():
    """When the run ends: one finding per optimizer and cause."""
    if _pending is None:
        return
    try:
        for c in _number_cuts:
            if not c.backwarded:
                if _state.bw_count > c.bw:  # a loss was backwarded after the number was read
                    _deadterms.number_read(c)
                if _count[0]:
                    c.used()
        if not _count[0]:
            return
        groups = {}
        for p, rec in list(_pending.items()):
            opt = rec.opt()
            if opt is None or opt in superseded:
                continue
            if rec.none and rec.cuts and not _moved(p, rec):
                cause = rec.cuts[0]
                key = ("cut", id(opt), tuple(cause[0]))
            else:
                continue
            groups.setdefault(key, (opt, cause, rec, []))[3].append(p)
        for key, (opt, cause, rec, params) in groups.items():
            params = [p for p in params if id(p) not in _evalmode.explained]  # named at their eval switch
            if params:
                _report(key[0], opt, cause, rec, params)
    except Exception:  # noqa: BLE001
        _internal_error("untrained: finish")


def _moved(p, rec):
    """The parameter's value changed although its optimizer never had a gradient for it: the
    program updates it itself (under no_grad, through ``.data``)."""
    snap = rec.snap
    if snap is None:
        return False
    try:
        with torch.no_grad():
            return snap.shape != p.shape or not torch.equal(snap, p.detach())
    except Exception:  # noqa: BLE001
        return False


def _report(kind, opt, cause, rec, params):
    names = []
    modules = []
    for p in params[:5]:
        # named when first stepped without a gradient (its modules may be freed by now), else now
        named = getattr(_pending.get(p), "named", None)
        name, owner, built = named if named is not None and named[0] is not None else describe(p)
        names.append(quoted(p, name))
        if built is not None and built not in [m[0] for m in modules]:
            modules.append((built, owner))
    more = " and %d more" % (len(params) - 5) if len(params) > 5 else ""
    opt_name = type(opt).__name__
    opt_site = _opt_sites.get(opt)
    sites = []
    if opt_site is not None:
        sites.append({"kind": "optimizer", "site": opt_site, "message": "%s is given the parameter(s) here" % opt_name})
    for built, owner in modules[:2]:
        sites.append({"kind": "created", "site": built, "message": "the %s holding them is built here" % owner})
    for s in rec.steps[:1]:
        sites.append({"kind": "step", "site": s, "message": "%s.step() finds no gradient" % opt_name})
    what = "%s%s" % (", ".join(names), more)
    one = len(params) == 1
    it, its = ("it", "its") if one else ("they", "their")
    site, how = cause[:2]
    where = site
    steps = "%s get%s no gradient at any of the %d steps after a backward" % (it, "s" if one else "", rec.none)
    if ".backward` returns None" in how:  # a custom backward's None
        why = "%s: the loss reaches %s only through here, where %s" % (steps, "it" if one else "them", how)
    else:
        why = ("%s, and the graph %s enter%s is cut here (%s): the loss uses %s values through a copy that carries "
               "no gradient back" % (steps, it, "s" if one else "", how, its))
    _finding(("untrained", kind, tuple(where or ()), id(opt)), code="GW719", kind="untrained-parameter",
             severity="warning", site=where, sites=sites,
             message="%s, which %s steps, never train%s: %s" % (what, opt_name, "s" if one else "", why))


_blocks = []  # the user frame that entered each open `torch.no_grad()` block (None: torch's code did)


def _own_block(frame, leaves):
    """``frame`` entered the innermost open ``no_grad`` block itself, and its ``self`` is a module
    that holds every one of ``leaves`` as its own parameter."""
    if not _blocks or _blocks[-1] is not frame:
        return False
    me = frame.f_locals.get("self") if "self" in frame.f_code.co_varnames else None
    own = getattr(me, "_parameters", None) if isinstance(me, torch.nn.Module) else None
    if not own:
        return False
    mine = {id(p) for p in own.values() if p is not None}
    return all(id(p) in mine for p in leaves)


def _patch_no_grad():
    cls = torch.autograd.grad_mode.no_grad
    enter, leave = cls.__enter__, cls.__exit__

    def __enter__(self):
        f = _caller(1)
        _blocks.append(f if f is not None and _is_user(f.f_code.co_filename) else None)
        return enter(self)

    def __exit__(self, *exc):
        if _blocks:
            _blocks.pop()
        return leave(self, *exc)

    __enter__.__wrapped__, __exit__.__wrapped__ = enter, leave
    cls.__enter__, cls.__exit__ = __enter__, __exit__


def install():
    """After polluted.install(): note every optimizer built, check every step."""
    _optwatch.on_build(lambda opt, _seen: note_optimizer(opt))
    _optwatch.on_step(on_step)
    _patch_no_grad()
    _update_watch()
