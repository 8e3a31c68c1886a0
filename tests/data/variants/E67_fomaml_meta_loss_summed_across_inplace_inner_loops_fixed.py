# source: (fixed version of E67_fomaml_meta_loss_summed_across_inplace_inner_loops.py) first-order MAML re-implementations for sinusoid regression that adapt the shared model in place with an inner SGD optimizer, restore it with load_state_dict after each task, and sum the query losses of all tasks into one meta_loss that is backpropagated at the end
# family: E
# expect: ok
# line: 35, 37  (backward: 40)
# fix: take each task's query gradient right away (torch.autograd.grad at the adapted weights, summed into a list) before the next in-place update / load_state_dict, then assign the summed gradients to p.grad and call meta_opt.step()
import copy
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sample_task(n=10):
    amp, phase = 0.1 + 4.9 * torch.rand(1), math.pi * torch.rand(1)
    x = 10 * torch.rand(2 * n, 1) - 5
    y = amp * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
inner_opt = torch.optim.SGD(model.parameters(), lr=0.01)
tasks_per_batch, inner_steps = 4, 2

for meta_iter in range(2):
    init_state = copy.deepcopy(model.state_dict())
    meta_loss = 0.0
    meta_grads = [torch.zeros_like(p) for p in model.parameters()]
    for t in range(tasks_per_batch):
        xs, ys, xq, yq = sample_task()
        for _ in range(inner_steps):
            inner_opt.zero_grad()
            F.mse_loss(model(xs), ys).backward()
            inner_opt.step()
        query_loss = F.mse_loss(model(xq), yq)
        for acc, g in zip(meta_grads, torch.autograd.grad(query_loss / tasks_per_batch, list(model.parameters()))):
            acc += g
        meta_loss = meta_loss + query_loss.detach()
        model.load_state_dict(init_state)

    for p, g in zip(model.parameters(), meta_grads):
        p.grad = g
    meta_opt.step()
    print("meta iter %d  query loss %.4f" % (meta_iter, meta_loss.item() / tasks_per_batch))
