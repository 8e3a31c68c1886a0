# source: hand-written L1 / sparsity regularisers that sum float(p.abs().sum()) over model.parameters() (forum threads "L1 regularization has no effect", "penalty term does not change the weights"): float() turns each norm into a Python number, so the penalty adds a constant to the loss and no gradient
# family: H
# expect: ok
# verify: the first layer's gradient is compared with the cross-entropy's gradient alone
# line: 23
# fix: (fixed version of H142_l1_penalty_summed_with_float_in_a_generator_expression.py) keep tensors: l1 = sum(p.abs().sum() for p in model.parameters())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 10), torch.randint(0, 4, (32,))
    lam = 1e-2
    for step in range(2):
        opt.zero_grad()
        ce = F.cross_entropy(model(x), y)
        g_ce = torch.autograd.grad(ce, model[0].weight, retain_graph=True)[0]
        l1 = sum(p.abs().sum() for p in model.parameters())
        loss = ce + lam * l1
        loss.backward()
        same = torch.allclose(model[0].weight.grad, g_ce)
        opt.step()
    print("MISMATCH: the L1 term adds no gradient" if same else "MATCH")
