import torch
import torch.nn.functional as F

from models import ResMLP


def main():
    torch.manual_seed(0)
    model = ResMLP(dim=16, depth=2, num_classes=4)
    print("params", model.num_params())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
