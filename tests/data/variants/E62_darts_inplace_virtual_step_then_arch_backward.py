# source: memory-saving DARTS re-implementations that replace the unrolled model copy by an in-place "virtual step" on the shared weights (w -= xi * dL_train/dw under no_grad, restored afterwards) while the validation loss graph used for the architecture gradient is still pending
# family: E
# expect: error
# line: 51, 58, 68, 69  (backward: 71)
# fix: run the validation forward after the virtual step has been undone (or take the virtual step on a copy of the weights); restoring the values does not restore the version counter
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OPS = {
    "linear": lambda d: nn.Linear(d, d),
    "mlp": lambda d: nn.Sequential(nn.Linear(d, d), nn.Tanh()),
    "skip": lambda d: nn.Identity(),
}


class MixedOp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ops = nn.ModuleList(fn(d) for fn in OPS.values())

    def forward(self, x, weights):
        return sum(w * op(x) for w, op in zip(weights, self.ops))


class SearchNet(nn.Module):
    def __init__(self, d=16, n_cells=2, n_cls=4):
        super().__init__()
        self.stem = nn.Linear(8, d)
        self.cells = nn.ModuleList(MixedOp(d) for _ in range(n_cells))
        self.head = nn.Linear(d, n_cls)
        self.alphas = nn.Parameter(1e-3 * torch.randn(n_cells, len(OPS)))

    def weights(self):
        return [p for n, p in self.named_parameters() if n != "alphas"]

    def forward(self, x):
        h = F.relu(self.stem(x))
        for cell, a in zip(self.cells, self.alphas):
            h = cell(h, F.softmax(a, dim=-1))
        return self.head(h)


def virtual_step(model, x_train, y_train, xi):
    loss = F.cross_entropy(model(x_train), y_train)
    grads = torch.autograd.grad(loss, model.weights())
    with torch.no_grad():
        for w, g in zip(model.weights(), grads):
            w.sub_(xi * g)
    return grads


def restore(model, grads, xi):
    with torch.no_grad():
        for w, g in zip(model.weights(), grads):
            w.add_(xi * g)


if __name__ == "__main__":
    model = SearchNet()
    arch_opt = torch.optim.Adam([model.alphas], lr=3e-4)
    x_tr, y_tr = torch.randn(32, 8), torch.randint(0, 4, (32,))
    x_val, y_val = torch.randn(32, 8), torch.randint(0, 4, (32,))

    val_loss = F.cross_entropy(model(x_val), y_val)
    grads = virtual_step(model, x_tr, y_tr, xi=0.01)
    restore(model, grads, xi=0.01)
    arch_opt.zero_grad()
    val_loss.backward()
    arch_opt.step()
    print("val loss %.4f" % val_loss.item())
