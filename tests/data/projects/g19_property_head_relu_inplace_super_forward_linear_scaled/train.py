import torch
import torch.nn.functional as F

from models import MultiHeadNet

TASKS = {"cls": 5, "aux": 3}


def main():
    torch.manual_seed(0)
    model = MultiHeadNet(12, TASKS)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(3):
        x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    main()
