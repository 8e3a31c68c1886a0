import torch
import torch.nn as nn

import losses.bounded  # noqa: F401
import losses.sparsity  # noqa: F401
from losses import total_loss


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    for _ in range(2):
        loss = total_loss(model(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
