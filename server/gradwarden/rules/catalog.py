"""Every rule of gradwarden, one small class each: docstring, message, severity, examples.

The interpreter (engine/interpreter.py) emits events naming a rule code and the facts of the
hazard; the rule's ``message`` template turns those facts into the one-line message. The
INVALID snippets mark the line to flag with ``# <-``; tests/test_rule_examples.py checks
every snippet, so the documentation cannot drift from the behaviour.
"""
from __future__ import annotations

from typing import Tuple, Type

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class ParseError(Rule):
    """The file could not be decoded or parsed, so nothing in it was checked.

    Fix the syntax error (or the encoding) and the file is analysed again. The rest of the
    run goes on: other files are checked as usual.
    """

    event = "parse_error"
    code = "GW001"
    name = "parse-error"
    family = "-"
    severity = Severity.ERROR
    summary = "The file does not parse; it was not analysed."
    message = "{detail}"


# --------------------------------------------------------------------------- family A
class LeafInplace(Rule):
    """An in-place operation on a leaf tensor that requires grad (or on a view of one).

    Parameters and tensors created with ``requires_grad=True`` are leaves: autograd
    accumulates their ``.grad`` and refuses to let them be changed in place while it records,
    because the change could not be differentiated. This covers ``_``-suffixed methods
    (``w.normal_()``, ``p.add_(...)``), augmented assignment (``w += 1``), slice and index
    assignment (``w[0] = 1``, also through a view), ``out=`` and ``nn.init.*`` — and an
    in-place activation (``nn.ReLU(inplace=True)``) applied directly to a parameter.
    It raises ``RuntimeError: a leaf Variable that requires grad is being used in an in-place
    operation`` at once. Updates of parameters belong under ``with torch.no_grad():``.
    """

    event = "leaf_inplace"
    code = "GW101"
    name = "leaf-inplace"
    family = "A"
    severity = Severity.ERROR
    summary = "In-place operation on a leaf tensor that requires grad."
    message = "in-place {op} on {what} `{name}`, a leaf that requires grad: raises at once ({hint})"
    INVALID = (
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        w += 1  # <-
        """,
        """
        import torch
        import torch.nn as nn
        lin = nn.Linear(2, 2)
        for p in lin.parameters():
            p.add_(p, alpha=-0.1)  # <-
        """,
        """
        import torch
        w = torch.empty(10)
        w.requires_grad = True
        w.normal_()  # <-
        """,
    )
    VALID = (
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        with torch.no_grad():
            w += 1
        """,
        """
        import torch
        w = torch.zeros(3, requires_grad=True)
        w = w + 1
        """,
    )


# --------------------------------------------------------------------------- family B
class SavedTensorModified(Rule):
    """An in-place write to a tensor that autograd saved for backward.

    Many ops keep their inputs or their output to compute the gradient later: ``sigmoid``,
    ``exp`` and ``relu`` keep their *output*, ``matmul``/``mm``/``linear`` keep the *other*
    operand, ``conv2d`` keeps input and weight, ``batch_norm`` its input and running stats.
    Every tensor carries a version counter that each in-place write bumps (through any view
    or ``.detach()`` alias too — they share the counter). When ``backward()`` reaches the op,
    it compares the saved version with the current one and raises ``one of the variables
    needed for gradient computation has been modified by an inplace operation``. PyTorch names
    the op whose backward failed, never the line that wrote: this rule names both.
    """

    event = "version_mismatch"
    code = "GW201"
    name = "saved-tensor-modified"
    family = "B"
    severity = Severity.ERROR
    summary = "In-place write to a tensor that a graph node saved for backward."
    message = ("in-place {op} modifies `{name}`, which `{saver}` (line {save_line}) saved for backward "
               "at version {version}; {backward} will raise")
    INVALID = (
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.sigmoid(x)
        y += 1  # <-
        y.sum().backward()
        """,
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        f = torch.matmul(d, w2)
        d_ = d.detach()
        d_[:] = 1  # <-
        f.backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y += 1
        y.sum().backward()
        """,
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        d[:] = 1
        f = torch.matmul(d, w2)
        f.backward()
        """,
    )


class SavedTensorModifiedInBackward(Rule):
    """A custom ``autograd.Function.backward`` modifies a tensor from ``ctx.saved_tensors``.

    The saved tensor belongs to the graph: a second backward through the same node (with
    ``retain_graph=True``, double backward, or ``autograd.grad`` then ``backward``) finds it
    modified and raises, or silently computes with the changed values. Compute out of place.
    """

    event = "ctx_saved_inplace"
    code = "GW202"
    name = "saved-tensor-modified-in-backward"
    family = "F"
    severity = Severity.WARNING
    summary = "Custom Function backward modifies a tensor restored from ctx.saved_tensors."
    message = "`{name}` comes from ctx.saved_tensors; in-place {op} changes what every later backward through this node sees"
    INVALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                g = x * 2
                ctx.save_for_backward(g)
                return x * 2
            @staticmethod
            def backward(ctx, grad_output):
                g, = ctx.saved_tensors
                g.mul_(grad_output)  # <-
                return g
        """,
    )
    VALID = (
        """
        import torch
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                g = x * 2
                ctx.save_for_backward(g)
                return x * 2
            @staticmethod
            def backward(ctx, grad_output):
                g, = ctx.saved_tensors
                return g * grad_output
        """,
    )


