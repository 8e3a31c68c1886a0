"""Gradients cleared between the backward and the step that should apply them (GW740).

``loss.backward(); opt.zero_grad(); opt.step()``: the zeroing call drops the gradients the
backward just computed, so the step finds none (``set_to_none``: it skips every parameter; zeros:
only weight decay and momentum move them). Nothing raises and the loss never improves.

The run proves it at a step of an optimizer when all of these hold:

- a zeroing call of the program (``zero_grad()`` of this optimizer, or of a module holding all its
  parameters) ran after the last backward, while some of those tensors had a gradient;
- no backward ran between that zeroing call and the step;
- the zeroing covered every tensor the optimizer holds, and at the step none has a non-zero
  gradient.

Clearing after the step (the usual end-of-iteration ``zero_grad``), gradient accumulation, and a
second optimizer's ``zero_grad`` between a backward and the first optimizer's step (a GAN's
discriminator and generator) are not this. Shown at the zeroing call, with the backward whose
gradients it dropped and the step.
"""
from .report import _finding, _internal_error

_MAX = 8

_discards = []  # (zeroing site, ids of the tensors it cleared, backward count then, last backward site)
_reported = set()
_pending = []  # (zeroing site, backward site, step site, optimizer site, optimizer class name, backward count)


def note(site, ids, bw_count, bw_site):
    _discards.append((site, ids, bw_count, bw_site))
    del _discards[:-_MAX]


def _no_gradient(p):
    g = p.grad
    if g is None:
        return True
    try:
        return g.numel() <= (1 << 20) and not bool(g.any())
    except Exception:  # noqa: BLE001
        return False


def check(opt, params, bw_count, step_site, optimizer_site):
    """At a step of ``opt`` (``bw_count`` backward calls so far, at least one since its last step)."""
    try:
        found = None
        for entry in _discards:
            if entry[2] == bw_count and entry[3] is not None and params and \
                    all(id(p) in entry[1] for p in params):
                found = entry
        _discards[:] = [e for e in _discards if e[2] == bw_count]
        if found is None or tuple(found[0][:2]) in _reported:
            return
        if not all(_no_gradient(p) for p in params):
            return
        site, _ids, _n, bw_site = found
        _reported.add(tuple(site[:2]))
        # which line to show waits for the next backward: the step may run before its own backward
        _pending.append((site, bw_site, step_site, optimizer_site, type(opt).__name__, bw_count))
    except Exception:  # noqa: BLE001
        _internal_error("cleared: step")


def resolve(bw_count, last_bw_site, final=False):
    """Report the findings the checks above made, once the backward after their step is known: when
    the one backward since the step ran in the step's function, below it (``opt.zero_grad(); loss =
    ...; opt.step(); loss.backward()``), the step comes before the backward of its own iteration and is
    the line to move (shown there, the zeroing call a `note`); else the zeroing call is the line."""
    keep = []
    for entry in _pending:
        site, bw_site, step_site, optimizer_site, name, n = entry
        if bw_count == n and not final:
            keep.append(entry)
            continue
        try:
            early = bw_count == n + 1 and last_bw_site is not None and step_site is not None and \
                list(last_bw_site[::2]) == list(step_site[::2]) and last_bw_site[1] > step_site[1]
            _report(site, bw_site, step_site, optimizer_site, name, last_bw_site if early else None)
        except Exception:  # noqa: BLE001
            _internal_error("cleared: resolve")
    _pending[:] = keep


def _report(site, bw_site, step_site, optimizer_site, name, own_bw):
    sites = [{"kind": "backward", "site": bw_site, "message": "computes the gradients the zeroing call drops"}]
    if optimizer_site is not None:
        sites.append({"kind": "optimizer", "site": optimizer_site, "message": "the optimizer"})
    if own_bw is not None:
        sites.append({"kind": "note", "site": site, "message": "clears the gradients of the previous backward"})
        sites.append({"kind": "backward", "site": own_bw, "message": "the backward of this step's loss, after it"})
        _finding(("cleared-before-step", tuple(step_site)), code="GW740", kind="gradients-cleared-before-step",
                 severity="warning", site=step_site, sites=sites,
                 message="%s.step() runs before the backward of its own loss (line %s): the gradients it finds were "
                         "made by the previous iteration's backward and cleared by the zeroing call at line %s, so "
                         "every step applies none and the parameters do not train (call the step after "
                         "`backward()`)" % (name, own_bw[1], site[1]))
        return
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site, "message": "%s.step() then finds no gradient to apply" % name})
    _finding(("cleared-before-step", tuple(site)), code="GW740", kind="gradients-cleared-before-step",
             severity="warning", site=site, sites=sites,
             message="this zeroing call runs after the backward at line %s and before %s.step(): it drops the "
                     "gradients the backward just computed, so the step applies none and the parameters do "
                     "not train (clear the gradients before the backward, or after the step)" % (bw_site[1], name))
