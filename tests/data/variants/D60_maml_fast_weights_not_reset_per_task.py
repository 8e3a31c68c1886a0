# source: hand-rolled MAML on sine regression where the fast-weight list is initialised from the meta-parameters once, before the task loop, instead of once per task; task 2 adapts from task 1's adapted weights, whose graph task 1's query backward already freed
# family: D
# expect: error
# line: 38, 42, 44  (backward: 46)
# fix: start every task from the meta-parameters: move `fast = list(params)` inside the task loop
import math
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def init_params(hidden=32):
    w1 = (torch.randn(hidden, 1) * 0.5).requires_grad_()
    b1 = torch.zeros(hidden, requires_grad=True)
    w2 = (torch.randn(1, hidden) / math.sqrt(hidden)).requires_grad_()
    b2 = torch.zeros(1, requires_grad=True)
    return [w1, b1, w2, b2]


def net(x, params):
    w1, b1, w2, b2 = params
    return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)


def sample_task(k=10):
    amp, phase = 0.1 + 4.9 * torch.rand(1), math.pi * torch.rand(1)
    xs, xq = 10 * torch.rand(k, 1) - 5, 10 * torch.rand(k, 1) - 5
    return xs, amp * torch.sin(xs + phase), xq, amp * torch.sin(xq + phase)


if __name__ == "__main__":
    params = init_params()
    meta_opt = torch.optim.Adam(params, lr=1e-3)
    inner_lr, inner_steps, tasks_per_batch = 0.01, 1, 4
    for meta_step in range(2):
        meta_opt.zero_grad()
        fast = list(params)
        for task in range(tasks_per_batch):
            xs, ys, xq, yq = sample_task()
            for _ in range(inner_steps):
                inner_loss = F.mse_loss(net(xs, fast), ys)
                grads = torch.autograd.grad(inner_loss, fast, create_graph=True)
                fast = [w - inner_lr * g for w, g in zip(fast, grads)]
            query_loss = F.mse_loss(net(xq, fast), yq) / tasks_per_batch
            query_loss.backward()
        meta_opt.step()
    print("query loss", query_loss.item())
