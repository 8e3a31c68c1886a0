"""Optimizer steps that apply nothing although a loss was backwarded: the gradients cleared between
the backward and the step (GW740), gradient clipping over a ``parameters()`` generator an optimizer
already consumed (GW739), a LambdaLR whose factor is zero at every step taken (GW741), a gradient hook that returns zeros
(GW742), gradient clipping to a threshold of zero (GW743), a step decay with gamma=0 (GW744)."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class GradientsClearedBeforeStep(Rule):
    """A zeroing call between a backward and the step that should apply its gradients.

    ``loss.backward(); optimizer.zero_grad(); optimizer.step()``: ``zero_grad()`` (``set_to_none=True``
    by default) drops the gradients the backward just computed, so the step finds no ``.grad`` on any
    parameter it holds and skips them all (with ``set_to_none=False`` it applies zeros; weight decay and
    momentum alone move the weights). Nothing raises, the loss is printed every iteration, and the model
    never learns. ``model.zero_grad()`` at the same place does the same. Reported at the zeroing call:
    clear the gradients before the backward (at the top of the iteration) or after the step. A step
    written before the backward of its iteration (``zero_grad(); step(); loss.backward()``) finds no
    gradient at its first run and cleared ones at every later run: reported at the step, which is the
    statement out of place.
    Clearing after the step (``step(); zero_grad()``), or clearing another optimizer's gradients (a GAN's
    generator between the discriminator's backward and step), is not reported.

    ``gradwarden debug`` proves it with the same code: a step that finds no gradient after a
    backward in its iteration, named at the zeroing call or at the step, as here.
    """

    event = "grads_cleared_before_step"
    code = "GW740"
    name = "gradients-cleared-before-step"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0, 1, 2)  # where the zeroing call or the step goes is the loop's layout: moved by hand
    summary = "zero_grad() between backward() and step(): the step finds no gradient and changes nothing."
    message = "{why}: the step finds no gradient and the parameters never change; {fix}"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            opt.zero_grad()  # <-
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.step()  # <-
            loss.backward()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        model.zero_grad()  # <-
        opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
        """,
        """
        import torch
        from torch import nn
        G, D = nn.Linear(3, 4), nn.Linear(4, 1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        for step in range(3):
            d_loss = D(G(torch.randn(8, 3))).mean()
            d_loss.backward()
            opt_g.zero_grad()
            opt_d.step()
            opt_d.zero_grad()
        """,
    )


