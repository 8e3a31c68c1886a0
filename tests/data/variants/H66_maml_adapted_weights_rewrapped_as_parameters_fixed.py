# source: https://github.com/KanishJebaMathewM/Truxify/issues/13118 ("MAML inner-loop ... detaches the graph — the meta-model never trains": "The query loss graph therefore has no path back to self.model.parameters(), so meta_loss.backward() leaves their .grad as None"); here the adapted weights are re-wrapped as new nn.Parameter leaves, which cuts the same path
# family: H
# expect: ok
# verify: the meta-parameters' gradient is compared with autograd's second-order MAML gradient through the inner step
# line: 37  (backward: 56)
# fix: (fixed version of H66_maml_adapted_weights_rewrapped_as_parameters.py) keep the adapted weights as graph tensors: fast = [w - inner_lr * g for w, g in zip(params, grads)]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.l1 = nn.Linear(1, hidden)
        self.l2 = nn.Linear(hidden, 1)

    def functional(self, x, params):
        w1, b1, w2, b2 = params
        return F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)


def sample_task():
    amp, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3.14
    xs, xq = torch.rand(10, 1) * 10 - 5, torch.rand(10, 1) * 10 - 5
    return (xs, amp * torch.sin(xs + phase)), (xq, amp * torch.sin(xq + phase))


def adapt(model, support, inner_lr=0.01, steps=1):
    params = list(model.parameters())
    x, y = support
    for _ in range(steps):
        loss = F.mse_loss(model.functional(x, params), y)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        params = [w - inner_lr * g for w, g in zip(params, grads)]
    return params


def meta_loss(model, tasks):
    total = 0.0
    for support, query in tasks:
        fast = adapt(model, support)
        total = total + F.mse_loss(model.functional(query[0], fast), query[1])
    return total / len(tasks)


if __name__ == "__main__":
    model = Regressor()
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(3):
        tasks = [sample_task() for _ in range(4)]
        loss = meta_loss(model, tasks)
        meta_opt.zero_grad()
        loss.backward()
        meta_opt.step()
        print("meta-iter", it, "query loss", round(loss.item(), 4))

    tasks = [sample_task() for _ in range(2)]
    model.zero_grad()
    meta_loss(model, tasks).backward()
    got = [p.grad for p in model.parameters()]
    ref_total = 0.0
    for (xs, ys), (xq, yq) in tasks:
        params = list(model.parameters())
        grads = torch.autograd.grad(F.mse_loss(model.functional(xs, params), ys), params, create_graph=True)
        fast = [w - 0.01 * g for w, g in zip(params, grads)]
        ref_total = ref_total + F.mse_loss(model.functional(xq, fast), yq)
    ref = torch.autograd.grad(ref_total / len(tasks), list(model.parameters()))
    if all(g is not None and torch.allclose(g, r, atol=1e-5) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the meta-parameters got", ["none" if g is None else "wrong" for g in got], "gradients")
