# source: tabular / MLP baselines built as nn.Sequential(Linear, BatchNorm1d, ReLU(inplace=True), ...)
# family: G
# expect: ok
# line: 16  (backward: 29)
# fix: none needed - BatchNorm's backward saves its input, weight and batch statistics but not its output, so the in-place ReLU on the BN output is safe; the next Linear saves the ReLU output, which nothing rewrites afterwards
import torch
from torch import nn

torch.manual_seed(0)


def make_mlp(d_in, hidden, n_out, depth=3):
    layers = []
    d = d_in
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True)]
        d = hidden
    layers.append(nn.Linear(d, n_out))
    return nn.Sequential(*layers)


if __name__ == "__main__":
    model = make_mlp(10, 32, 3).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(2):
        x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
