# source: GradNorm as implemented in https://github.com/brianlan/pytorch-grad-norm (weighted_task_loss = torch.mul(model.weights, task_loss); loss = torch.sum(weighted_task_loss); loss.backward(retain_graph=True)) and quoted in https://github.com/AvivNavon/nash-mtl/issues/4; here the per-task weighted losses (a vector of two) are backwarded without the sum, which raises "grad can be implicitly created only for scalar outputs"
# family: H
# expect: ok
# line: 32
# fix: (fixed version of H63_gradnorm_weighted_task_loss_vector_backward.py) backward the total: weighted_task_loss.sum().backward(retain_graph=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, din=10, hidden=16):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(din, hidden), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(hidden, 1), nn.Linear(hidden, 1)])
        self.weights = nn.Parameter(torch.ones(2))

    def forward(self, x):
        h = self.shared(x)
        return [head(h).squeeze(-1) for head in self.heads]


def gradnorm_step(model, opt, x, targets, initial, alpha=1.5):
    preds = model(x)
    task_loss = torch.stack([F.mse_loss(p, t) for p, t in zip(preds, targets)])
    if initial is None:
        initial = task_loss.detach()
    weighted_task_loss = torch.mul(model.weights, task_loss)
    opt.zero_grad()
    weighted_task_loss.sum().backward(retain_graph=True)
    model.weights.grad = None
    last_shared = model.shared[0].weight
    norms = torch.stack([torch.autograd.grad(model.weights[i] * task_loss[i], last_shared, retain_graph=True,
                                             create_graph=True)[0].norm() for i in range(2)])
    ratio = task_loss.detach() / initial
    target = (norms.mean() * (ratio / ratio.mean()) ** alpha).detach()
    model.weights.grad = torch.autograd.grad((norms - target).abs().sum(), model.weights)[0]
    opt.step()
    with torch.no_grad():
        model.weights.mul_(2 / model.weights.sum())
    return initial, task_loss.detach()


if __name__ == "__main__":
    model = MultiTaskNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    initial = None
    for step in range(3):
        x = torch.randn(16, 10)
        targets = [x[:, :3].sum(1), 5 * x[:, 3:].mean(1)]
        initial, losses = gradnorm_step(model, opt, x, targets, initial)
        print("step", step, "task losses", losses.tolist(), "weights", model.weights.tolist())
