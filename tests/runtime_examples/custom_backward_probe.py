"""Custom backwards the bridge calls a second time (the chain-rule probe, GW709), and ones it
must not: the program's output is the same under ``gradwarden debug`` (a second call that
counted, printed, drew random numbers, wrote a saved tensor or rebound ``ctx`` would change it).

Only ``Local.backward`` (line 23) is reported: it returns the local derivative without
grad_output.
"""
import torch

torch.manual_seed(0)
CALLS = {"count": 0}


class Local(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x


class Counted(torch.autograd.Function):  # a global counter: never probed
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad_output):
        global CALLS
        CALLS = dict(CALLS, count=CALLS["count"] + 1)
        return grad_output * 3


class Noisy(torch.autograd.Function):  # draws random numbers: probed, the generator is restored
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (1 + 0.01 * torch.rand_like(grad_output))


class Tally(torch.autograd.Function):  # rebinds a ctx attribute: put back after the probe
    @staticmethod
    def forward(ctx, x):
        ctx.seen = 0
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        ctx.seen = ctx.seen + 1
        return grad_output * 2


class Scaler(torch.autograd.Function):  # writes a saved tensor in place: the probe stops before it
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        s.mul_(2)
        return grad_output * s / 2, None


class Loud(torch.autograd.Function):  # prints: never probed
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, grad_output):
        print("loud backward", round(float(grad_output.sum()), 4))
        return grad_output


x = torch.randn(5, requires_grad=True)
(Local.apply(x) * 3).sum().backward()
(Counted.apply(x) * 2).sum().backward()
(Noisy.apply(x) * 2).sum().backward()
out = Tally.apply(x)
(out * 2).sum().backward()
s = torch.full((5,), 0.5)
(Scaler.apply(x, s) * 2).sum().backward()
(Loud.apply(x) * 2).sum().backward()
print("grad", [round(v, 4) for v in x.grad.tolist()])
print("calls", CALLS["count"], "seen", out.grad_fn.seen, "s", s.tolist())
print("next random", round(torch.rand(()).item(), 6))
