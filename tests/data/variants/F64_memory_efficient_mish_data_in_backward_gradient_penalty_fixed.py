# source: (fixed version of F64_memory_efficient_mish_data_in_backward_gradient_penalty.py) "memory-efficient Mish" autograd.Functions (copied from Mish / timm-style activation repos) whose backward reads the saved input through .data; used in a WGAN-GP critic, the gradient-penalty double backward silently loses the second-order term through the activation
# family: F
# expect: ok
# line: 21  (backward: 49)
# fix: use the saved tensor itself in backward (x, = ctx.saved_tensors with no .data), so the backward stays differentiable under create_graph=True (or decorate it with @once_differentiable to get an error instead of a wrong result)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.tanh(F.softplus(x))

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_tensors[0]
        tsp = torch.tanh(F.softplus(x))
        return grad_output * (tsp + x * torch.sigmoid(x) * (1 - tsp * tsp))


class MemoryEfficientMish(nn.Module):
    def forward(self, x):
        return MishFunction.apply(x)


def critic(act):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 32), act, nn.Linear(32, 32), act, nn.Linear(32, 1))


def gradient_penalty(netD, real, fake, gen):
    eps = torch.rand(real.size(0), 1, generator=gen)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    d_hat = netD(x_hat)
    grads, = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def critic_grads(act):
    netD = critic(act)
    gen = torch.Generator().manual_seed(1)
    real, fake = torch.randn(16, 6, generator=gen), torch.randn(16, 6, generator=gen) + 1
    loss_d = netD(fake).mean() - netD(real).mean() + 10.0 * gradient_penalty(netD, real, fake, gen)
    loss_d.backward()
    return [p.grad for p in netD.parameters()]


if __name__ == "__main__":
    got, ref = critic_grads(MemoryEfficientMish()), critic_grads(nn.Mish())
    ok = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: gradient penalty lost the second-order term of the custom activation")
