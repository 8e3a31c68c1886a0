# source: training scripts whose evaluation helper switches autograd off with a bare torch.set_grad_enabled(False) call instead of a with-block (forum threads "element 0 of tensors does not require grad after validation"): grad mode stays off when the helper returns, and the next training step's backward raises
# family: H
# expect: ok
# line: 14  (backward: 29)
# fix: (fixed version of H134_evaluation_helper_calls_set_grad_enabled_false_as_a_statement.py) scope it: with torch.set_grad_enabled(False): (or @torch.no_grad() on the helper)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def evaluate(model, x, y):
    model.eval()
    with torch.set_grad_enabled(False):
        acc = (model(x).argmax(-1) == y).float().mean().item()
    model.train()
    return acc


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(24, 6), torch.randint(0, 3, (24,))
    for epoch in range(2):
        for i in range(0, 24, 8):
            opt.zero_grad()
            loss = F.cross_entropy(model(x[i:i + 8]), y[i:i + 8])
            loss.backward()
            opt.step()
        print("epoch", epoch, "acc %.2f" % evaluate(model, x, y))
