# source: hand-fused FiLM (feature-wise linear modulation, Perez et al. 2018) autograd.Functions for conditioned audio/VQA models, forward(ctx, x, gamma, beta), whose backward returns the scale and shift gradients in the wrong order; gamma and beta have the same shape, so autograd accepts them and the conditioning network silently gets swapped gradients
# family: F
# expect: silent
# line: 25  (backward: 53)
# fix: return the gradients in the order of forward's inputs: return grad_x, grad_gamma, grad_beta
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FiLMFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma, beta):
        ctx.save_for_backward(x, gamma)
        return x * gamma.unsqueeze(-1) + beta.unsqueeze(-1)

    @staticmethod
    def backward(ctx, grad_out):
        x, gamma = ctx.saved_tensors
        grad_x = grad_out * gamma.unsqueeze(-1)
        grad_gamma = (grad_out * x).sum(-1)
        grad_beta = grad_out.sum(-1)
        return grad_x, grad_beta, grad_gamma


class ConditionedBlock(nn.Module):
    def __init__(self, channels=8, cond_dim=5, fused=True):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.film = nn.Linear(cond_dim, 2 * channels)
        self.fused = fused

    def forward(self, x, cond):
        h = self.conv(x)
        gamma, beta = self.film(cond).chunk(2, dim=-1)
        if self.fused:
            h = FiLMFunction.apply(h, gamma, beta)
        else:
            h = h * gamma.unsqueeze(-1) + beta.unsqueeze(-1)
        return F.relu(h) + x


def film_grads(fused):
    torch.manual_seed(0)
    net = nn.ModuleList([ConditionedBlock(fused=fused) for _ in range(2)])
    x = torch.randn(4, 8, 16, generator=torch.Generator().manual_seed(1))
    cond = torch.randn(4, 5, generator=torch.Generator().manual_seed(2))
    h = x
    for block in net:
        h = block(h, cond)
    h.pow(2).mean().backward()
    return [p.grad for block in net for p in block.film.parameters()]


if __name__ == "__main__":
    got, ref = film_grads(True), film_grads(False)
    ok = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: FiLM generator received swapped gamma/beta gradients")
