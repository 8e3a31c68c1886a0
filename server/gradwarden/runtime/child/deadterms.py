"""Loss terms that carry no gradient (GW722's premise, shown to the static diagnostic; never a
finding of its own).

``loss = ce + 1000 * at_loss`` where ``at_loss`` was computed from a copy that left the graph (a
forward hook's ``o.data``, a value loss computed inside the ``torch.no_grad()`` block that makes
the targets) backpropagates exactly as ``ce`` alone: the term is a constant of the sum, and the
parameters it was computed from get nothing through it. untrained.py follows those copies (its
``carry`` marks the node a copy enters a graph at); what is decided here is whether the copy
enters the loss as a *term*: it is an operand of a sum (``add``/``sub``) and the path from that
sum to the backwarded root only adds, subtracts, reduces, reshapes or scales by constants. A copy
used as a factor (an advantage, a TD target inside a squared error, a weight) changes the
gradient and is not this.

A number read from such a value (``.item()``, ``.tolist()``, ``float()``) cannot be followed into
the loss; when the value it was read from never reached any backward and a loss was backwarded
after the read, the number (or what the program computed from it) was at most a constant of that
loss: the same premise, at the read.

What the run cannot show is that the term was meant to train anything (a constant added to a
logged total is harmless), so the event only confirms a static GW722 diagnostic at the same line
(``confirm_only``: the parent drops it when nothing matches it). The line is where the term was
last computed under ``no_grad`` (the value loss), else where the copy was made (the hook's
``.data``).
"""
from .report import _finding, _internal_error, _state

TERM = "_gradwarden_term"  # node.metadata key: the _Cut of a copy that entered the graph as an operand of a sum

# the gradient of these nodes' inputs does not depend on their inputs' values
_LINEAR = frozenset((
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0", "RsubBackward1",
    "NegBackward0", "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "MulBackward1",
    "DivBackward1", "ViewBackward0", "ReshapeAliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0",
    "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3", "ExpandBackward0", "StackBackward0",
    "CatBackward0", "SelectBackward0", "CloneBackward0",
))
# linear in one input when the other is a constant (its next function is None)
_SCALED = frozenset(("MulBackward0", "DivBackward0"))
_ADDITIVE = frozenset(("AddBackward0", "SubBackward0", "RsubBackward0"))
_MAX_NODES = 2000


def is_sum(node):
    """True when ``node`` adds or subtracts its inputs (a term that enters it is a term)."""
    return type(node).__name__ in _ADDITIVE


def _nexts(node):
    try:
        return [n for n, _ in node.next_functions]
    except Exception:  # noqa: BLE001
        return []


def _linear_below(node):
    """The inputs of ``node`` through which the gradient does not depend on any value."""
    name = type(node).__name__
    nexts = _nexts(node)
    if name in _LINEAR:
        return [n for n in nexts if n is not None]
    if name in _SCALED and len(nexts) == 2:
        if name == "DivBackward0":
            return [nexts[0]] if nexts[0] is not None and nexts[1] is None else []
        live = [n for n in nexts if n is not None]
        return live if len(live) == 1 else []
    return []


def after_uses(roots):
    """Before a top-level backward whose graph some copy entered: the copies that are terms of
    the loss, each reported once at its line."""
    try:
        seen = set()
        stack = [t.grad_fn for t in roots if getattr(t, "grad_fn", None) is not None]
        while stack and len(seen) < _MAX_NODES:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            try:
                c = node.metadata.get(TERM)
            except Exception:  # noqa: BLE001
                c = None
            if c is not None:
                _report(c)
            stack.extend(n for n in _linear_below(node) if id(n) not in seen)
    except Exception:  # noqa: BLE001
        _internal_error("dead terms")


def _report(c):
    where = c.term or c.site
    if where is None:
        return
    bw = _state.cur_bw[1] if _state.cur_bw is not None else None
    sites = []
    if bw is not None:
        sites.append({"kind": "backward", "site": bw, "message": "the loss backwarded here"})
    made = ""
    if c.site is not None and tuple(c.site[:2]) != tuple(where[:2]):
        made = " at line %d" % c.site[1]
    # a term computed from the copy in the step that backwards it (a penalty over a hook's detached
    # activations, a loss computed in a no_grad block) added to the backwarded loss is a constant no
    # correct program backwards: the run's own finding. The copy itself added (`a - a.detach()`, the
    # straight-through trick on a loss) only confirms a static diagnostic.
    # A copy carried over from an earlier step (a recurrent state or running summary detached on
    # purpose, truncated backpropagation) is a constant by design: only the premise.
    same_step = c.bw == _state.bw_count - 1
    _finding(("dead-term", tuple(where)), code="GW722", kind="dead-loss-term", severity="warning", site=where,
             sites=sites, confirm_only=not (c.derived and same_step),
             message="this term of the loss is computed from a copy that left the graph (%s%s) and is added to "
                     "the loss as a constant: the backward gets no gradient through it" % (c.how, made))


def number_read(c):
    """When the run ends: a number read at ``c.site`` from a value computed from parameters
    that no backward went through, with a loss backwarded after the read."""
    if c.site is None:
        return
    _finding(("dead-term", tuple(c.site)), code="GW722", kind="dead-loss-term", severity="warning", site=c.site,
             sites=[], confirm_only=True,
             message="a number is read here (%s) from a value computed from parameters that no backward goes "
                     "through: a term of the loss made from it is a constant (no gradient)" % c.how)
