import torch
import torch.nn as nn
import torch.nn.functional as F

from net.blocks import SEGate


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 12), SEGate(12), nn.Linear(12, 4))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.randn(8, 12), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    main()
