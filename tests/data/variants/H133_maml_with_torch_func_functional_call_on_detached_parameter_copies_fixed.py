# source: MAML / meta-learning code ported to torch.func.functional_call that starts the inner loop from {name: p.detach().requires_grad_() ...} copies of the model's parameters (forum threads "meta-parameters never update with functional_call"): the meta-loss backpropagates into the copies, and the model's own parameters get no gradient
# family: H
# expect: ok
# verify: a model parameter is compared before and after the meta-step
# line: 16
# fix: (fixed version of H133_maml_with_torch_func_functional_call_on_detached_parameter_copies.py) start the inner loop from the live parameters: fast = dict(model.named_parameters())
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


def adapt(model, x, y, inner_lr=0.1, steps=2):
    fast = dict(model.named_parameters())
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, fast, (x,)), y)
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
        fast = {name: w - inner_lr * g for (name, w), g in zip(fast.items(), grads)}
    return fast


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model[0].weight.clone()
    for task in range(3):
        xs, ys, xq, yq = torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 3), torch.randn(5, 1)
        fast = adapt(model, xs, ys)
        meta_opt.zero_grad()
        F.mse_loss(functional_call(model, fast, (xq,)), yq).backward()
        meta_opt.step()
    print("MISMATCH: the meta-parameters never moved" if torch.equal(before, model[0].weight) else "MATCH")
