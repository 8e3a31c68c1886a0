# source: a counting/ordinal regressor whose loss compares rounded predictions with integer targets ("loss doesn't decrease", e.g. https://discuss.pytorch.org/t/loss-not-decreasing-when-using-torch-round/99425): round has zero gradient, so the model gets no signal
# family: H
# expect: ok
# line: 22
# fix: (fixed version of H32_rounded_prediction_in_regression_loss.py) the loss on the unrounded prediction; rounding only for the accuracy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = [p.detach().clone() for p in model.parameters()]
    feats = torch.randn(64, 6)
    counts = torch.randint(0, 10, (64, 1)).float()
    for _ in range(3):
        pred = model(feats)
        loss = F.mse_loss(pred, counts)
        acc = (pred.round() == counts).float().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    moved = any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    print("MATCH" if moved else "MISMATCH: the rounded prediction has zero gradient; the model never changes")
