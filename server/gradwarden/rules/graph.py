"""Family D: backward through a freed or stale graph."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class BackwardFreesGraph(Rule):
    """A ``backward()`` frees a graph that a later backward still needs.

    Without ``retain_graph=True``, backward releases the saved tensors of every node it runs.
    A second backward through any of them raises ``Trying to backward through the graph a
    second time``. When the second pass is intended (two losses over one forward, one
    backward per class in a loop), pass ``retain_graph=True`` to every backward but the last —
    or sum the losses and call backward once.
    """

    event = "backward_frees"
    code = "GW401"
    name = "backward-frees-graph"
    family = "D"
    severity = Severity.ERROR
    summary = "backward() frees a graph that a later backward goes through again."
    message = "this backward frees the graph of `{root}`; {later} goes through it again and raises (retain_graph=True here, or one backward of the summed losses)"
    INVALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x)
        h.sum().backward()  # <-
        (h * 2).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x)
        h.sum().backward(retain_graph=True)
        (h * 2).sum().backward()
        """,
    )


class StaleGraphUse(Rule):
    """A tensor whose graph an earlier backward freed is used to build a new graph.

    The value still carries its history; the new loss reaches nodes whose saved tensors are
    gone, and its backward raises ``Trying to backward through the graph a second time``.
    Typical: a loss built from a discriminator output after ``D``'s backward and step, an
    accumulator (``loss += ...``) reused after its backward, a hidden state or cached
    activation carried into the next iteration. Detach what is carried over
    (``h = h.detach()``), or recompute it.
    """

    event = "stale_use"
    code = "GW402"
    name = "stale-graph-use"
    family = "D"
    severity = Severity.ERROR
    summary = "Building a new graph on a tensor whose graph was freed by an earlier backward."
    message = "`{name}` still carries the graph that {freed} freed; {later} will go through it and raise"
    INVALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        h = torch.sigmoid(x * w)
        h.sum().backward()
        opt.step()
        loss2 = (h * 2).sum()  # <-
        loss2.backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        h = torch.sigmoid(x * w)
        h.sum().backward()
        opt.step()
        loss2 = (h.detach() * w).sum()
        loss2.backward()
        """,
    )


class GraphCarriedIntoLoop(Rule):
    """A tensor computed once before a loop carries a graph into every iteration's backward.

    The first iteration's backward frees that graph; the second iteration reaches it again
    and raises ``Trying to backward through the graph a second time``. If the tensor is data
    (targets, a cached distribution, an embedding used as input), create it without a graph
    (``.detach()``, ``torch.no_grad()``) or recompute it inside the loop.
    """

    event = "graph_carried"
    code = "GW403"
    name = "graph-carried-into-loop"
    family = "D"
    severity = Severity.ERROR
    summary = "A graph built before a loop is backwarded in every iteration."
    message = "{built}, with a graph that the backward at line {freed_line} frees in the first iteration; the next iteration goes through it again and raises"
    INVALID = (
        """
        import torch
        X = torch.randn(20, 2)
        true_w = torch.randn(2, 1, requires_grad=True)
        Y = X @ true_w  # <-
        w = torch.zeros(2, 1, requires_grad=True)
        for i in range(3):
            loss = ((X @ w - Y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
        """,
    )
    VALID = (
        """
        import torch
        X = torch.randn(20, 2)
        true_w = torch.randn(2, 1, requires_grad=True)
        Y = (X @ true_w).detach()
        w = torch.zeros(2, 1, requires_grad=True)
        for i in range(3):
            loss = ((X @ w - Y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
        """,
    )


class StaleRetainedGraph(Rule):
    """A backward reuses a graph that was retained (``retain_graph=True``) while the parameters
    it was computed from were updated in place.

    The graph recorded the forward once; an optimizer step (or another in-place update) changed
    the parameters since, but the retained graph still holds the activations of the old
    forward. When no node saved the updated parameter nothing raises: every later backward
    silently computes gradients of a forward that no longer matches the model. Recompute the
    value inside the loop (and drop ``retain_graph=True``), or detach it if it is meant to be
    fixed data.
    """

    event = "stale_retained"
    code = "GW405"
    name = "stale-retained-graph"
    family = "D"
    severity = Severity.WARNING
    summary = "A retained graph is backwarded again after the parameters it was built from were updated."
    message = "`{name}` is computed here with a graph that later backwards reuse (retain_graph), but `{write}` (line {write_line}) updates `{param}` in place: from then on the backward at line {backward_line} silently uses the stale forward"
    INVALID = (
        """
        import torch
        emb = torch.nn.Linear(4, 4)
        head = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)
        x = torch.randn(8, 4)
        h = emb(x)  # <-
        for step in range(3):
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        emb = torch.nn.Linear(4, 4)
        head = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)
        x = torch.randn(8, 4)
        for step in range(3):
            h = emb(x)
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )


class RunningLossKeepsGraph(Rule):
    """A running total accumulates loss tensors (``total += loss``) and keeps their graphs.

    Nothing raises, but every iteration's graph stays alive as long as the total does: memory
    grows with the number of steps. Accumulate ``loss.item()`` or ``loss.detach()``.

    Reported where a backward runs after the total first held a graph (the loop trains) and the
    total itself is not backwarded. Terms summed within one forward (``x += emb(x[:, i])``,
    ``loss += term``) make one graph that the caller's backward needs whole: not reported.

    No automatic fix: an information finding carries none that changes what the program does.
    """

    event = "running_total"
    code = "GW404"
    name = "running-loss-keeps-graph"
    family = "D"
    severity = Severity.INFORMATION
    summary = "Accumulating loss tensors keeps every iteration's graph alive."
    message = "`{name}` accumulates tensors that carry graphs; each iteration's graph stays in memory (use `.item()` or `.detach()`)"
    NO_FIX = (0,)  # information: no fix that changes behaviour (rules/fixpolicy.py)
    INVALID = (
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        total = 0
        for i in range(3):
            loss = (w * 2).sum()
            loss.backward()
            total += loss  # <-
        """,
    )
    VALID = (
        """
        import torch
        w = torch.randn(3, requires_grad=True)
        total = 0
        for i in range(3):
            loss = (w * 2).sum()
            loss.backward()
            total += loss.item()
        """,
    )