# --------------------------------------------------------------------------- family C
class ExpandedWrite(Rule):
    """A write into a tensor made by ``expand``/``expand_as`` (or a view of one).

    An expanded tensor repeats one memory cell along the broadcast dimensions. Writing a
    region that spans them raises ``unsupported operation: more than one element of the
    written-to tensor refers to a single memory location``; writing a single element
    silently changes every broadcast copy (and the source). Materialise it first with
    ``.clone()`` (or use ``repeat``).
    """

    event = "expanded_write"
    code = "GW301"
    name = "expanded-write"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write into an expanded (broadcast) tensor."
    message = "in-place {op} writes into `{name}`, an expanded tensor (line {expand_line}) whose elements share memory{tail}"
    INVALID = (
        """
        import torch
        base = torch.zeros(2, 1, 3)
        mask = base.expand(2, 5, 3)
        mask[:, :, 0] = 1  # <-
        """,
    )
    VALID = (
        """
        import torch
        base = torch.zeros(2, 1, 3)
        mask = base.expand(2, 5, 3).clone()
        mask[:, :, 0] = 1
        """,
        """
        import torch
        feats = torch.randn(2, 3, 4)
        m = torch.zeros(2, 4, dtype=torch.bool)[:, None].expand(-1, 3, -1)
        feats[m] = 0
        """,
    )


class OverlappingAssign(Rule):
    """Assigning a view of a tensor into (an overlapping part of) the same tensor.

    ``x[1] = x[1].t()`` copies from memory that the copy itself overwrites: PyTorch refuses
    with ``unsupported operation: some elements of the input tensor and the written-to tensor
    refer to a single memory location``. Clone the right-hand side.
    """

    event = "overlapping_assign"
    code = "GW302"
    name = "overlapping-assign"
    family = "C"
    severity = Severity.ERROR
    summary = "Slice assignment from a view that overlaps the destination."
    message = "the right-hand side is a view of `{name}` itself; the copy overlaps its own destination and raises"
    INVALID = (
        """
        import torch
        out = torch.randn(2, 3, 3)
        out[1] = out[1].transpose(0, 1)  # <-
        """,
    )
    VALID = (
        """
        import torch
        out = torch.randn(2, 3, 3)
        out[1] = out[1].transpose(0, 1).clone()
        """,
    )


class GradOutputInplace(Rule):
    """A custom ``autograd.Function.backward`` writes into ``grad_output`` (or a view of it).

    The incoming gradient is not yours: after ``.sum()`` or ``.mean()`` it is an expanded
    tensor whose elements share one memory cell, and a caller's ``grad_tensors`` is passed in
    unchanged. Writing into it raises (overlapping memory), zeroes the whole gradient, or
    changes the caller's tensor. Start from ``grad = grad_output.clone()``.
    """

    event = "grad_output_inplace"
    code = "GW303"
    name = "grad-output-inplace"
    family = "F"
    severity = Severity.WARNING
    summary = "Custom Function backward writes into grad_output."
    message = "in-place {op} writes into `{name}`, {alias_of}the incoming gradient of `{fn}.backward`; it may be expanded or shared with the caller"
    INVALID = (
        """
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                grad_input = grad_output
                grad_input[x < 0] = 0  # <-
                return grad_input
        """,
    )
    VALID = (
        """
        import torch
        class MyReLU(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                grad_input = grad_output.clone()
                grad_input[x < 0] = 0
                return grad_input
        """,
    )