class ClipExhaustedParameters(Rule):
    """Gradient clipping over a ``parameters()`` generator something already read to its end.

    ``params = model.parameters()`` is a generator: the optimizer built over it (``SGD(params, ...)``)
    reads it to its end, and a later ``clip_grad_norm_(params, max_norm)`` (or ``clip_grad_value_``)
    gets an empty iterator. It clips nothing and returns a norm of 0; nothing raises, and the
    gradients the clipping was meant to bound (an RNN's exploding gradients) reach the step whole.
    Reported where the generator is made: keep a list (``params = list(model.parameters())``), or call
    ``model.parameters()`` again at the clipping call.
    """

    event = "clip_exhausted_params"
    code = "GW739"
    name = "clip-exhausted-parameters"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # no automatic edit yet: the message says to keep a list
    summary = "clip_grad_norm_ over a parameters() generator that was already consumed: it clips nothing."
    message = "`{what}()` returns a one-shot generator, which {first} at line {first_line} reads to its end: " \
              "`{clip}` at line {clip_line} gets no parameter and clips nothing; keep a list " \
              "(`list({what}())`)"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        params = model.parameters()  # <-
        opt = torch.optim.SGD(params, lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(params, max_norm=1.0)
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        params = list(model.parameters())
        opt = torch.optim.SGD(params, lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(params, max_norm=1.0)
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
        """,
    )


class LearningRateAlwaysZero(Rule):
    """A ``LambdaLR`` whose factor is zero at every step the program takes.

    ``LambdaLR(opt, lambda step: min(1.0, step // warmup))``: each step's learning rate is
    ``base_lr * lr_lambda(n)``, ``n`` the number of ``scheduler.step()`` calls before it. Floor
    division gives 0 until the warm-up ends, and a run shorter than the warm-up (or a factor that is 0
    for every count it is evaluated at) multiplies every update by zero: nothing raises, the loss is
    printed, and the weights never move. Reported at the scheduler, after evaluating the program's own
    ``lr_lambda`` at the count each ``optimizer.step()`` sees; use true division (``(step + 1) /
    warmup``). A factor that is 0 at the first step only (``step / warmup``) moves the weights from the
    second step on and is not reported.
    """

    event = "lr_always_zero"
    code = "GW741"
    name = "learning-rate-always-zero"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # the schedule's formula is the program's: changed by hand
    summary = "LambdaLR whose factor is 0 at every step taken: the optimizer never changes the weights."
    message = "this schedule's `lr_lambda` is 0 at every one of the {steps} optimizer step(s) the program takes, so " \
              "every update is multiplied by a learning rate of 0 and the weights never change; check the formula " \
              "(floor division `//` in a warm-up gives 0 until it ends: use `(step + 1) / warmup`)"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        warmup = 50
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, step // warmup))  # <-
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        warmup = 50
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, step / warmup))
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.95 ** epoch)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
    )


class GradientHookReturnsZero(Rule):
    """A gradient hook on a parameter that returns zeros.

    ``p.register_hook(fn)`` runs ``fn`` on the parameter's gradient at every backward, and what it
    returns replaces that gradient. ``lambda g: torch.zeros_like(g)`` (or ``g * 0``, ``g.mul(0)``,
    ``g.new_zeros(...)``), typically left in from debugging, gives the parameter a gradient of zeros:
    nothing raises, the loss is printed, and the step leaves the parameter where it started (weight
    decay aside). Reported at the registration; remove the hook (a hook that returns ``None`` keeps the
    gradient), or freeze the parameter with ``requires_grad_(False)`` if that is what is meant. A hook
    that scales (``g * 0.1``), masks rows (``g * mask``) or clamps the gradient is not reported.
    """

    event = "gradient_hook_returns_zero"
    code = "GW742"
    name = "gradient-hook-returns-zero"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # removing a hook is the program's call
    summary = "A gradient hook on a parameter returns zeros: the parameter gets a zero gradient and never trains."
    message = "this hook's return value replaces the gradient of `{name}` at every backward, and it returns zeros: " \
              "the parameter never gets a nonzero gradient and the optimizer leaves it unchanged; remove the hook " \
              "(return None to keep the gradient), or use `requires_grad_(False)` if a freeze is meant"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        model.weight.register_hook(lambda g: torch.zeros_like(g))  # <-
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        model.weight.register_hook(lambda g: g * 0.1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
        """,
    )


class GradientClippedToZero(Rule):
    """Gradient clipping with a threshold of zero.

    ``clip_grad_value_(params, clip_value)`` clamps every gradient to ``[-clip_value, clip_value]``,
    and ``clip_grad_norm_(params, max_norm)`` scales them by ``max_norm / norm``: with a value of 0
    (a command-line default meant as "no clipping") every gradient becomes zero before the step. Nothing
    raises and the loss stays where it started. Reported at the clipping call when the value is a
    number the analysis knows to be 0; clip only when a positive value is given (``if clip > 0:``).
    """

    event = "gradient_clipped_to_zero"
    code = "GW743"
    name = "gradient-clipped-to-zero"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # the guard or the value is the program's
    summary = "clip_grad_value_/clip_grad_norm_ with a threshold of 0: every gradient is zeroed before the step."
    message = "`{clip}` is called with `{arg}` = 0: every gradient is set to zero before the step, so the " \
              "parameters never change; clip only when a positive value is given (`if {arg} > 0:`)"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        clip = 0.0
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            nn.utils.clip_grad_value_(model.parameters(), clip)  # <-
            opt.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        clip = 0.0
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            if clip > 0:
                nn.utils.clip_grad_value_(model.parameters(), clip)
            opt.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
        """,
    )


class LearningRateDecayedToZero(Rule):
    """A step-decay scheduler with ``gamma=0``: the learning rate is 0 from its first decay on.

    ``StepLR(opt, step_size, gamma)``, ``MultiStepLR(opt, milestones, gamma)`` and
    ``ExponentialLR(opt, gamma)`` multiply the learning rate by ``gamma`` at each decay. With
    ``gamma=0`` (meant as "no decay", which is ``gamma=1``) every step after the first decay uses a
    learning rate of 0: nothing raises, the loss is printed, and training stops after the first
    epoch(s). Reported at the scheduler when the program takes optimizer steps after the first decay
    (the ``scheduler.step()`` count each ``optimizer.step()`` sees); ``gamma=1.0`` for no decay.
    """

    event = "lr_decayed_to_zero"
    code = "GW744"
    name = "learning-rate-decayed-to-zero"
    family = "H"
    severity = Severity.WARNING
    NO_FIX = (0,)  # the decay factor is the program's
    summary = "StepLR/MultiStepLR/ExponentialLR with gamma=0: every step after the first decay has a learning rate of 0."
    message = "this `{kind}` multiplies the learning rate by `gamma` = 0 at its first decay (after {first} scheduler " \
              "step(s)): the {steps} optimizer step(s) the program takes after it use a learning rate of 0 and change " \
              "nothing; use a factor in (0, 1] (`gamma=1.0` for no decay)"
    INVALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.0)  # <-
        for epoch in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
    )
    VALID = (
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        for epoch in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
        """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.0)
        for epoch in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            sched.step()
        """,
    )
