import torch
import torch.nn as nn
import torch.nn.functional as F

from layers.scaled import ScaledTanhProjection


def main():
    torch.manual_seed(0)
    model = nn.Sequential(ScaledTanhProjection(10, 16), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


main()