class ExpandedParameterData(Rule):
    """A parameter's storage is replaced by an expanded tensor (``p.data = t.expand(...)``).

    The parameter now has broadcast memory: the optimizer's next in-place update (or any
    in-place write) raises ``unsupported operation: more than one element of the written-to
    tensor refers to a single memory location``. Materialise with ``.clone()``.
    """

    event = "expanded_param_data"
    code = "GW304"
    name = "expanded-parameter-data"
    family = "C"
    severity = Severity.ERROR
    summary = "Parameter data replaced by an expanded (broadcast) tensor."
    message = "`{name}` gets the storage of an expanded tensor; its next in-place update (optimizer step) raises"
    INVALID = (
        """
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.rand(4, 3))
        mean = torch.rand(1, 3)
        p.data = mean.expand_as(p)  # <-
        """,
    )
    VALID = (
        """
        import torch
        import torch.nn as nn
        p = nn.Parameter(torch.rand(4, 3))
        mean = torch.rand(1, 3)
        p.data = mean.expand_as(p).clone()
        """,
    )


class CustomFunctionOutputInplace(Rule):
    """In-place write to the output of a custom Function that returned (a view of) its input.

    A ``Function.forward`` that returns one of its inputs, modified in place or not, without
    ``ctx.mark_dirty`` makes autograd treat the output as a view created inside a custom
    Function; modifying it in place raises ``Output 0 of ...Backward is a view and is being
    modified inplace``. Write out of place (``y = y * s``) or make the Function out of place.
    """

    event = "custom_out_inplace"
    code = "GW305"
    name = "custom-function-view-inplace"
    family = "F"
    severity = Severity.ERROR
    summary = "In-place write to a custom Function output that aliases its input."
    message = "in-place {op} on `{name}`, the output of `{fn}.apply` (line {apply_line}) which returns its own input: raises"
    INVALID = (
        """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x *= 2.0
                return x
            @staticmethod
            def backward(ctx, g):
                return g * 2.0
        a = torch.randn(3, requires_grad=True)
        y = Double.apply(a * 1.0)
        y *= 3  # <-
        """,
    )
    VALID = (
        """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2.0
            @staticmethod
            def backward(ctx, g):
                return g * 2.0
        a = torch.randn(3, requires_grad=True)
        y = Double.apply(a * 1.0)
        y *= 3
        """,
    )


class MultiViewInplace(Rule):
    """In-place write to an output of ``split``/``chunk``/``unbind`` that requires grad.

    These return several views at once; autograd forbids modifying any of them in place:
    ``Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the
    output of a function that returns multiple views.`` Use an out-of-place op.
    """

    event = "multi_view_inplace"
    code = "GW306"
    name = "multi-view-inplace"
    family = "C"
    severity = Severity.ERROR
    summary = "In-place write to one of several views returned by split/chunk/unbind."
    message = "in-place {op} on `{name}`, one of the views returned by `{viewop}` (line {view_line}): raises"
    INVALID = (
        """
        import torch
        x = torch.randn(4, 6, requires_grad=True)
        a, b = torch.split(x * 1.0, 3, -1)
        a *= 2  # <-
        """,
    )
    VALID = (
        """
        import torch
        x = torch.randn(4, 6, requires_grad=True)
        a, b = torch.split(x * 1.0, 3, -1)
        a = a * 2
        """,
    )


# --------------------------------------------------------------------------- family D
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
        loss2 = (h.detach() * 2).sum()
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
    message = "`{name}` is built here once, with a graph that the backward at line {freed_line} frees in the first iteration; the next iteration goes through it again and raises"
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


class RunningLossKeepsGraph(Rule):
    """A running total accumulates loss tensors (``total += loss``) and keeps their graphs.

    Nothing raises, but every iteration's graph stays alive as long as the total does: memory
    grows with the number of steps. Accumulate ``loss.item()`` or ``loss.detach()``.
    """

    event = "running_total"
    code = "GW404"
    name = "running-loss-keeps-graph"
    family = "D"
    severity = Severity.INFORMATION
    summary = "Accumulating loss tensors keeps every iteration's graph alive."
    message = "`{name}` accumulates tensors that carry graphs; each iteration's graph stays in memory (use `.item()` or `.detach()`)"
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


# --------------------------------------------------------------------------- family E
class StepBeforeBackward(Rule):
    """``optimizer.step()`` updates, in place, parameters that a pending backward still needs.

    The step bumps the parameters' version counters; a graph built before the step (kept
    alive by ``retain_graph=True`` or not yet backwarded) saved those parameters, so its
    backward raises ``... modified by an inplace operation``. The GAN pattern: D's step
    between G's forward through D and G's backward. Do both backward passes first and step
    afterwards, recompute the forward after the step, or detach what the other loss sees.
    """

    event = "step_before_backward"
    code = "GW501"
    name = "step-before-backward"
    family = "E"
    severity = Severity.ERROR
    summary = "optimizer.step() between a forward and a backward that still needs the old weights."
    message = "`{opt}.step()` updates {params} in place, but `{saver}` (line {save_line}) saved them for {backward}, which will raise"
    INVALID = (
        """
        import torch
        from torch import nn, optim
        G, D = nn.Linear(2, 2), nn.Linear(2, 2)
        optD = optim.Adam(D.parameters())
        t = torch.ones(2, requires_grad=True)
        d = D(G(t))
        d.sum().backward(retain_graph=True)
        optD.step()  # <-
        (G(t) + d).sum().backward()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn, optim
        G, D = nn.Linear(2, 2), nn.Linear(2, 2)
        optD = optim.Adam(D.parameters())
        t = torch.ones(2, requires_grad=True)
        d = D(G(t))
        d.sum().backward(retain_graph=True)
        optD.step()
        (G(t) + d.detach()).sum().backward()
        """,
    )


