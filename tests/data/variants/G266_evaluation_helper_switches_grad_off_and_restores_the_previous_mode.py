# source: training scripts whose evaluation helper saves torch.is_grad_enabled(), calls torch.set_grad_enabled(False) as a statement and restores the saved mode before returning, so the training steps after it run with autograd on
# family: G
# expect: ok
# line: 15
# fix: none needed: the previous grad mode is restored
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def evaluate(model, x, y):
    previous = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    model.eval()
    acc = (model(x).argmax(-1) == y).float().mean().item()
    model.train()
    torch.set_grad_enabled(previous)
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
