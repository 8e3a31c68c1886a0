# source: label-smoothing / class-weight code that builds the targets and weights from Python lists with torch.tensor (they need no gradient) and computes the loss against the model's log-probabilities
# family: G
# expect: ok
# line: 17
# fix: none needed - only the targets go through torch.tensor; the model output keeps its graph
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def smoothed_targets(labels, n_cls, eps=0.1):
    rows = [[eps / (n_cls - 1)] * n_cls for _ in labels.tolist()]
    for row, label in zip(rows, labels.tolist()):
        row[label] = 1.0 - eps
    return torch.tensor(rows)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
    class_weights = torch.tensor([1.0, 2.0, 1.0, 0.5, 1.0])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        x, y = torch.randn(8, 10), torch.randint(0, 5, (8,))
        logp = F.log_softmax(model(x), dim=1)
        loss = -(smoothed_targets(y, 5) * logp * class_weights).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