class FusedStepBeforeBackward(Rule):
    """A ``fused=True`` optimizer steps between a forward and a backward that needs the weights.

    Fused optimizers update parameters without bumping their version counters, so PyTorch
    raises nothing: the backward silently uses the *new* weights with the old activations.
    """

    event = "fused_step"
    code = "GW502"
    name = "fused-step-before-backward"
    family = "E"
    severity = Severity.WARNING
    summary = "fused=True optimizer step before a backward that needs the old weights (silent)."
    message = "`{opt}.step()` (fused) updates {params} without a version bump; {backward} silently uses the new weights"
    INVALID = (
        """
        import torch
        from torch import nn
        m = nn.Linear(2, 2)
        opt = torch.optim.Adam(m.parameters(), fused=True)
        x = torch.ones(3, 2, requires_grad=True)
        y = m(x)
        y.sum().backward(retain_graph=True)
        opt.step()  # <-
        y.sum().backward()
        """,
    )


class PollutedGradients(Rule):
    """A backward meant for one model leaks gradients into another model's parameters.

    The loss of model B is computed from model A's output without ``.detach()``; its backward
    accumulates into A's ``.grad``, and A's optimizer steps later without zeroing in between,
    so A is trained on a loss it should not see. Nothing raises. Detach A's output where it
    feeds B's loss (``D(fake.detach())``) or zero A's gradients right before its backward.
    """

    event = "polluted_grads"
    code = "GW503"
    name = "polluted-gradients"
    family = "E"
    severity = Severity.WARNING
    summary = "Backward of one model's loss accumulates into another model's gradients (missing detach)."
    message = "this loss reaches {params} through `{name}` without `.detach()`; its backward (line {backward_line}) adds to their .grad, and `{opt}.step()` (line {step_line}) uses it without a zero_grad in between"
    INVALID = (
        """
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake).mean()  # <-
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake.detach()).mean()
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
        """,
    )


# --------------------------------------------------------------------------- family F
class DataWriteToSaved(Rule):
    """A write through ``.data`` to a tensor that a graph still needs for backward.

    ``.data`` shares storage but not the version counter, so autograd cannot notice: the
    backward silently uses the modified values and the gradients are wrong. Clone before the
    write (``snap = out.detach().clone()``), or use ``.detach()`` so autograd checks it, or
    move the update after the backward that needs the old values.
    """

    event = "data_write"
    code = "GW601"
    name = "data-write-to-saved"
    family = "F"
    severity = Severity.WARNING
    summary = "Write through .data to a tensor saved for backward (silently wrong gradients)."
    message = "in-place {op} through `.data` changes `{name}`, which `{saver}` (line {save_line}) saved for {backward}; .data bypasses the version check, so the gradients are silently wrong"
    INVALID = (
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        d_ = d.data
        f = torch.matmul(d, w2)
        d_[:] = 1  # <-
        f.backward()
        """,
    )
    VALID = (
        """
        import torch
        x = torch.ones(1, 2)
        w1 = torch.ones(2, 1, requires_grad=True)
        w2 = torch.ones(1, requires_grad=True)
        d = torch.matmul(x, w1)
        f = torch.matmul(d, w2)
        f.backward()
        d.data[:] = 1
        """,
    )


RULES: Tuple[Type[Rule], ...] = (
    ParseError,
    LeafInplace,
    SavedTensorModified,
    SavedTensorModifiedInBackward,
    ExpandedWrite,
    OverlappingAssign,
    GradOutputInplace,
    ExpandedParameterData,
    CustomFunctionOutputInplace,
    MultiViewInplace,
    BackwardFreesGraph,
    StaleGraphUse,
    GraphCarriedIntoLoop,
    RunningLossKeepsGraph,
    StepBeforeBackward,
    FusedStepBeforeBackward,
    PollutedGradients,
    DataWriteToSaved,
)
