import torch

from det.loss import BinaryFocalLoss
from det.model import ObjectnessNet


def main():
    torch.manual_seed(0)
    model = ObjectnessNet(10)
    criterion = BinaryFocalLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        x, y = torch.randn(16, 10), (torch.rand(16) > 0.5).float()
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    main()
