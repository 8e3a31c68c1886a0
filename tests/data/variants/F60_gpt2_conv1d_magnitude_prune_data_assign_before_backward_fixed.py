# source: (fixed version of F60_gpt2_conv1d_magnitude_prune_data_assign_before_backward.py) magnitude / movement-pruning scripts for HF GPT-2 (whose Conv1D layer computes torch.addmm(bias, x, self.weight) and so saves the weight itself) that apply the pruning schedule with module.weight.data = module.weight.data * mask between computing the loss and loss.backward()
# family: F
# expect: ok
# line: 48, 62  (backward: 64)
# fix: apply the pruning schedule after the update (call pruner.step(global_step) after optimizer.step()), so the masked weights are only used by the next forward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv1D(nn.Module):
    """GPT-2 style linear layer: weight has shape (nx, nf)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.2)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class MLPBlock(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)

    def forward(self, x):
        return x + self.c_proj(F.gelu(self.c_fc(x)))


class MagnitudePruner:
    def __init__(self, model, final_sparsity=0.5, total_steps=4):
        self.layers = [m for m in model.modules() if isinstance(m, Conv1D)]
        self.final_sparsity, self.total_steps = final_sparsity, total_steps

    def step(self, global_step):
        sparsity = self.final_sparsity * min(1.0, (global_step + 1) / self.total_steps)
        for layer in self.layers:
            w = layer.weight.data
            k = max(1, int(sparsity * w.numel()))
            threshold = w.abs().flatten().kthvalue(k).values
            layer.weight.data = w * (w.abs() > threshold)


if __name__ == "__main__":
    model = nn.Sequential(MLPBlock(), MLPBlock(), nn.Linear(16, 8))
    pruner = MagnitudePruner(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(4, 6, 16), torch.randint(0, 8, (4, 6))
    first = model[0].c_fc.weight

    mismatch = False
    for global_step in range(2):
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        ref = torch.autograd.grad(loss, [first], retain_graph=True)[0]
        optimizer.zero_grad()
        loss.backward()
        mismatch |= not torch.allclose(first.grad, ref, atol=1e-6)
        optimizer.step()
        pruner.step(global_step)
    print("MISMATCH: gradients computed with the pruned weights" if mismatch else "MATCH")
